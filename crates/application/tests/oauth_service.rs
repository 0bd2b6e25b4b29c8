//! Tests of `OAuthService` over fakes of the ports. The code store and the
//! refresh-token store are fakes that keep the ports' contracts (single
//! use, expiry, issued-to-client, rotation) in memory, so that replay and
//! rotation are exercised, not assumed.

#[path = "support/failure_log.rs"]
mod failure_log;
#[path = "oauth_service/grace.rs"]
mod grace;
#[path = "oauth_service/oidc.rs"]
mod oidc;
#[path = "oauth_service/revocation.rs"]
mod revocation;

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use credencial_application::{
    AuthorizationStep, LoginSession, LoginThrottle, OAuthService, OAuthTokens, PasswordHasher, ProfileService,
    Registries, ScopeCache, ScopeTtls, ServiceError, TokenRequest, TokenService, TokenServiceConfig,
};
use credencial_domain::introspection::Introspection;
use credencial_domain::oauth::userinfo::UserIdentity;
use credencial_domain::oauth::{AuthorizationParams, ClientId, CodeGrant, CodeHash, OAuthError};
use credencial_domain::profile::OwnProfile;
use credencial_domain::throttle::{ClientAddress, ThrottlePolicy};
use credencial_domain::{Claims, DjangoPbkdf2, JwtKeys, ScopeSet, TokenCodec, TokenType, UserData, UserId};
use credencial_ports::account::AccessLogEntry;
use credencial_ports::account::MockGrantRepository;
use credencial_ports::ClientRead;
use credencial_ports::{
    MockAuthorizationCodeStore, MockCdpDirectory, MockClock, MockCnesRegistry, MockOAuthClientRepository,
    MockProfileRepository, MockRefreshTokenStore, MockSnapshotStore, MockTaxAuthority, MockUserDataSource,
    MockUserRepository, NewAuthorizationCode, OAuthClient, RepositoryError, Rotation, TokenRevocation, UserCredentials,
};
use failure_log::Failures;
use url::Url;

const NOW: i64 = 1_700_000_000;
const USER: UserId = UserId(42);
const ITERATIONS: u32 = 1_000;
const PORTAL_URI: &str = "https://app.example.gov.br/callback";
/// portal's registered post-logout redirect URI.
const PORTAL_AFTER_LOGOUT: &str = "https://app.example.gov.br/saiu";
const SPA_URI: &str = "https://spa.example.gov.br/cb";
/// RFC 7636 Appendix B.
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

fn codec() -> TokenCodec {
    TokenCodec::new(JwtKeys::hmac(&[7u8; 32]).expect("secret"), 0).expect("codec")
}

fn hash(secret: &str) -> String {
    DjangoPbkdf2::derive(secret, "salt", ITERATIONS).expect("derive").encode()
}

/// Confidential `portal` (secret `s3cret`, `cnes` and `receita_federal`
/// enabled) and public `spa` (`cnes` enabled).
fn clients() -> HashMap<String, OAuthClient> {
    let portal = OAuthClient {
        client_id: ClientId::parse("portal").expect("id"),
        name: "Portal <do> Servidor".into(),
        secret_hash: Some(hash("s3cret")),
        redirect_uris: vec![PORTAL_URI.into()],
        post_logout_redirect_uris: vec![PORTAL_AFTER_LOGOUT.into()],
        confidential: true,
        require_pkce: false,
        requires_second_factor: false,
        minimum_govbr_level: None,
        enabled_scopes: ScopeSet::parse_strict("cnes receita_federal").expect("known"),
        is_active: true,
        created_at: 0,
        backchannel_logout_uri: None,
    };
    let spa = OAuthClient {
        client_id: ClientId::parse("spa").expect("id"),
        name: "SPA".into(),
        secret_hash: None,
        redirect_uris: vec![SPA_URI.into()],
        post_logout_redirect_uris: vec![],
        confidential: false,
        require_pkce: true,
        requires_second_factor: false,
        minimum_govbr_level: None,
        enabled_scopes: ScopeSet::parse_strict("cnes").expect("known"),
        is_active: true,
        created_at: 0,
        backchannel_logout_uri: None,
    };
    HashMap::from([("portal".to_owned(), portal), ("spa".to_owned(), spa)])
}

type Codes = Arc<Mutex<HashMap<CodeHash, (CodeGrant, bool)>>>;
/// Stored grants by (user, client).
type Grants = Arc<Mutex<HashMap<(i64, String), ScopeSet>>>;
/// Refresh tokens by `jti`: whether current, and the family.
type Refreshes = Arc<Mutex<HashMap<String, (bool, String)>>>;
/// What each rotation kept for the grace window, by old `jti`: the
/// successor's `jti`, the rotation time and the sealed pair.
type Kept = Arc<Mutex<HashMap<String, (String, i64, Vec<u8>)>>>;

/// The fakes of one test. Codes and refresh tokens live in memory under the
/// ports' contracts; the clock can be moved.
struct World {
    clients: Arc<Mutex<HashMap<String, OAuthClient>>>,
    codes: Codes,
    refreshes: Refreshes,
    grants: Grants,
    now: Arc<AtomicI64>,
    active: bool,
    /// Whether reading the profile (for the CNES supplementation) fails.
    profile_fails: bool,
    /// The brute-force limits and where their failures are counted.
    throttle: Option<(ThrottlePolicy, Failures)>,
    /// Whether the provider speaks OpenID Connect (oidc_service.rs).
    openid: bool,
}

impl World {
    fn new() -> Self {
        Self {
            clients: Arc::new(Mutex::new(clients())),
            codes: Arc::default(),
            refreshes: Arc::default(),
            grants: Arc::default(),
            now: Arc::new(AtomicI64::new(NOW)),
            active: true,
            profile_fails: false,
            throttle: None,
            openid: false,
        }
    }

