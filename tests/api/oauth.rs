//! The OAuth2 authorization-code flow over real HTTP, as a browser and a
//! client application drive it: a cookie jar, form posts, redirects read
//! from `Location` (nothing follows them), the token endpoint, and the
//! profile endpoint with the access token it issues.

use std::collections::HashMap;

use credencial::settings::Settings;
use credencial_domain::oauth::{ClientId, CodeGrant, CodeHash};
use credencial_domain::{DjangoPbkdf2, ScopeSet, UserId};
use credencial_ports::{NewAuthorizationCode, OAuthClient};
use reqwest::header::{CACHE_CONTROL, PRAGMA, WWW_AUTHENTICATE};
use serde_json::Value;
use url::Url;

use crate::helpers::{hidden_fields, spawn_app_with, status_and_json, with, Browser, Page, TestApp, ITERATIONS};

/// The redirect URI of the confidential client `portal`.
pub(crate) const PORTAL_URI: &str = "https://portal.example.gov.br/callback";
/// The secret of `portal`.
pub(crate) const PORTAL_SECRET: &str = "portal-secret-0123456789";
const SPA_URI: &str = "http://127.0.0.1:9/cb";
/// RFC 7636 Appendix B.
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

// ------------------------------------------------------------------ setup

/// The app with a confidential client `portal` (`cnes` and
/// `formacao_academica` enabled), a public client `spa` (`cnes` enabled),
/// and the user ana.
pub(crate) async fn app() -> (TestApp, i64) {
    app_with(|_| {}).await
}

/// [`app`] after `adjust` has changed the test settings.
pub(crate) async fn app_with(adjust: impl FnOnce(&mut Settings)) -> (TestApp, i64) {
    let app = spawn_app_with(adjust).await;
    let ana = register_clients(&app).await;
    (app, ana)
}

/// Registers `portal` and `spa` and creates ana on `app`; returns ana's id.
pub(crate) async fn register_clients(app: &TestApp) -> i64 {
    let clients = app.db.storage().clients;
    let secret_hash = DjangoPbkdf2::derive(PORTAL_SECRET, "clientsalt", ITERATIONS).expect("hash").encode();
    clients
        .create(
            OAuthClient {
                client_id: ClientId::parse("portal").expect("id"),
                name: "Portal do Servidor".into(),
                secret_hash: Some(secret_hash),
                redirect_uris: vec![PORTAL_URI.into()],
                post_logout_redirect_uris: vec![],
                confidential: true,
                require_pkce: false,
                requires_second_factor: false,
                minimum_govbr_level: None,
                enabled_scopes: ScopeSet::parse_strict("cnes formacao_academica").expect("known"),
                is_active: true,
                created_at: 0,
                backchannel_logout_uri: None,
            },
            &credencial_adapters_postgres::testing::setup_audit(),
        )
        .await
        .expect("portal");
    clients
        .create(
            OAuthClient {
                client_id: ClientId::parse("spa").expect("id"),
                name: "Painel <SPA>".into(),
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
            },
            &credencial_adapters_postgres::testing::setup_audit(),
        )
        .await
        .expect("spa");
    app.add_user("ana", "ana-password", true).await
}

/// Stores the code `code` for `user` at `portal` (required scopes, no
/// PKCE), expiring at `expires_at` (Unix seconds), and the consent it
/// stands for (as the consent page's approval stores both).
pub(crate) async fn store_portal_code(app: &TestApp, user: i64, code: &str, expires_at: i64) {
    app.db
        .storage()
        .grants
        .widen(UserId(user), &ClientId::parse("portal").expect("id"), ScopeSet::required(), expires_at - 60)
        .await
        .expect("grant");
    app.db
        .storage()
        .codes
        .store(NewAuthorizationCode {
            code_hash: CodeHash::of(code),
            grant: CodeGrant {
                client_id: ClientId::parse("portal").expect("id"),
                user_id: UserId(user),
                redirect_uri: PORTAL_URI.into(),
                redirect_uri_explicit: true,
                scopes: ScopeSet::required(),
                code_challenge: None,
                expires_at,
                nonce: None,
                auth_time: None,
                acr: None,
                amr: None,
                sid: None,
            },
            session: None,
        })
        .await
        .expect("stored");
}

/// `/oauth/authorize/?…` for these parameters.
pub(crate) fn authorize_path(pairs: &[(&str, &str)]) -> String {
    let query = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish();
    format!("/oauth/authorize/?{query}")
}

