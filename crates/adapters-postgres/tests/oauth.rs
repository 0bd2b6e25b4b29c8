//! The OAuth2 client registry and authorization-code store against a real
//! PostgreSQL (127.0.0.1:5432, or `TEST_DATABASE_URL`): every test gets a
//! fresh, migrated database.

use std::sync::Arc;
use std::time::Duration;

use credencial_adapters_postgres::testing::{setup_audit, TestDatabase};
use credencial_adapters_postgres::{PgAuthorizationCodeStore, PgOAuthClientRepository, PgUserRepository};
use credencial_domain::admin::{Actor, AuditAction, AuditTarget, NewAuditEntry};
use credencial_domain::oauth::{ClientId, CodeChallenge, CodeGrant, CodeHash};
use credencial_domain::{ScopeSet, UserData, UserId, Username};
use credencial_ports::{
    AuthorizationCodeStore, NewAuthorizationCode, NewUser, OAuthClient, OAuthClientRepository, OAuthClientUpdate,
    RepositoryError, UserRepository,
};

/// RFC 7636 Appendix B's challenge.
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
const HASH: &str = "pbkdf2_sha256$1000$salt$w+KCQAKYHGO6cU2SNqWYaNegJN8oZ9rcvIAtsH/o22I=";
const NOW: i64 = 1_900_000_000;

fn client_id(raw: &str) -> ClientId {
    ClientId::parse(raw).expect("valid client id")
}

fn scopes(text: &str) -> ScopeSet {
    ScopeSet::parse_strict(text).expect("known scopes")
}

fn confidential(id: &str) -> OAuthClient {
    OAuthClient {
        client_id: client_id(id),
        name: format!("Portal {id}"),
        secret_hash: Some(HASH.to_owned()),
        redirect_uris: vec!["https://portal.example.gov.br/callback".to_owned(), "http://localhost:8080/cb".to_owned()],
        post_logout_redirect_uris: vec![],
        confidential: true,
        require_pkce: false,
        enabled_scopes: scopes("receita_federal cnes"),
        is_active: true,
        created_at: 0,
    }
}

/// `client` with the registration time the fixtures carry (0), for
/// comparing with them.
fn untimed(client: OAuthClient) -> OAuthClient {
    OAuthClient { created_at: 0, ..client }
}

fn public(id: &str) -> OAuthClient {
    OAuthClient {
        client_id: client_id(id),
        name: "Single-page app".to_owned(),
        secret_hash: None,
        redirect_uris: vec!["https://spa.example.gov.br/".to_owned()],
        post_logout_redirect_uris: vec![],
        confidential: false,
        require_pkce: true,
        enabled_scopes: ScopeSet::empty(),
        is_active: true,
        created_at: 0,
    }
}

fn grant(client: &str, user: UserId, expires_at: i64) -> CodeGrant {
    CodeGrant {
        client_id: client_id(client),
        user_id: user,
        redirect_uri: "https://portal.example.gov.br/callback".to_owned(),
        redirect_uri_explicit: true,
        scopes: scopes("dados_publicos cpf email cnes"),
        code_challenge: CodeChallenge::parse_s256(CHALLENGE),
        expires_at,
        nonce: None,
        auth_time: None,
    }
}

fn code(text: &str, client: &str, user: UserId, expires_at: i64) -> NewAuthorizationCode {
    NewAuthorizationCode { code_hash: CodeHash::of(text), grant: grant(client, user, expires_at) }
}

struct Setup {
    db: TestDatabase,
    clients: PgOAuthClientRepository,
    codes: PgAuthorizationCodeStore,
    ana: UserId,
}