    fn service(self) -> (OAuthService, Handles) {
        let handles = Handles {
            codes: Arc::clone(&self.codes),
            refreshes: Arc::clone(&self.refreshes),
            grants: Arc::clone(&self.grants),
            grant_uses: Arc::default(),
            now: Arc::clone(&self.now),
            profile_reads: Arc::default(),
            identity_reads: Arc::default(),
        };
        let mut clock = MockClock::new();
        let now = Arc::clone(&self.now);
        clock.expect_now().returning(move || now.load(Ordering::SeqCst));
        let now = Arc::clone(&self.now);
        clock.expect_now_millis().returning(move || now.load(Ordering::SeqCst) * 1000);
        let clock = Arc::new(clock);

        let mut users = MockUserRepository::new();
        users.expect_find_credentials().returning(|username| {
            Ok((username == "ana").then(|| UserCredentials {
                id: USER,
                username: "ana".into(),
                password_hash: hash("ana-pw").into(),
                is_active: true,
                must_change_password: false,
            }))
        });
        users.expect_find_credentials_by_id().returning(|id| {
            Ok((id == USER).then(|| UserCredentials {
                id: USER,
                username: "ana".into(),
                password_hash: hash("ana-pw").into(),
                is_active: true,
                must_change_password: false,
            }))
        });
        let active = self.active;
        users.expect_find_active_user_data().returning(move |_| Ok(active.then(UserData::default)));

        let mut repo = MockOAuthClientRepository::new();
        let clients = Arc::clone(&self.clients);
        repo.expect_find().returning(move |id| Ok(clients.lock().expect("lock").get(id.as_str()).cloned()));

        let mut codes = MockAuthorizationCodeStore::new();
        let store = Arc::clone(&self.codes);
        codes.expect_store().returning(move |c: NewAuthorizationCode| {
            store.lock().expect("lock").insert(c.code_hash, (c.grant, false));
            Ok(())
        });
        let store = Arc::clone(&self.codes);
        codes.expect_redeem().returning(move |hash, client, now| {
            let mut all = store.lock().expect("lock");
            Ok(match all.get_mut(hash) {
                Some((grant, used)) if !*used && now < grant.expires_at && &grant.client_id == client => {
                    *used = true;
                    Some(grant.clone())
                }
                _ => None,
            })
        });

        let store = Arc::clone(&self.codes);
        codes.expect_purge_expired().returning(move |before, _| {
            let mut all = store.lock().expect("lock");
            let n = all.len();
            all.retain(|_, (grant, _)| grant.expires_at >= before);
            Ok((n - all.len()) as u64)
        });

        let mut refresh = MockRefreshTokenStore::new();
        let store = Arc::clone(&self.refreshes);
        refresh.expect_record().returning(move |t, family| {
            store.lock().expect("lock").insert(t.jti, (true, family.to_owned()));
            Ok(())
        });
        let store = Arc::clone(&self.refreshes);
        // What each rotation kept for the grace window: the successor and
        // the sealed pair (the clock never moves past the window here
        // unless a test moves it; the window is the default 10 s).
        let kept: Kept = Arc::default();
        refresh.expect_rotate().returning(move |old, _, new, grace| {
            let mut all = store.lock().expect("lock");
            let mut kept = kept.lock().expect("lock");
            match all.get(old).cloned() {
                Some((true, family)) => {
                    all.insert(old.to_owned(), (false, family.clone()));
                    if let Some(g) = grace.as_ref() {
                        kept.insert(old.to_owned(), (new.jti.clone(), g.at, g.sealed_successor.clone()));
                    }
                    all.insert(new.jti, (true, family));
                    Ok(Rotation::Rotated)
                }
                Some((false, family)) => {
                    let repeat = kept.get(old).filter(|(successor, at, _)| {
                        let successor_current = all.get(successor).is_some_and(|(current, _)| *current);
                        successor_current && grace.as_ref().is_some_and(|g| *at >= g.covered_since)
                    });
                    Ok(match repeat {
                        Some((_, _, sealed)) => Rotation::Repeated { sealed: sealed.clone() },
                        None => Rotation::Replayed { family },
                    })
                }
                None => Ok(Rotation::Refused),
            }
        });
        let store = Arc::clone(&self.refreshes);
        refresh
            .expect_is_current()
            .returning(move |jti| Ok(store.lock().expect("lock").get(jti).is_some_and(|(current, _)| *current)));
        let store = Arc::clone(&self.refreshes);
        refresh.expect_revoke_token().returning(move |jti, _| {
            let mut all = store.lock().expect("lock");
            let Some((was_current, family)) = all.get(jti).cloned() else {
                return Ok(TokenRevocation::Unknown);
            };
            for (current, f) in all.values_mut() {
                if *f == family {
                    *current = false;
                }
            }
            Ok(if was_current { TokenRevocation::Revoked } else { TokenRevocation::WasRotated })
        });
        let store = Arc::clone(&self.refreshes);
        refresh.expect_revoke_family().returning(move |family| {
            let mut all = store.lock().expect("lock");
            let mut revoked = 0;
            for (current, f) in all.values_mut() {
                if *current && f == family {
                    *current = false;
                    revoked += 1;
                }
            }
            Ok(revoked)
        });

        let mut grants = MockGrantRepository::new();
        let store = Arc::clone(&self.grants);
        grants.expect_widen().returning(move |user, client, approved, _| {
            let mut all = store.lock().expect("lock");
            let grant = all.entry((user.0, client.as_str().to_owned())).or_insert_with(ScopeSet::empty);
            *grant = grant.union(approved);
            Ok(*grant)
        });
        let store = Arc::clone(&self.grants);
        grants.expect_granted_scopes().returning(move |user, client| {
            Ok(store.lock().expect("lock").get(&(user.0, client.as_str().to_owned())).copied())
        });
        let store = Arc::clone(&self.grants);
        grants.expect_is_granted().returning(move |user, client| {
            Ok(store.lock().expect("lock").contains_key(&(user.0, client.as_str().to_owned())))
        });
        let store = Arc::clone(&self.grants);
        let uses = Arc::clone(&handles.grant_uses);
        grants.expect_mark_used().returning(move |user, client, now| {
            uses.lock().expect("lock").push((client.as_str().to_owned(), now));
            Ok(store.lock().expect("lock").contains_key(&(user.0, client.as_str().to_owned())))
        });

        let mut own = MockProfileRepository::new();
        let fails = self.profile_fails;
        let reads = Arc::clone(&handles.profile_reads);
        own.expect_own_profile().returning(move |_| {
            reads.fetch_add(1, Ordering::SeqCst);
            if fails {
                return Err(RepositoryError::Unexpected("down".into()));
            }
            // No CPF: the supplementation has nothing to look up.
            Ok(Some(OwnProfile {
                name: "Ana".into(),
                avatar: String::new(),
                cpf: None,
                email: "ana@example.gov.br".into(),
                receita_validated: false,
                experiences: vec![],
                degrees: vec![],
                govbr_reliability: None,
            }))
        });
        // The ID token's address: read (and logged) while the grant holds.
        let store = Arc::clone(&self.grants);
        let logged = Arc::clone(&handles.identity_reads);
        own.expect_identity_for_client().returning(move |entry| {
            if !store.lock().expect("lock").contains_key(&(entry.user.0, entry.client.as_str().to_owned())) {
                return Ok(ClientRead::NotGranted);
            }
            logged.lock().expect("lock").push(entry.clone());
            Ok(ClientRead::Answered(UserIdentity {
                username: "ana".into(),
                name: "Ana".into(),
                avatar: String::new(),
                cpf: None,
                email: "ana@example.gov.br".into(),
                email_verified: true,
                govbr_reliability: None,
            }))
        });
        let mut snapshots = MockSnapshotStore::new();
        snapshots.expect_get_many().returning(|_, _| Ok(vec![]));
        snapshots.expect_put().returning(|_, _| Ok(()));
        let mut tokens = TokenService::new(
            Arc::new(codec()),
            Arc::new(users),
            Arc::new(refresh),
            Arc::new(MockUserDataSource::new()),
            clock.clone(),
            PasswordHasher::new(2, ITERATIONS).expect("hasher"),
            TokenServiceConfig::default(),
        );
        if let Some((policy, failures)) = &self.throttle {
            tokens = tokens.with_throttle(LoginThrottle::new(Arc::new(failures.log()), clock.clone(), *policy));
        }
        if self.openid {
            tokens = tokens.with_id_token_codec(Arc::new(oidc::id_token_codec()));
        }
        let tokens = Arc::new(tokens);
        let profiles = Arc::new(ProfileService::new(
            Arc::new(MockOAuthClientRepository::new()),
            Arc::new(own),
            Registries {
                tax_authority: Arc::new(MockTaxAuthority::new()),
                cnes: Arc::new(MockCnesRegistry::new()),
                cdp: Arc::new(MockCdpDirectory::new()),
            },
            ScopeCache::new(Arc::new(snapshots), clock.clone(), ScopeTtls::default(), 10),
            clock.clone(),
        ));
        let service = OAuthService::new(tokens, Arc::new(repo), Arc::new(codes), Arc::new(grants), profiles, clock);
        let service = if self.openid { service.with_issuer(oidc::issuer()) } else { service };
        (service, handles)
    }
}