pub(crate) fn portal_request(scope: &str, state: &str) -> String {
    authorize_path(&[
        ("response_type", "code"),
        ("client_id", "portal"),
        ("redirect_uri", PORTAL_URI),
        ("scope", scope),
        ("state", state),
    ])
}

fn spa_request(state: &str) -> String {
    authorize_path(&[
        ("response_type", "code"),
        ("client_id", "spa"),
        ("redirect_uri", SPA_URI),
        ("scope", "cnes"),
        ("state", state),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ])
}

/// Opens `path`, logs in on the form and lands on the consent page.
pub(crate) async fn consent_page(browser: &mut Browser, path: &str, username: &str, password: &str) -> Page {
    let consent = after_login(browser, path, username, password).await;
    assert_eq!(consent.status, 200, "{}", consent.body);
    assert!(consent.body.contains("Autorizar acesso"), "consent page expected: {}", consent.body);
    consent
}

/// Opens `path`, logs in on the form and follows the way back to the
/// authorization request: the consent page, or (consent remembered) the
/// redirect to the client.
pub(crate) async fn after_login(browser: &mut Browser, path: &str, username: &str, password: &str) -> Page {
    let login = browser.get(path).await;
    assert_eq!(login.status, 200, "{}", login.body);
    assert!(login.body.contains("Entrar"), "login form expected: {}", login.body);
    let fields = with(hidden_fields(&login.body), &[("username", username), ("password", password)]);
    let logged_in = browser.post("/oauth/authorize/", &fields).await;
    assert_eq!(logged_in.status, 303, "{}", logged_in.body);
    let back = logged_in.location.expect("back to the authorization request");
    assert!(back.starts_with("/oauth/authorize/?"), "{back}");
    assert!(
        logged_in.set_cookies.iter().any(|c| c.starts_with("credencial_session=")
            && c.contains("HttpOnly")
            && c.contains("SameSite=Lax")
            && c.contains("Path=/;")),
        "{:?}",
        logged_in.set_cookies
    );
    browser.get(&back).await
}

/// Approves or denies on `consent`; returns the redirect's `Location`.
pub(crate) async fn decide(browser: &mut Browser, consent: &Page, action: &str) -> String {
    let answer = browser.post("/oauth/authorize/", &with(hidden_fields(&consent.body), &[("action", action)])).await;
    assert_eq!(answer.status, 303, "{}", answer.body);
    answer.location.expect("Location")
}

/// The query of a redirect to `redirect_uri`.
pub(crate) fn callback(location: &str, redirect_uri: &str) -> HashMap<String, String> {
    assert!(location.starts_with(redirect_uri), "{location} does not go to {redirect_uri}");
    Url::parse(location).expect("url").query_pairs().into_owned().collect()
}

/// Runs the whole browser part for `path` as ana (approving on the consent
/// page, unless her consent is remembered) and returns the code.
async fn code_for(app: &TestApp, path: &str, redirect_uri: &str) -> String {
    let mut browser = Browser::new(app);
    let page = after_login(&mut browser, path, "ana", "ana-password").await;
    let location = match page.status {
        302 => page.location.expect("Location"),
        _ => {
            assert!(page.body.contains("Autorizar acesso"), "consent page expected: {}", page.body);
            decide(&mut browser, &page, "approve").await
        }
    };
    callback(&location, redirect_uri).remove("code").expect("code")
}

pub(crate) async fn token_request(
    app: &TestApp,
    basic: Option<(&str, &str)>,
    form: &[(&str, &str)],
) -> reqwest::Response {
    let mut request = app.client.post(format!("{}/oauth/token/", app.address)).form(form);
    if let Some((id, secret)) = basic {
        request = request.basic_auth(id, Some(secret));
    }
    request.send().await.expect("sent")
}

async fn exchange_portal_code(app: &TestApp, code: &str) -> (u16, Value) {
    let form = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", PORTAL_URI)];
    status_and_json(token_request(app, Some(("portal", PORTAL_SECRET)), &form).await).await
}

async fn exchange_spa_code(app: &TestApp, code: &str, verifier: &str) -> (u16, Value) {
    let form = [
        ("grant_type", "authorization_code"),
        ("client_id", "spa"),
        ("code", code),
        ("redirect_uri", SPA_URI),
        ("code_verifier", verifier),
    ];
    status_and_json(token_request(app, None, &form).await).await
}

