//! The real binary's commands: `migrate` and `user create`.

use std::io::Write;
use std::process::{Command, Stdio};

use credencial_adapters_postgres::testing::TestDatabase;
use serde_json::json;

use crate::helpers::{spawn_app_with, status_and_json};

fn credencial(db_url: &str, args: &[&str], stdin: &str) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_credencial"))
        .args(args)
        .env("DATABASE_URL", db_url)
        .env("SERVICE_PASSWORD_ITERATIONS", "1000")
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    child.stdin.take().expect("stdin").write_all(stdin.as_bytes()).expect("write stdin");
    child.wait_with_output().expect("binary exits")
}

#[tokio::test]
async fn user_create_reads_the_password_from_stdin_and_the_user_can_log_in() {
    let db = TestDatabase::new().await;
    let url = db.url.clone();
    let out = credencial(
        &url,
        &["user", "create", "--username", "carla", "--name", "Carla Dias", "--email", "carla@example.gov.br"],
        "c4rla pass\n",
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("created user carla"), "{stdout}");
    assert!(!stdout.contains("c4rla pass"), "the password is never echoed");

    let stored: String = sqlx::query_scalar("SELECT password FROM users WHERE username = 'carla'")
        .fetch_one(&db.pool)
        .await
        .expect("row");
    assert!(stored.starts_with("pbkdf2_sha256$1000$"), "{stored}");

    let app = spawn_app_with(|s| s.database_url = url.into()).await;
    let r = app.post_json("/api/token/pair/", &json!({"username": "carla", "password": "c4rla pass"})).await;
    let (status, body) = status_and_json(r).await;
    assert_eq!((status, body["username"].as_str()), (200, Some("carla")));
    drop(db);
}

#[tokio::test]
async fn user_create_refuses_a_taken_username_and_an_empty_password() {
    let db = TestDatabase::new().await;
    assert!(credencial(&db.url, &["user", "create", "--username", "dora"], "pw-dora-1\n").status.success());
    let again = credencial(&db.url, &["user", "create", "--username", "dora"], "other\n");
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
    let empty = credencial(&db.url, &["user", "create", "--username", "edu"], "\n");
    assert!(!empty.status.success());
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM users").fetch_one(&db.pool).await.expect("count");
    assert_eq!(count, 1, "nothing half-written");
}

#[tokio::test]
async fn migrate_is_idempotent() {
    let db = TestDatabase::new().await;
    for _ in 0..2 {
        let out = credencial(&db.url, &["migrate"], "");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
}

#[tokio::test]
async fn an_unknown_service_setting_stops_the_start_naming_it() {
    let db = TestDatabase::new().await;
    let out = Command::new(env!("CARGO_BIN_EXE_credencial"))
        .arg("migrate")
        .env("DATABASE_URL", &db.url)
        .env("SERVICE_RECEITA_BASE_UR", "https://typo.example")
        .output()
        .expect("binary runs");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("SERVICE_RECEITA_BASE_UR"), "{stderr}");
}
