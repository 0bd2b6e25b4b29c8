//! What the service writes to its logs (text format): one line per finished
//! request with its route template, never the path's query string (which
//! can carry authorization codes); every line inside a request names it;
//! a login never logs the password or the tokens. Its own test binary,
//! because it installs a global subscriber that captures every line.

#[path = "api/database.rs"]
#[allow(dead_code)]
mod database;
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
    // Both forms of a hot route (two resources: `routes::two_forms`) are
    // one template in the request line.
    let mut verify_ids = Vec::new();
    for path in ["/api/token/verify/", "/api/token/verify"] {
        let r = app.post_json(path, &serde_json::json!({"token": access})).await;
        assert_eq!(r.status(), 200, "{path}");
        verify_ids.push(r.headers()["x-request-id"].to_str().expect("ascii").to_owned());
    }
    let refused = app.post_json("/api/token/pair/", &serde_json::json!({"username": "nobody", "password": "x"})).await;
    assert_eq!(refused.status(), 401);
    let refused_id = refused.headers()["x-request-id"].to_str().expect("ascii").to_owned();
    captured.wait_for_line(|l| l.contains(&refused_id) && l.contains("request finished")).await;

    let logs = captured.text();
    // One line per finished request: method, route template, status, latency, id.
    let ends: Vec<&str> = logs.lines().filter(|l| l.contains(&refused_id) && l.contains("request finished")).collect();
    assert_eq!(ends.len(), 1, "{ends:?}");
    for part in ["INFO", "http.method=POST", "http.route=/api/token/pair", "http.status_code=401", "latency_us="] {
        assert!(ends[0].contains(part), "{part} missing: {}", ends[0]);
    }
    assert!(logs.lines().any(|l| l.contains("http.route=/healthz") && l.contains("http.status_code=200")));
    for id in &verify_ids {
        let line =
            logs.lines().find(|l| l.contains(id.as_str()) && l.contains("request finished")).expect("verify line");
        assert!(line.contains("http.route=/api/token/verify http.status_code=200"), "{line}");
    }
    // What the login logs inside the request (its database queries, at
    // debug) names the request too.
    let inside: Vec<&str> = logs
        .lines()
        .filter(|l| l.contains(&format!("request_id={refused_id}")) && !l.contains("request finished"))
        .collect();
    assert!(inside.iter().any(|l| l.contains("DEBUG")), "{inside:?}");
    for secret in ["AUTHCODE-123456", "s3cret-pass-phrase", access.as_str(), refresh.as_str(), helpers::SECRET] {
        assert!(!logs.contains(secret), "the logs leak {secret:?}");
    }
}