async fn profile_of(app: &TestApp, access: &str) -> (u16, Value) {
    let r = app.client.post(format!("{}/api/perfil/dados/", app.address)).bearer_auth(access).send().await;
    status_and_json(r.expect("sent")).await
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object().expect("object").keys().cloned().collect()
}

pub(crate) fn claims(token: &str) -> Value {
    use base64::Engine;
    let payload = token.split('.').nth(1).expect("JWT");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).expect("base64url");
    serde_json::from_slice(&bytes).expect("claims")
}

fn error_of(body: &Value) -> &str {
    body["error"].as_str().unwrap_or_else(|| panic!("no error in {body}"))
}

// ------------------------------------------------------------- full flows

#[tokio::test]
async fn a_confidential_client_gets_tokens_for_a_code_reads_the_profile_and_rotates_the_refresh_token() {
    // No grace window: the rotated token is dead at once.
    let (app, ana) = app_with(|s| s.tokens.refresh_grace_secs = 0).await;
    let mut browser = Browser::new(&app);
    let consent =
        consent_page(&mut browser, &portal_request("cnes formacao_academica", "s-1"), "ana", "ana-password").await;
    for description in [
        "Seu nome e sua foto de perfil",
        "Seu CPF",
        "Seu endereço de e-mail",
        "Seus vínculos profissionais no CNES",
        "Sua formação acadêmica",
    ] {
        assert!(consent.body.contains(description), "{description} missing from the consent page");
    }
    assert!(consent.body.contains("Portal do Servidor"));
    let location = decide(&mut browser, &consent, "approve").await;
    let query = callback(&location, PORTAL_URI);
    assert_eq!(query["state"], "s-1");
    let code = &query["code"];

    let r = token_request(
        &app,
        Some(("portal", PORTAL_SECRET)),
        &[("grant_type", "authorization_code"), ("code", code), ("redirect_uri", PORTAL_URI)],
    )
    .await;
    assert_eq!(r.headers().get(CACHE_CONTROL).map(|v| v.to_str().ok()), Some(Some("no-store")));
    assert_eq!(r.headers().get(PRAGMA).map(|v| v.to_str().ok()), Some(Some("no-cache")));
    let (status, tokens) = status_and_json(r).await;
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(keys(&tokens), ["access_token", "expires_in", "refresh_token", "scope", "token_type"]);
    assert_eq!((tokens["token_type"].as_str(), tokens["expires_in"].as_i64()), (Some("Bearer"), Some(300)));
    assert_eq!(tokens["scope"], "dados_publicos cpf email cnes formacao_academica");
    let access = tokens["access_token"].as_str().expect("access");
    let c = claims(access);
    assert_eq!((c["token_type"].as_str(), c["user_id"].as_i64()), (Some("oauth_access"), Some(ana)));
    assert_eq!((c["client_id"].as_str(), c["scope"].as_str()), (Some("portal"), tokens["scope"].as_str()));
    // RFC 9068 §2.1: typed as an access token, and signed with the
    // provider's published key pair, not the secret SUAP-side APIs share.
    let header = jsonwebtoken::decode_header(access).expect("header");
    assert_eq!((header.typ.as_deref(), header.alg), (Some("at+jwt"), jsonwebtoken::Algorithm::RS256));
    let refresh_claims = claims(tokens["refresh_token"].as_str().expect("refresh"));
    assert_eq!(refresh_claims["token_type"], "oauth_refresh");

    let (status, profile) = profile_of(&app, access).await;
    assert_eq!(status, 200, "{profile}");
    assert_eq!(keys(&profile), ["avatar", "cnes", "cpf", "email", "formacao_academica", "name"]);
    assert_eq!(profile["name"], "Full ana");

    let refresh = tokens["refresh_token"].as_str().expect("refresh");
    let form = [("grant_type", "refresh_token"), ("refresh_token", refresh)];
    let (status, renewed) = status_and_json(token_request(&app, Some(("portal", PORTAL_SECRET)), &form).await).await;
    assert_eq!(status, 200, "{renewed}");
    assert_ne!(renewed["refresh_token"], tokens["refresh_token"]);
    assert_eq!(renewed["scope"], tokens["scope"]);
    let (status, again) = status_and_json(token_request(&app, Some(("portal", PORTAL_SECRET)), &form).await).await;
    assert_eq!((status, error_of(&again)), (400, "invalid_grant"), "the rotated refresh token is dead");
    let (status, _) = profile_of(&app, renewed["access_token"].as_str().expect("access")).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_public_client_proves_the_code_with_pkce_and_a_wrong_verifier_is_invalid_grant() {
    let (app, _) = app().await;
    let code = code_for(&app, &spa_request("p"), SPA_URI).await;
    let (status, tokens) = exchange_spa_code(&app, &code, VERIFIER).await;
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(tokens["scope"], "dados_publicos cpf email cnes");
    let (status, profile) = profile_of(&app, tokens["access_token"].as_str().expect("access")).await;
    assert_eq!(
        (status, keys(&profile)),
        (200, vec!["avatar".into(), "cnes".into(), "cpf".into(), "email".into(), "name".into()])
    );

    let code = code_for(&app, &spa_request("p"), SPA_URI).await;
    let (status, body) = exchange_spa_code(&app, &code, &"a".repeat(43)).await;
    assert_eq!((status, error_of(&body)), (400, "invalid_grant"));
    let (status, body) = exchange_spa_code(&app, &code, VERIFIER).await;
    assert_eq!((status, error_of(&body)), (400, "invalid_grant"), "a failed exchange burns the code");
}

#[tokio::test]
async fn a_public_client_without_pkce_is_sent_back_with_invalid_request() {
    let (app, _) = app().await;
    let mut browser = Browser::new(&app);
    let path =
        authorize_path(&[("response_type", "code"), ("client_id", "spa"), ("redirect_uri", SPA_URI), ("state", "x")]);
    let page = browser.get(&path).await;
    assert_eq!(page.status, 302);
    let query = callback(&page.location.expect("Location"), SPA_URI);
    assert_eq!((query["error"].as_str(), query["state"].as_str()), ("invalid_request", "x"));
}

// --------------------------------------------------------------- refusals

async fn refresh_portal_token(app: &TestApp, refresh: &str) -> (u16, Value) {
    let form = [("grant_type", "refresh_token"), ("refresh_token", refresh)];
    status_and_json(token_request(app, Some(("portal", PORTAL_SECRET)), &form).await).await
}

#[tokio::test]
async fn a_replayed_code_is_invalid_grant_and_revokes_the_refresh_tokens_it_issued() {
    let (app, _) = app().await;
    let code = code_for(&app, &portal_request("", "r"), PORTAL_URI).await;
    let (status, first) = exchange_portal_code(&app, &code).await;
    assert_eq!(status, 200, "{first}");
    let (status, rotated) = refresh_portal_token(&app, first["refresh_token"].as_str().expect("refresh")).await;
    assert_eq!(status, 200, "{rotated}");

    let (status, body) = exchange_portal_code(&app, &code).await;
    assert_eq!((status, error_of(&body)), (400, "invalid_grant"));
    assert!(body["error_description"].is_string());
    // RFC 6749 §4.1.2: the code was copied, so what it issued is revoked,
    // the rotated descendant included.
    let (status, body) = refresh_portal_token(&app, rotated["refresh_token"].as_str().expect("refresh")).await;
    assert_eq!((status, error_of(&body)), (400, "invalid_grant"), "{body}");
}

#[tokio::test]
async fn a_replayed_oauth_refresh_token_revokes_its_family() {
    let (app, _) = app_with(|s| s.tokens.refresh_grace_secs = 0).await;
    let code = code_for(&app, &portal_request("", "r"), PORTAL_URI).await;
    let (_, first) = exchange_portal_code(&app, &code).await;
    let old = first["refresh_token"].as_str().expect("refresh").to_owned();
    let (status, rotated) = refresh_portal_token(&app, &old).await;
    assert_eq!(status, 200, "{rotated}");
    let (status, body) = refresh_portal_token(&app, &old).await;
    assert_eq!((status, error_of(&body)), (400, "invalid_grant"));
    let (status, body) = refresh_portal_token(&app, rotated["refresh_token"].as_str().expect("refresh")).await;
    assert_eq!((status, error_of(&body)), (400, "invalid_grant"), "the family is revoked: {body}");
}

#[tokio::test]
async fn another_redirect_uri_at_the_token_endpoint_is_invalid_grant() {
    let (app, _) = app().await;
    let code = code_for(&app, &portal_request("", "r"), PORTAL_URI).await;
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", "https://portal.example.gov.br/other"),
    ];
    let (status, body) = status_and_json(token_request(&app, Some(("portal", PORTAL_SECRET)), &form).await).await;
    assert_eq!((status, error_of(&body)), (400, "invalid_grant"));
}

