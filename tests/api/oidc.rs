//! OpenID Connect over real HTTP: the discovery document, ID tokens that
//! verify with the key published at `jwks_uri` (RS256, ES256, across a key
//! rotation), `nonce` and `at_hash`, the refresh's ID token, and the
//! authorization parameters `prompt` and `max_age`. The helpers here serve
//! `oidc_userinfo.rs` and `oidc_logout.rs` too.

use std::collections::HashMap;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use credencial::settings::Settings;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::helpers::{status_and_json, Browser, TestApp, TEST_KEYS};
use crate::oauth::{
    after_login, app_with, authorize_path, callback, claims, decide, token_request, PORTAL_SECRET, PORTAL_URI,
};

/// The issuer of the test apps (an identifier; nothing is fetched from it).
pub(crate) const ISSUER: &str = "https://id.example.gov.br";
/// The nonce of the test requests (with characters a client may well send).
pub(crate) const NONCE: &str = "n-0S6_WzA2Mj é/+=";

/// The app of `oauth::app` (portal, spa, ana) speaking OpenID Connect as
/// [`ISSUER`], after `adjust`.
pub(crate) async fn oidc_app(adjust: impl FnOnce(&mut Settings)) -> (TestApp, i64) {
    app_with(|s| {
        s.tokens.issuer_url = Some(crate::helpers::issuer_url(ISSUER));
        adjust(s);
    })
    .await
}

/// `/oauth/authorize/?…` for portal with `scope`, state `s-oidc`, [`NONCE`]
/// and `extra` parameters.
pub(crate) fn portal_oidc_request(scope: &str, extra: &[(&str, &str)]) -> String {
    let mut pairs = vec![
        ("response_type", "code"),
        ("client_id", "portal"),
        ("redirect_uri", PORTAL_URI),
        ("scope", scope),
        ("state", "s-oidc"),
        ("nonce", NONCE),
    ];
    pairs.extend_from_slice(extra);
    authorize_path(&pairs)
}

/// Logs ana in through the form for `path` in `browser`, approves (unless
/// her consent is remembered) and returns the code.
pub(crate) async fn code_in(browser: &mut Browser, path: &str) -> String {
    let page = after_login(browser, path, "ana", "ana-password").await;
    let location = match page.status {
        302 => page.location.expect("Location"),
        _ => decide(browser, &page, "approve").await,
    };
    let query = callback(&location, PORTAL_URI);
    assert_eq!(query.get("state").map(String::as_str), Some("s-oidc"));
    query["code"].clone()
}

/// The token answer of portal's code exchange (asserted 200).
pub(crate) async fn exchange(app: &TestApp, code: &str) -> Value {
    let form = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", PORTAL_URI)];
    let (status, tokens) = status_and_json(token_request(app, Some(("portal", PORTAL_SECRET)), &form).await).await;
    assert_eq!(status, 200, "{tokens}");
    tokens
}

/// A browser logged in as ana, and the token answer of an OpenID Connect
/// authorization of portal for `scope`.
pub(crate) async fn signed_in(app: &TestApp, scope: &str) -> (Browser, Value) {
    let mut browser = Browser::new(app);
    let code = code_in(&mut browser, &portal_oidc_request(scope, &[])).await;
    (browser, exchange(app, &code).await)
}

/// The key set published at `jwks_uri` (read from the discovery document).
pub(crate) async fn published_keys(app: &TestApp) -> JwkSet {
    let doc = discovery(app).await;
    let jwks_uri = doc["jwks_uri"].as_str().expect("jwks_uri");
    let path = jwks_uri.strip_prefix(ISSUER).expect("below the issuer");
    let r = app.client.get(format!("{}{path}", app.address)).send().await.expect("sent");
    assert_eq!(r.status(), 200);
    r.json().await.expect("a JWK set")
}