/// What a test can still look at after the service took the fakes.
struct Handles {
    codes: Codes,
    refreshes: Refreshes,
    /// The stored grants.
    grants: Grants,
    /// Each recorded use of a grant: the client and the time.
    grant_uses: Arc<Mutex<Vec<(String, i64)>>>,
    now: Arc<AtomicI64>,
    /// How often the profile was read (the CNES supplementation does).
    profile_reads: Arc<AtomicUsize>,
    /// The access-log entries of the address reads (the ID token's).
    identity_reads: Arc<Mutex<Vec<AccessLogEntry>>>,
}

fn params(client: &str, redirect: &str, scope: &str) -> AuthorizationParams {
    AuthorizationParams {
        response_type: Some("code".into()),
        client_id: Some(client.into()),
        redirect_uri: Some(redirect.into()),
        scope: Some(scope.into()),
        state: Some("st&te 1".into()),
        code_challenge: None,
        code_challenge_method: None,
        prompt: None,
        nonce: None,
        max_age: None,
        ..AuthorizationParams::default()
    }
}

fn portal_params(scope: &str) -> AuthorizationParams {
    params("portal", PORTAL_URI, scope)
}

fn spa_params() -> AuthorizationParams {
    AuthorizationParams {
        code_challenge: Some(CHALLENGE.into()),
        code_challenge_method: Some("S256".into()),
        ..params("spa", SPA_URI, "cnes")
    }
}

fn query(location: &str) -> HashMap<String, String> {
    Url::parse(location).expect("url").query_pairs().into_owned().collect()
}

/// A session of ana, as the login form opens one (logging in is the
/// session service's, tested in `account_self_service.rs`).
fn ana_login() -> LoginSession {
    let mut key = [0u8; 32];
    rand::RngCore::fill_bytes(&mut rand::thread_rng(), &mut key);
    let key = credencial_domain::oauth::random_token_text(&key);
    LoginSession::new(USER, 1, key, NOW, "pwd", credencial_domain::session::ACR_PASSWORD)
}

/// Logs ana in and approves `p`; returns the code.
async fn code_for(service: &OAuthService, p: &AuthorizationParams) -> String {
    let session = ana_login();
    match service.approve(&session, p).await.expect("approve") {
        AuthorizationStep::Redirect(location) => query(&location).remove("code").expect("code in redirect"),
        other => panic!("expected a redirect, got {other:?}"),
    }
}

fn basic(id: &str, secret: &str) -> Option<String> {
    Some(format!("Basic {}", STANDARD.encode(format!("{id}:{secret}"))))
}

fn code_request(code: &str) -> TokenRequest {
    TokenRequest {
        authorization: basic("portal", "s3cret"),
        grant_type: Some("authorization_code".into()),
        code: Some(code.into()),
        redirect_uri: Some(PORTAL_URI.into()),
        ..TokenRequest::default()
    }
}

fn spa_request(code: &str, verifier: Option<&str>) -> TokenRequest {
    TokenRequest {
        grant_type: Some("authorization_code".into()),
        client_id: Some("spa".into()),
        code: Some(code.into()),
        redirect_uri: Some(SPA_URI.into()),
        code_verifier: verifier.map(str::to_owned),
        ..TokenRequest::default()
    }
}

fn refresh_request(token: &str, scope: Option<&str>) -> TokenRequest {
    TokenRequest {
        authorization: basic("portal", "s3cret"),
        grant_type: Some("refresh_token".into()),
        refresh_token: Some(token.into()),
        scope: scope.map(str::to_owned),
        ..TokenRequest::default()
    }
}

fn oauth_error(r: Result<OAuthTokens, ServiceError>) -> OAuthError {
    match r {
        Err(ServiceError::OAuth(e)) => e,
        other => panic!("expected an OAuth2 error, got {other:?}"),
    }
}

fn decode(token: &str) -> Claims {
    codec().decode(token, NOW).expect("decodes")
}

// ---------------------------------------------------------- authorization

#[tokio::test]
async fn an_unknown_client_or_unregistered_redirect_uri_is_shown_never_redirected() {
    let (service, _) = World::new().service();
    let step = service.start(&params("nobody", PORTAL_URI, "")).await.expect("answer");
    assert!(matches!(step, AuthorizationStep::Refused(OAuthError::InvalidClient(_))), "{step:?}");
    let step = service.start(&params("portal", "https://evil.example/cb", "")).await.expect("answer");
    assert!(matches!(step, AuthorizationStep::Refused(OAuthError::InvalidRequest(_))), "{step:?}");
    let step = service.start(&params("bad id!", PORTAL_URI, "")).await.expect("answer");
    assert!(matches!(step, AuthorizationStep::Refused(OAuthError::InvalidClient(_))), "{step:?}");
}

#[tokio::test]
async fn an_unknown_scope_is_redirected_as_invalid_scope_with_state() {
    let (service, _) = World::new().service();
    let AuthorizationStep::Redirect(location) = service.start(&portal_params("cpf openid")).await.expect("answer")
    else {
        panic!("expected a redirect");
    };
    assert!(location.starts_with(PORTAL_URI), "{location}");
    let q = query(&location);
    assert_eq!(q["error"], "invalid_scope");
    assert_eq!(q["state"], "st&te 1");
    assert!(!q.contains_key("code"));
}

#[tokio::test]
async fn a_valid_request_prompts_with_the_client_name_and_the_granted_scopes() {
    let (service, _) = World::new().service();
    let AuthorizationStep::Consent(prompt) = service.start(&portal_params("cnes cursos_cdp")).await.expect("answer")
    else {
        panic!("expected a consent prompt");
    };
    assert_eq!(prompt.client_name, "Portal <do> Servidor");
    assert_eq!(
        prompt.authorization.scopes.to_scope_string(),
        "dados_publicos cpf email cnes",
        "cursos_cdp is not enabled for the client"
    );
}

#[tokio::test]
async fn approving_stores_only_the_code_hash_for_sixty_seconds_and_redirects_with_state() {
    let (service, handles) = World::new().service();
    let code = code_for(&service, &portal_params("cnes")).await;
    assert_eq!(code.len(), 43, "256 random bits, base64url");
    let codes = handles.codes.lock().expect("lock");
    let (grant, used) = codes.get(&CodeHash::of(&code)).expect("stored under its hash");
    assert!(!used);
    assert_eq!(grant.user_id, USER);
    assert_eq!(grant.expires_at, NOW + 60);
    assert_eq!(grant.scopes.to_scope_string(), "dados_publicos cpf email cnes");
    assert_eq!(grant.redirect_uri, PORTAL_URI);
}

