use credencial_domain::admin::audit::SECRET_SET;
use credencial_domain::{DjangoPbkdf2, Scope};
use credencial_ports::MockOAuthClientRepository;
use secrecy::ExposeSecret;

use super::*;

fn cli() -> Actor {
    Actor::Cli { os_user: "root".into() }
}

fn id(text: &str) -> ClientId {
    ClientId::parse(text).expect("valid")
}

fn stored(client_id: &str, confidential: bool) -> OAuthClient {
    OAuthClient {
        client_id: id(client_id),
        name: "Portal".into(),
        secret_hash: confidential.then(|| "pbkdf2_sha256$1000$salt$hash".to_owned()),
        redirect_uris: vec!["https://a.example/cb".into()],
        post_logout_redirect_uris: vec![],
        confidential,
        require_pkce: false,
        requires_second_factor: false,
        minimum_govbr_level: None,
        enabled_scopes: ScopeSet::empty(),
        is_active: true,
        created_at: 1_700_000_000,
        backchannel_logout_uri: None,
    }
}

fn service(clients: MockOAuthClientRepository) -> ClientAdminService {
    ClientAdminService::new(Arc::new(clients), PasswordHasher::new(1, 1_000).expect("hasher"))
}

fn new_client(confidential: bool) -> NewClient {
    NewClient {
        client_id: id("portal"),
        name: ClientName::parse("Portal").expect("valid"),
        redirect_uris: RedirectUris::parse(["https://a.example/cb"], false).expect("valid"),
        post_logout_redirect_uris: PostLogoutRedirectUris::none(),
        confidential,
        require_pkce: false,
        minimum_govbr_level: None,
        scopes: ScopeSet::parse_strict("cpf cnes").expect("known"),
    }
}

fn field<'a>(entry: &'a NewAuditEntry, name: &str) -> Option<&'a str> {
    entry.changes.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

#[tokio::test]
async fn creating_a_confidential_client_returns_its_secret_once_and_stores_only_a_hash() {
    let mut clients = MockOAuthClientRepository::new();
    let seen = Arc::new(std::sync::Mutex::new(None));
    let keep = Arc::clone(&seen);
    clients
        .expect_create()
        .withf(|client, entry| {
            entry.action == AuditAction::ClientCreate
                && entry.target == AuditTarget::Client(client.client_id.clone())
                && field(entry, "secret") == Some(SECRET_SET)
                && field(entry, "enabled_scopes") == Some("cnes")
                && client.is_active
                && client.enabled_scopes == ScopeSet::parse_strict("cnes").expect("known")
        })
        .times(1)
        .returning(move |client, _| {
            *keep.lock().expect("lock") = Some(client);
            Ok(())
        });
    clients.expect_find().returning(|_| Ok(None));
    let outcome = service(clients).create(&cli(), new_client(true)).await.expect("created");
    let CreateOutcome::Created { client, secret: Some(secret) } = outcome else { panic!("a secret") };
    let stored = seen.lock().expect("lock").clone().expect("stored");
    let hash = stored.secret_hash.expect("hash stored");
    assert!(!hash.contains(secret.expose_secret()));
    assert!(DjangoPbkdf2::parse(&hash).expect("Django format").verify(secret.expose_secret()));
    assert_eq!(client.client_id, id("portal"));
}

#[tokio::test]
async fn a_public_client_gets_no_secret() {
    let mut clients = MockOAuthClientRepository::new();
    clients
        .expect_create()
        .withf(|client, entry| client.secret_hash.is_none() && field(entry, "secret").is_none())
        .returning(|_, _| Ok(()));
    clients.expect_find().returning(|_| Ok(Some(stored("portal", false))));
    let outcome = service(clients).create(&cli(), new_client(false)).await.expect("created");
    assert!(matches!(outcome, CreateOutcome::Created { secret: None, .. }));
}

#[tokio::test]
async fn a_taken_client_id_is_an_outcome_not_an_error() {
    let mut clients = MockOAuthClientRepository::new();
    clients.expect_create().returning(|_, _| Err(RepositoryError::Conflict("taken".into())));
    let outcome = service(clients).create(&cli(), new_client(true)).await.expect("answered");
    assert!(matches!(outcome, CreateOutcome::IdTaken));
}

#[tokio::test]
async fn storage_down_fails_the_creation() {
    let mut clients = MockOAuthClientRepository::new();
    clients.expect_create().returning(|_, _| Err(RepositoryError::Unexpected("down".into())));
    let e = service(clients).create(&cli(), new_client(true)).await;
    assert!(matches!(e, Err(ServiceError::Storage(_))));
}

