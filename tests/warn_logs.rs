//! The JSON log format with `RUST_LOG=warn`, the filter operators use to
//! keep logs quiet: the warnings written inside a request still carry the
//! request's id (the one in `X-Request-Id`), and requests that end without
//! trouble write nothing (no line per request). Its own test binary,
//! because it installs a global subscriber.

#[path = "api/database.rs"]
#[allow(dead_code)]
mod database;
#[path = "api/helpers.rs"]
#[allow(dead_code)]
mod helpers;

#[path = "support/log_capture.rs"]
mod log_capture;

use serde_json::Value;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::EnvFilter;

use helpers::spawn_app;
use log_capture::LogCapture;

#[tokio::test]
async fn at_warn_a_warning_inside_a_request_carries_its_id_and_quiet_requests_write_nothing() {
    let capture = LogCapture::default();
    credencial::telemetry::subscriber("json", EnvFilter::new("warn"), capture.clone())
        .try_init()
        .expect("one subscriber for this binary");
    let app = spawn_app().await;
    let get = |path: &str| app.client.get(format!("{}{path}", app.address)).send();

    let quiet = get("/readyz").await.expect("sent");
    assert_eq!(quiet.status(), 200);
    let quiet_id = quiet.headers()["x-request-id"].to_str().expect("ascii").to_owned();
    app.db.drop_now().await;
    let failing = get("/readyz").await.expect("sent");
    assert_eq!(failing.status(), 503);
    let failing_id = failing.headers()["x-request-id"].to_str().expect("ascii").to_owned();

    capture.wait_for_line(|l| l.contains("not ready: database unreachable")).await;
    let lines: Vec<Value> = capture
        .text()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {line}")))
        .collect();
    let warning =
        lines.iter().find(|l| l["message"] == "not ready: database unreachable").expect("the probe's warning");
    assert_eq!(warning["level"], "WARN");
    assert_eq!(warning["request_id"], failing_id.as_str(), "{warning}");
    assert!(lines.iter().all(|l| l["level"] != "INFO" && l["level"] != "DEBUG"), "only warnings and errors: {lines:?}");
    assert!(
        lines.iter().all(|l| l["request_id"] != quiet_id.as_str()),
        "a request without trouble writes no line: {lines:?}"
    );
}
