//! [`OAuthClientRepository`] (with the audit entry of every write) and
//! [`AuthorizationCodeStore`] (single use, also under concurrent
//! redemption; nonce and login time; expiry and purge).

use std::sync::Arc;

use credencial_domain::admin::{Actor, AuditAction, AuditEntry, AuditFilter, AuditTarget, NewAuditEntry};
use credencial_domain::federation::ReliabilityLevel;
use credencial_domain::oauth::{ClientId, CodeChallenge, CodeGrant, CodeHash};
use credencial_domain::{ScopeSet, UserId};
use credencial_ports::{
    AuthorizationCodeStore, NewAuthorizationCode, OAuthClient, OAuthClientRepository, OAuthClientUpdate,
    RepositoryError,
};
use credencial_storage_contract::{contract, Backend, Engine};

/// RFC 7636 Appendix B's challenge.
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
const HASH: &str = "pbkdf2_sha256$1000$salt$w+KCQAKYHGO6cU2SNqWYaNegJN8oZ9rcvIAtsH/o22I=";
const NOW: i64 = 1_900_000_000;

pub(crate) fn client_id(raw: &str) -> ClientId {
    ClientId::parse(raw).expect("valid client id")
}

fn scopes(text: &str) -> ScopeSet {
    ScopeSet::parse_strict(text).expect("known scopes")
}

/// The entry the tests pass with a write they set up.
pub(crate) fn setup_audit() -> NewAuditEntry {
    NewAuditEntry::new(Actor::Cli { os_user: "test".into() }, AuditAction::ClientCreate, AuditTarget::None)
}

/// An entry the trail refuses (an actor name over 200 characters).
fn refused_entry() -> NewAuditEntry {
    NewAuditEntry::new(Actor::Cli { os_user: "x".repeat(201) }, AuditAction::ClientUpdate, AuditTarget::None)
}

pub(crate) fn confidential(id: &str) -> OAuthClient {
    OAuthClient {
        client_id: client_id(id),
        name: format!("Portal {id}"),
        secret_hash: Some(HASH.to_owned()),
        redirect_uris: vec!["https://portal.example.gov.br/callback".to_owned(), "http://localhost:8080/cb".to_owned()],
        post_logout_redirect_uris: vec![],
        confidential: true,
        require_pkce: false,
        requires_second_factor: false,
        minimum_govbr_level: None,
        enabled_scopes: scopes("receita_federal cnes"),
        is_active: true,
        created_at: 0,
        backchannel_logout_uri: None,
    }
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
        requires_second_factor: false,
        minimum_govbr_level: None,
        enabled_scopes: ScopeSet::empty(),
        is_active: true,
        created_at: 0,
        backchannel_logout_uri: None,
    }
}

/// `client` with the registration time the fixtures carry (0), for
/// comparing with them.
fn untimed(client: OAuthClient) -> OAuthClient {
    OAuthClient { created_at: 0, ..client }
}

pub(crate) fn grant(client: &str, user: UserId, expires_at: i64) -> CodeGrant {
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
        // The login's context travels with the code (redeemed as stored).
        acr: Some("urn:credencial:acr:dois-fatores".into()),
        amr: Some("pwd otp".into()),
        sid: None,
    }
}

fn code(text: &str, client: &str, user: UserId, expires_at: i64) -> NewAuthorizationCode {
    NewAuthorizationCode { code_hash: CodeHash::of(text), grant: grant(client, user, expires_at), session: None }
}

struct Setup<B> {
    b: B,
    clients: Arc<dyn OAuthClientRepository>,
    codes: Arc<dyn AuthorizationCodeStore>,
    ana: UserId,
}

/// A backend with user ana, a confidential client `portal` and a public
/// client `spa`.
async fn setup<B: Backend>() -> Setup<B> {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let clients = b.clients();
    clients.create(confidential("portal"), &setup_audit()).await.expect("create portal");
    clients.create(public("spa"), &setup_audit()).await.expect("create spa");
    let codes = b.codes();
    Setup { b, clients, codes, ana }
}

