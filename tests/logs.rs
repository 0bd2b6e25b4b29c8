//! What the service writes to its logs: request spans carry the path and
//! route, never the query string (which can carry authorization codes), and
//! a login never logs the password or the tokens. Its own test binary,
//! because it installs a global subscriber that captures every line.

#[path = "api/helpers.rs"]
#[allow(dead_code)]
mod helpers;

#[path = "support/log_capture.rs"]
mod log_capture;

use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::EnvFilter;

#[tokio::test]
async fn logs_carry_paths_and_request_ids_but_no_query_strings_passwords_or_tokens() {
    let captured = log_capture::LogCapture::default();
    credencial::telemetry::subscriber("text", EnvFilter::new("debug"), captured.clone())
        .try_init()
        .expect("one subscriber for this binary");
    let app = helpers::spawn_app().await;
    app.add_user("maria", "s3cret-pass-phrase", true).await;
    let (access, refresh) = app.login("maria", "s3cret-pass-phrase").await;
    let r =
        app.client.get(format!("{}/healthz?code=AUTHCODE-123456&state=xyz", app.address)).send().await.expect("sent");
    assert_eq!(r.status(), 200);
    let r = app.post_json("/api/token/verify/", &serde_json::json!({"token": access})).await;
    assert_eq!(r.status(), 200);
    captured.wait_for_line(|l| l.contains("/api/token/verify/") && l.contains("close")).await;

    let logs = captured.text();
    assert!(logs.contains("/healthz"), "the path is logged");
    assert!(logs.contains("request_id="), "every request has an id");
    for secret in ["AUTHCODE-123456", "s3cret-pass-phrase", access.as_str(), refresh.as_str(), helpers::SECRET] {
        assert!(!logs.contains(secret), "the logs leak {secret:?}");
    }
}