#[tokio::test]
async fn an_unregistered_redirect_uri_at_authorize_is_an_html_400_and_never_a_redirect() {
    let (app, _) = app().await;
    let mut browser = Browser::new(&app);
    for path in [
        authorize_path(&[
            ("response_type", "code"),
            ("client_id", "portal"),
            ("redirect_uri", "https://evil.example/cb"),
            ("state", "s"),
        ]),
        authorize_path(&[("response_type", "code"), ("client_id", "nobody"), ("redirect_uri", PORTAL_URI)]),
        authorize_path(&[("response_type", "code"), ("client_id", "portal"), ("client_id", "spa")]),
    ] {
        let page = browser.get(&path).await;
        assert_eq!(page.status, 400, "{path}: {}", page.body);
        assert_eq!(page.location, None);
        assert!(page.headers["content-type"].to_str().expect("ascii").starts_with("text/html"));
        assert!(page.body.contains("<h1>"), "{}", page.body);
        assert!(!page.body.contains("evil.example"), "the bad URI is not echoed as a link");
        // No English technical detail for the person: the request's code,
        // under which the detail is logged.
        let id = page.headers["x-request-id"].to_str().expect("ascii");
        assert!(page.body.contains(&format!("informe o código {id}.")), "{}", page.body);
        for english in ["invalid_request", "invalid_client", "Detalhe técnico", "redirect_uri"] {
            assert!(!page.body.contains(english), "{english} in {}", page.body);
        }
    }
}

