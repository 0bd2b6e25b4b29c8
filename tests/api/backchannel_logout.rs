//! OpenID Connect Back-Channel Logout, the provider's side, over real
//! HTTP: an application that names a `backchannel_logout_uri` (a real
//! receiver on loopback) gets a signed logout token when a session it
//! received an ID token in ends (logout, the sessions page, a password
//! change, deactivation); one that is down gets it when it is back; one
//! that refuses it, or redirects, is not asked again.

use std::time::Duration;

use jsonwebtoken::Algorithm;
use serde_json::Value;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::account::form_token;
use crate::helpers::{Browser, TestApp};
use crate::oidc::{exchange, oidc_app, portal_oidc_request, published_keys, verified_id_token};

/// Where the receiver listens.
const RECEIVER_PATH: &str = "/oidc/backchannel-logout/";
/// The back-channel logout event.
const EVENT: &str = "http://schemas.openid.net/event/backchannel-logout";

/// Runs `credencial client update --client-id portal --backchannel-logout-uri uri`.
fn listen(app: &TestApp, uri: &str) -> std::process::Output {
    let args = ["client", "update", "--client-id", "portal", "--backchannel-logout-uri", uri];
    crate::cli::credencial(&app.db.url, &args, "")
}

/// A receiver answering `status`, and portal listening there.
async fn receiver(app: &TestApp, status: u16) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(RECEIVER_PATH))
        .respond_with(ResponseTemplate::new(status))
        .mount(&server)
        .await;
    let out = listen(app, &format!("{}{RECEIVER_PATH}", server.uri()));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    server
}

/// ana logged in, and portal's ID token for her (`openid`).
async fn logged_in(app: &TestApp) -> (Browser, Value) {
    let mut browser = Browser::new(app);
    let code = crate::oidc::code_in(&mut browser, &portal_oidc_request("openid", &[])).await;
    let tokens = exchange(app, &code).await;
    let id_token =
        verified_id_token(tokens["id_token"].as_str().expect("id_token"), &published_keys(app).await, Algorithm::RS256);
    (browser, id_token)
}

/// Logs `browser` out through Minha conta.
async fn log_out(browser: &mut Browser) {
    let token = form_token(&browser.get("/conta/sair/").await);
    let out = browser.post("/conta/sair/", &[("csrf_token".into(), token)]).await;
    assert_eq!(out.status, 303, "{}", out.body);
}