/// A database with user ana, a confidential client `portal` and a public
/// client `spa`.
async fn setup() -> Setup {
    let db = TestDatabase::new().await;
    let users = PgUserRepository::new(db.pool.clone());
    let ana = users
        .create(NewUser {
            username: Username::parse("ana").expect("valid"),
            password_hash: HASH.to_owned(),
            is_active: true,
            data: UserData {
                identificacao: "1".to_owned(),
                nome_usual: "Ana".to_owned(),
                email: "ana@example.gov.br".to_owned(),
                campus: String::new(),
                tipo_usuario: String::new(),
            },
            name: "Ana Souza".to_owned(),
            cpf: None,
        })
        .await
        .expect("create ana");
    let clients = PgOAuthClientRepository::new(db.pool.clone());
    clients.create(confidential("portal"), &setup_audit()).await.expect("create portal");
    clients.create(public("spa"), &setup_audit()).await.expect("create spa");
    let codes = PgAuthorizationCodeStore::new(db.pool.clone());
    Setup { db, clients, codes, ana }
}

// ------------------------------------------------------------------ clients

#[tokio::test]
async fn created_clients_are_found_and_listed_as_stored() {
    let s = setup().await;
    let portal = s.clients.find(&client_id("portal")).await.expect("query").expect("portal exists");
    let portal = untimed(portal);
    assert_eq!(portal, confidential("portal"));
    let spa = s.clients.find(&client_id("spa")).await.expect("query").expect("spa exists");
    let spa = untimed(spa);
    assert_eq!(spa, public("spa"));
    assert!(s.clients.find(&client_id("nobody")).await.expect("query").is_none());
    assert!(s.clients.find(&client_id("PORTAL")).await.expect("query").is_none(), "ids match exactly");

    s.clients.create(confidential("Zeta"), &setup_audit()).await.expect("create Zeta");
    s.clients.create(confidential("a-first"), &setup_audit()).await.expect("create a-first");
    let ids: Vec<String> = s.clients.list().await.expect("list").into_iter().map(|c| c.client_id.to_string()).collect();
    assert_eq!(ids, ["Zeta", "a-first", "portal", "spa"], "ordered by id, bytewise");
}

#[tokio::test]
async fn a_duplicate_client_id_is_a_conflict_and_leaves_the_first_untouched() {
    let s = setup().await;
    let mut again = public("portal");
    again.name = "Impostor".to_owned();
    let err = s.clients.create(again, &setup_audit()).await.expect_err("duplicate id");
    assert!(matches!(err, RepositoryError::Conflict(_)), "{err:?}");
    let portal = s.clients.find(&client_id("portal")).await.expect("query").expect("exists");
    let portal = untimed(portal);
    assert_eq!(portal, confidential("portal"));
}

#[tokio::test]
async fn the_schema_refuses_inconsistent_clients() {
    let s = setup().await;
    let mut public_with_secret = public("p1");
    public_with_secret.secret_hash = Some(HASH.to_owned());
    let mut confidential_without = confidential("c1");
    confidential_without.secret_hash = None;
    let mut no_redirect = confidential("c2");
    no_redirect.redirect_uris.clear();
    for bad in [public_with_secret, confidential_without, no_redirect] {
        let id = bad.client_id.clone();
        let err = s.clients.create(bad, &setup_audit()).await.expect_err("refused");
        assert!(matches!(err, RepositoryError::Unexpected(_)), "{id}: {err:?}");
        assert!(s.clients.find(&id).await.expect("query").is_none(), "{id}");
    }
}

