//! The client component's back-channel logout receiver, end to end: the
//! demo runs the host application as the client `demo-host` against
//! itself, with back-channel logout on. A logout in Minha conta ends the
//! host session; logout tokens typed `logout+jwt` or `JWT` are taken;
//! those that are forged, replayed, for another audience, without `exp`,
//! typed for another use, or ID tokens posing as one are refused with 400.

use std::time::Duration;

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{json, Value};

use crate::account::form_token;
use crate::client_login::log_in;
use crate::helpers::{spawn_demo, Browser, TestDatabase, TEST_KEYS};

/// The back-channel logout event.
const EVENT: &str = "http://schemas.openid.net/event/backchannel-logout";

/// The demo with the test key pair as its ID-token key (so the test can
/// sign logout tokens the demo's keys verify), ana logged in to the host.
async fn demo_with_ana() -> (Browser, TestDatabase) {
    let (mut browser, db) = spawn_demo(|s| {
        s.tokens.oidc_signing_key_file = Some(format!("{TEST_KEYS}/rsa_private.pem").into());
    })
    .await;
    let done = log_in(&mut browser, "ana", "ana-demo-2026", "/auth/me/").await;
    assert_eq!(done.status, 303, "{}", done.body);
    assert_eq!(browser.get("/auth/me/").await.status, 200);
    (browser, db)
}

/// The `sid` of the provider session the host got its ID token in.
async fn host_sid(db: &TestDatabase) -> String {
    sqlx::query_scalar("SELECT sid FROM session_clients WHERE client_id = 'demo-host'")
        .fetch_one(&db.pool)
        .await
        .expect("the session remembers the host")
}

/// The published key id of the demo's ID-token key.
async fn kid(browser: &mut Browser) -> String {
    let keys: Value = serde_json::from_str(&browser.get("/.well-known/jwks.json").await.body).expect("JWKS");
    keys["keys"][0]["kid"].as_str().expect("kid").to_owned()
}

/// `claims` signed with the key of `key_file` under `kid` (header `typ:
/// JWT`, as providers wrote before explicit typing).
fn signed(claims: &Value, key_file: &str, kid: &str) -> String {
    signed_as(claims, key_file, kid, "JWT")
}

/// `claims` signed with the key of `key_file` under `kid`, typed `typ`.
fn signed_as(claims: &Value, key_file: &str, kid: &str, typ: &str) -> String {
    let pem = std::fs::read(format!("{TEST_KEYS}/{key_file}")).expect("key");
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some(kid.to_owned());
    header.typ = Some(typ.to_owned());
    jsonwebtoken::encode(&header, claims, &EncodingKey::from_rsa_pem(&pem).expect("RSA key")).expect("signed")
}

/// Logout-token claims from the demo (issuer `browser.base`) to demo-host.
fn logout_claims(browser: &Browser, sid: &str, jti: &str) -> Value {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("time").as_secs();
    json!({
        "iss": browser.base, "aud": "demo-host", "iat": now, "exp": now + 120, "jti": jti,
        "sid": sid, "events": { EVENT: {} },
    })
}

/// Posts `form` to the receiver: status and body.
async fn post_to_receiver(browser: &Browser, form: &[(&str, &str)]) -> (u16, String) {
    let r = browser
        .client
        .post(format!("{}/auth/backchannel-logout/", browser.base))
        .form(form)
        .send()
        .await
        .expect("sent");
    (r.status().as_u16(), r.text().await.expect("body"))
}

