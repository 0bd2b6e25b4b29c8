//! Logout and revocation over real HTTP: simplejwt's `blacklist`, RFC 7009
//! `/oauth/revoke/`, RFC 7662 `/oauth/introspect/`, and the concurrent-
//! refresh grace window at `/api/token/refresh/` and the refresh grant.

use std::time::Duration;

use credencial_domain::{Claims, JwtKeys, TokenCodec, TokenType};
use reqwest::header::CACHE_CONTROL;
use serde_json::{json, Value};

use crate::helpers::{spawn_app_with, status_and_json, TestApp, SECRET};
use crate::oauth::{app, app_with, store_portal_code, PORTAL_SECRET, PORTAL_URI};

// ------------------------------------------------------------- helpers

async fn post_form(app: &TestApp, path: &str, basic: Option<(&str, &str)>, form: &[(&str, &str)]) -> (u16, Value) {
    let mut request = app.client.post(format!("{}{path}", app.address)).form(form);
    if let Some((id, secret)) = basic {
        request = request.basic_auth(id, Some(secret));
    }
    let r = request.send().await.expect("sent");
    if r.status().is_success() || r.status() == 401 || r.status() == 400 {
        assert_eq!(
            r.headers().get(CACHE_CONTROL).and_then(|v| v.to_str().ok()),
            Some("no-store"),
            "{path} answers are never cached"
        );
    }
    status_and_json(r).await
}

const PORTAL: Option<(&str, &str)> = Some(("portal", PORTAL_SECRET));

/// portal's tokens for ana (a stored code, exchanged).
async fn portal_tokens(app: &TestApp, ana: i64, code: &str) -> Value {
    store_portal_code(app, ana, code, 4_102_444_800).await;
    let form = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", PORTAL_URI)];
    let (status, tokens) = post_form(app, "/oauth/token/", PORTAL, &form).await;
    assert_eq!(status, 200, "{tokens}");
    tokens
}

async fn refresh_grant(app: &TestApp, refresh: &str) -> (u16, Value) {
    post_form(app, "/oauth/token/", PORTAL, &[("grant_type", "refresh_token"), ("refresh_token", refresh)]).await
}

async fn introspect(app: &TestApp, token: &str) -> Value {
    let (status, body) = post_form(app, "/oauth/introspect/", PORTAL, &[("token", token)]).await;
    assert_eq!(status, 200, "{body}");
    body
}

async fn refresh(app: &TestApp, token: &str) -> (u16, Value) {
    status_and_json(app.post_json("/api/token/refresh/", &json!({ "refresh": token })).await).await
}

fn text(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or_else(|| panic!("no {key} in {v}")).to_owned()
}

/// A token signed with the test app's key that expired an hour ago.
fn expired(template: Claims) -> String {
    let codec = TokenCodec::new(JwtKeys::hmac(SECRET.as_bytes()).expect("secret"), 0).expect("codec");
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("time").as_secs() as i64;
    codec.encode(&Claims { iat: now - 7200, exp: now - 3600, ..template }).expect("signs")
}

// ------------------------------------------------------------ blacklist

#[tokio::test]
async fn a_blacklisted_refresh_token_cannot_refresh_nor_be_blacklisted_again() {
    let (app, _) = app().await;
    let (_, refresh_token) = app.login("ana", "ana-password").await;
    let (status, body) =
        status_and_json(app.post_json("/api/token/blacklist/", &json!({"refresh": refresh_token})).await).await;
    assert_eq!((status, body), (200, json!({})));

    let (status, body) = refresh(&app, &refresh_token).await;
    assert_eq!((status, body["code"].as_str()), (401, Some("token_not_valid")), "{body}");
    let (status, body) =
        status_and_json(app.post_json("/api/token/blacklist", &json!({"refresh": refresh_token})).await).await;
    assert_eq!(status, 401);
    assert_eq!(body, json!({"detail": "Token is blacklisted", "code": "token_not_valid"}));
    let (status, _) =
        status_and_json(app.post_json("/api/token/verify/", &json!({"token": refresh_token})).await).await;
    assert_eq!(status, 401, "verify agrees");
}

#[tokio::test]
async fn blacklisting_a_rotated_token_ends_the_session_it_was_rotated_into() {
    let (app, _) = app_with(|s| s.tokens.refresh_grace_secs = 0).await;
    let (_, first) = app.login("ana", "ana-password").await;
    let (_, rotated) = refresh(&app, &first).await;
    let (status, _) = status_and_json(app.post_json("/api/token/blacklist/", &json!({"refresh": first})).await).await;
    assert_eq!(status, 401);
    let (status, _) = refresh(&app, &text(&rotated, "refresh")).await;
    assert_eq!(status, 401, "the family is revoked");
}