#[tokio::test]
async fn each_single_change_is_recorded_under_its_own_action() {
    let scopes = ScopeSet::parse_strict("cnes").expect("known");
    let cases: [(ClientChanges, AuditAction, &str, &str); 7] = [
        (
            ClientChanges { active: Some(false), ..Default::default() },
            AuditAction::ClientDeactivate,
            "is_active",
            "false",
        ),
        (
            ClientChanges { active: Some(true), ..Default::default() },
            AuditAction::ClientReactivate,
            "is_active",
            "true",
        ),
        (
            ClientChanges { scopes: Some(scopes), ..Default::default() },
            AuditAction::ClientScopes,
            "enabled_scopes",
            "cnes",
        ),
        (
            ClientChanges { rotate_secret: true, ..Default::default() },
            AuditAction::ClientSecretRotate,
            "secret",
            SECRET_SET,
        ),
        (
            ClientChanges { require_pkce: Some(true), ..Default::default() },
            AuditAction::ClientUpdate,
            "require_pkce",
            "true",
        ),
        (
            ClientChanges { minimum_govbr_level: Some(Some(ReliabilityLevel::Prata)), ..Default::default() },
            AuditAction::ClientUpdate,
            "minimum_govbr_level",
            "prata",
        ),
        (
            ClientChanges { minimum_govbr_level: Some(None), ..Default::default() },
            AuditAction::ClientUpdate,
            "minimum_govbr_level",
            "nenhum",
        ),
    ];
    for (changes, action, name, value) in cases {
        let mut clients = MockOAuthClientRepository::new();
        clients.expect_find().returning(|_| Ok(Some(stored("portal", true))));
        clients
            .expect_update()
            .withf(move |client_id, _, entry| {
                *client_id == id("portal") && entry.action == action && field(entry, name) == Some(value)
            })
            .times(1)
            .returning(|_, _, _| Ok(Some(stored("portal", true))));
        service(clients).change(&cli(), &id("portal"), changes).await.expect("ok").expect("found");
    }
}

#[tokio::test]
async fn several_changes_are_one_update_with_every_field() {
    let mut clients = MockOAuthClientRepository::new();
    clients
        .expect_update()
        .withf(|_, update, entry| {
            entry.action == AuditAction::ClientUpdate
                && field(entry, "name") == Some("Novo")
                && field(entry, "redirect_uris") == Some("https://b.example/cb https://c.example/cb")
                && update.name.as_deref() == Some("Novo")
                && update.enabled_scopes == Some(ScopeSet::parse_strict("cnes").expect("known"))
                && update.secret_hash.is_none()
        })
        .times(1)
        .returning(|_, _, _| Ok(Some(stored("portal", true))));
    let changes = ClientChanges {
        name: Some(ClientName::parse("Novo").expect("valid")),
        redirect_uris: Some(
            RedirectUris::parse(["https://b.example/cb", "https://c.example/cb"], false).expect("valid"),
        ),
        scopes: Some(ScopeSet::parse_strict("cnes email").expect("known")),
        ..Default::default()
    };
    let changed = service(clients).change(&cli(), &id("portal"), changes).await.expect("ok").expect("found");
    assert!(changed.secret.is_none());
}

#[tokio::test]
async fn a_rotated_secret_is_returned_once_and_its_hash_stored() {
    let mut clients = MockOAuthClientRepository::new();
    clients.expect_find().returning(|_| Ok(Some(stored("portal", true))));
    let hash = Arc::new(std::sync::Mutex::new(String::new()));
    let keep = Arc::clone(&hash);
    clients.expect_update().times(1).returning(move |_, update, _| {
        *keep.lock().expect("lock") = update.secret_hash.clone().expect("a new hash");
        Ok(Some(stored("portal", true)))
    });
    let changes = ClientChanges { rotate_secret: true, ..Default::default() };
    let changed = service(clients).change(&cli(), &id("portal"), changes).await.expect("ok").expect("found");
    let secret = changed.secret.expect("shown once");
    let hash = hash.lock().expect("lock").clone();
    assert!(DjangoPbkdf2::parse(&hash).expect("format").verify(secret.expose_secret()));
}

#[tokio::test]
async fn a_public_client_has_no_secret_to_rotate() {
    let mut clients = MockOAuthClientRepository::new();
    clients.expect_find().returning(|_| Ok(Some(stored("spa", false))));
    clients.expect_update().never();
    let changes = ClientChanges { rotate_secret: true, ..Default::default() };
    let e = service(clients).change(&cli(), &id("spa"), changes).await;
    assert!(matches!(e, Err(ServiceError::Invalid(m)) if m.contains("public")));
}