/// The logout tokens `server` received, waiting up to ten seconds for
/// `count` of them.
async fn received(server: &MockServer, count: usize) -> Vec<String> {
    for _ in 0..100 {
        let requests = server.received_requests().await.unwrap_or_default();
        if requests.len() >= count {
            return requests
                .iter()
                .map(|r| {
                    assert_eq!(
                        r.headers.get("content-type").and_then(|v| v.to_str().ok()),
                        Some("application/x-www-form-urlencoded")
                    );
                    let form: Vec<(String, String)> =
                        url::form_urlencoded::parse(&r.body).map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
                    assert_eq!(form.len(), 1, "logout_token alone");
                    assert_eq!(form[0].0, "logout_token");
                    form[0].1.clone()
                })
                .collect();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the receiver got fewer than {count} logout tokens");
}

async fn waiting(app: &TestApp) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM logout_deliveries").fetch_one(&app.db.pool).await.expect("count")
}

/// Waits up to ten seconds for the outbox to be empty.
async fn outbox_empties(app: &TestApp) {
    for _ in 0..100 {
        if waiting(app).await == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("deliveries still wait");
}

#[tokio::test]
async fn a_logout_in_minha_conta_posts_a_signed_logout_token_naming_the_id_tokens_session() {
    let (app, ana) = oidc_app(|_| {}).await;
    let server = receiver(&app, 200).await;
    let (mut browser, id_token) = logged_in(&app).await;
    let sid = id_token["sid"].as_str().expect("the ID token names its session").to_owned();
    assert!(sid.len() >= 22, "{sid}");
    log_out(&mut browser).await;

    let tokens = received(&server, 1).await;
    let claims = verified_id_token(&tokens[0], &published_keys(&app).await, Algorithm::RS256);
    // Typed as a logout token (§2.4), so that strict receivers take it.
    let header = jsonwebtoken::decode_header(&tokens[0]).expect("a JOSE header");
    assert_eq!(header.typ.as_deref(), Some("logout+jwt"));
    assert!(claims["exp"].as_i64().is_some(), "exp is required: {claims}");
    assert_eq!(claims["sub"], ana.to_string());
    assert_eq!(claims["sid"], sid.as_str());
    assert_eq!(claims["events"], serde_json::json!({ EVENT: {} }));
    assert!(claims["jti"].as_str().is_some_and(|j| !j.is_empty()), "{claims}");
    assert!(claims.get("nonce").is_none(), "a logout token is no ID token: {claims}");
    outbox_empties(&app).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(server.received_requests().await.expect("recorded").len(), 1, "sent once");

    // A second login is a second session: another sid.
    let (_, again) = logged_in(&app).await;
    assert_ne!(again["sid"], sid.as_str());
}

#[tokio::test]
async fn each_way_a_session_ends_tells_the_application() {
    let (app, ana) = oidc_app(|_| {}).await;
    let server = receiver(&app, 200).await;
    // The sessions page: "end the others".
    let (_, first) = logged_in(&app).await;
    let (mut second, _) = logged_in(&app).await;
    let page = second.get("/conta/sessoes/").await;
    let ended = second
        .post("/conta/sessoes/", &[("csrf_token".into(), form_token(&page)), ("acao".into(), "encerrar_outras".into())])
        .await;
    assert_eq!(ended.status, 303, "{}", ended.body);
    let tokens = received(&server, 1).await;
    let keys = published_keys(&app).await;
    assert_eq!(verified_id_token(&tokens[0], &keys, Algorithm::RS256)["sid"], first["sid"]);

    // Deactivation by an operator ends the rest.
    let out = crate::cli::credencial(&app.db.url, &["user", "set-active", "--username", "ana", "false"], "");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let tokens = received(&server, 2).await;
    let last = verified_id_token(&tokens[1], &keys, Algorithm::RS256);
    assert_eq!(last["sub"], ana.to_string());
    assert_ne!(last["sid"], first["sid"]);
    outbox_empties(&app).await;
}

#[tokio::test]
async fn an_application_without_an_address_or_an_id_token_is_not_told() {
    let (app, _) = oidc_app(|_| {}).await;
    // No address: nothing waits.
    let (mut browser, _) = logged_in(&app).await;
    log_out(&mut browser).await;
    assert_eq!(waiting(&app).await, 0);
    // An address, but no ID token in that session: nothing to tell.
    let server = receiver(&app, 200).await;
    let mut browser = Browser::new(&app);
    let code = crate::oidc::code_in(&mut browser, &portal_oidc_request("email", &[])).await;
    assert!(exchange(&app, &code).await.get("id_token").is_none());
    log_out(&mut browser).await;
    assert_eq!(waiting(&app).await, 0);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(server.received_requests().await.expect("recorded").is_empty());
}

#[tokio::test]
async fn a_receiver_that_is_down_gets_the_same_token_when_it_is_back() {
    let (app, _) = oidc_app(|_| {}).await;
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(RECEIVER_PATH))
        .respond_with(ResponseTemplate::new(503))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST")).and(path(RECEIVER_PATH)).respond_with(ResponseTemplate::new(200)).mount(&server).await;
    assert!(listen(&app, &format!("{}{RECEIVER_PATH}", server.uri())).status.success());
    let (mut browser, id_token) = logged_in(&app).await;
    log_out(&mut browser).await;
    let first = received(&server, 1).await.remove(0);
    // The failed try waits half a minute; the test moves the clock of the
    // delivery instead of waiting.
    for _ in 0..100 {
        let row: Option<(i32, i64)> = sqlx::query_as("SELECT attempts, due_at FROM logout_deliveries")
            .fetch_optional(&app.db.pool)
            .await
            .expect("read");
        if row.is_some_and(|(attempts, _)| attempts == 1) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (attempts, due_at): (i32, i64) =
        sqlx::query_as("SELECT attempts, due_at FROM logout_deliveries").fetch_one(&app.db.pool).await.expect("waits");
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("time").as_secs() as i64;
    assert_eq!(attempts, 1);
    assert!(due_at >= now + 20, "tried again in about 30 s, not at once: {due_at} vs {now}");
    sqlx::query("UPDATE logout_deliveries SET due_at = 0").execute(&app.db.pool).await.expect("time passes");

    let tokens = received(&server, 2).await;
    let keys = published_keys(&app).await;
    let (a, b) =
        (verified_id_token(&first, &keys, Algorithm::RS256), verified_id_token(&tokens[1], &keys, Algorithm::RS256));
    assert_eq!(a["jti"], b["jti"], "the same delivery: a receiver that saw it ignores it");
    assert_eq!(b["sid"], id_token["sid"]);
    outbox_empties(&app).await;
}

#[tokio::test]
async fn a_receiver_that_refuses_or_redirects_is_not_asked_again_and_the_redirect_is_not_followed() {
    let (app, _) = oidc_app(|_| {}).await;
    let server = receiver(&app, 400).await;
    let (mut browser, _) = logged_in(&app).await;
    log_out(&mut browser).await;
    received(&server, 1).await;
    outbox_empties(&app).await;

    let elsewhere = MockServer::start().await;
    let redirecting = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(307).insert_header("Location", format!("{}/steal", elsewhere.uri())))
        .mount(&redirecting)
        .await;
    assert!(listen(&app, &format!("{}{RECEIVER_PATH}", redirecting.uri())).status.success());
    let (mut browser, _) = logged_in(&app).await;
    log_out(&mut browser).await;
    received(&redirecting, 1).await;
    outbox_empties(&app).await;
    assert!(elsewhere.received_requests().await.expect("recorded").is_empty(), "the token went nowhere else");
}

#[tokio::test]
async fn the_cli_takes_https_or_loopback_addresses_only_and_the_trail_records_each_change() {
    let (app, _) = oidc_app(|_| {}).await;
    for bad in [
        "http://portal.example.gov.br/logout",
        "ftp://portal.example.gov.br/",
        "https://portal.example.gov.br/#x",
        "logout",
    ] {
        let out = listen(&app, bad);
        assert!(!out.status.success(), "{bad} accepted");
        assert!(String::from_utf8_lossy(&out.stderr).contains("--backchannel-logout-uri"), "{bad}");
    }
    let out = listen(&app, "https://portal.example.gov.br/oidc/logout");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout)
        .contains("back-channel logout URI: https://portal.example.gov.br/oidc/logout"));
    assert!(listen(&app, "").status.success(), "\"\" stops it");
    let stored: Option<String> =
        sqlx::query_scalar("SELECT backchannel_logout_uri FROM oauth_clients WHERE client_id = 'portal'")
            .fetch_one(&app.db.pool)
            .await
            .expect("read");
    assert_eq!(stored, None);
    let details: Vec<String> = sqlx::query_scalar(
        "SELECT CAST(changes AS TEXT) FROM audit_log WHERE CAST(changes AS TEXT) LIKE '%backchannel_logout_uri%' ORDER BY id",
    )
        .fetch_all(&app.db.pool)
        .await
        .expect("trail");
    assert_eq!(details.len(), 2, "{details:?}");
    assert!(
        details[0].contains("https://portal.example.gov.br/oidc/logout") && details[1].contains("nenhuma"),
        "{details:?}"
    );
}

#[tokio::test]
async fn discovery_says_back_channel_logout_and_sid_are_supported() {
    let (app, _) = oidc_app(|_| {}).await;
    let doc = crate::oidc::discovery(&app).await;
    assert_eq!(
        (doc["backchannel_logout_supported"].as_bool(), doc["backchannel_logout_session_supported"].as_bool()),
        (Some(true), Some(true))
    );
    assert!(doc["claims_supported"].as_array().expect("list").iter().any(|c| c == "sid"));
}