#[tokio::test]
async fn blacklist_refusals_are_simplejwts() {
    let (app, ana) = app().await;
    let (access, _) = app.login("ana", "ana-password").await;
    let oauth = portal_tokens(&app, ana, "code-for-blacklist-refusals-0123456789abcdef").await;
    let cases = [
        (json!({}), 400, json!({"refresh": ["This field is required."]})),
        (
            json!({"refresh": "not-a-token"}),
            401,
            json!({"detail": "Token is invalid or expired", "code": "token_not_valid"}),
        ),
        (json!({"refresh": access}), 401, json!({"detail": "Token has wrong type", "code": "token_not_valid"})),
        (
            json!({"refresh": oauth["refresh_token"]}),
            401,
            json!({"detail": "Token has wrong type", "code": "token_not_valid"}),
        ),
        (
            json!({"refresh": expired(Claims::new(TokenType::Refresh, ana, 0, 0))}),
            401,
            json!({"detail": "Token is invalid or expired", "code": "token_not_valid"}),
        ),
    ];
    for (body, expected_status, expected) in cases {
        let (status, answer) = status_and_json(app.post_json("/api/token/blacklist/", &body).await).await;
        assert_eq!((status, &answer), (expected_status, &expected), "{body}");
    }
    let (status, body) = refresh_grant(&app, &text(&oauth, "refresh_token")).await;
    assert_eq!(status, 200, "the OAuth2 token was left alone: {body}");
}

// ------------------------------------------------------ revoke/introspect

#[tokio::test]
async fn a_revoked_refresh_token_introspects_inactive_and_its_family_is_dead() {
    let (app, ana) = app().await;
    let first = portal_tokens(&app, ana, "code-for-revocation-0123456789abcdefghijk").await;
    let (_, second) = refresh_grant(&app, &text(&first, "refresh_token")).await;
    let refresh_token = text(&second, "refresh_token");
    assert_eq!(introspect(&app, &refresh_token).await["active"], true);

    let hinted = [("token", refresh_token.as_str()), ("token_type_hint", "refresh_token")];
    let (status, body) = post_form(&app, "/oauth/revoke/", PORTAL, &hinted).await;
    assert_eq!((status, body), (200, json!({})));
    assert_eq!(introspect(&app, &refresh_token).await, json!({"active": false}));
    let (status, body) = refresh_grant(&app, &refresh_token).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_grant")));
    // Revoking it again, or an unknown token, is still 200 (RFC 7009 §2.2).
    for token in [refresh_token.as_str(), "unknown-token"] {
        let (status, _) = post_form(&app, "/oauth/revoke", PORTAL, &[("token", token)]).await;
        assert_eq!(status, 200, "{token}");
    }
}

#[tokio::test]
async fn introspection_describes_the_callers_valid_tokens_and_nothing_else() {
    let (app, ana) = app().await;
    let tokens = portal_tokens(&app, ana, "code-for-introspection-0123456789abcdefgh").await;
    let access = text(&tokens, "access_token");
    let answer = introspect(&app, &access).await;
    let claims = crate::oauth::decode_payload(&access);
    assert_eq!(
        answer,
        json!({"active": true, "scope": "dados_publicos cpf email", "client_id": "portal", "sub": ana.to_string(),
               "exp": claims["exp"], "iat": claims["iat"], "token_type": "access_token"})
    );
    assert_eq!(introspect(&app, &text(&tokens, "refresh_token")).await["token_type"], "refresh_token");

    let (first_party, _) = app.login("ana", "ana-password").await;
    let foreign = {
        let mut c = Claims::new(TokenType::Access, ana, 0, 0);
        c.aud = Some("spa".into());
        c.client_id = Some("spa".into());
        c.scope = Some("dados_publicos".into());
        let codec = TokenCodec::new(JwtKeys::hmac(SECRET.as_bytes()).expect("secret"), 0).expect("codec");
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("time").as_secs() as i64;
        codec.encode(&Claims { iat: now, exp: now + 300, ..c }).expect("signs")
    };
    let expired_access = expired(Claims {
        aud: Some("portal".into()),
        client_id: Some("portal".into()),
        ..Claims::new(TokenType::Access, ana, 0, 0)
    });
    for token in [first_party.as_str(), foreign.as_str(), expired_access.as_str(), "malformed", "a.b.c"] {
        assert_eq!(introspect(&app, token).await, json!({"active": false}), "{token}");
    }
    // A revoked access token is not revocable: it stays active until it expires.
    let (status, _) = post_form(&app, "/oauth/revoke/", PORTAL, &[("token", access.as_str())]).await;
    assert_eq!(status, 200);
    assert_eq!(introspect(&app, &access).await["active"], true);
}