#[tokio::test]
async fn an_unknown_client_is_none_and_an_empty_change_is_refused() {
    let mut clients = MockOAuthClientRepository::new();
    clients.expect_find().returning(|_| Ok(None));
    clients.expect_update().returning(|_, _, _| Ok(None));
    let service = service(clients);
    let rotate = ClientChanges { rotate_secret: true, ..Default::default() };
    assert!(service.change(&cli(), &id("nobody"), rotate).await.expect("ok").is_none());
    let off = ClientChanges { active: Some(false), ..Default::default() };
    assert!(service.change(&cli(), &id("nobody"), off).await.expect("ok").is_none());
    let e = service.change(&cli(), &id("nobody"), ClientChanges::default()).await;
    assert!(matches!(e, Err(ServiceError::Invalid(_))));
}

#[tokio::test]
async fn storage_down_fails_a_change() {
    let mut clients = MockOAuthClientRepository::new();
    clients.expect_update().returning(|_, _, _| Err(RepositoryError::Unexpected("down".into())));
    let changes = ClientChanges { active: Some(false), ..Default::default() };
    let e = service(clients).change(&cli(), &id("portal"), changes).await;
    assert!(matches!(e, Err(ServiceError::Storage(_))));
}

#[test]
fn required_scopes_are_never_stored_as_enabled() {
    let all = ScopeSet::all();
    assert!(!only_optional(all).contains(Scope::Cpf));
    assert!(only_optional(all).contains(Scope::Cnes));
}

#[tokio::test]
async fn post_logout_redirect_uris_are_replaced_in_one_audited_update() {
    let mut clients = MockOAuthClientRepository::new();
    clients
        .expect_update()
        .withf(|client_id, update, entry| {
            *client_id == id("portal")
                && entry.action == AuditAction::ClientUpdate
                && field(entry, "post_logout_redirect_uris") == Some("https://a.example/saiu https://a.example/fim")
                && update.post_logout_redirect_uris.as_deref()
                    == Some(&["https://a.example/saiu".to_owned(), "https://a.example/fim".to_owned()][..])
                && update.redirect_uris.is_none()
        })
        .times(1)
        .returning(|_, _, _| Ok(Some(stored("portal", true))));
    let uris = PostLogoutRedirectUris::parse(["https://a.example/saiu", "https://a.example/fim"], false).expect("ok");
    let changes = ClientChanges { post_logout_redirect_uris: Some(uris), ..Default::default() };
    assert!(!changes.is_empty());
    service(clients).change(&cli(), &id("portal"), changes).await.expect("ok").expect("found");

    // Emptying the list is a change too, recorded as such.
    let mut clients = MockOAuthClientRepository::new();
    clients
        .expect_update()
        .withf(|_, update, entry| {
            field(entry, "post_logout_redirect_uris") == Some("")
                && update.post_logout_redirect_uris.as_deref() == Some(&[][..])
        })
        .times(1)
        .returning(|_, _, _| Ok(Some(stored("portal", true))));
    let none = PostLogoutRedirectUris::none();
    let changes = ClientChanges { post_logout_redirect_uris: Some(none), ..Default::default() };
    service(clients).change(&cli(), &id("portal"), changes).await.expect("ok").expect("found");
}

#[tokio::test]
async fn a_minimum_govbr_level_is_stored_and_audited_at_creation_and_removed_by_a_change() {
    let mut clients = MockOAuthClientRepository::new();
    clients
        .expect_create()
        .withf(|client, entry| {
            client.minimum_govbr_level == Some(ReliabilityLevel::Ouro)
                && field(entry, "minimum_govbr_level") == Some("ouro")
        })
        .times(1)
        .returning(|_, _| Ok(()));
    clients.expect_find().returning(|_| Ok(None));
    clients
        .expect_update()
        .withf(|_, update, entry| {
            update.minimum_govbr_level == Some(None) && field(entry, "minimum_govbr_level") == Some("nenhum")
        })
        .times(1)
        .returning(|_, _, _| Ok(Some(stored("portal", true))));
    let service = service(clients);
    let new = NewClient { minimum_govbr_level: Some(ReliabilityLevel::Ouro), ..new_client(true) };
    let created = service.create(&cli(), new).await.expect("created");
    assert!(matches!(created, CreateOutcome::Created { .. }));
    let none = ClientChanges { minimum_govbr_level: Some(None), ..Default::default() };
    assert!(!none.is_empty(), "removing the level is a change");
    service.change(&cli(), &id("portal"), none).await.expect("ok").expect("found");
}

#[tokio::test]
async fn a_creation_without_a_level_records_none() {
    let mut clients = MockOAuthClientRepository::new();
    clients
        .expect_create()
        .withf(|client, entry| client.minimum_govbr_level.is_none() && field(entry, "minimum_govbr_level").is_none())
        .times(1)
        .returning(|_, _| Ok(()));
    clients.expect_find().returning(|_| Ok(None));
    service(clients).create(&cli(), new_client(false)).await.expect("created");
}