#[tokio::test]
async fn approving_keeps_the_state_and_the_redirect_uri_query() {
    let (service, _) = World::new().service();
    let session = ana_login();
    let AuthorizationStep::Redirect(location) = service.approve(&session, &portal_params("")).await.expect("ok") else {
        panic!("expected a redirect");
    };
    assert!(location.starts_with(&format!("{PORTAL_URI}?code=")), "{location}");
    assert_eq!(query(&location)["state"], "st&te 1");
}

#[tokio::test]
async fn approving_for_a_user_who_is_no_longer_active_issues_no_code() {
    let mut world = World::new();
    world.active = false;
    let (service, handles) = world.service();
    let session = ana_login();
    let err = service.approve(&session, &portal_params("")).await.expect_err("refused");
    assert!(matches!(err, ServiceError::UnknownUser), "{err:?}");
    assert!(handles.codes.lock().expect("lock").is_empty());
}

#[tokio::test]
async fn approving_goes_on_when_the_cnes_supplementation_fails() {
    let mut world = World::new();
    world.profile_fails = true;
    let (service, handles) = world.service();
    let code = code_for(&service, &portal_params("cnes")).await;
    assert_eq!(handles.profile_reads.load(Ordering::SeqCst), 1, "the supplementation was attempted");
    assert!(handles.codes.lock().expect("lock").contains_key(&CodeHash::of(&code)));
    let _ = code_for(&service, &portal_params("receita_federal")).await;
    assert_eq!(handles.profile_reads.load(Ordering::SeqCst), 1, "only grants with cnes supplement");
}

#[tokio::test]
async fn the_purge_deletes_codes_a_minute_after_they_expired() {
    let (service, handles) = World::new().service();
    let _ = code_for(&service, &portal_params("")).await;
    handles.now.store(NOW + 60 + 59, Ordering::SeqCst);
    assert_eq!(service.purge_expired_codes(100).await.expect("purge"), 0, "expired, but less than a minute ago");
    handles.now.store(NOW + 60 + 61, Ordering::SeqCst);
    assert_eq!(service.purge_expired_codes(100).await.expect("purge"), 1);
    assert!(handles.codes.lock().expect("lock").is_empty());
}

#[tokio::test]
async fn denying_redirects_access_denied_with_state_and_issues_no_code() {
    let (service, handles) = World::new().service();
    let AuthorizationStep::Redirect(location) = service.deny(&portal_params("cnes")).await.expect("answer") else {
        panic!("expected a redirect");
    };
    let q = query(&location);
    assert_eq!((q["error"].as_str(), q["state"].as_str()), ("access_denied", "st&te 1"));
    assert!(handles.codes.lock().expect("lock").is_empty());
}

// ------------------------------------------------------ remembered consent

/// Logs ana in; the session.
async fn ana_session(_service: &OAuthService) -> LoginSession {
    ana_login()
}

fn with_prompt(mut p: AuthorizationParams, prompt: &str) -> AuthorizationParams {
    p.prompt = Some(prompt.into());
    p
}

/// The redirect's query, or a panic naming the step.
fn redirected(step: AuthorizationStep) -> HashMap<String, String> {
    match step {
        AuthorizationStep::Redirect(location) => {
            assert!(location.starts_with(PORTAL_URI), "{location}");
            query(&location)
        }
        other => panic!("expected a redirect, got {other:?}"),
    }
}

#[tokio::test]
async fn approving_stores_the_consent_and_the_next_authorization_skips_the_page() {
    let (service, handles) = World::new().service();
    let session = ana_session(&service).await;
    let step = service.authorize(Some(&session), &portal_params("cnes")).await.expect("answer");
    assert!(matches!(step, AuthorizationStep::Consent(_)), "nothing stored yet: {step:?}");
    let _ = code_for(&service, &portal_params("cnes")).await;
    let stored = handles.grants.lock().expect("lock").get(&(USER.0, "portal".to_owned())).copied();
    assert_eq!(stored.map(|s| s.to_scope_string()).as_deref(), Some("dados_publicos cpf email cnes"));

    handles.now.store(NOW + 100, Ordering::SeqCst);
    let q = redirected(service.authorize(Some(&session), &portal_params("cnes")).await.expect("answer"));
    assert_eq!(q["state"], "st&te 1");
    let code = &q["code"];
    let scopes = handles.codes.lock().expect("lock").get(&CodeHash::of(code)).map(|(grant, _)| grant.scopes);
    assert_eq!(
        scopes.map(|s| s.to_scope_string()).as_deref(),
        Some("dados_publicos cpf email cnes"),
        "a code, no page"
    );
    assert_eq!(*handles.grant_uses.lock().expect("lock"), [("portal".to_owned(), NOW + 100)], "the use is recorded");
    // A narrower request is covered too; so are the required scopes alone.
    for scope in ["", "cpf email"] {
        let q = redirected(service.authorize(Some(&session), &portal_params(scope)).await.expect("answer"));
        assert!(q.contains_key("code"), "{scope:?}");
    }
}

#[tokio::test]
async fn a_wider_request_asks_again_and_approving_widens_the_grant() {
    let (service, handles) = World::new().service();
    let session = ana_session(&service).await;
    let _ = code_for(&service, &portal_params("cnes")).await;
    let step = service.authorize(Some(&session), &portal_params("cnes receita_federal")).await.expect("answer");
    let AuthorizationStep::Consent(prompt) = step else { panic!("expected the consent page, got {step:?}") };
    assert_eq!(prompt.authorization.scopes.to_scope_string(), "dados_publicos cpf email receita_federal cnes");
    let _ = code_for(&service, &portal_params("receita_federal")).await;
    let stored = handles.grants.lock().expect("lock").get(&(USER.0, "portal".to_owned())).copied().expect("grant");
    assert_eq!(stored.to_scope_string(), "dados_publicos cpf email receita_federal cnes", "the union, not the last");
    let q = redirected(service.authorize(Some(&session), &portal_params("cnes receita_federal")).await.expect("ok"));
    assert!(q.contains_key("code"));
    // A scope the client may not have is dropped before the comparison.
    let q = redirected(service.authorize(Some(&session), &portal_params("cnes cursos_cdp")).await.expect("ok"));
    assert!(q.contains_key("code"), "cursos_cdp is not enabled for portal: nothing new to consent to");
}

#[tokio::test]
async fn consent_is_per_client_and_denying_stores_nothing() {
    let (service, handles) = World::new().service();
    let session = ana_session(&service).await;
    let _ = service.deny(&portal_params("cnes")).await.expect("deny");
    assert!(handles.grants.lock().expect("lock").is_empty());
    let _ = code_for(&service, &spa_params()).await;
    let step = service.authorize(Some(&session), &portal_params("cnes")).await.expect("answer");
    assert!(matches!(step, AuthorizationStep::Consent(_)), "spa's consent is not portal's: {step:?}");
}