/// The claims of `id_token` after checking it as a client does: the key
/// its `kid` names in `keys`, the algorithm the discovery document
/// announces, the issuer, the audience `portal`, the expiry.
pub(crate) fn verified_id_token(id_token: &str, keys: &JwkSet, alg: Algorithm) -> Value {
    let header = jsonwebtoken::decode_header(id_token).expect("a JWT");
    assert_eq!(header.alg, alg);
    let kid = header.kid.expect("the ID token names its key");
    let jwk = keys.find(&kid).unwrap_or_else(|| panic!("kid {kid} is not published"));
    let key = DecodingKey::from_jwk(jwk).expect("a usable key");
    let mut validation = Validation::new(alg);
    validation.set_audience(&["portal"]);
    validation.set_issuer(&[ISSUER]);
    validation.set_required_spec_claims(&["exp", "iat", "iss", "aud", "sub"]);
    jsonwebtoken::decode::<Value>(id_token, &key, &validation).expect("verifies with the published key").claims
}

/// The discovery document (asserted 200).
pub(crate) async fn discovery(app: &TestApp) -> Value {
    let r = app.client.get(format!("{}/.well-known/openid-configuration", app.address)).send().await.expect("sent");
    let (status, doc) = status_and_json(r).await;
    assert_eq!(status, 200, "{doc}");
    doc
}

/// `at_hash` as OIDC Core §3.1.3.6 defines it, computed here.
fn expected_at_hash(access_token: &str) -> String {
    URL_SAFE_NO_PAD.encode(&Sha256::digest(access_token.as_bytes())[..16])
}

/// The query of the redirect `browser` gets for `path` (asserted 302 to portal).
async fn redirect_query(browser: &mut Browser, path: &str) -> HashMap<String, String> {
    let page = browser.get(path).await;
    assert_eq!(page.status, 302, "{}", page.body);
    callback(&page.location.expect("Location"), PORTAL_URI)
}

// ------------------------------------------------------------- discovery

#[tokio::test]
async fn discovery_has_the_required_members_and_every_url_starts_with_the_issuer() {
    let (app, _) = oidc_app(|_| {}).await;
    let r = app.client.get(format!("{}/.well-known/openid-configuration", app.address)).send().await.expect("sent");
    let cache = r.headers().get("cache-control").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    assert!(cache.contains("public") && cache.contains("max-age=300"), "{cache}");
    let (status, doc) = status_and_json(r).await;
    assert_eq!(status, 200);
    // OpenID Connect Discovery 1.0 §3: the REQUIRED members.
    for member in [
        "issuer",
        "authorization_endpoint",
        "token_endpoint",
        "jwks_uri",
        "response_types_supported",
        "subject_types_supported",
        "id_token_signing_alg_values_supported",
    ] {
        assert!(doc.get(member).is_some(), "{member} missing from {doc}");
    }
    assert_eq!(doc["issuer"], ISSUER, "§4.3: exactly the issuer the tokens carry");
    for (member, value) in doc.as_object().expect("object") {
        if member.ends_with("_endpoint") || member == "jwks_uri" {
            let url = value.as_str().unwrap_or_default();
            assert!(url.starts_with(&format!("{ISSUER}/")), "{member}: {url}");
        }
    }
    for member in ["userinfo_endpoint", "end_session_endpoint", "revocation_endpoint", "introspection_endpoint"] {
        assert!(doc[member].is_string(), "{member}");
    }
    assert_eq!(doc["response_types_supported"], serde_json::json!(["code"]));
    assert_eq!(doc["subject_types_supported"], serde_json::json!(["public"]));
    assert_eq!(doc["id_token_signing_alg_values_supported"], serde_json::json!(["RS256"]));
    assert_eq!(doc["code_challenge_methods_supported"], serde_json::json!(["S256"]));
    let scopes: Vec<&str> =
        doc["scopes_supported"].as_array().expect("list").iter().filter_map(Value::as_str).collect();
    for scope in ["openid", "profile", "email", "cpf", "dados_publicos", "cnes"] {
        assert!(scopes.contains(&scope), "{scope} in {scopes:?}");
    }
    // ID tokens carry `acr` (acr_values_supported says which): a client
    // that checks claims_supported before asking for it must find it.
    let claims: Vec<&str> =
        doc["claims_supported"].as_array().expect("list").iter().filter_map(Value::as_str).collect();
    for claim in ["sub", "iss", "aud", "exp", "iat", "auth_time", "acr", "amr", "sid"] {
        assert!(claims.contains(&claim), "{claim} in {claims:?}");
    }
    // Tokens issued to applications are signed with the provider's key
    // pair (published), not the HS256 secret of first-party tokens.
    assert_eq!(doc["credencial_access_token_signing_alg"], "RS256");
    assert_eq!(doc["credencial_access_token_key_published"], true);
    // The endpoints it names are this service's routes.
    for member in ["authorization_endpoint", "token_endpoint", "userinfo_endpoint", "end_session_endpoint"] {
        let path = doc[member].as_str().expect("url").strip_prefix(ISSUER).expect("below the issuer").to_owned();
        let r = app.client.get(format!("{}{path}", app.address)).send().await.expect("sent");
        assert_ne!(r.status(), 404, "{member} {path}");
    }
}

