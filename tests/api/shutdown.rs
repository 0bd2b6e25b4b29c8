//! Graceful shutdown of the real binary: `credencial serve` configured by
//! the environment, stopped with SIGTERM while a request is in flight, and
//! while the periodic purge works through a backlog.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use crate::database::Engine;
use crate::helpers::TestDatabase;
use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::helpers::{add_user_to, ITERATIONS, SECRET};

/// How long any step may take before the test gives up (a bound for a
/// loaded machine, not a performance figure).
const PATIENCE: Duration = Duration::from_secs(20);

/// `credencial serve` on a free port, its JSON log lines read as they come.
struct Service {
    child: Child,
    lines: Receiver<Value>,
    /// Every line read so far.
    seen: Vec<Value>,
    address: SocketAddr,
}

impl Service {
    /// Starts the binary on `db` with `upstream` as the user-data resource
    /// and waits until it says where it serves.
    fn start(db: &TestDatabase, upstream: &MockServer, extra_env: &[(&str, &str)]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_credencial"))
            .arg("serve")
            .env("DATABASE_URL", &db.url)
            .env("SERVICE_BIND", "127.0.0.1:0")
            .env("SERVICE_JWT_SECRET", SECRET)
            .env("SERVICE_UPSTREAM_BASE_URL", upstream.uri())
            .env("SERVICE_PASSWORD_ITERATIONS", ITERATIONS.to_string())
            .env("SERVICE_WORKERS", "2")
            .env("SERVICE_LOG_FORMAT", "json")
            .env_remove("RUST_LOG") // the service's default filter
            .envs(extra_env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the binary starts");
        let stdout = child.stdout.take().expect("stdout");
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let parsed = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"));
                if send.send(parsed).is_err() {
                    break;
                }
            }
        });
        let mut service = Self { child, lines, seen: Vec::new(), address: SocketAddr::from(([127, 0, 0, 1], 0)) };
        let serving = service.wait_for_message("credencial is serving");
        service.address = serving["address"].as_str().expect("address").parse().expect("socket address");
        service
    }

    /// Waits for the next line whose message is `message`.
    fn wait_for_message(&mut self, message: &str) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).unwrap_or_else(|e| panic!("no {message:?} line: {e}"));
            self.seen.push(line.clone());
            if line["message"] == message {
                return line;
            }
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    /// Sends SIGTERM, as an orchestrator does.
    fn terminate(&self) {
        let status = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status().expect("kill runs");
        assert!(status.success());
    }

    /// Waits for the process to exit.
    fn wait_for_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(Instant::now() < deadline, "still running after {PATIENCE:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The lines still unread once the process has exited (stdout closed).
    fn rest_of_the_log(&mut self) -> &[Value] {
        self.seen.extend(self.lines.iter());
        &self.seen
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A fresh HTTP client.
fn client() -> reqwest::Client {
    reqwest::Client::new()
}

/// Waits until `/healthz` answers 200.
async fn wait_until_healthy(service: &Service) {
    let deadline = Instant::now() + PATIENCE;
    while !matches!(client().get(service.url("/healthz")).send().await, Ok(r) if r.status() == 200) {
        assert!(Instant::now() < deadline, "/healthz never answered");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until the upstream has received `count` requests.
async fn wait_for_upstream_requests(upstream: &MockServer, count: usize) {
    let deadline = Instant::now() + PATIENCE;
    while upstream.received_requests().await.map_or(0, |r| r.len()) < count {
        assert!(Instant::now() < deadline, "the upstream was never called");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A user of `db` and an access token for it from `service`.
async fn access_token(db: &TestDatabase, service: &Service) -> String {
    add_user_to(db, "maria", "maria-pass-phrase", true).await;
    let r = client()
        .post(service.url("/api/token/pair/"))
        .json(&json!({"username": "maria", "password": "maria-pass-phrase"}))
        .send()
        .await
        .expect("login");
    assert_eq!(r.status(), 200);
    r.json::<Value>().await.expect("json")["access"].as_str().expect("access").to_owned()
}

/// An upstream whose `/api/rh/eu/` answers `body` after `delay`.
async fn slow_upstream(body: &Value, delay: Duration) -> MockServer {
    let upstream = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/api/rh/eu/"))
        .respond_with(ResponseTemplate::new(200).set_body_json(body).set_delay(delay))
        .mount(&upstream)
        .await;
    upstream
}

/// A connection that has had one answer and stays open, idle (HTTP/1.1
/// keep-alive, as browsers and balancers keep them).
fn keep_alive_connection(address: SocketAddr) -> TcpStream {
    let mut stream = TcpStream::connect(address).expect("connect");
    stream.set_read_timeout(Some(PATIENCE)).expect("read timeout");
    stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: credencial\r\n\r\n").expect("request");
    let mut answer = [0u8; 1024];
    let n = stream.read(&mut answer).expect("answer");
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 200") && answer.ends_with(r#"{"status":"ok"}"#), "{answer}");
    stream
}

fn refused(address: SocketAddr) -> bool {
    TcpStream::connect_timeout(&address, Duration::from_secs(1))
        .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionRefused)
}

#[tokio::test]
async fn sigterm_lets_the_in_flight_request_finish_refuses_new_connections_and_exits_0() {
    let db = TestDatabase::new().await;
    let data = json!({"identificacao": "1934207", "email": "maria@example.gov.br", "campus": "Natal-Central"});
    let upstream = slow_upstream(&data, Duration::from_secs(2)).await;
    let mut service = Service::start(&db, &upstream, &[]);
    wait_until_healthy(&service).await;
    let access = access_token(&db, &service).await;
    let idle = keep_alive_connection(service.address);

    let in_flight = tokio::spawn(client().get(service.url("/api/token/rh/eu/")).bearer_auth(access).send());
    wait_for_upstream_requests(&upstream, 1).await; // the request is being served
    let sent = Instant::now();
    service.terminate();
    let stopping = service.wait_for_message("stopping: no new connections, finishing in-flight requests");
    assert_eq!((stopping["signal"].as_str(), stopping["timeout_secs"].as_u64()), (Some("SIGTERM"), Some(30)));

    // The listener closes at once, while the request is still running.
    let deadline = Instant::now() + PATIENCE;
    while !refused(service.address) {
        assert!(Instant::now() < deadline, "new connections are still accepted");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!in_flight.is_finished(), "refused while the in-flight request still runs");
    // The idle keep-alive connection is closed too, without waiting for it.
    let idle_closed = tokio::task::spawn_blocking(move || {
        let mut rest = Vec::new();
        let clean_end = (&idle).read_to_end(&mut rest).is_ok_and(|n| n == 0);
        (clean_end, Instant::now())
    });

    let response = in_flight.await.expect("task").expect("the in-flight request gets its answer");
    let (finished, answered_at) = (sent.elapsed(), Instant::now());
    let (clean_end, idle_closed_at) = idle_closed.await.expect("reader");
    assert!(clean_end && idle_closed_at < answered_at, "the idle connection was closed before the in-flight answer");
    assert_eq!(response.status(), 200);
    let request_id = response.headers().get("x-request-id").expect("X-Request-Id").to_str().expect("ascii").to_owned();
    assert_eq!(response.json::<Value>().await.expect("json"), data);

    let status = service.wait_for_exit();
    let exited = sent.elapsed();
    assert!(status.success(), "exit status {status:?}");
    assert!(refused(service.address), "nothing listens after the stop");
    let log = service.rest_of_the_log();
    assert!(log.iter().any(|l| l["message"] == "stopped"), "the stop is logged");
    assert!(
        log.iter().any(|l| l["request_id"] == request_id.as_str()
            && l["message"] == "request finished"
            && l["http.status_code"] == 200),
        "the request's line carries its id, and is written out before the process exits"
    );
    let idle = idle_closed_at.duration_since(sent);
    eprintln!(
        "SIGTERM → idle connection closed {idle:?}, in-flight response {finished:?}, exit {exited:?} (upstream 2 s)"
    );
}

#[tokio::test]
async fn a_request_longer_than_the_shutdown_timeout_is_cut_off_and_the_process_still_exits_0() {
    let db = TestDatabase::new().await;
    let upstream = slow_upstream(&json!({"identificacao": "1"}), Duration::from_secs(60)).await;
    let env = [("SERVICE_SHUTDOWN_TIMEOUT_SECS", "1"), ("SERVICE_UPSTREAM_TIMEOUT_MS", "120000")];
    let mut service = Service::start(&db, &upstream, &env);
    wait_until_healthy(&service).await;
    let access = access_token(&db, &service).await;

    let in_flight = tokio::spawn(client().get(service.url("/api/token/rh/eu/")).bearer_auth(access).send());
    wait_for_upstream_requests(&upstream, 1).await;
    let sent = Instant::now();
    service.terminate();
    let status = service.wait_for_exit();
    let exited = sent.elapsed();
    assert!(status.success(), "exit status {status:?}");
    // A generous bound: the request alone would have taken 60 s.
    assert!(exited < Duration::from_secs(15), "exited after {exited:?}");
    assert!(in_flight.await.expect("task").is_err(), "the cut-off request gets no answer");
    eprintln!("SIGTERM with a 1 s shutdown timeout → exit {exited:?} (upstream delay 60 s)");
}

#[tokio::test]
async fn sigterm_stops_the_metrics_listener_with_the_service() {
    let db = TestDatabase::new().await;
    let upstream = MockServer::start().await;
    let mut service = Service::start(&db, &upstream, &[("SERVICE_METRICS_BIND", "127.0.0.1:0")]);
    let line = service.seen.iter().find(|l| l["message"] == "metrics are served at /metrics on their own address");
    let metrics: SocketAddr =
        line.expect("the metrics address is logged")["address"].as_str().expect("address").parse().expect("address");
    wait_until_healthy(&service).await;
    let r = client().get(format!("http://{metrics}/metrics")).send().await.expect("scraped");
    assert_eq!(r.status(), 200);
    assert!(r.text().await.expect("body").contains("credencial_http_requests_total"));

    service.terminate();
    let status = service.wait_for_exit();
    assert!(status.success(), "exit status {status:?}");
    assert!(refused(metrics), "the metrics listener is closed after the stop");
    assert!(service.rest_of_the_log().iter().any(|l| l["message"] == "stopped"));
}

/// Refresh-token records in `db`, every one long expired.
async fn refresh_tokens_left(db: &TestDatabase) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM refresh_tokens").fetch_one(&db.pool).await.expect("count")
}

/// The value of the series `name{table="…"}` in a Prometheus text page.
fn series_value(page: &str, name: &str, table: &str) -> Option<f64> {
    let key = format!("{name}{{table=\"{table}\"}} ");
    page.lines().find_map(|l| l.strip_prefix(&key)).and_then(|v| v.trim().parse().ok())
}

#[tokio::test]
async fn sigterm_during_a_purge_backlog_stops_the_purge_within_a_batch_and_leaves_the_rest() {
    const BACKLOG: i64 = 100_000;
    let db = TestDatabase::new().await;
    let ana = add_user_to(&db, "ana", "ana-pass-phrase", true).await;
    // A backlog of refresh-token records that expired a year ago.
    let backlog = match db.engine() {
        Engine::Postgres => format!(
            "INSERT INTO refresh_tokens (jti, user_id, expires_at, family) \
             SELECT 'old-' || i, {ana}, now() - interval '365 days', 'old-' || i FROM generate_series(1, {BACKLOG}) AS i"
        ),
        Engine::Sqlite => format!(
            "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < {BACKLOG}) \
             INSERT INTO refresh_tokens (jti, user_id, expires_at, family) \
             SELECT 'old-' || i, {ana}, unixepoch() - 365 * 86400, 'old-' || i FROM s"
        ),
    };
    sqlx::query(&backlog).execute(&db.pool).await.expect("backlog");
    let upstream = MockServer::start().await;
    // The first pass at once, one row a statement: a pass far longer than
    // the test, so the stop finds it under way.
    let env = [
        ("SERVICE_PURGE_START_DELAY_SECS", "0"),
        ("SERVICE_PURGE_BATCH_ROWS", "1"),
        ("SERVICE_METRICS_BIND", "127.0.0.1:0"),
    ];
    let mut service = Service::start(&db, &upstream, &env);
    let line = service.seen.iter().find(|l| l["message"] == "metrics are served at /metrics on their own address");
    let metrics: SocketAddr =
        line.expect("the metrics address is logged")["address"].as_str().expect("address").parse().expect("address");
    wait_until_healthy(&service).await;
    let deadline = Instant::now() + PATIENCE;
    while refresh_tokens_left(&db).await == BACKLOG {
        assert!(Instant::now() < deadline, "the purge never started");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The service answers while the purge runs, and counts its batches.
    let page = client().get(format!("http://{metrics}/metrics")).send().await.expect("scraped");
    let page = page.text().await.expect("body");
    let batches = series_value(&page, "credencial_purge_batches_total", "refresh_tokens").expect("batches series");
    let rows = series_value(&page, "credencial_purge_rows_total", "refresh_tokens").expect("rows series");
    // The scrape reads the two series at two moments while the purge runs
    // on, so they are compared in the stop's log line below, not here.
    assert!(batches >= 1.0 && rows >= 1.0, "the batches are counted: {batches} batches, {rows} rows");

    service.terminate();
    let status = service.wait_for_exit();
    assert!(status.success(), "exit status {status:?}");
    let log = service.rest_of_the_log();
    let stopped = log
        .iter()
        .find(|l| l["message"] == "purge stopped: the service is stopping, the rest waits for the next pass")
        .expect("the purge saw the stop");
    assert_eq!(stopped["table"], "refresh_tokens", "{stopped}");
    let deleted = stopped["deleted"].as_i64().expect("deleted");
    let stopped_batches = stopped["batches"].as_i64().expect("batches");
    assert_eq!(stopped_batches, deleted, "one row a batch, every batch full: {stopped}");
    let left = refresh_tokens_left(&db).await;
    assert!(left > 0, "the rest waits for the next pass");
    assert_eq!(deleted + left, BACKLOG, "every row deleted is counted, nothing else went");
    assert!(log.iter().any(|l| l["message"] == "stopped"), "the stop is logged");
}