#[tokio::test]
async fn revoke_and_introspect_refuse_bad_clients_and_missing_tokens() {
    let (app, ana) = app().await;
    let tokens = portal_tokens(&app, ana, "code-for-refusals-0123456789abcdefghijklmn").await;
    let refresh_token = text(&tokens, "refresh_token");
    for path in ["/oauth/revoke/", "/oauth/introspect/"] {
        let form = [("token", refresh_token.as_str())];
        let (status, body) = post_form(&app, path, None, &form).await;
        assert_eq!((status, body["error"].as_str()), (401, Some("invalid_client")), "{path} without a client");
        let (status, body) = post_form(&app, path, Some(("portal", "wrong-secret")), &form).await;
        assert_eq!((status, body["error"].as_str()), (401, Some("invalid_client")), "{path} wrong secret");
        let (status, body) = post_form(&app, path, PORTAL, &[]).await;
        assert_eq!((status, body["error"].as_str()), (400, Some("invalid_request")), "{path} without token");
        let twice = [("token", "a"), ("token", "b")];
        let (status, body) = post_form(&app, path, PORTAL, &twice).await;
        assert_eq!((status, body["error"].as_str()), (400, Some("invalid_request")), "{path} token twice");
    }
    let (status, body) = post_form(&app, "/oauth/introspect/", None, &[("client_id", "spa"), ("token", "x")]).await;
    assert_eq!((status, body["error"].as_str()), (401, Some("invalid_client")), "a public client may not introspect");
    let (status, _) = post_form(&app, "/oauth/revoke/", None, &[("client_id", "spa"), ("token", "x")]).await;
    assert_eq!(status, 200, "a public client may revoke");
    let (status, _) = refresh_grant(&app, &refresh_token).await;
    assert_eq!(status, 200, "nothing was revoked");
}

// ------------------------------------------------------------ grace window

#[tokio::test]
async fn two_refreshes_with_the_same_token_answer_the_same_pair_and_a_later_replay_revokes_the_family() {
    let app = spawn_app_with(|s| s.tokens.refresh_grace_secs = 1).await;
    app.add_user("ana", "ana-password", true).await;
    let (_, first) = app.login("ana", "ana-password").await;

    let (status, a) = refresh(&app, &first).await;
    assert_eq!(status, 200, "{a}");
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (status, b) = refresh(&app, &first).await;
    assert_eq!((status, &b), (200, &a), "the second tab gets the same pair");

    // The family lives: the new token refreshes.
    let (status, c) = refresh(&app, &text(&b, "refresh")).await;
    assert_eq!(status, 200, "{c}");

    // Past the window (1 s; whole seconds, so wait over 2 s), a replay of
    // the first token is a theft: the family is revoked.
    tokio::time::sleep(Duration::from_millis(2_200)).await;
    let (status, _) = refresh(&app, &first).await;
    assert_eq!(status, 401);
    let (status, _) = refresh(&app, &text(&c, "refresh")).await;
    assert_eq!(status, 401, "the family's current token is revoked");
}

#[tokio::test]
async fn concurrent_refreshes_of_one_token_all_get_the_same_pair() {
    let app = spawn_app_with(|_| {}).await;
    app.add_user("ana", "ana-password", true).await;
    let (_, first) = app.login("ana", "ana-password").await;
    let answers = futures_util::future::join_all((0..4).map(|_| refresh(&app, &first))).await;
    for (status, body) in &answers {
        assert_eq!((*status, body), (200, &answers[0].1));
    }
    let (status, _) = refresh(&app, &text(&answers[0].1, "refresh")).await;
    assert_eq!(status, 200, "the family lives");
}

#[tokio::test]
async fn the_oauth2_refresh_grant_has_the_same_window() {
    let (app, ana) = app().await;
    let first = portal_tokens(&app, ana, "code-for-grace-0123456789abcdefghijklmnopq").await;
    let old = text(&first, "refresh_token");
    let (status, a) = refresh_grant(&app, &old).await;
    assert_eq!(status, 200, "{a}");
    let (status, b) = refresh_grant(&app, &old).await;
    assert_eq!((status, &b), (200, &a));
    let (status, _) = refresh_grant(&app, &text(&b, "refresh_token")).await;
    assert_eq!(status, 200, "the family lives");
}

#[tokio::test]
async fn without_a_window_the_second_refresh_revokes_the_family_as_before() {
    let app = spawn_app_with(|s| s.tokens.refresh_grace_secs = 0).await;
    app.add_user("ana", "ana-password", true).await;
    let (_, first) = app.login("ana", "ana-password").await;
    let (_, a) = refresh(&app, &first).await;
    let (status, _) = refresh(&app, &first).await;
    assert_eq!(status, 401);
    let (status, _) = refresh(&app, &text(&a, "refresh")).await;
    assert_eq!(status, 401);
}