#[tokio::test]
async fn without_an_issuer_there_is_no_discovery_and_openid_is_refused() {
    let (app, _) = app_with(|_| {}).await;
    let r = app.client.get(format!("{}/.well-known/openid-configuration", app.address)).send().await.expect("sent");
    let (status, body) = status_and_json(r).await;
    assert_eq!((status, body["code"].as_str()), (404, Some("not_found")));
    let mut browser = Browser::new(&app);
    let query = redirect_query(&mut browser, &portal_oidc_request("openid", &[])).await;
    assert_eq!((query["error"].as_str(), query["state"].as_str()), ("invalid_scope", "s-oidc"));
}

// -------------------------------------------------------------- ID tokens

#[tokio::test]
async fn the_id_token_verifies_with_the_published_key_echoes_the_nonce_and_hashes_the_access_token() {
    let (app, ana) = oidc_app(|_| {}).await;
    let (_, tokens) = signed_in(&app, "openid profile email").await;
    assert_eq!(tokens["scope"], "openid dados_publicos cpf email", "profile is dados_publicos");
    let access = tokens["access_token"].as_str().expect("access");
    assert!(claims(access)["scope"].as_str().is_some_and(|s| s.starts_with("openid ")));
    let id_token = tokens["id_token"].as_str().expect("an id_token with openid");
    let c = verified_id_token(id_token, &published_keys(&app).await, Algorithm::RS256);
    assert_eq!(c["sub"], ana.to_string());
    assert_eq!(c["nonce"], NONCE, "echoed exactly");
    assert_eq!(c["at_hash"], expected_at_hash(access));
    assert_eq!(c["amr"], serde_json::json!(["pwd"]));
    let (iat, exp, auth_time) = (c["iat"].as_i64(), c["exp"].as_i64(), c["auth_time"].as_i64());
    assert!(auth_time.is_some_and(|t| Some(t) <= iat) && exp > iat, "{c}");
    assert!(c.get("token_type").is_none() && c.get("user_id").is_none(), "an ID token is no access token: {c}");
    // An ID token is not an access token anywhere.
    let r = app.client.post(format!("{}/api/perfil/dados/", app.address)).bearer_auth(id_token).send().await;
    assert_eq!(r.expect("sent").status(), 401);
}