#[tokio::test]
async fn a_wrong_client_secret_is_401_invalid_client_with_a_basic_challenge() {
    let (app, _) = app().await;
    let code = code_for(&app, &portal_request("", "r"), PORTAL_URI).await;
    let form = [("grant_type", "authorization_code"), ("code", code.as_str()), ("redirect_uri", PORTAL_URI)];
    let r = token_request(&app, Some(("portal", "not-the-secret")), &form).await;
    assert!(r.headers().get(WWW_AUTHENTICATE).is_some_and(|v| v.to_str().is_ok_and(|s| s.starts_with("Basic"))));
    let (status, body) = status_and_json(r).await;
    assert_eq!((status, error_of(&body)), (401, "invalid_client"));
    let (status, body) =
        status_and_json(token_request(&app, None, &with_post_secret(&form, "portal", "not-the-secret")).await).await;
    assert_eq!((status, error_of(&body)), (401, "invalid_client"), "client_secret_post too");
    assert_eq!(exchange_portal_code(&app, &code).await.0, 200, "the code was not spent by the failures");
}

fn with_post_secret<'a>(form: &[(&'a str, &'a str)], id: &'a str, secret: &'a str) -> Vec<(&'a str, &'a str)> {
    let mut v = form.to_vec();
    v.extend([("client_id", id), ("client_secret", secret)]);
    v
}

#[tokio::test]
async fn an_expired_code_is_invalid_grant() {
    let (app, ana) = app().await;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs() as i64;
    store_portal_code(&app, ana, "an-expired-code", now - 1).await;
    let (status, body) = exchange_portal_code(&app, "an-expired-code").await;
    assert_eq!((status, error_of(&body)), (400, "invalid_grant"));
}

#[tokio::test]
async fn unsupported_grant_types_and_json_bodies_are_refused() {
    let (app, _) = app().await;
    let (status, body) =
        status_and_json(token_request(&app, Some(("portal", PORTAL_SECRET)), &[("grant_type", "password")]).await)
            .await;
    assert_eq!((status, error_of(&body)), (400, "unsupported_grant_type"));
    let (status, body) = status_and_json(token_request(&app, Some(("portal", PORTAL_SECRET)), &[]).await).await;
    assert_eq!((status, error_of(&body)), (400, "invalid_request"));
    let r = app
        .client
        .post(format!("{}/oauth/token", app.address))
        .json(&serde_json::json!({"grant_type": "authorization_code", "code": "x"}))
        .send()
        .await
        .expect("sent");
    let (status, body) = status_and_json(r).await;
    assert_eq!((status, error_of(&body)), (400, "invalid_request"), "JSON is refused (and no trailing slash is fine)");
    let r = app.client.get(format!("{}/oauth/token/", app.address)).send().await.expect("sent");
    assert_eq!(r.headers().get("allow").map(|v| v.to_str().ok()), Some(Some("POST")));
    assert_eq!(r.status(), 405);
}

