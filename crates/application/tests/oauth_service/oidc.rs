//! OpenID Connect on `OAuthService`, over the same fakes (a module of
//! `oauth_service.rs`): the ID token with the code exchange and the refresh,
//! `max_age`, `openid` without an issuer, and the logout steps.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use credencial_application::LogoutStep;
use credencial_domain::oauth::discovery::IssuerUrl;
use credencial_domain::oauth::id_token::{at_hash, IdTokenClaims};
use credencial_domain::oauth::logout::LogoutParams;
use credencial_domain::JwtAlgorithm;
use serde_json::Value;

use super::*;

const ISSUER: &str = "https://id.example.gov.br";

/// The provider's issuer in these tests.
pub(super) fn issuer() -> IssuerUrl {
    IssuerUrl::parse(ISSUER).expect("valid")
}

fn key_file(name: &str) -> Vec<u8> {
    let path = format!("{}/../domain/tests/keys/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The ID-token codec of the test keys `rsa` (or `rsa_other`).
fn rsa_codec(name: &str) -> TokenCodec {
    let keys = JwtKeys::from_private_pem(JwtAlgorithm::RS256, &key_file(&format!("{name}_private.pem"))).expect("key");
    TokenCodec::new(keys, 0).expect("codec")
}

/// The provider's ID-token codec.
pub(super) fn id_token_codec() -> TokenCodec {
    rsa_codec("rsa")
}

fn openid_world() -> World {
    World { openid: true, ..World::new() }
}

/// The claims of an ID token, after checking its signature with the
/// provider's key.
fn id_claims(token: &str) -> IdTokenClaims {
    id_token_codec().verified_payload(token).expect("signed with the provider's key")
}

/// The claims of one of our tokens issued to a client application (signed
/// with the provider's key, as every client token is when there is one),
/// whatever the time.
fn claims_of(token: &str) -> Claims {
    id_token_codec().verified_payload(token).expect("one of ours, signed with the provider's key")
}

fn oidc_params(scope: &str, nonce: Option<&str>, max_age: Option<&str>) -> AuthorizationParams {
    AuthorizationParams { nonce: nonce.map(str::to_owned), max_age: max_age.map(str::to_owned), ..portal_params(scope) }
}

#[tokio::test]
async fn an_openid_code_exchange_returns_an_id_token_of_the_login_with_the_nonce_and_at_hash() {
    let (service, handles) = openid_world().service();
    let session = ana_session(&service).await;
    handles.now.fetch_add(30, Ordering::SeqCst);
    let p = oidc_params("openid profile cnes", Some("n-0S6 é"), None);
    let code = redirected(service.approve(&session, &p).await.expect("approve"))["code"].clone();
    let tokens = service.token(code_request(&code)).await.expect("tokens");
    assert_eq!(tokens.scope, "openid dados_publicos cpf email cnes");
    let id = id_claims(tokens.id_token.as_deref().expect("an ID token with openid"));
    assert_eq!((id.iss.as_str(), id.sub.as_str(), id.aud.as_str()), (ISSUER, "42", "portal"));
    assert_eq!(id.nonce.as_deref(), Some("n-0S6 é"), "echoed exactly");
    assert_eq!(id.auth_time, Some(NOW), "the session's start, not the exchange's time");
    assert_eq!((id.iat, id.exp), (NOW + 30, NOW + 30 + 300));
    assert_eq!(id.at_hash.as_deref(), Some(at_hash(&tokens.access_token).as_str()));
    assert_eq!(id.amr, ["pwd"]);
    assert_eq!((id.email.as_deref(), id.email_verified), (Some("ana@example.gov.br"), Some(true)));
    let reads = handles.identity_reads.lock().expect("lock").clone();
    assert_eq!(reads.len(), 1, "the address read is logged once");
    assert_eq!((reads[0].client.as_str(), reads[0].scopes.to_scope_string()), ("portal", "email".to_owned()));
    // The OAuth2 tokens carry the login time for the refresh's ID token.
    assert_eq!(claims_of(&tokens.access_token).auth_time, Some(NOW));
    assert_eq!(
        claims_of(tokens.refresh_token.as_deref().expect("a refresh token")).scope.as_deref(),
        Some("openid dados_publicos cpf email cnes")
    );
}

#[tokio::test]
async fn a_refresh_keeps_openid_and_gives_a_new_id_token_without_nonce_unless_narrowed_away() {
    let (service, handles) = openid_world().service();
    let code = code_for(&service, &oidc_params("openid", Some("n1"), None)).await;
    let first = service.token(code_request(&code)).await.expect("tokens");
    handles.now.fetch_add(60, Ordering::SeqCst);
    let renewed = service
        .token(refresh_request(first.refresh_token.as_deref().expect("a refresh token"), None))
        .await
        .expect("refresh");
    let id = id_claims(renewed.id_token.as_deref().expect("a new ID token"));
    let before = id_claims(first.id_token.as_deref().expect("id token"));
    assert_eq!((id.sub, id.aud, id.auth_time), (before.sub, before.aud, before.auth_time));
    assert_eq!((id.nonce, id.iat), (None, NOW + 60), "no nonce on a refresh (OIDC Core §12.2)");
    assert_eq!(id.at_hash.as_deref(), Some(at_hash(&renewed.access_token).as_str()));

    assert_eq!(id.email.as_deref(), Some("ana@example.gov.br"), "read again for the new ID token");
    assert_eq!(handles.identity_reads.lock().expect("lock").len(), 2);

    let narrowed = service
        .token(refresh_request(renewed.refresh_token.as_deref().expect("a refresh token"), Some("cpf")))
        .await
        .expect("refresh");
    assert_eq!(handles.identity_reads.lock().expect("lock").len(), 2, "no ID token, no read");
    assert!(narrowed.id_token.is_none(), "an access token without openid has no ID token");
    assert_eq!(
        claims_of(narrowed.refresh_token.as_deref().expect("a refresh token")).scope.as_deref(),
        Some("openid dados_publicos cpf email")
    );
}

#[tokio::test]
async fn without_openid_or_without_an_issuer_there_is_no_id_token() {
    let (service, _) = openid_world().service();
    let code = code_for(&service, &portal_params("cnes")).await;
    assert!(service.token(code_request(&code)).await.expect("tokens").id_token.is_none());

    let (plain, _) = World::new().service();
    assert!(!plain.openid_enabled() && plain.discovery(credencial_endpoints()).is_none());
    let session = ana_session(&plain).await;
    let q = redirected(plain.authorize(Some(&session), &oidc_params("openid", None, None)).await.expect("answer"));
    assert_eq!((q["error"].as_str(), q["state"].as_str()), ("invalid_scope", "st&te 1"));
}

fn credencial_endpoints() -> credencial_domain::oauth::discovery::EndpointPaths {
    credencial_domain::oauth::discovery::EndpointPaths {
        authorization: "/oauth/authorize/",
        token: "/oauth/token/",
        userinfo: "/oauth/userinfo/",
        end_session: "/oauth/logout/",
        revocation: "/oauth/revoke/",
        introspection: "/oauth/introspect/",
    }
}

#[tokio::test]
async fn the_discovery_document_names_the_issuer_and_the_keys_algorithms() {
    let (service, _) = openid_world().service();
    let doc = service.discovery(credencial_endpoints()).expect("on");
    assert_eq!(
        (doc.issuer.as_str(), doc.jwks_uri.as_str()),
        (ISSUER, "https://id.example.gov.br/.well-known/jwks.json")
    );
    assert_eq!(doc.id_token_signing_alg_values_supported, ["RS256"]);
    // Access tokens are signed with the provider's key pair too (one key
    // per kind: the HS256 secret is the first-party tokens').
    assert_eq!(doc.credencial_access_token_signing_alg, "RS256");
    assert!(doc.credencial_access_token_key_published);
}

#[tokio::test]
async fn max_age_sends_an_older_session_back_to_the_login_form() {
    let (service, handles) = openid_world().service();
    let session = ana_session(&service).await;
    service.approve(&session, &oidc_params("openid", None, None)).await.expect("consent stored");
    handles.now.fetch_add(100, Ordering::SeqCst);
    let ask = |max_age: &'static str, prompt: Option<&'static str>| {
        let mut p = oidc_params("openid", None, Some(max_age));
        p.prompt = prompt.map(str::to_owned);
        p
    };
    let step = service.authorize(Some(&session), &ask("100", None)).await.expect("answer");
    assert!(redirected(step).contains_key("code"), "exactly max_age old: still recent");
    for (max_age, why) in [("99", "older than max_age"), ("0", "max_age=0 is prompt=login")] {
        let step = service.authorize(Some(&session), &ask(max_age, None)).await.expect("answer");
        assert!(matches!(step, AuthorizationStep::LogIn { .. }), "{why}: {step:?}");
    }
    let q = redirected(service.authorize(Some(&session), &ask("99", Some("none"))).await.expect("answer"));
    assert_eq!(q["error"], "login_required");
}

// ---------------------------------------------------------------- logout

/// An ID token of ana for portal, as the provider issues it.
async fn ana_id_token(service: &OAuthService) -> String {
    let code = code_for(service, &oidc_params("openid", None, None)).await;
    service.token(code_request(&code)).await.expect("tokens").id_token.expect("id token").0
}

fn logout(hint: Option<&str>, uri: Option<&str>, client: Option<&str>) -> LogoutParams {
    LogoutParams {
        id_token_hint: hint.map(str::to_owned),
        post_logout_redirect_uri: uri.map(str::to_owned),
        state: Some("bye".into()),
        client_id: client.map(str::to_owned),
    }
}

#[tokio::test]
async fn a_hint_for_the_session_s_person_ends_it_at_once_and_returns_to_a_registered_uri() {
    let (service, _) = openid_world().service();
    let hint = ana_id_token(&service).await;
    let session = ana_session(&service).await;
    let step = service.logout(Some(&session), &logout(Some(&hint), Some(PORTAL_AFTER_LOGOUT), None)).await;
    assert_eq!(
        step.expect("answer"),
        LogoutStep::Done {
            location: Some(format!("{PORTAL_AFTER_LOGOUT}?state=bye")),
            client_name: Some("Portal <do> Servidor".into()),
        }
    );
    // An unregistered URI is never followed; without a session nothing waits.
    let step = service.logout(None, &logout(None, Some("https://evil.example/"), Some("portal"))).await;
    assert!(matches!(step.expect("answer"), LogoutStep::Done { location: None, .. }));
}

#[tokio::test]
async fn without_a_hint_a_session_confirms_on_a_form_bound_to_the_request() {
    let (service, _) = openid_world().service();
    let session = ana_session(&service).await;
    let params = logout(None, Some(PORTAL_AFTER_LOGOUT), Some("portal"));
    let step = service.logout(Some(&session), &params).await.expect("answer");
    assert!(matches!(step, LogoutStep::Confirm { location: Some(_), .. }), "{step:?}");
    let token = service.logout_form_token(&session, &params);
    assert!(service.logout_form_token_matches(&session, &params, &token));
    let other = LogoutParams { state: Some("other".into()), ..params.clone() };
    assert!(!service.logout_form_token_matches(&session, &other, &token), "bound to the request");
    let another_session = ana_session(&service).await;
    assert!(!service.logout_form_token_matches(&another_session, &params, &token), "keyed by the session");
    let done = service.confirm_logout(&params).await.expect("answer");
    assert!(matches!(done, LogoutStep::Done { location: Some(l), .. } if l.ends_with("saiu?state=bye")));
}

#[tokio::test]
async fn a_forged_hint_or_a_contradicting_client_is_refused() {
    let (service, _) = openid_world().service();
    let hint = ana_id_token(&service).await;
    let session = ana_session(&service).await;
    // The same claims, signed with another key.
    let claims: Value = id_token_codec().verified_payload(&hint).expect("ours");
    let forged = rsa_codec("rsa_other").encode(&claims).expect("signed");
    let garbage = format!("{}.{}.x", URL_SAFE_NO_PAD.encode("{}"), URL_SAFE_NO_PAD.encode("{}"));
    for bad in [forged.as_str(), garbage.as_str(), "nothing"] {
        let step = service.logout(Some(&session), &logout(Some(bad), Some(PORTAL_AFTER_LOGOUT), None)).await;
        assert!(matches!(step.expect("answer"), LogoutStep::Refused(OAuthError::InvalidRequest(_))), "{bad}");
    }
    let step = service.logout(Some(&session), &logout(Some(&hint), None, Some("spa"))).await;
    assert!(matches!(step.expect("answer"), LogoutStep::Refused(OAuthError::InvalidRequest(_))));
}