#[tokio::test]
async fn es256_id_tokens_verify_with_the_published_ec_key() {
    let (app, ana) = oidc_app(|s| {
        s.tokens.oidc_signing_algorithm = credencial_domain::JwtAlgorithm::ES256;
        s.tokens.oidc_signing_key_file = Some(format!("{TEST_KEYS}/ec_private.pem").into());
    })
    .await;
    assert_eq!(discovery(&app).await["id_token_signing_alg_values_supported"], serde_json::json!(["ES256"]));
    let (_, tokens) = signed_in(&app, "openid").await;
    let c = verified_id_token(
        tokens["id_token"].as_str().expect("id_token"),
        &published_keys(&app).await,
        Algorithm::ES256,
    );
    assert_eq!((c["sub"].as_str(), c["nonce"].as_str()), (Some(ana.to_string().as_str()), Some(NONCE)));
}

#[tokio::test]
async fn after_a_key_rotation_old_and_new_id_tokens_verify_with_the_published_keys() {
    let (before, _) = oidc_app(|_| {}).await;
    let (_, old) = signed_in(&before, "openid").await;
    let old_id_token = old["id_token"].as_str().expect("id_token").to_owned();
    // The same database, a new provider key; the old public key is kept.
    let db_url = before.db.url.clone();
    let (after, _) = oidc_app(move |s| {
        s.storage.database_url = db_url.into();
        s.tokens.oidc_signing_key_file = Some(format!("{TEST_KEYS}/rsa_other_private.pem").into());
        s.tokens.oidc_previous_public_key_files = vec![format!("{TEST_KEYS}/rsa_public.pem")];
    })
    .await;
    let keys = published_keys(&after).await;
    assert_eq!(keys.keys.len(), 2, "the new key and the previous one");
    let (_, new) = signed_in(&after, "openid").await;
    let new_id_token = new["id_token"].as_str().expect("id_token");
    let kid = |t: &str| jsonwebtoken::decode_header(t).expect("header").kid.expect("kid");
    assert_ne!(kid(&old_id_token), kid(new_id_token), "signed with the new key");
    for token in [old_id_token.as_str(), new_id_token] {
        verified_id_token(token, &keys, Algorithm::RS256);
    }
}

#[tokio::test]
async fn without_openid_there_is_no_id_token() {
    let (app, _) = oidc_app(|_| {}).await;
    let (_, tokens) = signed_in(&app, "cnes").await;
    assert!(tokens.get("id_token").is_none(), "{tokens}");
    assert_eq!(tokens["scope"], "dados_publicos cpf email cnes");
}

#[tokio::test]
async fn a_refresh_brings_a_new_id_token_with_the_same_subject_and_login_time_and_no_nonce() {
    let (app, _) = oidc_app(|_| {}).await;
    let (_, tokens) = signed_in(&app, "openid email").await;
    let keys = published_keys(&app).await;
    let first = verified_id_token(tokens["id_token"].as_str().expect("id_token"), &keys, Algorithm::RS256);
    let form = [("grant_type", "refresh_token"), ("refresh_token", tokens["refresh_token"].as_str().expect("rt"))];
    let (status, renewed) = status_and_json(token_request(&app, Some(("portal", PORTAL_SECRET)), &form).await).await;
    assert_eq!(status, 200, "{renewed}");
    let access = renewed["access_token"].as_str().expect("access");
    let again = verified_id_token(renewed["id_token"].as_str().expect("a new id_token"), &keys, Algorithm::RS256);
    assert_eq!(
        (&again["sub"], &again["auth_time"], &again["aud"], &again["sid"]),
        (&first["sub"], &first["auth_time"], &first["aud"], &first["sid"])
    );
    assert!(first["sid"].is_string(), "the session's sid, kept through refreshes: {first}");
    assert!(again.get("nonce").is_none(), "no nonce on a refresh: {again}");
    assert_eq!(again["at_hash"], expected_at_hash(access));

    // A refresh narrowed without openid gets no ID token.
    let rt = renewed["refresh_token"].as_str().expect("rt");
    let form = [("grant_type", "refresh_token"), ("refresh_token", rt), ("scope", "email")];
    let (status, narrowed) = status_and_json(token_request(&app, Some(("portal", PORTAL_SECRET)), &form).await).await;
    assert_eq!(status, 200, "{narrowed}");
    assert!(narrowed.get("id_token").is_none() && narrowed["scope"] == "dados_publicos cpf email", "{narrowed}");
}

