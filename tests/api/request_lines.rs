//! The request line of the real binary (`credencial serve`), which writes it
//! straight to its log output rather than as a tracing event
//! (`RequestLineWriter`): the text shape, one line per request with the
//! route template and never the path, and the filter still deciding.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::helpers::{TestDatabase, ITERATIONS, SECRET};

/// Runs `credencial serve` with `rust_log`, sends `GET /healthz/?code=…`
/// and `POST /api/token/verify` (a bad token), stops it with SIGTERM and
/// returns everything it wrote to standard output.
async fn output_of_a_run(rust_log: Option<&str>) -> String {
    let db = TestDatabase::new().await;
    let mut command = Command::new(env!("CARGO_BIN_EXE_credencial"));
    command
        .arg("serve")
        .env("DATABASE_URL", &db.url)
        .env("SERVICE_BIND", "127.0.0.1:0")
        .env("SERVICE_JWT_SECRET", SECRET)
        // Not called: no route of this test reads the user-data resource.
        .env("SERVICE_UPSTREAM_BASE_URL", "http://127.0.0.1:9")
        .env("SERVICE_PASSWORD_ITERATIONS", ITERATIONS.to_string())
        .env("SERVICE_LOG_FORMAT", "text")
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(filter) = rust_log {
        command.env("RUST_LOG", filter);
    }
    let mut child = command.spawn().expect("the binary starts");
    let mut stdout = child.stdout.take().expect("stdout");
    // The address, from the first lines (read byte by byte until it shows).
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    let address = loop {
        let mut byte = [0_u8];
        if stdout.read(&mut byte).expect("read") == 0 || Instant::now() > deadline {
            panic!("no serving line: {}", String::from_utf8_lossy(&seen));
        }
        seen.push(byte[0]);
        let text = String::from_utf8_lossy(&seen);
        if let Some(line) = text.lines().find(|l| l.contains("credencial is serving") && text.ends_with('\n')) {
            let at = line.find("address=").expect("address field") + "address=".len();
            break line[at..].split_whitespace().next().expect("address").trim_matches('"').to_owned();
        }
    };
    let client = reqwest::Client::new();
    let r = client.get(format!("http://{address}/healthz/?code=AUTHCODE-123&state=s")).send().await.expect("sent");
    assert_eq!(r.status(), 200);
    let r = client
        .post(format!("http://{address}/api/token/verify"))
        .json(&serde_json::json!({"token": "not-a-token"}))
        .send()
        .await
        .expect("sent");
    assert_eq!(r.status(), 401);
    let refused_id = r.headers()["x-request-id"].to_str().expect("ascii").to_owned();
    let status = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().expect("kill runs");
    assert!(status.success());
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).expect("the rest of the output");
    assert!(child.wait().expect("exit").success());
    let all = String::from_utf8_lossy(&seen).into_owned() + &rest;
    assert!(rust_log.is_some() || all.contains(&refused_id), "the refused verify's id: {all}");
    all
}

#[tokio::test]
async fn the_binary_writes_one_text_request_line_per_request_with_its_template_and_never_the_query() {
    let output = output_of_a_run(None).await;
    let lines: Vec<&str> = output.lines().filter(|l| l.contains(" INFO request finished ")).collect();
    assert_eq!(lines.len(), 2, "{output}");
    assert!(lines[0].contains(" http.method=GET http.route=/healthz http.status_code=200 latency_us="), "{}", lines[0]);
    assert!(
        lines[1].contains(" http.method=POST http.route=/api/token/verify http.status_code=401 latency_us="),
        "{}",
        lines[1]
    );
    for line in &lines {
        let id = line.rsplit("request_id=").next().expect("an id");
        assert!(uuid::Uuid::parse_str(id).is_ok(), "{line}");
    }
    assert!(!output.contains("AUTHCODE"), "{output}");
}

#[tokio::test]
async fn a_filter_that_drops_the_request_target_leaves_no_request_line() {
    let output = output_of_a_run(Some("info,credencial::request=warn")).await;
    assert!(output.contains("credencial is serving"), "{output}");
    assert!(!output.contains("request finished"), "{output}");
}