#[tokio::test]
async fn a_logout_in_minha_conta_ends_the_demo_hosts_session() {
    let (mut browser, _db) = demo_with_ana().await;
    // The host asked for openid: its session came with an ID token.
    let token = form_token(&browser.get("/conta/sair/").await);
    let out = browser.post("/conta/sair/", &[("csrf_token".into(), token)]).await;
    assert_eq!(out.status, 303, "{}", out.body);
    for _ in 0..100 {
        let me = browser.get("/auth/me/").await;
        if me.status == 303 {
            assert!(me.location.as_deref().is_some_and(|l| l.starts_with("/auth/login/")), "{:?}", me.location);
            assert!(me.set_cookies.iter().any(|c| c.starts_with("credencial_host_session=;")), "{:?}", me.set_cookies);
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the host session outlived the logout at the provider");
}

#[tokio::test]
async fn a_valid_logout_token_ends_that_session_once_and_a_replay_is_refused() {
    let (mut browser, db) = demo_with_ana().await;
    let sid = host_sid(&db).await;
    let kid = kid(&mut browser).await;
    // Another person's session: the token names ana's alone.
    let mut other = Browser::new_at(&browser.base, browser.client.clone());
    assert_eq!(log_in(&mut other, "bruno", "bruno-demo-2026", "/auth/me/").await.status, 303);

    let token = signed(&logout_claims(&browser, &sid, "jti-1"), "rsa_private.pem", &kid);
    let (status, body) = post_to_receiver(&browser, &[("logout_token", &token)]).await;
    assert_eq!((status, body.as_str()), (200, ""));
    assert_eq!(browser.get("/auth/me/").await.status, 303, "ana's host session ended");
    assert_eq!(other.get("/auth/me/").await.status, 200, "bruno's goes on");

    let (status, body) = post_to_receiver(&browser, &[("logout_token", &token)]).await;
    assert_eq!(status, 400, "a replay: {body}");
    assert_eq!(serde_json::from_str::<Value>(&body).expect("JSON")["error"], "invalid_request");

    // A login in another provider session (another sid) is not ended by it.
    let mut fresh = Browser::new_at(&browser.base, browser.client.clone());
    assert_eq!(log_in(&mut fresh, "ana", "ana-demo-2026", "/auth/me/").await.status, 303);
    assert_eq!(fresh.get("/auth/me/").await.status, 200);
}

#[tokio::test]
async fn a_logout_token_typed_logout_jwt_is_taken_like_one_typed_jwt() {
    let (mut browser, db) = demo_with_ana().await;
    let sid = host_sid(&db).await;
    let token = signed_as(
        &logout_claims(&browser, &sid, "jti-typed"),
        "rsa_private.pem",
        &kid(&mut browser).await,
        "logout+jwt",
    );
    let (status, body) = post_to_receiver(&browser, &[("logout_token", &token)]).await;
    assert_eq!((status, body.as_str()), (200, ""));
    assert_eq!(browser.get("/auth/me/").await.status, 303, "ana's host session ended");
}

#[tokio::test]
async fn a_logout_token_naming_the_person_alone_ends_all_her_host_sessions() {
    let (mut browser, _db) = demo_with_ana().await;
    let mut second = Browser::new_at(&browser.base, browser.client.clone());
    assert_eq!(log_in(&mut second, "ana", "ana-demo-2026", "/auth/me/").await.status, 303);
    let ana: i64 =
        sqlx::query_scalar("SELECT id FROM users WHERE username = 'ana'").fetch_one(&_db.pool).await.expect("ana");
    let mut claims = logout_claims(&browser, "", "jti-sub");
    claims.as_object_mut().expect("object").remove("sid");
    claims["sub"] = json!(ana.to_string());
    let token = signed(&claims, "rsa_private.pem", &kid(&mut browser).await);
    assert_eq!(post_to_receiver(&browser, &[("logout_token", &token)]).await.0, 200);
    assert_eq!(browser.get("/auth/me/").await.status, 303);
    assert_eq!(second.get("/auth/me/").await.status, 303);
}

#[tokio::test]
async fn forged_foreign_and_malformed_logout_tokens_are_refused_and_end_nothing() {
    let (mut browser, db) = demo_with_ana().await;
    let sid = host_sid(&db).await;
    let kid = kid(&mut browser).await;
    let valid = logout_claims(&browser, &sid, "jti-x");
    let with = |key: &str, value: Value| {
        let mut claims = valid.clone();
        claims[key] = value;
        claims
    };
    let cases: Vec<(&str, String)> = vec![
        ("another key under our kid", signed(&valid, "rsa_other_private.pem", &kid)),
        ("an unknown kid", signed(&valid, "rsa_other_private.pem", "not-ours")),
        ("another audience", signed(&with("aud", json!("portal")), "rsa_private.pem", &kid)),
        ("another issuer", signed(&with("iss", json!("https://evil.example")), "rsa_private.pem", &kid)),
        ("an ID token's nonce", signed(&with("nonce", json!("n")), "rsa_private.pem", &kid)),
        ("no event", signed(&with("events", json!({})), "rsa_private.pem", &kid)),
        ("expired", signed(&with("exp", json!(1_000)), "rsa_private.pem", &kid)),
        // §2.4 makes exp required: a token without one would end sessions
        // whenever it is replayed, once its jti is forgotten.
        ("no exp", {
            let mut claims = valid.clone();
            claims.as_object_mut().expect("object").remove("exp");
            signed(&claims, "rsa_private.pem", &kid)
        }),
        // A token typed for another use (an access token) is not a logout token.
        ("typed at+jwt", signed_as(&valid, "rsa_private.pem", &kid, "at+jwt")),
        ("HS256 over the public key", {
            let header = Header { kid: Some(kid.clone()), ..Header::new(Algorithm::HS256) };
            let public = std::fs::read(format!("{TEST_KEYS}/rsa_public.pem")).expect("public key");
            jsonwebtoken::encode(&header, &valid, &EncodingKey::from_secret(&public)).expect("signed")
        }),
        ("not a JWT", "not-a-jwt".to_owned()),
    ];
    for (case, token) in &cases {
        let (status, body) = post_to_receiver(&browser, &[("logout_token", token)]).await;
        assert_eq!(status, 400, "{case}: {body}");
        assert_eq!(serde_json::from_str::<Value>(&body).expect("JSON")["error"], "invalid_request", "{case}");
    }
    let (status, _) = post_to_receiver(&browser, &[]).await;
    assert_eq!(status, 400, "no logout_token");
    let r = browser
        .client
        .post(format!("{}/auth/backchannel-logout/", browser.base))
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .expect("sent");
    assert_eq!(r.status().as_u16(), 400, "not a form");
    assert_eq!(browser.get("/auth/me/").await.status, 200, "nothing ended");
}

#[tokio::test]
async fn without_back_channel_logout_there_is_no_receiver_and_no_openid() {
    let (mut browser, _db) = spawn_demo(|s| s.client.provider_backchannel_logout = Some(false)).await;
    let start = browser.get("/auth/login/").await;
    let authorize = start.location.expect("to the provider");
    assert!(!authorize.contains("openid"), "{authorize}");
    let (status, _) = post_to_receiver(&browser, &[("logout_token", "x")]).await;
    assert_eq!(status, 404);
}