async fn find(s: &Setup<impl Backend>, id: &str) -> Option<OAuthClient> {
    s.clients.find(&client_id(id)).await.expect("find")
}

/// The whole audit trail, oldest first.
async fn trail(s: &Setup<impl Backend>) -> Vec<AuditEntry> {
    let (mut entries, _) = s.b.audit().list(&AuditFilter::default(), None, 100).await.expect("trail");
    entries.reverse();
    entries
}

// ------------------------------------------------------------------ clients

async fn created_clients_are_found_and_listed_as_stored<B: Backend>() {
    let s = setup::<B>().await;
    assert_eq!(find(&s, "portal").await.map(untimed), Some(confidential("portal")));
    assert_eq!(find(&s, "spa").await.map(untimed), Some(public("spa")));
    assert!(find(&s, "nobody").await.is_none());
    assert!(find(&s, "PORTAL").await.is_none(), "ids match exactly");

    s.clients.create(confidential("Zeta"), &setup_audit()).await.expect("create Zeta");
    s.clients.create(confidential("a-first"), &setup_audit()).await.expect("create a-first");
    let ids: Vec<String> = s.clients.list().await.expect("list").into_iter().map(|c| c.client_id.to_string()).collect();
    assert_eq!(ids, ["Zeta", "a-first", "portal", "spa"], "ordered by id, bytewise");
}

async fn a_client_is_stored_with_its_registration_time<B: Backend>() {
    let s = setup::<B>().await;
    let portal = find(&s, "portal").await.expect("portal");
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs();
    let now = i64::try_from(now).expect("seconds");
    assert!((now - 60..=now + 1).contains(&portal.created_at), "registered at {}, now {now}", portal.created_at);
}

async fn a_duplicate_client_id_is_a_conflict_and_leaves_the_first_untouched<B: Backend>() {
    let s = setup::<B>().await;
    let before = trail(&s).await.len();
    let mut again = public("portal");
    again.name = "Impostor".to_owned();
    let err = s.clients.create(again, &setup_audit()).await.expect_err("duplicate id");
    assert!(matches!(err, RepositoryError::Conflict(_)), "{err:?}");
    assert_eq!(find(&s, "portal").await.map(untimed), Some(confidential("portal")));
    assert_eq!(trail(&s).await.len(), before, "no entry without its client");
}