#[tokio::test]
async fn an_unknown_scope_is_sent_back_as_invalid_scope_with_state() {
    let (app, _) = app().await;
    let mut browser = Browser::new(&app);
    let page = browser.get(&portal_request("cpf openid", "st 9")).await;
    assert_eq!(page.status, 302, "{}", page.body);
    let query = callback(&page.location.expect("Location"), PORTAL_URI);
    assert_eq!((query["error"].as_str(), query["state"].as_str()), ("invalid_scope", "st 9"));
}

#[tokio::test]
async fn a_scope_not_enabled_for_the_client_stays_out_of_the_token_and_the_profile() {
    let (app, _) = app().await;
    let mut browser = Browser::new(&app);
    let consent = consent_page(&mut browser, &portal_request("cnes receita_federal", "s"), "ana", "ana-password").await;
    assert!(!consent.body.contains("Receita Federal"), "not offered on the consent page");
    let location = decide(&mut browser, &consent, "approve").await;
    let code = callback(&location, PORTAL_URI).remove("code").expect("code");
    let (status, tokens) = exchange_portal_code(&app, &code).await;
    assert_eq!(status, 200);
    assert_eq!(tokens["scope"], "dados_publicos cpf email cnes");
    let (_, profile) = profile_of(&app, tokens["access_token"].as_str().expect("access")).await;
    assert!(profile.get("receita_federal").is_none(), "{profile}");
    assert!(profile.get("cnes").is_some());
}

#[tokio::test]
async fn denied_consent_goes_back_with_access_denied_and_the_state() {
    let (app, _) = app().await;
    let mut browser = Browser::new(&app);
    let consent = consent_page(&mut browser, &portal_request("cnes", "keep=this&that"), "ana", "ana-password").await;
    let location = decide(&mut browser, &consent, "deny").await;
    let query = callback(&location, PORTAL_URI);
    assert_eq!((query["error"].as_str(), query["state"].as_str()), ("access_denied", "keep=this&that"));
    assert!(!query.contains_key("code"));
}

#[tokio::test]
async fn a_wrong_password_shows_the_form_again_and_answers_like_an_unknown_user() {
    let (app, _) = app().await;
    let mut browser = Browser::new(&app);
    let login = browser.get(&portal_request("", "s")).await;
    let mut answers = Vec::new();
    // (A username with a NUL is refused before any check: tests/api/control_characters.rs.)
    for (user, password) in [("ana", "wrong"), ("nobody", "ana-password")] {
        let fields = with(hidden_fields(&login.body), &[("username", "u"), ("password", password)]);
        let fields: Vec<_> =
            fields.into_iter().map(|(k, v)| if k == "username" { (k, user.to_owned()) } else { (k, v) }).collect();
        let page = browser.post("/oauth/authorize/", &fields).await;
        assert_eq!(page.status, 200, "{}", page.body);
        assert!(page.body.contains("Usuário ou senha inválidos."), "{}", page.body);
        assert!(page.body.contains("name=\"password\""), "the form again");
        assert!(!browser.jar.contains_key("credencial_session"));
        // Only the echoed username differs (not a word of the page that happens to hold it).
        answers.push(page.body.replace(&format!("value=\"{user}\""), "value=\"<user>\""));
    }
    assert_eq!(answers[0], answers[1], "the same page for a wrong password and an unknown user");
}

#[tokio::test]
async fn forged_login_and_consent_posts_are_refused() {
    let (app, _) = app().await;
    // Login without the browser's form cookie (a cross-site post): the form again, no session.
    let mut browser = Browser::new(&app);
    let login = browser.get(&portal_request("", "s")).await;
    let fields = with(hidden_fields(&login.body), &[("username", "ana"), ("password", "ana-password")]);
    let mut stranger = Browser::new(&app);
    let page = stranger.post("/oauth/authorize/", &fields).await;
    assert_eq!(page.status, 400, "{}", page.body);
    assert!(!stranger.jar.contains_key("credencial_session"));

    // Consent with a token from another request, or none: refused, no code.
    let consent = consent_page(&mut browser, &portal_request("cnes", "s"), "ana", "ana-password").await;
    let tampered: Vec<_> = hidden_fields(&consent.body)
        .into_iter()
        .map(|(k, v)| if k == "scope" { (k, "cnes formacao_academica".to_owned()) } else { (k, v) })
        .collect();
    let page = browser.post("/oauth/authorize/", &with(tampered, &[("action", "approve")])).await;
    assert_eq!((page.status, page.location), (400, None));
    let without: Vec<_> = hidden_fields(&consent.body).into_iter().filter(|(k, _)| k != "csrf_token").collect();
    let page = browser.post("/oauth/authorize/", &with(without, &[("action", "approve")])).await;
    assert_eq!((page.status, page.location), (400, None));
}