#[tokio::test]
async fn the_id_token_carries_the_address_and_whether_it_is_confirmed_and_the_read_is_logged() {
    let (app, ana) = oidc_app(|_| {}).await;
    let address: String = sqlx::query_scalar("SELECT email FROM users WHERE id = $1")
        .bind(ana)
        .fetch_one(&app.db.pool)
        .await
        .expect("read");
    sqlx::query("UPDATE users SET email_verified = FALSE WHERE id = $1")
        .bind(ana)
        .execute(&app.db.pool)
        .await
        .expect("ok");
    let keys = published_keys(&app).await;
    // (`email` is one of the scopes every application is granted.)
    let (_, tokens) = signed_in(&app, "openid").await;
    let c = verified_id_token(tokens["id_token"].as_str().expect("id_token"), &keys, Algorithm::RS256);
    assert_eq!((c["email"].as_str(), c["email_verified"].as_bool()), (Some(address.as_str()), Some(false)), "{c}");
    let logged = crate::oidc_userinfo::log_rows(&app).await;
    assert_eq!(logged, [("portal".to_owned(), vec!["email".to_owned()])], "the ID token's read is in the access log");

    // Confirmed since: the refreshed ID token says so.
    sqlx::query("UPDATE users SET email_verified = TRUE WHERE id = $1")
        .bind(ana)
        .execute(&app.db.pool)
        .await
        .expect("ok");
    let form = [("grant_type", "refresh_token"), ("refresh_token", tokens["refresh_token"].as_str().expect("rt"))];
    let (status, renewed) = status_and_json(token_request(&app, Some(("portal", PORTAL_SECRET)), &form).await).await;
    assert_eq!(status, 200, "{renewed}");
    let again = verified_id_token(renewed["id_token"].as_str().expect("id_token"), &keys, Algorithm::RS256);
    assert_eq!(again["email_verified"], true, "{again}");
    assert_eq!(crate::oidc_userinfo::log_rows(&app).await.len(), 2);

    // A read that cannot be logged issues nothing.
    sqlx::query("DROP TABLE access_log").execute(&app.db.pool).await.expect("drop");
    let form = [("grant_type", "refresh_token"), ("refresh_token", renewed["refresh_token"].as_str().expect("rt"))];
    let (status, refused) = status_and_json(token_request(&app, Some(("portal", PORTAL_SECRET)), &form).await).await;
    assert_eq!(status, 503, "{refused}");
    assert!(refused.get("id_token").is_none() && refused.get("access_token").is_none());
}

// ------------------------------------------------------ prompt and max_age

#[tokio::test]
async fn prompt_none_without_a_session_is_login_required_with_the_state() {
    let (app, _) = oidc_app(|_| {}).await;
    let mut browser = Browser::new(&app);
    let query = redirect_query(&mut browser, &portal_oidc_request("openid", &[("prompt", "none")])).await;
    assert_eq!((query["error"].as_str(), query["state"].as_str()), ("login_required", "s-oidc"));
    assert!(!query.contains_key("code"));
}

#[tokio::test]
async fn prompt_none_with_a_session_but_no_consent_is_consent_required() {
    let (app, _) = oidc_app(|_| {}).await;
    let mut browser = Browser::new(&app);
    // A session, but the consent page is left unanswered.
    let consent = after_login(&mut browser, &portal_oidc_request("openid cnes", &[]), "ana", "ana-password").await;
    assert!(consent.body.contains("Autorizar acesso") && consent.body.contains("Entrar no aplicativo"));
    let query = redirect_query(&mut browser, &portal_oidc_request("openid cnes", &[("prompt", "none")])).await;
    assert_eq!((query["error"].as_str(), query["state"].as_str()), ("consent_required", "s-oidc"));
    // Once consented, prompt=none answers a code at once, with a fresh nonce.
    let _ = decide(&mut browser, &consent, "approve").await;
    let query = redirect_query(&mut browser, &portal_oidc_request("openid", &[("prompt", "none")])).await;
    let tokens = exchange(&app, query.get("code").expect("a code")).await;
    let c = verified_id_token(
        tokens["id_token"].as_str().expect("id_token"),
        &published_keys(&app).await,
        Algorithm::RS256,
    );
    assert_eq!(c["nonce"], NONCE);
}

