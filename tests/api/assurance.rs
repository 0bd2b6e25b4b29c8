//! One bar on every path (issue 43), each test written as the attack it
//! stops: the password alone at `/api/token/pair/` for an account with a
//! second factor; tokens bought before the factor, or before an
//! application asked more, refreshed for ever; a refresh token forged with
//! the HS256 secret that SUAP-side APIs share, exchanged for an
//! application's token.

use credencial_domain::second_factor::{step_of, TotpSecret};
use credencial_domain::{Claims, JwtKeys, TokenCodec, TokenType};
use serde_json::{json, Value};

use crate::account::signed_in_browser;
use crate::helpers::{spawn_app, status_and_json, TestApp, SECRET};
use crate::second_factor::{enrol, PASSWORD};

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs() as i64
}

/// lia, with an authenticator app: its secret and her recovery codes.
async fn lia_with_an_app(app: &TestApp) -> (TotpSecret, Vec<String>) {
    app.add_user("lia", PASSWORD, true).await;
    let mut browser = signed_in_browser(app, "lia", PASSWORD).await;
    enrol(&mut browser).await
}

async fn pair(app: &TestApp, body: Value) -> (u16, Value) {
    status_and_json(app.post_json("/api/token/pair/", &body).await).await
}

#[tokio::test]
async fn the_password_alone_buys_no_token_pair_for_an_account_with_a_second_factor() {
    let app = spawn_app().await;
    let (secret, codes) = lia_with_an_app(&app).await;

    // A stolen password: 401 with a code a SUAP client can tell apart, and
    // nothing that reads user data.
    let (status, body) = pair(&app, json!({"username": "lia", "password": PASSWORD})).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["code"], "second_factor_required", "{body}");
    assert!(body["detail"].as_str().is_some_and(|d| d.contains("otp")), "says how: {body}");
    assert!(body.get("access").is_none() && body.get("refresh").is_none());

    // A guessed code is refused and says so.
    let (status, body) = pair(&app, json!({"username": "lia", "password": PASSWORD, "otp": "000000"})).await;
    assert_eq!((status, body["code"].as_str()), (401, Some("second_factor_invalid")), "{body}");

    // The code from her app, in the same body, buys the pair; it reads her
    // data and refreshes.
    let code = secret.code_at(step_of(now()) + 1);
    let (status, tokens) = pair(&app, json!({"username": "lia", "password": PASSWORD, "otp": code})).await;
    assert_eq!(status, 200, "{tokens}");
    let verify = app.post_json("/api/token/verify/", &json!({"token": tokens["access"]})).await;
    assert_eq!(verify.status(), 200);
    let (status, refreshed) =
        status_and_json(app.post_json("/api/token/refresh/", &json!({"refresh": tokens["refresh"]})).await).await;
    assert_eq!(status, 200, "a login with both factors refreshes: {refreshed}");

    // The same code a second time is refused (one use per step); a
    // recovery code works once.
    let (status, body) = pair(&app, json!({"username": "lia", "password": PASSWORD, "otp": code})).await;
    assert_eq!((status, body["code"].as_str()), (401, Some("second_factor_invalid")), "{body}");
    let (status, _) = pair(&app, json!({"username": "lia", "password": PASSWORD, "otp": codes[0]})).await;
    assert_eq!(status, 200);
    let (status, _) = pair(&app, json!({"username": "lia", "password": PASSWORD, "otp": codes[0]})).await;
    assert_eq!(status, 401, "a recovery code is used once");

    // A wrong password with a right code is still the password's refusal.
    let code = secret.code_at(step_of(now()) + 2);
    let (status, body) = pair(&app, json!({"username": "lia", "password": "not it", "otp": code})).await;
    assert_eq!((status, body["code"].as_str()), (401, Some("authentication_failed")), "{body}");
}

#[tokio::test]
async fn an_otp_that_is_not_text_is_a_field_error_not_a_crash() {
    let app = spawn_app().await;
    lia_with_an_app(&app).await;
    let (status, body) = pair(&app, json!({"username": "lia", "password": PASSWORD, "otp": {"code": 1}})).await;
    assert_eq!(status, 400, "{body}");
    assert!(body["otp"].is_array(), "{body}");
}