#[tokio::test]
async fn a_login_post_the_browser_marks_as_from_another_origin_is_refused_even_with_the_cookie_and_token() {
    // The attacker fetched a form, and planted its cookie in the victim's
    // browser from a sibling subdomain: cookie and token match, only the
    // browser's fetch metadata tells the post apart from our own page's.
    let (app, _) = app().await;
    for (site, status) in [("same-site", 400), ("cross-site", 400), ("CROSS-SITE", 400), ("same-origin", 303)] {
        let mut browser = Browser::new(&app);
        let login = browser.get(&portal_request("", "s")).await;
        let fields = with(hidden_fields(&login.body), &[("username", "ana"), ("password", "ana-password")]);
        let request =
            app.client.post(format!("{}/oauth/authorize/", app.address)).header("sec-fetch-site", site).form(&fields);
        let page = browser.send(request).await;
        assert_eq!(page.status, status, "Sec-Fetch-Site: {site}: {}", page.body);
        assert_eq!(browser.jar.contains_key("credencial_session"), status == 303, "{site}");
        if status == 400 {
            assert!(page.body.contains("enviado a partir de outro site"), "{}", page.body);
        }
    }
}

#[tokio::test]
async fn the_session_cookie_is_no_token_anywhere_else_and_oauth_tokens_stay_in_their_lane() {
    let (app, _) = app().await;
    let mut browser = Browser::new(&app);
    let _ = consent_page(&mut browser, &portal_request("", "s"), "ana", "ana-password").await;
    // The cookie holds an opaque session id (the session is stored): no
    // JWT at all.
    let session = browser.jar["credencial_session"].clone();
    assert_eq!(session.matches('.').count(), 0, "{session}");
    let (status, body) =
        status_and_json(app.post_json("/api/token/verify/", &serde_json::json!({"token": session})).await).await;
    assert_eq!((status, body["code"].as_str()), (401, Some("token_not_valid")), "{body}");
    let (status, _) = profile_of(&app, &session).await;
    assert_eq!(status, 401);

    let code = code_for(&app, &portal_request("", "s"), PORTAL_URI).await;
    let (_, tokens) = exchange_portal_code(&app, &code).await;
    let refresh = serde_json::json!({"refresh": tokens["refresh_token"]});
    let (status, body) = status_and_json(app.post_json("/api/token/refresh/", &refresh).await).await;
    assert_eq!((status, body["detail"].as_str()), (401, Some("Token has wrong type")));
    let r = app
        .client
        .get(format!("{}/api/token/user-info/", app.address))
        .bearer_auth(tokens["access_token"].as_str().expect("access"))
        .send()
        .await
        .expect("sent");
    let (status, body) = status_and_json(r).await;
    assert_eq!((status, body["detail"].as_str()), (401, Some("Token has wrong type")));
    assert!(app.upstream.received_requests().await.unwrap_or_default().is_empty(), "nothing forwarded upstream");
}

#[tokio::test]
async fn verify_refuses_the_tokens_a_user_granted_to_a_client_application() {
    let (app, _) = app().await;
    let code = code_for(&app, &portal_request("", "s"), PORTAL_URI).await;
    let (_, tokens) = exchange_portal_code(&app, &code).await;
    for kind in ["access_token", "refresh_token"] {
        let token = tokens[kind].as_str().expect("token");
        // Anyone holding the key can tell the lane from the token alone.
        let claims = decode_payload(token);
        assert_eq!((claims["aud"].as_str(), claims["client_id"].as_str()), (Some("portal"), Some("portal")), "{kind}");
        let (status, body) =
            status_and_json(app.post_json("/api/token/verify/", &serde_json::json!({"token": token})).await).await;
        assert_eq!(
            (status, body["detail"].as_str(), body["code"].as_str()),
            (401, Some("Token has wrong type"), Some("token_not_valid")),
            "{kind}"
        );
    }
    // The client's access token still works in its own lane.
    let (status, _) = profile_of(&app, tokens["access_token"].as_str().expect("access")).await;
    assert_eq!(status, 200);
    // And a first-party pair carries no audience and is refused there.
    let (_, pair) = status_and_json(
        app.post_json("/api/token/pair/", &serde_json::json!({"username": "ana", "password": "ana-password"})).await,
    )
    .await;
    let access = pair["access"].as_str().expect("access");
    assert!(decode_payload(access).get("aud").is_none());
    let (status, _) = profile_of(&app, access).await;
    assert_eq!(status, 401);
}