#[tokio::test]
async fn without_a_session_or_with_prompt_login_the_login_form_comes_first() {
    let (service, _) = World::new().service();
    let step = service.authorize(None, &portal_params("cnes")).await.expect("answer");
    assert_eq!(step, AuthorizationStep::LogIn { client_name: "Portal <do> Servidor".into() });
    let session = ana_session(&service).await;
    let _ = code_for(&service, &portal_params("cnes")).await;
    for prompt in ["login", "select_account", "login consent"] {
        let step = service.authorize(Some(&session), &with_prompt(portal_params("cnes"), prompt)).await.expect("ok");
        assert!(matches!(step, AuthorizationStep::LogIn { .. }), "{prompt}: {step:?}");
    }
}

#[tokio::test]
async fn prompt_consent_shows_the_page_even_when_the_consent_is_stored() {
    let (service, handles) = World::new().service();
    let session = ana_session(&service).await;
    let _ = code_for(&service, &portal_params("cnes")).await;
    let codes_before = handles.codes.lock().expect("lock").len();
    let step = service.authorize(Some(&session), &with_prompt(portal_params("cnes"), "consent")).await.expect("ok");
    assert!(matches!(step, AuthorizationStep::Consent(_)), "{step:?}");
    assert_eq!(handles.codes.lock().expect("lock").len(), codes_before, "no code without the page");
}

#[tokio::test]
async fn prompt_none_answers_the_client_instead_of_showing_a_page() {
    let (service, _) = World::new().service();
    let none = || with_prompt(portal_params("cnes"), "none");
    let q = redirected(service.authorize(None, &none()).await.expect("answer"));
    assert_eq!((q["error"].as_str(), q["state"].as_str()), ("login_required", "st&te 1"));
    assert!(!q.contains_key("code"));
    let session = ana_session(&service).await;
    let q = redirected(service.authorize(Some(&session), &none()).await.expect("answer"));
    assert_eq!((q["error"].as_str(), q["state"].as_str()), ("consent_required", "st&te 1"));
    let _ = code_for(&service, &portal_params("cnes")).await;
    let q = redirected(service.authorize(Some(&session), &none()).await.expect("answer"));
    assert!(q.contains_key("code") && !q.contains_key("error"), "covered: a code, silently");
    let wider = with_prompt(portal_params("cnes receita_federal"), "none");
    let q = redirected(service.authorize(Some(&session), &wider).await.expect("answer"));
    assert_eq!(q["error"], "consent_required");
}

fn with_mode(mut p: AuthorizationParams, mode: &str) -> AuthorizationParams {
    p.response_mode = Some(mode.into());
    p
}

/// The fields of a form-post step, posted to portal's redirect URI.
fn form_posted(step: AuthorizationStep) -> HashMap<String, String> {
    match step {
        AuthorizationStep::FormPost(response) => {
            assert_eq!(response.redirect_uri(), PORTAL_URI);
            assert_eq!(response.location(), None);
            response.params().map(|(k, v)| (k.to_owned(), v.to_owned())).collect()
        }
        other => panic!("expected a form post, got {other:?}"),
    }
}

#[tokio::test]
async fn form_post_carries_the_code_and_every_error_in_a_form_and_fragment_in_the_fragment() {
    let (service, handles) = World::new().service();
    let form_post = || with_mode(portal_params("cnes"), "form_post");
    let f = form_posted(service.authorize(None, &with_prompt(form_post(), "none")).await.expect("answer"));
    assert_eq!((f["error"].as_str(), f["state"].as_str()), ("login_required", "st&te 1"));
    let session = ana_session(&service).await;
    let f = form_posted(service.deny(&form_post()).await.expect("answer"));
    assert_eq!((f["error"].as_str(), f["state"].as_str()), ("access_denied", "st&te 1"));
    let f = form_posted(service.approve(&session, &form_post()).await.expect("answer"));
    assert_eq!((f["code"].len(), f["state"].as_str()), (43, "st&te 1"));
    assert_eq!(f.len(), 2, "code and state only: {f:?}");
    assert_eq!(handles.codes.lock().expect("lock").len(), 1);
    // Remembered consent: the code goes at once, in the same mode.
    let f = form_posted(service.authorize(Some(&session), &form_post()).await.expect("answer"));
    assert!(f.contains_key("code"), "{f:?}");

    let step = service.authorize(Some(&session), &with_mode(portal_params("cnes"), "fragment")).await.expect("ok");
    let AuthorizationStep::Redirect(location) = step else { panic!("expected a redirect, got {step:?}") };
    let url = Url::parse(&location).expect("url");
    assert_eq!((url.query(), url.as_str().starts_with(PORTAL_URI)), (None, true), "{location}");
    let fragment: HashMap<String, String> =
        url::form_urlencoded::parse(url.fragment().expect("fragment").as_bytes()).into_owned().collect();
    assert_eq!((fragment["code"].len(), fragment["state"].as_str()), (43, "st&te 1"));
}

#[tokio::test]
async fn request_objects_and_registration_are_refused_in_the_requested_mode_and_unknown_modes_in_the_query() {
    let (service, handles) = World::new().service();
    let session = ana_session(&service).await;
    for (name, code) in [
        ("request", "request_not_supported"),
        ("request_uri", "request_uri_not_supported"),
        ("registration", "registration_not_supported"),
    ] {
        let mut p = portal_params("cnes");
        let value = Some("eyJhbGciOiJub25lIn0.e30.".to_owned());
        match name {
            "request" => p.request = value,
            "request_uri" => p.request_uri = value,
            _ => p.registration = value,
        }
        let q = redirected(service.authorize(Some(&session), &p).await.expect("answer"));
        assert_eq!((q["error"].as_str(), q["state"].as_str()), (code, "st&te 1"), "{name}");
        let q = redirected(service.authorize(None, &p).await.expect("answer"));
        assert_eq!(q["error"], code, "before the login form: {name}");
        let q = redirected(service.approve(&session, &p).await.expect("answer"));
        assert_eq!(q["error"], code, "approve validates again: {name}");
        let f = form_posted(service.authorize(None, &with_mode(p, "form_post")).await.expect("answer"));
        assert_eq!((f["error"].as_str(), f["state"].as_str()), (code, "st&te 1"), "{name}");
    }
    for mode in ["form_post.jwt", "web_message", "FORM_POST"] {
        let q =
            redirected(service.authorize(Some(&session), &with_mode(portal_params("cnes"), mode)).await.expect("ok"));
        assert_eq!((q["error"].as_str(), q["state"].as_str()), ("invalid_request", "st&te 1"), "{mode}");
        assert!(q["error_description"].contains("response_mode"), "{q:?}");
    }
    assert!(handles.codes.lock().expect("lock").is_empty() && handles.grants.lock().expect("lock").is_empty());
}

#[tokio::test]
async fn an_unknown_prompt_or_none_with_another_value_is_an_invalid_request_redirect() {
    let (service, handles) = World::new().service();
    let session = ana_session(&service).await;
    for prompt in ["always", "none login"] {
        let q =
            redirected(service.authorize(Some(&session), &with_prompt(portal_params(""), prompt)).await.expect("ok"));
        assert_eq!((q["error"].as_str(), q["state"].as_str()), ("invalid_request", "st&te 1"), "{prompt}");
        let q = redirected(service.approve(&session, &with_prompt(portal_params(""), prompt)).await.expect("ok"));
        assert_eq!(q["error"], "invalid_request", "approve validates again: {prompt}");
    }
    assert!(handles.codes.lock().expect("lock").is_empty() && handles.grants.lock().expect("lock").is_empty());
}

