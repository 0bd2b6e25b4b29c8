//! Where the real binary's commands write: their data on standard output,
//! every log line and diagnostic on standard error, and a secret, when a
//! command prints one, as the last line of standard output
//! (`TOKEN=$(credencial client update … --rotate-api-token | tail -n 1)`).
//! The commands run with the service's default log filter (`RUST_LOG`
//! unset), so that their INFO lines are written, and must be found on
//! standard error.

use std::process::{Command, Output, Stdio};

use credencial_domain::DjangoPbkdf2;
use serde_json::Value;

use crate::cli::{stderr, stdout};
use crate::helpers::{spawn_app_with, status_and_json, TestDatabase};

/// Runs the binary with `args` on `db_url` with the default log filter and
/// `extra_env`; asserts it succeeded.
fn run(db_url: &str, args: &[&str], extra_env: &[(&str, &str)]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_credencial"))
        .args(args)
        .env("DATABASE_URL", db_url)
        .env("SERVICE_PASSWORD_ITERATIONS", "1000")
        .env_remove("RUST_LOG")
        .env_remove("SERVICE_LOG_FORMAT")
        .envs(extra_env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("binary runs");
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    out
}

/// Whether `line` is a log line in the text format
/// (`<RFC 3339 time> <LEVEL> <message> …`).
fn is_text_log_line(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let time = words.next().unwrap_or("");
    let level = words.next().unwrap_or("");
    time.len() >= 20
        && time.ends_with('Z')
        && time.as_bytes()[4] == b'-'
        && time.contains('T')
        && ["TRACE", "DEBUG", "INFO", "WARN", "ERROR"].contains(&level)
}

/// Asserts that standard output holds no log line and that standard error
/// holds the text line whose message starts with `message`; returns
/// standard output.
fn data_on_stdout_log_on_stderr(out: &Output, message: &str) -> String {
    let (data, log) = (stdout(out), stderr(out));
    assert!(!data.lines().any(is_text_log_line), "a log line on standard output: {data}");
    assert!(
        log.lines()
            .any(|l| is_text_log_line(l)
                && l.split_whitespace().skip(2).collect::<Vec<_>>().join(" ").starts_with(message)),
        "no {message:?} line on standard error: {log}"
    );
    data
}

fn last_line(text: &str) -> &str {
    text.lines().last().unwrap_or_else(|| panic!("no output: {text:?}"))
}

async fn stored(db: &TestDatabase, query: &str) -> String {
    sqlx::query_scalar(query).fetch_one(&db.pool).await.expect("row")
}

fn verifies(hash: &str, secret: &str) -> bool {
    DjangoPbkdf2::parse(hash).expect("Django format").verify(secret)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_api_token_is_the_last_line_of_stdout_and_the_log_line_goes_to_stderr() {
    let db = TestDatabase::new().await;
    let create =
        ["client", "create", "--client-id", "portal", "--name", "Portal", "--redirect-uri", "https://a.example/cb"];
    let created = stdout(&run(&db.url, &create, &[]));
    let secret = last_line(&created).to_owned();
    let hash = stored(&db, "SELECT secret_hash FROM oauth_clients WHERE client_id = 'portal'").await;
    assert!(verifies(&hash, &secret), "the last line is the client secret: {created}");

    let rotate = ["client", "update", "--client-id", "portal", "--rotate-api-token", "--api-permissions", "users:read"];
    let out = run(&db.url, &rotate, &[]);
    let data = data_on_stdout_log_on_stderr(&out, "API token issued");
    // What the README does: TOKEN=$(… | tail -n 1).
    let token = last_line(&data).to_owned();
    assert!(!token.contains(' ') && token.contains('.'), "{data}");

    // In JSON too, the log lines are on standard error, one object a line.
    let json_run = run(&db.url, &rotate, &[("SERVICE_LOG_FORMAT", "json")]);
    let logged: Vec<Value> = stderr(&json_run)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}")))
        .collect();
    assert!(logged.iter().any(|l| l["message"] == "API token issued"), "{logged:?}");
    let json_data = stdout(&json_run);
    assert!(json_data.lines().all(|l| serde_json::from_str::<Value>(l).is_err()), "{json_data}");
    let newest = last_line(&json_data).to_owned();
    assert_ne!(newest, token, "a new token replaced the first");

    // The last line is the token the API takes.
    let app = spawn_app_with(|s| s.storage.database_url = db.url.clone().into()).await;
    for (token, want) in [(&newest, 200), (&token, 403)] {
        let r = app
            .client
            .get(format!("{}/usuarios/?cpfs=52998224725", app.address))
            .header("authorization", format!("Token {token}"))
            .send()
            .await
            .expect("sent");
        let (status, body) = status_and_json(r).await;
        assert_eq!(status, want, "{body}");
    }
}

#[tokio::test]
async fn a_new_client_secret_and_a_temporary_password_are_the_last_line_of_stdout() {
    let db = TestDatabase::new().await;
    let create =
        ["client", "create", "--client-id", "portal", "--name", "Portal", "--redirect-uri", "https://a.example/cb"];
    run(&db.url, &create, &[]);
    // Both secrets in one command: the client secret after its notice, the
    // API token last.
    let both = ["client", "update", "--client-id", "portal", "--rotate-secret", "--rotate-api-token"];
    let out = run(&db.url, &both, &[]);
    let data = data_on_stdout_log_on_stderr(&out, "API token issued");
    let lines: Vec<&str> = data.lines().collect();
    let notice = lines.iter().position(|l| l.starts_with("Store this client secret now")).expect("announced");
    let hash = stored(&db, "SELECT secret_hash FROM oauth_clients WHERE client_id = 'portal'").await;
    assert!(verifies(&hash, lines[notice + 1]), "{data}");
    assert!(last_line(&data).contains('.') && lines.len() > notice + 2, "the API token last: {data}");

    let new_user = [
        "user",
        "create",
        "--username",
        "ivo",
        "--name",
        "Ivo",
        "--email",
        "ivo@example.gov.br",
        "--temporary-password",
    ];
    let created = stdout(&run(&db.url, &new_user, &[]));
    let password = last_line(&created).to_owned();
    let hash = stored(&db, "SELECT password FROM users WHERE username = 'ivo'").await;
    assert!(verifies(&hash, &password), "the last line is the password: {created}");

    let reset = stdout(&run(&db.url, &["user", "temporary-password", "--username", "ivo"], &[]));
    let password = last_line(&reset).to_owned();
    let hash = stored(&db, "SELECT password FROM users WHERE username = 'ivo'").await;
    assert!(verifies(&hash, &password), "the last line is the new password: {reset}");
}

#[tokio::test]
async fn a_command_that_logs_keeps_its_log_lines_on_stderr() {
    let db = TestDatabase::new().await;
    let create = [
        "user",
        "create",
        "--username",
        "ivo",
        "--name",
        "Ivo",
        "--email",
        "ivo@example.gov.br",
        "--temporary-password",
    ];
    run(&db.url, &create, &[]);
    let out = run(&db.url, &["user", "set-active", "--username", "ivo", "false"], &[]);
    let data = data_on_stdout_log_on_stderr(&out, "account deactivated by an administrator");
    assert_eq!(data, "user ivo is now inactive; 0 refresh token(s) revoked\n");

    // A database made by the command: its line on standard error, the
    // command's answer alone on standard output.
    let file = std::env::temp_dir().join(format!("credencial-cli-output-{}.db", uuid::Uuid::new_v4().simple()));
    let url = format!("sqlite://{}", file.display());
    let out = run(&url, &["migrate"], &[]);
    let data = data_on_stdout_log_on_stderr(&out, "created the database");
    assert_eq!(data, "migrations applied\n");
    let listed = stdout(&run(&url, &["user", "list"], &[]));
    assert!(!listed.lines().any(is_text_log_line), "{listed}");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}