#[tokio::test]
async fn updates_change_only_the_given_fields_and_round_trip() {
    let s = setup().await;
    let updated = s
        .clients
        .update(
            &client_id("portal"),
            OAuthClientUpdate {
                redirect_uris: Some(vec!["https://new.example.gov.br/cb".to_owned()]),
                enabled_scopes: Some(scopes("cursos_cdp formacao_academica")),
                require_pkce: Some(true),
                ..OAuthClientUpdate::default()
            },
            &setup_audit(),
        )
        .await
        .expect("update")
        .expect("portal exists");
    let updated = untimed(updated);
    let mut want = confidential("portal");
    want.redirect_uris = vec!["https://new.example.gov.br/cb".to_owned()];
    want.enabled_scopes = scopes("formacao_academica cursos_cdp");
    want.require_pkce = true;
    assert_eq!(updated, want);
    assert_eq!(s.clients.find(&client_id("portal")).await.expect("query").map(untimed).as_ref(), Some(&want));

    let rotated = s
        .clients
        .update(
            &client_id("portal"),
            OAuthClientUpdate {
                name: Some("Portal renomeado".to_owned()),
                secret_hash: Some("pbkdf2_sha256$1$new$hash=".to_owned()),
                enabled_scopes: Some(ScopeSet::empty()),
                ..OAuthClientUpdate::default()
            },
            &setup_audit(),
        )
        .await
        .expect("update")
        .expect("portal exists");
    let rotated = untimed(rotated);
    want.name = "Portal renomeado".to_owned();
    want.secret_hash = Some("pbkdf2_sha256$1$new$hash=".to_owned());
    want.enabled_scopes = ScopeSet::empty();
    assert_eq!(rotated, want);

    let unchanged = s
        .clients
        .update(&client_id("spa"), OAuthClientUpdate::default(), &setup_audit())
        .await
        .expect("update")
        .expect("spa exists");
    let unchanged = untimed(unchanged);
    assert_eq!(unchanged, public("spa"), "an empty update changes nothing");
}

#[tokio::test]
async fn updating_an_unknown_client_is_none_and_bad_updates_are_refused() {
    let s = setup().await;
    let none = s
        .clients
        .update(
            &client_id("nobody"),
            OAuthClientUpdate { require_pkce: Some(true), ..OAuthClientUpdate::default() },
            &setup_audit(),
        )
        .await
        .expect("update");
    assert!(none.is_none());

    let secret_for_public = OAuthClientUpdate { secret_hash: Some(HASH.to_owned()), ..OAuthClientUpdate::default() };
    let no_redirects = OAuthClientUpdate { redirect_uris: Some(Vec::new()), ..OAuthClientUpdate::default() };
    for (id, bad) in [("spa", secret_for_public), ("portal", no_redirects)] {
        let err = s.clients.update(&client_id(id), bad, &setup_audit()).await.expect_err("refused");
        assert!(matches!(err, RepositoryError::Unexpected(_)), "{err:?}");
    }
    assert_eq!(s.clients.find(&client_id("spa")).await.expect("query").map(untimed), Some(public("spa")));
}

#[test]
fn debug_output_of_a_client_hides_the_secret_hash() {
    let shown = format!("{:?}", confidential("portal"));
    assert!(!shown.contains("pbkdf2"), "{shown}");
}

// -------------------------------------------------------------------- codes

#[tokio::test]
async fn a_code_is_redeemed_once_then_never_again() {
    let s = setup().await;
    s.codes.store(code("c0de", "portal", s.ana, NOW + 60)).await.expect("store");

    let first = s.codes.redeem(&CodeHash::of("c0de"), &client_id("portal"), NOW).await.expect("redeem");
    assert_eq!(first, Some(grant("portal", s.ana, NOW + 60)));

    let replay = s.codes.redeem(&CodeHash::of("c0de"), &client_id("portal"), NOW + 1).await.expect("redeem");
    assert_eq!(replay, None, "a replayed code is refused");
}

#[tokio::test]
async fn only_the_code_hash_is_stored() {
    let s = setup().await;
    s.codes.store(code("the-code-text", "portal", s.ana, NOW + 60)).await.expect("store");
    let leaked: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM oauth_codes c WHERE position('the-code-text' IN c::text) > 0 \
         OR position(convert_to('the-code-text', 'UTF8') IN c.code_hash) > 0",
    )
    .fetch_one(&s.db.pool)
    .await
    .expect("query");
    assert_eq!(leaked, 0);
    let stored: Vec<u8> =
        sqlx::query_scalar("SELECT code_hash FROM oauth_codes").fetch_one(&s.db.pool).await.expect("query");
    assert_eq!(stored.as_slice(), CodeHash::of("the-code-text").as_bytes());
}