#[tokio::test]
async fn a_pair_bought_with_the_password_before_the_factor_dies_at_its_next_refresh() {
    let app = spawn_app().await;
    app.add_user("lia", PASSWORD, true).await;
    // Someone logged in with the password alone (her own script, or a
    // thief) before she turned the app on…
    let (_, refresh) = app.login("lia", PASSWORD).await;
    let mut browser = signed_in_browser(&app, "lia", PASSWORD).await;
    enrol(&mut browser).await;
    // …and cannot refresh past it.
    let (status, body) =
        status_and_json(app.post_json("/api/token/refresh/", &json!({"refresh": refresh})).await).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["code"], "second_factor_required", "{body}");
}

/// Sets `portal`'s "exige segundo fator".
async fn portal_requires_a_second_factor(app: &TestApp) {
    sqlx::query("UPDATE oauth_clients SET requires_second_factor = TRUE WHERE client_id = 'portal'")
        .execute(&app.db.pool)
        .await
        .expect("update");
}

async fn refresh_at_portal(app: &TestApp, refresh_token: &str) -> (u16, Value) {
    let form = [("grant_type", "refresh_token"), ("refresh_token", refresh_token)];
    status_and_json(crate::oauth::token_request(app, Some(("portal", crate::oauth::PORTAL_SECRET)), &form).await).await
}

#[tokio::test]
async fn an_application_that_starts_requiring_a_second_factor_ends_password_only_refreshes() {
    let (app, _) = crate::oidc::oidc_app(|_| {}).await;
    let (_, tokens) = crate::oidc::signed_in(&app, "openid").await;
    let refresh = tokens["refresh_token"].as_str().expect("refresh").to_owned();
    let (status, refreshed) = refresh_at_portal(&app, &refresh).await;
    assert_eq!(status, 200, "{refreshed}");

    portal_requires_a_second_factor(&app).await;
    let (status, body) = refresh_at_portal(&app, refreshed["refresh_token"].as_str().expect("rotated")).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"], "invalid_grant", "{body}");
}

#[tokio::test]
async fn a_deactivated_person_s_refresh_is_invalid_grant() {
    let (app, ana) = crate::oidc::oidc_app(|_| {}).await;
    let (_, tokens) = crate::oidc::signed_in(&app, "openid").await;
    sqlx::query("UPDATE users SET is_active = FALSE WHERE id = $1").bind(ana).execute(&app.db.pool).await.expect("off");
    let (status, body) = refresh_at_portal(&app, tokens["refresh_token"].as_str().expect("refresh")).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_grant")), "{body}");
}

#[tokio::test]
async fn a_refresh_token_forged_with_the_shared_secret_buys_no_application_token() {
    let (app, ana) = crate::oidc::oidc_app(|_| {}).await;
    // ana's own live first-party refresh token: its jti is current.
    let (_, first_party) = app.login("ana", "ana-password").await;
    let shared = TokenCodec::new(JwtKeys::hmac(SECRET.as_bytes()).expect("secret"), 0).expect("codec");
    let live = shared.decode(&first_party, now()).expect("a first-party token");
    // Whoever holds the shared secret mints a refresh token for portal
    // that reuses that jti…
    let forged = Claims {
        token_type: TokenType::ClientRefresh,
        scope: Some("openid cpf".into()),
        client_id: Some("portal".into()),
        aud: Some("portal".into()),
        jti: live.jti.clone(),
        ..Claims::new(TokenType::ClientRefresh, ana, now(), 3600)
    };
    let forged = shared.encode(&forged).expect("signed");
    // …and gets nothing at the token endpoint.
    let (status, body) = refresh_at_portal(&app, &forged).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"], "invalid_grant", "{body}");
    assert!(body.get("access_token").is_none());
    // ana's own token is untouched.
    let r = app.post_json("/api/token/verify/", &json!({"token": first_party})).await;
    assert_eq!(r.status(), 200);
}