/// The claims of a JWT, read without checking it (what a resource server
/// holding the key would see after its own check).
pub(crate) fn decode_payload(token: &str) -> serde_json::Value {
    use base64::Engine as _;
    let payload = token.split('.').nth(1).expect("payload");
    let json = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).expect("base64");
    serde_json::from_slice(&json).expect("json")
}

#[tokio::test]
async fn a_logged_in_browser_goes_straight_to_consent_without_trailing_slash_too() {
    let (app, _) = app().await;
    let mut browser = Browser::new(&app);
    let _ = consent_page(&mut browser, &portal_request("", "a"), "ana", "ana-password").await;
    let path = portal_request("cnes", "b").replacen("/oauth/authorize/", "/oauth/authorize", 1);
    let page = browser.get(&path).await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("Autorizar acesso"), "{}", page.body);
    assert_eq!(page.headers["x-frame-options"], "DENY");
    assert!(page.headers["content-security-policy"].to_str().expect("ascii").contains("frame-ancestors 'none'"));
}

// ------------------------------------------------------------------- demo

#[tokio::test]
async fn the_demo_client_runs_the_flow_for_ana_and_her_cnes_bonds_become_experiences() {
    use crate::helpers::TestDatabase;
    use credencial::demo;
    use credencial::startup::{hasher, Application, Mode};
    use wiremock::MockServer;

    let db = TestDatabase::new().await;
    let unused = MockServer::start().await;
    let mut settings = crate::helpers::test_settings(&db, &unused);
    settings.registries.upstream_base_url = None;
    settings.tokens.jwt_secret = None;
    let h = hasher(&settings).expect("hasher");
    demo::seed(&db.storage(), &h).await.expect("users");
    let redirect = demo::demo_redirect_uri("127.0.0.1:8000");
    demo::seed_client(&db.storage(), &h, &redirect).await.expect("client");
    let server = Application::build(&settings, Mode::Demo, db.storage()).await.expect("demo builds");
    let address = format!("http://127.0.0.1:{}", server.port());
    tokio::spawn(server.run_until_stopped());
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client");
    let mut browser = Browser { base: address.clone(), client: client.clone(), jar: HashMap::new() };

    let all = "dados_publicos cpf email receita_federal cnes experiencia_profissional formacao_academica cursos_cdp";
    let path = authorize_path(&[
        ("response_type", "code"),
        ("client_id", demo::DEMO_CLIENT_ID),
        ("redirect_uri", &redirect),
        ("scope", all),
        ("state", "demo"),
    ]);
    let user = &demo::DEMO_USERS[0];
    assert_eq!(user.username, "ana");
    let consent = consent_page(&mut browser, &path, user.username, user.password).await;
    let location = decide(&mut browser, &consent, "approve").await;
    let code = callback(&location, &redirect).remove("code").expect("code");

    let r = client
        .post(format!("{address}/oauth/token/"))
        .basic_auth(demo::DEMO_CLIENT_ID, Some(demo::DEMO_CLIENT_SECRET))
        .form(&[("grant_type", "authorization_code"), ("code", code.as_str()), ("redirect_uri", redirect.as_str())])
        .send()
        .await
        .expect("sent");
    let (status, tokens) = status_and_json(r).await;
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(tokens["scope"], all);
    let r = client
        .post(format!("{address}/api/perfil/dados/"))
        .bearer_auth(tokens["access_token"].as_str().expect("access"))
        .send()
        .await
        .expect("sent");
    let (status, profile) = status_and_json(r).await;
    assert_eq!(status, 200, "{profile}");
    assert_eq!(
        keys(&profile),
        [
            "avatar",
            "cnes",
            "cpf",
            "cursos_cdp",
            "email",
            "experiencia_profissional",
            "formacao_academica",
            "name",
            "receita_federal"
        ]
    );
    assert_eq!(profile["name"], "Ana Beatriz Souza");
    let bonds = profile["cnes"]["vinculos"].as_array().expect("bonds").len();
    assert_eq!(
        profile["experiencia_profissional"].as_array().expect("list").len(),
        2 + bonds,
        "the two seeded experiences plus one per CNES bond, added on authorization"
    );
}