async fn the_store_refuses_inconsistent_clients<B: Backend>() {
    let s = setup::<B>().await;
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

async fn updates_change_only_the_given_fields_and_round_trip<B: Backend>() {
    let s = setup::<B>().await;
    let changes = OAuthClientUpdate {
        redirect_uris: Some(vec!["https://new.example.gov.br/cb".to_owned()]),
        enabled_scopes: Some(scopes("cursos_cdp formacao_academica")),
        require_pkce: Some(true),
        ..OAuthClientUpdate::default()
    };
    let updated = s.clients.update(&client_id("portal"), changes, &setup_audit()).await.expect("update");
    let mut want = confidential("portal");
    want.redirect_uris = vec!["https://new.example.gov.br/cb".to_owned()];
    want.enabled_scopes = scopes("formacao_academica cursos_cdp");
    want.require_pkce = true;
    assert_eq!(updated.map(untimed).as_ref(), Some(&want));
    assert_eq!(find(&s, "portal").await.map(untimed).as_ref(), Some(&want));

    let changes = OAuthClientUpdate {
        name: Some("Portal renomeado".to_owned()),
        secret_hash: Some("pbkdf2_sha256$1$new$hash=".to_owned()),
        enabled_scopes: Some(ScopeSet::empty()),
        ..OAuthClientUpdate::default()
    };
    let rotated = s.clients.update(&client_id("portal"), changes, &setup_audit()).await.expect("update");
    want.name = "Portal renomeado".to_owned();
    want.secret_hash = Some("pbkdf2_sha256$1$new$hash=".to_owned());
    want.enabled_scopes = ScopeSet::empty();
    assert_eq!(rotated.map(untimed), Some(want));

    let unchanged = s.clients.update(&client_id("spa"), OAuthClientUpdate::default(), &setup_audit()).await;
    assert_eq!(unchanged.expect("update").map(untimed), Some(public("spa")), "an empty update changes nothing");
}

async fn updating_an_unknown_client_is_none_and_bad_updates_are_refused<B: Backend>() {
    let s = setup::<B>().await;
    let pkce = OAuthClientUpdate { require_pkce: Some(true), ..OAuthClientUpdate::default() };
    assert!(s.clients.update(&client_id("nobody"), pkce, &setup_audit()).await.expect("update").is_none());

    let secret_for_public = OAuthClientUpdate { secret_hash: Some(HASH.to_owned()), ..OAuthClientUpdate::default() };
    let no_redirects = OAuthClientUpdate { redirect_uris: Some(Vec::new()), ..OAuthClientUpdate::default() };
    for (id, bad) in [("spa", secret_for_public), ("portal", no_redirects)] {
        let err = s.clients.update(&client_id(id), bad, &setup_audit()).await.expect_err("refused");
        assert!(matches!(err, RepositoryError::Unexpected(_)), "{id}: {err:?}");
    }
    assert_eq!(find(&s, "spa").await.map(untimed), Some(public("spa")));
    assert_eq!(find(&s, "portal").await.map(untimed), Some(confidential("portal")));
}

async fn a_deactivated_client_is_still_found_and_listed_with_its_flag<B: Backend>() {
    let s = setup::<B>().await;
    let mut off = public("off");
    off.is_active = false;
    s.clients.create(off, &setup_audit()).await.expect("create");
    assert!(!find(&s, "off").await.expect("found").is_active);
    let listed = s.clients.list().await.expect("list");
    assert!(listed.iter().any(|c| c.client_id.as_str() == "off" && !c.is_active));
    let on = OAuthClientUpdate { is_active: Some(true), ..OAuthClientUpdate::default() };
    let back = s.clients.update(&client_id("off"), on, &setup_audit()).await.expect("update").expect("found");
    assert!(back.is_active, "reactivated");
}

async fn post_logout_redirect_uris_are_stored_replaced_and_emptied<B: Backend>() {
    let s = setup::<B>().await;
    let mut client = confidential("rp");
    client.post_logout_redirect_uris = vec!["https://rp.example.gov.br/saiu".to_owned()];
    s.clients.create(client.clone(), &setup_audit()).await.expect("create");
    let found = find(&s, "rp").await.expect("stored");
    assert_eq!(found.post_logout_redirect_uris, client.post_logout_redirect_uris);
    assert!(find(&s, "portal").await.expect("stored").post_logout_redirect_uris.is_empty(), "none by default");

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

async fn a_minimum_govbr_level_is_stored_changed_kept_and_removed<B: Backend>() {
    let s = setup::<B>().await;
    assert_eq!(find(&s, "portal").await.expect("stored").minimum_govbr_level, None, "none by default");
    for level in ReliabilityLevel::ALL {
        let mut client = public(&format!("spa-{}", level.name()));
        client.minimum_govbr_level = Some(level);
        s.clients.create(client.clone(), &setup_audit()).await.expect("create");
        assert_eq!(find(&s, client.client_id.as_str()).await.map(untimed), Some(client));
    }
    let stored: Vec<Option<ReliabilityLevel>> =
        s.clients.list().await.expect("list").iter().map(|c| c.minimum_govbr_level).collect();
    assert_eq!(
        stored,
        [None, None, Some(ReliabilityLevel::Bronze), Some(ReliabilityLevel::Ouro), Some(ReliabilityLevel::Prata)]
    );

    let prata = OAuthClientUpdate { minimum_govbr_level: Some(Some(ReliabilityLevel::Prata)), ..Default::default() };
    let updated = s.clients.update(&client_id("portal"), prata, &setup_audit()).await.expect("update").expect("found");
    let mut want = confidential("portal");
    want.minimum_govbr_level = Some(ReliabilityLevel::Prata);
    assert_eq!(untimed(updated), want);
    let renamed = OAuthClientUpdate { require_pkce: Some(true), ..Default::default() };
    let kept = s.clients.update(&client_id("portal"), renamed, &setup_audit()).await.expect("update").expect("found");
    assert_eq!(kept.minimum_govbr_level, Some(ReliabilityLevel::Prata), "None leaves the level as it is");
    let none = OAuthClientUpdate { minimum_govbr_level: Some(None), ..Default::default() };
    let removed = s.clients.update(&client_id("portal"), none, &setup_audit()).await.expect("update").expect("found");
    assert_eq!(removed.minimum_govbr_level, None, "Some(None) removes it");
    assert_eq!(find(&s, "portal").await.expect("stored").minimum_govbr_level, None);

    // The schema holds only the three names.
    for bad in ["silver", "Prata", "platina", ""] {
        let refused =
            s.b.try_execute(&format!("UPDATE oauth_clients SET minimum_govbr_level = '{bad}' WHERE client_id = 'spa'"))
                .await;
        assert!(refused.is_err(), "{bad:?} stored");
    }
    assert_eq!(find(&s, "spa").await.map(untimed), Some(public("spa")));
}

// ------------------------------------------------- writes and their audit

async fn a_write_and_its_audit_entry_are_stored_together<B: Backend>() {
    let s = setup::<B>().await;
    let before = trail(&s).await.len();
    let entry = NewAuditEntry::new(
        Actor::Cli { os_user: "root".into() },
        AuditAction::ClientDeactivate,
        AuditTarget::Client(client_id("portal")),
    )
    .with("is_active", "false");
    let off = OAuthClientUpdate { is_active: Some(false), ..OAuthClientUpdate::default() };
    let updated = s.clients.update(&client_id("portal"), off, &entry).await.expect("update").expect("portal");
    assert!(!updated.is_active);
    let entries = trail(&s).await;
    assert_eq!(entries.len(), before + 1);
    let last = entries.last().expect("entry");
    assert_eq!(
        (last.actor.as_str(), last.action.as_str(), last.target.as_str()),
        ("root", "client.deactivate", "portal")
    );
    assert_eq!(last.changes, [("is_active".to_owned(), "false".to_owned())]);

    // No such client: nothing changed, nothing recorded.
    let on = OAuthClientUpdate { is_active: Some(true), ..OAuthClientUpdate::default() };
    assert!(s.clients.update(&client_id("nobody"), on, &entry).await.expect("update").is_none());
    assert_eq!(trail(&s).await.len(), before + 1);
}

async fn a_refused_audit_entry_leaves_the_client_unchanged_and_unregistered<B: Backend>() {
    let s = setup::<B>().await;
    let before = trail(&s).await.len();
    let changes = OAuthClientUpdate {
        name: Some("Renomeado".into()),
        is_active: Some(false),
        enabled_scopes: Some(ScopeSet::empty()),
        ..OAuthClientUpdate::default()
    };
    let e = s.clients.update(&client_id("portal"), changes, &refused_entry()).await.expect_err("refused");
    assert!(matches!(e, RepositoryError::Unexpected(_)), "{e:?}");
    assert_eq!(find(&s, "portal").await.map(untimed), Some(confidential("portal")), "nothing changed");

    let e = s.clients.create(confidential("novo"), &refused_entry()).await.expect_err("refused");
    assert!(matches!(e, RepositoryError::Unexpected(_)), "{e:?}");
    assert!(find(&s, "novo").await.is_none(), "nothing stored");
    assert_eq!(trail(&s).await.len(), before, "nor recorded");
}

// -------------------------------------------------------------------- codes

async fn a_code_is_redeemed_once_then_never_again<B: Backend>() {
    let s = setup::<B>().await;
    s.codes.store(code("c0de", "portal", s.ana, NOW + 60)).await.expect("store");
    let first = s.codes.redeem(&CodeHash::of("c0de"), &client_id("portal"), NOW).await.expect("redeem");
    assert_eq!(first, Some(grant("portal", s.ana, NOW + 60)));
    let replay = s.codes.redeem(&CodeHash::of("c0de"), &client_id("portal"), NOW + 1).await.expect("redeem");
    assert_eq!(replay, None, "a replayed code is refused");
}

async fn only_the_code_hash_is_stored<B: Backend>() {
    let s = setup::<B>().await;
    s.codes.store(code("the-code-text", "portal", s.ana, NOW + 60)).await.expect("store");
    let hex: String = CodeHash::of("the-code-text").as_bytes().iter().map(|b| format!("{b:02x}")).collect();
    let literal = match B::ENGINE {
        Engine::Postgres => format!("decode('{hex}', 'hex')"),
        Engine::Sqlite => format!("x'{hex}'"),
    };
    assert_eq!(s.b.count(&format!("SELECT count(*) FROM oauth_codes WHERE code_hash = {literal}")).await, 1);
    assert_eq!(s.b.count("SELECT count(*) FROM oauth_codes").await, 1, "the 32-byte hash is the only key");
}

async fn an_expired_code_is_refused_at_its_expiry_second<B: Backend>() {
    let s = setup::<B>().await;
    s.codes.store(code("late", "portal", s.ana, NOW + 60)).await.expect("store");
    s.codes.store(code("just-in-time", "portal", s.ana, NOW + 60)).await.expect("store");
    let portal = client_id("portal");
    for now in [NOW + 60, NOW + 3600] {
        assert_eq!(s.codes.redeem(&CodeHash::of("late"), &portal, now).await.expect("redeem"), None, "at {now}");
    }
    let r = s.codes.redeem(&CodeHash::of("just-in-time"), &portal, NOW + 59).await.expect("redeem");
    assert!(r.is_some(), "still valid one second before expiry");
}

async fn a_code_presented_by_another_client_is_refused_and_stays_redeemable<B: Backend>() {
    let s = setup::<B>().await;
    s.codes.store(code("c0de", "portal", s.ana, NOW + 60)).await.expect("store");
    for other in ["spa", "nobody"] {
        let r = s.codes.redeem(&CodeHash::of("c0de"), &client_id(other), NOW).await.expect("redeem");
        assert_eq!(r, None, "{other}");
    }
    let r = s.codes.redeem(&CodeHash::of("c0de"), &client_id("portal"), NOW).await.expect("redeem");
    assert!(r.is_some(), "the wrong client's attempt does not burn the code");
}

async fn unknown_codes_are_none_and_codes_without_pkce_round_trip<B: Backend>() {
    let s = setup::<B>().await;
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

async fn storing_a_code_twice_is_a_conflict_and_for_an_unknown_client_fails<B: Backend>() {
    let s = setup::<B>().await;
    s.codes.store(code("c0de", "portal", s.ana, NOW + 60)).await.expect("store");
    let err = s.codes.store(code("c0de", "portal", s.ana, NOW + 60)).await.expect_err("duplicate");
    assert!(matches!(err, RepositoryError::Conflict(_)), "{err:?}");
    let err = s.codes.store(code("other", "nobody", s.ana, NOW + 60)).await.expect_err("unknown client");
    assert!(matches!(err, RepositoryError::Unexpected(_)), "{err:?}");
    let err = s.codes.store(code("other", "portal", UserId(s.ana.0 + 1000), NOW + 60)).await.expect_err("no user");
    assert!(matches!(err, RepositoryError::Unexpected(_)), "{err:?}");
}

async fn purging_removes_only_codes_expired_before_the_cut<B: Backend>() {
    let s = setup::<B>().await;
    for (text, expires) in [("older", NOW - 20), ("old", NOW - 10), ("edge", NOW), ("fresh", NOW + 60)] {
        s.codes.store(code(text, "portal", s.ana, expires)).await.expect("store");
    }
    // At most `limit` rows a call, the oldest first.
    assert_eq!(s.codes.purge_expired(NOW, 1).await.expect("purge"), 1);
    let old = s.codes.redeem(&CodeHash::of("old"), &client_id("portal"), NOW - 15).await.expect("redeem");
    assert!(old.is_some(), "the younger expired code waits for the next call");
    assert_eq!(s.codes.purge_expired(NOW, 1).await.expect("purge"), 1);
    assert_eq!(s.codes.purge_expired(NOW, 1).await.expect("purge"), 0, "idempotent");
    assert_eq!(s.b.count("SELECT count(*) FROM oauth_codes").await, 2);
    let fresh = s.codes.redeem(&CodeHash::of("fresh"), &client_id("portal"), NOW).await.expect("redeem");
    assert!(fresh.is_some(), "a live code survives the purge");
}

async fn deleting_a_client_deletes_its_codes<B: Backend>() {
    let s = setup::<B>().await;
    s.codes.store(code("c0de", "portal", s.ana, NOW + 60)).await.expect("store");
    s.b.execute("DELETE FROM oauth_clients WHERE client_id = 'portal'").await;
    assert_eq!(s.b.count("SELECT count(*) FROM oauth_codes").await, 0);
}

async fn an_openid_code_keeps_its_nonce_login_time_and_scope_through_redemption<B: Backend>() {
    let s = setup::<B>().await;
    let mut oidc = code("oidc-code", "portal", s.ana, NOW + 60);
    oidc.grant.scopes = ScopeSet::required().with_openid(true);
    oidc.grant.nonce = Some("n-0S6 é/\"'".to_owned());
    oidc.grant.auth_time = Some(NOW - 42);
    s.codes.store(oidc.clone()).await.expect("store");
    let r = s.codes.redeem(&CodeHash::of("oidc-code"), &client_id("portal"), NOW).await.expect("redeem");
    assert_eq!(r, Some(oidc.grant), "nonce, auth_time and openid round trip");

    let mut longest = code("longest-nonce", "portal", s.ana, NOW + 60);
    longest.grant.nonce = Some("n".repeat(512));
    s.codes.store(longest).await.expect("a 512-byte nonce is kept");
    let mut too_long = code("long-nonce", "portal", s.ana, NOW + 60);
    too_long.grant.nonce = Some("n".repeat(513));
    assert!(s.codes.store(too_long).await.is_err(), "the store bounds the nonce as the domain does");
}

async fn of_sixteen_concurrent_redemptions_of_one_code_exactly_one_wins<B: Backend>() {
    let s = setup::<B>().await;
    s.codes.store(code("race", "portal", s.ana, NOW + 60)).await.expect("store");
    let results: Vec<Option<CodeGrant>> = crate::race::at_once(16, |_| {
        let codes = Arc::clone(&s.codes);
        async move { codes.redeem(&CodeHash::of("race"), &client_id("portal"), NOW).await.expect("redeem") }
    })
    .await;
    let winners: Vec<_> = results.iter().flatten().collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    assert_eq!(winners[0], &grant("portal", s.ana, NOW + 60));
    assert_eq!(s.b.count("SELECT count(*) FROM oauth_codes WHERE used_at IS NOT NULL").await, 1);
}

contract!(
    created_clients_are_found_and_listed_as_stored,
    a_client_is_stored_with_its_registration_time,
    a_duplicate_client_id_is_a_conflict_and_leaves_the_first_untouched,
    the_store_refuses_inconsistent_clients,
    updates_change_only_the_given_fields_and_round_trip,
    updating_an_unknown_client_is_none_and_bad_updates_are_refused,
    a_deactivated_client_is_still_found_and_listed_with_its_flag,
    post_logout_redirect_uris_are_stored_replaced_and_emptied,
    a_minimum_govbr_level_is_stored_changed_kept_and_removed,
    a_write_and_its_audit_entry_are_stored_together,
    a_refused_audit_entry_leaves_the_client_unchanged_and_unregistered,
    a_code_is_redeemed_once_then_never_again,
    only_the_code_hash_is_stored,
    an_expired_code_is_refused_at_its_expiry_second,
    a_code_presented_by_another_client_is_refused_and_stays_redeemable,
    unknown_codes_are_none_and_codes_without_pkce_round_trip,
    storing_a_code_twice_is_a_conflict_and_for_an_unknown_client_fails,
    purging_removes_only_codes_expired_before_the_cut,
    deleting_a_client_deletes_its_codes,
    an_openid_code_keeps_its_nonce_login_time_and_scope_through_redemption,
    of_sixteen_concurrent_redemptions_of_one_code_exactly_one_wins,
);
