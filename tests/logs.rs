//! What the service writes to its logs: request spans carry the path and
//! route, never the query string (which can carry authorization codes), and
//! a login never logs the password or the tokens. Its own test binary,
//! because it installs a global subscriber that captures every line.

#[path = "api/helpers.rs"]
#[allow(dead_code)]
mod helpers;

use std::io::Write;
use std::sync::{Arc, Mutex};

use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::fmt::MakeWriter;

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Captured {
    type Writer = Captured;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

#[tokio::test]
async fn logs_carry_paths_and_request_ids_but_no_query_strings_passwords_or_tokens() {
    let captured = Captured::default();
    tracing_subscriber::fmt()
        .with_env_filter("debug")
        .with_span_events(FmtSpan::CLOSE)
        .with_ansi(false)
        .with_writer(captured.clone())
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
    tokio::time::sleep(std::time::Duration::from_millis(200)).await; // let the spans close

    let logs = String::from_utf8(captured.0.lock().expect("lock").clone()).expect("utf-8");
    assert!(logs.contains("/healthz"), "the path is logged");
    assert!(logs.contains("request_id="), "every request has an id");
    for secret in ["AUTHCODE-123456", "s3cret-pass-phrase", access.as_str(), refresh.as_str(), helpers::SECRET] {
        assert!(!logs.contains(secret), "the logs leak {secret:?}");
    }
}