#[tokio::test]
async fn an_expired_code_is_refused_at_its_expiry_second() {
    let s = setup().await;
    s.codes.store(code("late", "portal", s.ana, NOW + 60)).await.expect("store");
    s.codes.store(code("just-in-time", "portal", s.ana, NOW + 60)).await.expect("store");
    let portal = client_id("portal");

    for now in [NOW + 60, NOW + 3600] {
        let r = s.codes.redeem(&CodeHash::of("late"), &portal, now).await.expect("redeem");
        assert_eq!(r, None, "expired at {now}");
    }
    let r = s.codes.redeem(&CodeHash::of("just-in-time"), &portal, NOW + 59).await.expect("redeem");
    assert!(r.is_some(), "still valid one second before expiry");
}

#[tokio::test]
async fn a_code_presented_by_another_client_is_refused_and_stays_redeemable() {
    let s = setup().await;
    s.codes.store(code("c0de", "portal", s.ana, NOW + 60)).await.expect("store");
    for other in ["spa", "nobody"] {
        let r = s.codes.redeem(&CodeHash::of("c0de"), &client_id(other), NOW).await.expect("redeem");
        assert_eq!(r, None, "{other}");
    }
    let r = s.codes.redeem(&CodeHash::of("c0de"), &client_id("portal"), NOW).await.expect("redeem");
    assert!(r.is_some(), "the wrong client's attempt does not burn the code");
}

#[tokio::test]
async fn unknown_codes_are_none_and_codes_without_pkce_round_trip() {
    let s = setup().await;
    let mut plain = code("no-pkce", "portal", s.ana, NOW + 60);
    plain.grant.code_challenge = None;
    plain.grant.redirect_uri_explicit = false;
    plain.grant.scopes = ScopeSet::required();
    s.codes.store(plain.clone()).await.expect("store");

    let unknown = s.codes.redeem(&CodeHash::of("never-issued"), &client_id("portal"), NOW).await.expect("redeem");
    assert_eq!(unknown, None);
    let r = s.codes.redeem(&CodeHash::of("no-pkce"), &client_id("portal"), NOW).await.expect("redeem");
    assert_eq!(r, Some(plain.grant));
}

#[tokio::test]
async fn storing_a_code_twice_or_for_an_unknown_client_fails() {
    let s = setup().await;
    s.codes.store(code("c0de", "portal", s.ana, NOW + 60)).await.expect("store");
    let err = s.codes.store(code("c0de", "portal", s.ana, NOW + 60)).await.expect_err("duplicate");
    assert!(matches!(err, RepositoryError::Conflict(_)), "{err:?}");
    let err = s.codes.store(code("other", "nobody", s.ana, NOW + 60)).await.expect_err("unknown client");
    assert!(matches!(err, RepositoryError::Unexpected(_)), "{err:?}");
}

#[tokio::test]
async fn purging_removes_only_codes_expired_before_the_cut() {
    let s = setup().await;
    for (text, expires) in [("old", NOW - 10), ("edge", NOW), ("fresh", NOW + 60)] {
        s.codes.store(code(text, "portal", s.ana, expires)).await.expect("store");
    }
    assert_eq!(s.codes.purge_expired(NOW).await.expect("purge"), 1);
    assert_eq!(s.codes.purge_expired(NOW).await.expect("purge"), 0, "idempotent");
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM oauth_codes").fetch_one(&s.db.pool).await.expect("count");
    assert_eq!(left, 2);
}