#[tokio::test]
async fn a_stored_consent_issues_no_code_for_a_user_who_is_no_longer_active() {
    let mut world = World::new();
    world.active = false;
    world
        .grants
        .lock()
        .expect("lock")
        .insert((USER.0, "portal".into()), ScopeSet::parse_strict("cnes").expect("known"));
    let (service, handles) = world.service();
    let session = ana_session(&service).await;
    let err = service.authorize(Some(&session), &portal_params("cnes")).await.expect_err("refused");
    assert!(matches!(err, ServiceError::UnknownUser), "{err:?}");
    let q =
        redirected(service.authorize(Some(&session), &with_prompt(portal_params("cnes"), "none")).await.expect("ok"));
    assert_eq!(q["error"], "login_required");
    assert!(handles.codes.lock().expect("lock").is_empty());
}

#[tokio::test]
async fn a_code_redeemed_after_the_person_revoked_the_client_buys_nothing() {
    let (service, handles) = World::new().service();
    let code = code_for(&service, &portal_params("cnes")).await;
    handles.grants.lock().expect("lock").clear();
    let e = oauth_error(service.token(code_request(&code)).await);
    assert_eq!(e.error_code(), "invalid_grant");
    let refreshes = handles.refreshes.lock().expect("lock");
    assert_eq!(refreshes.len(), 1, "the family was recorded");
    assert!(refreshes.values().all(|(current, _)| !current), "and revoked at once");
}

// ------------------------------------------------------------------ login

#[tokio::test]
async fn form_tokens_are_bound_to_their_key_session_and_request() {
    let (service, _) = World::new().service();
    let a = ana_login();
    let b = ana_login();
    let p = portal_params("cnes");
    let t = service.consent_form_token(&a, &p);
    assert!(service.consent_form_token_matches(&a, &p, &t));
    assert!(!service.consent_form_token_matches(&b, &p, &t), "another session");
    assert!(!service.consent_form_token_matches(&a, &portal_params("cnes receita_federal"), &t), "another request");
    let form_post = with_mode(portal_params("cnes"), "form_post");
    assert!(!service.consent_form_token_matches(&a, &form_post, &t), "another response mode");
    let t = service.consent_form_token(&a, &form_post);
    assert!(service.consent_form_token_matches(&a, &form_post, &t));
    assert!(!service.consent_form_token_matches(&a, &with_mode(portal_params("cnes"), "query"), &t));
}

// ---------------------------------------------------------- code exchange

#[tokio::test]
async fn a_code_buys_scoped_tokens_for_the_client_and_records_the_refresh_token() {
    let (service, handles) = World::new().service();
    let code = code_for(&service, &portal_params("cnes cursos_cdp")).await;
    let tokens = service.token(code_request(&code)).await.expect("tokens");
    assert_eq!((tokens.token_type, tokens.expires_in), ("Bearer", 300));
    assert_eq!(tokens.scope, "dados_publicos cpf email cnes");
    let access = decode(&tokens.access_token);
    assert_eq!((access.token_type, access.user_id, access.exp), (TokenType::ClientAccess, Some(USER.0), NOW + 300));
    assert_eq!(access.scope.as_deref(), Some("dados_publicos cpf email cnes"));
    assert_eq!(access.client_id.as_deref(), Some("portal"));
    assert_eq!(access.aud.as_deref(), Some("portal"), "the audience is the client: no first-party route takes it");
    let refresh = decode(tokens.refresh_token.as_deref().expect("a refresh token"));
    assert_eq!((refresh.token_type, refresh.exp), (TokenType::ClientRefresh, NOW + 86_400));
    assert_eq!(refresh.aud.as_deref(), Some("portal"));
    assert_eq!((refresh.scope, refresh.client_id), (access.scope, access.client_id));
    assert_eq!(handles.refreshes.lock().expect("lock").get(&refresh.jti).map(|(current, _)| *current), Some(true));
}

#[tokio::test]
async fn client_secret_post_authenticates_too() {
    let (service, _) = World::new().service();
    let code = code_for(&service, &portal_params("")).await;
    let request = TokenRequest {
        authorization: None,
        client_id: Some("portal".into()),
        client_secret: Some("s3cret".into()),
        ..code_request(&code)
    };
    assert!(service.token(request).await.is_ok());
}

#[tokio::test]
async fn a_replayed_code_is_invalid_grant_and_revokes_the_tokens_it_issued() {
    let (service, _) = World::new().service();
    let code = code_for(&service, &portal_params("")).await;
    let first = service.token(code_request(&code)).await.expect("first");
    assert_eq!(oauth_error(service.token(code_request(&code)).await).error_code(), "invalid_grant");
    let e = oauth_error(
        service.token(refresh_request(first.refresh_token.as_deref().expect("a refresh token"), None)).await,
    );
    assert_eq!(e.error_code(), "invalid_grant", "the code's refresh token is revoked");
}

#[tokio::test]
async fn another_client_presenting_a_redeemed_code_revokes_nothing() {
    let (service, _) = World::new().service();
    let code = code_for(&service, &portal_params("")).await;
    let tokens = service.token(code_request(&code)).await.expect("first");
    // The public client "spa" cannot redeem portal's code, nor revoke what it issued.
    let e = oauth_error(service.token(spa_request(&code, Some(VERIFIER))).await);
    assert_eq!(e.error_code(), "invalid_grant");
    assert!(
        service.token(refresh_request(tokens.refresh_token.as_deref().expect("a refresh token"), None)).await.is_ok(),
        "portal's token still rotates"
    );
}

#[tokio::test]
async fn a_public_client_proves_itself_with_pkce() {
    let (service, _) = World::new().service();
    let code = code_for(&service, &spa_params()).await;
    let tokens = service.token(spa_request(&code, Some(VERIFIER))).await.expect("tokens");
    assert_eq!(tokens.scope, "dados_publicos cpf email cnes");
}

#[tokio::test]
async fn a_pkce_mismatch_is_invalid_grant() {
    let (service, _) = World::new().service();
    let code = code_for(&service, &spa_params()).await;
    let wrong = "x".repeat(43);
    assert_eq!(oauth_error(service.token(spa_request(&code, Some(&wrong))).await).error_code(), "invalid_grant");
}

#[tokio::test]
async fn a_public_client_without_verifier_is_invalid_request() {
    let (service, _) = World::new().service();
    let code = code_for(&service, &spa_params()).await;
    assert_eq!(oauth_error(service.token(spa_request(&code, None)).await).error_code(), "invalid_request");
}

#[tokio::test]
async fn a_public_client_that_sends_a_secret_is_invalid_client() {
    let (service, _) = World::new().service();
    let code = code_for(&service, &spa_params()).await;
    let request = TokenRequest { client_secret: Some("guess".into()), ..spa_request(&code, Some(VERIFIER)) };
    assert_eq!(oauth_error(service.token(request).await).error_code(), "invalid_client");
}