#[tokio::test]
async fn max_age_sends_a_session_older_than_it_back_to_the_login_form() {
    let (app, _) = oidc_app(|_| {}).await;
    let (mut browser, _) = signed_in(&app, "openid").await;
    // A recent enough session goes on without a form (consent remembered).
    let query = redirect_query(&mut browser, &portal_oidc_request("openid", &[("max_age", "3600")])).await;
    assert!(query.contains_key("code"), "{query:?}");
    // max_age=0 asks for a login whatever the session: the form again,
    // carrying max_age; after it, the code comes (the form is not shown twice).
    let path = portal_oidc_request("openid", &[("max_age", "0")]);
    let page = browser.get(&path).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("name=\"password\""), "the login form: {}", page.body);
    assert!(crate::helpers::hidden_fields(&page.body).contains(&("max_age".to_owned(), "0".to_owned())));
    let code = code_in(&mut browser, &path).await;
    let tokens = exchange(&app, &code).await;
    let c = verified_id_token(
        tokens["id_token"].as_str().expect("id_token"),
        &published_keys(&app).await,
        Algorithm::RS256,
    );
    assert!(c["auth_time"].is_i64(), "auth_time is there when max_age was asked: {c}");
    // With prompt=none, a session that is too old is login_required.
    let query =
        redirect_query(&mut browser, &portal_oidc_request("openid", &[("prompt", "none"), ("max_age", "0")])).await;
    assert_eq!(query["error"], "login_required");
}

#[tokio::test]
async fn a_bad_nonce_or_max_age_goes_back_as_invalid_request() {
    let (app, _) = oidc_app(|_| {}).await;
    let mut browser = Browser::new(&app);
    let long = "n".repeat(513);
    for extra in [[("max_age", "-5")], [("max_age", "soon")]] {
        let query = redirect_query(&mut browser, &portal_oidc_request("openid", &extra)).await;
        assert_eq!((query["error"].as_str(), query["state"].as_str()), ("invalid_request", "s-oidc"), "{extra:?}");
    }
    let path = authorize_path(&[
        ("response_type", "code"),
        ("client_id", "portal"),
        ("redirect_uri", PORTAL_URI),
        ("scope", "openid"),
        ("state", "s-oidc"),
        ("nonce", &long),
    ]);
    let query = redirect_query(&mut browser, &path).await;
    assert_eq!(query["error"], "invalid_request");
    let unknown = redirect_query(&mut browser, &portal_oidc_request("openid phone", &[])).await;
    assert_eq!(unknown["error"], "invalid_scope");
}

/// What a resource server checks of an access token with
/// oauth4webapi's `validateJwtAccessToken` (RFC 9068 §4): typed `at+jwt`,
/// signed with a key published at `jwks_uri`, `iss` the issuer discovery
/// names, `aud` the expected audience, and `iss`, `exp`, `aud`, `sub`,
/// `client_id`, `iat`, `jti` all present. The claims, verified.
pub(crate) fn validated_access_token(token: &str, keys: &JwkSet, issuer: &str, audience: &str) -> Value {
    let header = jsonwebtoken::decode_header(token).expect("a JWT");
    assert_eq!(header.typ.as_deref(), Some("at+jwt"), "RFC 9068 §2.1");
    let kid = header.kid.expect("the token names its key");
    let jwk = keys.find(&kid).unwrap_or_else(|| panic!("kid {kid} is not published"));
    let mut validation = Validation::new(header.alg);
    validation.set_audience(&[audience]);
    validation.set_issuer(&[issuer]);
    validation.set_required_spec_claims(&["iss", "exp", "aud", "sub", "iat"]);
    let key = DecodingKey::from_jwk(jwk).expect("a usable key");
    let claims = jsonwebtoken::decode::<Value>(token, &key, &validation).expect("a valid access token").claims;
    for claim in ["client_id", "jti"] {
        assert!(claims[claim].as_str().is_some_and(|v| !v.is_empty()), "RFC 9068 §2.2 requires {claim}: {claims}");
    }
    assert!(claims["iat"].is_i64(), "{claims}");
    claims
}