#[tokio::test]
async fn deleting_a_client_deletes_its_codes() {
    let s = setup().await;
    s.codes.store(code("c0de", "portal", s.ana, NOW + 60)).await.expect("store");
    sqlx::query("DELETE FROM oauth_clients WHERE client_id = 'portal'")
        .execute(&s.db.pool)
        .await
        .expect("delete client");
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM oauth_codes").fetch_one(&s.db.pool).await.expect("count");
    assert_eq!(left, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn of_sixteen_concurrent_redemptions_on_two_instances_exactly_one_wins() {
    let s = setup().await;
    s.codes.store(code("race", "portal", s.ana, NOW + 60)).await.expect("store");
    let other_pool =
        credencial_adapters_postgres::connect(&s.db.url, 8, Duration::from_secs(5)).await.expect("second pool");
    let instances =
        [PgAuthorizationCodeStore::new(s.db.pool.clone()), PgAuthorizationCodeStore::new(other_pool.clone())];

    let start = Arc::new(tokio::sync::Barrier::new(16));
    let handles: Vec<_> = (0..16)
        .map(|i| {
            let store = instances[i % 2].clone();
            let start = start.clone();
            tokio::spawn(async move {
                start.wait().await;
                store.redeem(&CodeHash::of("race"), &client_id("portal"), NOW).await
            })
        })
        .collect();
    let results: Vec<Option<CodeGrant>> = futures_util::future::join_all(handles)
        .await
        .into_iter()
        .map(|joined| joined.expect("task").expect("redeem"))
        .collect();

    let winners: Vec<_> = results.iter().flatten().collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    assert_eq!(winners[0], &grant("portal", s.ana, NOW + 60));
    let used: i64 = sqlx::query_scalar("SELECT count(*) FROM oauth_codes WHERE used_at IS NOT NULL")
        .fetch_one(&s.db.pool)
        .await
        .expect("count");
    assert_eq!(used, 1);
    other_pool.close().await;
}

// ------------------------------------------------- writes and their audit

/// An entry the trail refuses (an actor name over 200 characters).
fn refused_entry() -> NewAuditEntry {
    NewAuditEntry::new(Actor::Cli { os_user: "x".repeat(201) }, AuditAction::ClientUpdate, AuditTarget::None)
}

async fn audit_rows(s: &Setup) -> Vec<(String, String, String, serde_json::Value)> {
    sqlx::query_as("SELECT actor, action, target, changes FROM audit_log ORDER BY id")
        .fetch_all(&s.db.pool)
        .await
        .expect("trail")
}

#[tokio::test]
async fn a_write_and_its_audit_entry_are_stored_together() {
    let s = setup().await;
    let before = audit_rows(&s).await.len();
    let entry = NewAuditEntry::new(
        Actor::Cli { os_user: "root".into() },
        AuditAction::ClientDeactivate,
        AuditTarget::Client(client_id("portal")),
    )
    .with("is_active", "false");
    let off = OAuthClientUpdate { is_active: Some(false), ..OAuthClientUpdate::default() };
    let updated = s.clients.update(&client_id("portal"), off, &entry).await.expect("update").expect("portal");
    assert!(!updated.is_active);
    assert!(updated.created_at > 0, "the registration time is read");
    let rows = audit_rows(&s).await;
    assert_eq!(rows.len(), before + 1);
    let last = rows.last().expect("entry");
    assert_eq!((last.0.as_str(), last.1.as_str(), last.2.as_str()), ("root", "client.deactivate", "portal"));
    assert_eq!(last.3, serde_json::json!([["is_active", "false"]]));

    // No such client: nothing changed, nothing recorded.
    let none = s
        .clients
        .update(
            &client_id("nobody"),
            OAuthClientUpdate { is_active: Some(true), ..OAuthClientUpdate::default() },
            &entry,
        )
        .await
        .expect("update");
    assert!(none.is_none());
    assert_eq!(audit_rows(&s).await.len(), before + 1);
}

#[tokio::test]
async fn a_refused_audit_entry_leaves_the_client_unchanged() {
    let s = setup().await;
    let before = audit_rows(&s).await.len();
    let changes = OAuthClientUpdate {
        name: Some("Renomeado".into()),
        is_active: Some(false),
        enabled_scopes: Some(ScopeSet::empty()),
        ..OAuthClientUpdate::default()
    };
    let e = s.clients.update(&client_id("portal"), changes, &refused_entry()).await.expect_err("refused");
    assert!(matches!(e, RepositoryError::Unexpected(_)), "{e:?}");
    let portal = s.clients.find(&client_id("portal")).await.expect("query").map(untimed);
    assert_eq!(portal, Some(confidential("portal")), "nothing changed");

    let e = s.clients.create(confidential("novo"), &refused_entry()).await.expect_err("refused");
    assert!(matches!(e, RepositoryError::Unexpected(_)), "{e:?}");
    assert!(s.clients.find(&client_id("novo")).await.expect("query").is_none(), "nothing stored");
    assert_eq!(audit_rows(&s).await.len(), before, "nor recorded");
}

#[tokio::test]
async fn a_deactivated_client_is_still_found_and_listed_with_its_flag() {
    let s = setup().await;
    let mut off = public("off");
    off.is_active = false;
    s.clients.create(off, &setup_audit()).await.expect("create");
    let found = s.clients.find(&client_id("off")).await.expect("query").expect("found");
    assert!(!found.is_active);
    let listed = s.clients.list().await.expect("list");
    assert!(listed.iter().any(|c| c.client_id.as_str() == "off" && !c.is_active));
}

// ---------------------------------------------------------- OpenID Connect

#[tokio::test]
async fn an_openid_code_keeps_its_nonce_login_time_and_scope_through_redemption() {
    let s = setup().await;
    let mut oidc = code("oidc-code", "portal", s.ana, NOW + 60);
    oidc.grant.scopes = ScopeSet::required().with_openid(true);
    oidc.grant.nonce = Some("n-0S6 é/\"'".to_owned());
    oidc.grant.auth_time = Some(NOW - 42);
    s.codes.store(oidc.clone()).await.expect("store");
    let stored: String =
        sqlx::query_scalar("SELECT scope FROM oauth_codes").fetch_one(&s.db.pool).await.expect("query");
    assert_eq!(stored, "openid dados_publicos cpf email");
    let r = s.codes.redeem(&CodeHash::of("oidc-code"), &client_id("portal"), NOW).await.expect("redeem");
    assert_eq!(r, Some(oidc.grant), "nonce, auth_time and openid round trip");

    let mut too_long = code("long-nonce", "portal", s.ana, NOW + 60);
    too_long.grant.nonce = Some("n".repeat(513));
    assert!(s.codes.store(too_long).await.is_err(), "the schema bounds the nonce as the domain does");
}

#[tokio::test]
async fn post_logout_redirect_uris_are_stored_replaced_and_emptied() {
    let s = setup().await;
    let mut client = confidential("rp");
    client.post_logout_redirect_uris = vec!["https://rp.example.gov.br/saiu".to_owned()];
    s.clients.create(client.clone(), &setup_audit()).await.expect("create");
    let found = s.clients.find(&client_id("rp")).await.expect("find").expect("stored");
    assert_eq!(found.post_logout_redirect_uris, client.post_logout_redirect_uris);
    assert_eq!(
        s.clients.find(&client_id("portal")).await.expect("find").expect("stored").post_logout_redirect_uris,
        Vec::<String>::new(),
        "none by default"
    );

    let two = vec!["https://rp.example.gov.br/a".to_owned(), "https://rp.example.gov.br/b".to_owned()];
    let update = OAuthClientUpdate { post_logout_redirect_uris: Some(two.clone()), ..Default::default() };
    let updated = s.clients.update(&client_id("rp"), update, &setup_audit()).await.expect("update").expect("found");
    assert_eq!(updated.post_logout_redirect_uris, two);
    assert_eq!(updated.redirect_uris, client.redirect_uris, "the redirect URIs are left alone");

    let renamed = OAuthClientUpdate { name: Some("RP".into()), ..Default::default() };
    let kept = s.clients.update(&client_id("rp"), renamed, &setup_audit()).await.expect("update").expect("found");
    assert_eq!(kept.post_logout_redirect_uris, two, "None leaves the list as it is");

    let empty = OAuthClientUpdate { post_logout_redirect_uris: Some(vec![]), ..Default::default() };
    let emptied = s.clients.update(&client_id("rp"), empty, &setup_audit()).await.expect("update").expect("found");
    assert!(emptied.post_logout_redirect_uris.is_empty());
}