#[tokio::test]
async fn another_redirect_uri_at_the_token_endpoint_is_invalid_grant() {
    let (service, _) = World::new().service();
    let code = code_for(&service, &portal_params("")).await;
    let request = TokenRequest { redirect_uri: Some(format!("{PORTAL_URI}/")), ..code_request(&code) };
    assert_eq!(oauth_error(service.token(request).await).error_code(), "invalid_grant");
}

#[tokio::test]
async fn a_wrong_client_secret_is_invalid_client_and_leaves_the_code_unused() {
    let (service, handles) = World::new().service();
    let code = code_for(&service, &portal_params("")).await;
    let request = TokenRequest { authorization: basic("portal", "wrong"), ..code_request(&code) };
    let e = oauth_error(service.token(request).await);
    assert_eq!((e.error_code(), e.to_string().as_str()), ("invalid_client", "client authentication failed"));
    assert!(!handles.codes.lock().expect("lock")[&CodeHash::of(&code)].1, "the code was not redeemed");
    assert!(service.token(code_request(&code)).await.is_ok());
}

#[tokio::test]
async fn an_unknown_client_gets_the_same_answer_as_a_wrong_secret() {
    let (service, _) = World::new().service();
    let request = TokenRequest { authorization: basic("nobody", "s3cret"), ..code_request("whatever") };
    let e = oauth_error(service.token(request).await);
    assert_eq!((e.error_code(), e.to_string().as_str()), ("invalid_client", "client authentication failed"));
}

#[tokio::test]
async fn a_code_presented_by_another_client_is_invalid_grant_and_stays_with_its_client() {
    let (service, _) = World::new().service();
    let code = code_for(&service, &portal_params("")).await;
    let thief = TokenRequest { redirect_uri: Some(SPA_URI.into()), ..spa_request(&code, Some(VERIFIER)) };
    assert_eq!(oauth_error(service.token(thief).await).error_code(), "invalid_grant");
    assert!(service.token(code_request(&code)).await.is_ok(), "still redeemable by its own client");
}

#[tokio::test]
async fn an_expired_code_is_invalid_grant() {
    let (service, handles) = World::new().service();
    let code = code_for(&service, &portal_params("")).await;
    handles.now.store(NOW + 60, Ordering::SeqCst);
    assert_eq!(oauth_error(service.token(code_request(&code)).await).error_code(), "invalid_grant");
}

#[tokio::test]
async fn a_missing_or_unsupported_grant_type_is_refused_before_any_client_work() {
    let (service, _) = World::new().service();
    let request = TokenRequest { grant_type: Some("password".into()), ..code_request("c") };
    assert_eq!(oauth_error(service.token(request).await), OAuthError::UnsupportedGrantType);
    let request = TokenRequest { grant_type: None, ..code_request("c") };
    assert_eq!(oauth_error(service.token(request).await).error_code(), "invalid_request");
}

#[tokio::test]
async fn a_token_request_without_code_is_invalid_request() {
    let (service, _) = World::new().service();
    let request = TokenRequest { code: None, ..code_request("") };
    assert_eq!(oauth_error(service.token(request).await).error_code(), "invalid_request");
}

// ---------------------------------------------------------------- refresh

async fn portal_tokens(service: &OAuthService, scope: &str) -> OAuthTokens {
    let code = code_for(service, &portal_params(scope)).await;
    service.token(code_request(&code)).await.expect("tokens")
}

#[tokio::test]
async fn a_refresh_rotates_and_replaying_the_rotated_token_revokes_the_whole_family() {
    let (service, handles) = World::new().service();
    let first = portal_tokens(&service, "cnes").await;
    handles.now.store(NOW + 10, Ordering::SeqCst);
    let second = service
        .token(refresh_request(first.refresh_token.as_deref().expect("a refresh token"), None))
        .await
        .expect("refreshed");
    assert_ne!(second.refresh_token, first.refresh_token);
    assert_eq!(second.scope, first.scope);
    let claims = codec().decode(&second.access_token, NOW + 10).expect("decodes");
    assert_eq!((claims.client_id.as_deref(), claims.user_id), (Some("portal"), Some(USER.0)));
    // Past the grace window (10 s) a replay is a theft.
    handles.now.store(NOW + 21, Ordering::SeqCst);
    let e = oauth_error(
        service.token(refresh_request(first.refresh_token.as_deref().expect("a refresh token"), None)).await,
    );
    assert_eq!(e.error_code(), "invalid_grant");
    // Whoever replayed it, the current token of the family is revoked too.
    let e = oauth_error(
        service.token(refresh_request(second.refresh_token.as_deref().expect("a refresh token"), None)).await,
    );
    assert_eq!(e.error_code(), "invalid_grant");
    // A login of its own is another family, untouched.
    let other = portal_tokens(&service, "cnes").await;
    assert!(service
        .token(refresh_request(other.refresh_token.as_deref().expect("a refresh token"), None))
        .await
        .is_ok());
}

#[tokio::test]
async fn a_refresh_by_another_client_is_invalid_grant_and_rotates_nothing() {
    let world = World::new();
    world.clients.lock().expect("lock").insert(
        "other".into(),
        OAuthClient {
            client_id: ClientId::parse("other").expect("id"),
            secret_hash: Some(hash("other-secret")),
            ..clients()["portal"].clone()
        },
    );
    let (service, _) = world.service();
    let tokens = portal_tokens(&service, "cnes").await;
    let request = TokenRequest {
        authorization: basic("other", "other-secret"),
        ..refresh_request(tokens.refresh_token.as_deref().expect("a refresh token"), None)
    };
    assert_eq!(oauth_error(service.token(request).await).error_code(), "invalid_grant");
    assert!(
        service.token(refresh_request(tokens.refresh_token.as_deref().expect("a refresh token"), None)).await.is_ok(),
        "not rotated"
    );
}

#[tokio::test]
async fn a_refresh_may_narrow_but_a_wider_scope_is_invalid_scope_and_rotates_nothing() {
    let (service, _) = World::new().service();
    let tokens = portal_tokens(&service, "cnes receita_federal").await;
    assert_eq!(tokens.scope, "dados_publicos cpf email receita_federal cnes");

    let wider = refresh_request(tokens.refresh_token.as_deref().expect("a refresh token"), Some("cnes cursos_cdp"));
    assert_eq!(oauth_error(service.token(wider).await).error_code(), "invalid_scope");

    let narrow = service
        .token(refresh_request(tokens.refresh_token.as_deref().expect("a refresh token"), Some("cnes")))
        .await
        .expect("narrower");
    assert_eq!(narrow.scope, "dados_publicos cpf email cnes");
    let refresh = decode(narrow.refresh_token.as_deref().expect("a refresh token"));
    assert_eq!(refresh.scope.as_deref(), Some("dados_publicos cpf email receita_federal cnes"), "grant kept");
}

#[tokio::test]
async fn a_refresh_drops_the_scopes_the_client_lost() {
    let world = World::new();
    let clients = Arc::clone(&world.clients);
    let (service, _) = world.service();
    let tokens = portal_tokens(&service, "cnes receita_federal").await;
    if let Some(c) = clients.lock().expect("lock").get_mut("portal") {
        c.enabled_scopes = ScopeSet::parse_strict("receita_federal").expect("known");
    }
    let next = service
        .token(refresh_request(tokens.refresh_token.as_deref().expect("a refresh token"), None))
        .await
        .expect("refreshed");
    assert_eq!(next.scope, "dados_publicos cpf email receita_federal");
}