#[tokio::test]
async fn an_application_s_access_token_passes_a_resource_server_s_rfc_9068_checks_and_names_the_person_as_the_id_token_does(
) {
    let (app, ana) = oidc_app(|_| {}).await;
    let (_, tokens) = signed_in(&app, "openid dados_publicos").await;
    let keys = published_keys(&app).await;
    let issuer = discovery(&app).await["issuer"].as_str().expect("issuer").to_owned();
    let id_token = verified_id_token(tokens["id_token"].as_str().expect("id_token"), &keys, Algorithm::RS256);
    let access = tokens["access_token"].as_str().expect("access_token");
    // Before, the token had no iss and no sub: the validation refused it.
    let claims = validated_access_token(access, &keys, &issuer, "portal");
    assert_eq!(claims["iss"], ISSUER);
    assert_eq!(claims["sub"], id_token["sub"], "the person's public subject, as in the ID token");
    assert_eq!(claims["sub"], ana.to_string());
    assert_eq!((claims["client_id"].as_str(), claims["user_id"].as_i64()), (Some("portal"), Some(ana)));
    // The same after a refresh.
    let refresh = tokens["refresh_token"].as_str().expect("refresh_token");
    let form = [("grant_type", "refresh_token"), ("refresh_token", refresh)];
    let (status, renewed) = status_and_json(token_request(&app, Some(("portal", PORTAL_SECRET)), &form).await).await;
    assert_eq!(status, 200, "{renewed}");
    let renewed = validated_access_token(renewed["access_token"].as_str().expect("access"), &keys, &issuer, "portal");
    assert_eq!((&renewed["sub"], &renewed["iss"]), (&claims["sub"], &claims["iss"]));
    assert_ne!(renewed["jti"], claims["jti"]);

    // The first-party lane keeps simplejwt's shape: no iss, no sub.
    let (first_party, _) = app.login("ana", "ana-password").await;
    let mut names: Vec<String> =
        crate::oauth::claims(&first_party).as_object().expect("object").keys().cloned().collect();
    names.sort_unstable();
    assert_eq!(names, ["exp", "iat", "jti", "token_type", "user_id"]);
}

#[tokio::test]
async fn introspection_reports_openid_among_the_scopes_of_an_openid_token() {
    let (app, _) = oidc_app(|_| {}).await;
    let (_, tokens) = signed_in(&app, "openid dados_publicos").await;
    for (token, kind) in [("access_token", "access_token"), ("refresh_token", "refresh_token")] {
        let r = app
            .client
            .post(format!("{}/oauth/introspect/", app.address))
            .basic_auth("portal", Some(PORTAL_SECRET))
            .form(&[("token", tokens[token].as_str().expect("token"))])
            .send()
            .await
            .expect("sent");
        let (status, answer) = status_and_json(r).await;
        assert_eq!((status, answer["active"].as_bool(), answer["token_type"].as_str()), (200, Some(true), Some(kind)));
        // Before, openid was dropped: a gateway asking introspection
        // whether the token may read userinfo was told no.
        assert_eq!(answer["scope"], tokens["scope"], "{answer}");
        assert!(answer["scope"].as_str().expect("scope").split(' ').any(|s| s == "openid"), "{answer}");
    }
}