#[tokio::test]
async fn a_refresh_token_of_the_jwt_api_or_an_access_token_is_invalid_grant() {
    let (service, _) = World::new().service();
    let plain = codec().encode(&Claims::new(TokenType::Refresh, USER.0, NOW, 86_400)).expect("encode");
    assert_eq!(oauth_error(service.token(refresh_request(&plain, None)).await).error_code(), "invalid_grant");
    let tokens = portal_tokens(&service, "").await;
    let e = oauth_error(service.token(refresh_request(&tokens.access_token, None)).await);
    assert_eq!(e.error_code(), "invalid_grant");
}

#[tokio::test]
async fn a_refresh_token_whose_audience_is_missing_or_another_client_is_invalid_grant() {
    let (service, _) = World::new().service();
    for aud in [None, Some("spa")] {
        let claims = Claims {
            scope: Some("dados_publicos cpf email".into()),
            client_id: Some("portal".into()),
            aud: aud.map(Into::into),
            ..Claims::new(TokenType::Refresh, USER.0, NOW, 86_400)
        };
        let token = codec().encode(&claims).expect("encode");
        let e = oauth_error(service.token(refresh_request(&token, None)).await);
        assert_eq!(e.error_code(), "invalid_grant", "aud {aud:?}");
    }
}

// ------------------------------------------------------ brute-force limits

fn here() -> Option<ClientAddress> {
    Some(ClientAddress::of("192.0.2.10".parse().expect("ip")))
}

/// A world with the default limits (5 per username, 20 per address, 300 s).
fn throttled_world() -> (OAuthService, Handles, Failures) {
    let failures = Failures::default();
    let world = World { throttle: Some((ThrottlePolicy::default(), failures.clone())), ..World::new() };
    let (service, handles) = world.service();
    (service, handles, failures)
}

fn retry_after(result: Result<OAuthTokens, ServiceError>) -> u64 {
    match result {
        Err(ServiceError::Throttled { retry_after_secs }) => retry_after_secs,
        other => panic!("expected Throttled, got {other:?}"),
    }
}

fn elsewhere() -> Option<ClientAddress> {
    Some(ClientAddress::of("198.51.100.20".parse().expect("ip")))
}

#[tokio::test]
async fn twenty_wrong_client_secrets_limit_their_address_even_with_the_right_secret_until_the_window_ends() {
    let (service, handles, failures) = throttled_world();
    let code = code_for(&service, &portal_params("")).await;
    for _ in 0..20 {
        let request =
            TokenRequest { authorization: basic("portal", "wrong"), client_address: here(), ..code_request(&code) };
        assert_eq!(oauth_error(service.token(request).await).error_code(), "invalid_client");
    }
    assert_eq!(failures.on("address:192.0.2.10"), 20);
    let keys: Vec<String> = failures.windows.lock().expect("lock").keys().cloned().collect();
    assert_eq!(keys, ["address:192.0.2.10"], "nothing is counted per client");
    let right = || TokenRequest { client_address: here(), ..code_request(&code) };
    assert_eq!(retry_after(service.token(right()).await), 300);
    assert!(!handles.codes.lock().expect("lock")[&CodeHash::of(&code)].1, "a limited request never reaches the code");

    handles.now.store(NOW + 299, Ordering::SeqCst);
    assert_eq!(retry_after(service.token(right()).await), 1);
    handles.now.store(NOW + 300, Ordering::SeqCst);
    // The code has expired by now; the client authenticated, so the answer is about the code.
    assert_eq!(oauth_error(service.token(right()).await).error_code(), "invalid_grant");
}

#[tokio::test]
async fn wrong_secrets_from_other_addresses_never_lock_the_client_out() {
    let (service, _, failures) = throttled_world();
    let code = code_for(&service, &portal_params("")).await;
    // Someone who knows the public client id sends wrong secrets, from an
    // address of their own, up to its limit.
    for _ in 0..20 {
        let request =
            TokenRequest { authorization: basic("portal", "wrong"), client_address: here(), ..code_request(&code) };
        assert_eq!(oauth_error(service.token(request).await).error_code(), "invalid_client");
    }
    // The application itself, from its own address, still exchanges its codes.
    let tokens = service.token(TokenRequest { client_address: elsewhere(), ..code_request(&code) }).await;
    assert!(tokens.is_ok(), "{tokens:?}");
    assert_eq!(failures.on("address:198.51.100.20"), 0);
}

#[tokio::test]
async fn a_client_that_authenticates_inside_the_window_leaves_its_address_count_alone() {
    let (service, _, failures) = throttled_world();
    let code = code_for(&service, &portal_params("")).await;
    for _ in 0..4 {
        let request =
            TokenRequest { authorization: basic("portal", "wrong"), client_address: here(), ..code_request(&code) };
        assert_eq!(oauth_error(service.token(request).await).error_code(), "invalid_client");
    }
    service.token(TokenRequest { client_address: here(), ..code_request(&code) }).await.expect("under the limit");
    assert_eq!(failures.on("address:192.0.2.10"), 4);
}

#[tokio::test]
async fn an_unknown_client_with_a_secret_counts_against_the_address_like_a_known_one() {
    let (service, _, failures) = throttled_world();
    let request =
        || TokenRequest { authorization: basic("nobody", "s3cret"), client_address: here(), ..code_request("c") };
    for _ in 0..20 {
        assert_eq!(oauth_error(service.token(request()).await).error_code(), "invalid_client");
    }
    assert_eq!(retry_after(service.token(request()).await), 300);
    assert_eq!(failures.on("address:192.0.2.10"), 20);
}

#[tokio::test]
async fn requests_without_a_secret_are_neither_counted_nor_limited() {
    let (service, _, failures) = throttled_world();
    // A confidential client without its secret, and an unknown client: refused, not counted.
    for _ in 0..21 {
        let request = TokenRequest {
            authorization: None,
            client_id: Some("portal".into()),
            client_address: here(),
            ..code_request("c")
        };
        assert_eq!(oauth_error(service.token(request).await).error_code(), "invalid_client");
        let request = TokenRequest {
            client_id: Some("nobody".into()),
            client_address: here(),
            ..spa_request("c", Some(VERIFIER))
        };
        assert_eq!(oauth_error(service.token(request).await).error_code(), "invalid_client");
    }
    assert_eq!(failures.recorded(), 0);
    // Secrets sent for the public client count against the address…
    for _ in 0..5 {
        let request = TokenRequest {
            client_secret: Some("guess".into()),
            client_address: here(),
            ..spa_request("c", Some(VERIFIER))
        };
        assert_eq!(oauth_error(service.token(request).await).error_code(), "invalid_client");
    }
    assert_eq!(failures.on("address:192.0.2.10"), 5);
    // …but the public client itself, which has no secret to guess, still gets its tokens.
    let code = code_for(&service, &spa_params()).await;
    assert!(service.token(spa_request(&code, Some(VERIFIER))).await.is_ok());
}
