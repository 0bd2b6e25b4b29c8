//! A truthful start, with the real binary: pending migrations refuse
//! `serve` (and `/readyz` says when the schema falls behind), `demo`
//! migrates by itself, an unreachable database or an unsupported URL is
//! named at once, and every wrong setting is reported in one run before
//! anything is written.

use std::process::{Child, Command, Output, Stdio};

use crate::database::Engine;
use crate::helpers::TestDatabase;
use serde_json::json;

use crate::helpers::{spawn_app, status_and_json, SECRET};

/// `credencial <args>` with `env` on top of a minimal environment.
fn command(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_credencial"));
    // Only the settings a test names: none of the caller's.
    for (name, _) in std::env::vars_os() {
        let text = name.to_string_lossy();
        if text.starts_with("SERVICE_") || text == "DATABASE_URL" || text == "CREDENCIAL_CONFIG" {
            command.env_remove(&name);
        }
    }
    command
        .args(args)
        .env("RUST_LOG", "warn")
        .env("SERVICE_PASSWORD_ITERATIONS", "1000")
        // No ./credencial.toml of the working directory.
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in env {
        command.env(name, value);
    }
    command
}

fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    command(args, env).output().expect("the binary runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A loopback port nobody listens on (right now).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("address").port()
}

/// The settings of a production start on `db_url`.
fn serve_env(db_url: &str, bind: &str) -> Vec<(&'static str, String)> {
    vec![
        ("DATABASE_URL", db_url.to_owned()),
        ("SERVICE_BIND", bind.to_owned()),
        ("SERVICE_JWT_SECRET", SECRET.to_owned()),
        ("SERVICE_UPSTREAM_BASE_URL", "http://127.0.0.1:9".to_owned()),
    ]
}

fn borrowed<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// A server process that is killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `credencial <args>` and waits until `/readyz` answers 200 on
/// `port` (panics with its output if it exits first).
async fn start_serving(args: &[&str], env: &[(&str, &str)], port: u16) -> Running {
    let mut running = Running(command(args, env).spawn().expect("the binary runs"));
    let client = reqwest::Client::new();
    for _ in 0..240 {
        if let Some(status) = running.0.try_wait().expect("status") {
            let mut err = String::new();
            if let Some(mut e) = running.0.stderr.take() {
                std::io::Read::read_to_string(&mut e, &mut err).expect("stderr");
            }
            panic!("{args:?} exited with {status}: {err}");
        }
        if let Ok(r) = client.get(format!("http://127.0.0.1:{port}/readyz")).send().await {
            if r.status() == 200 {
                return running;
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    panic!("{args:?} never became ready");
}

async fn table_count(db: &TestDatabase) -> i64 {
    db.table_count().await
}

#[tokio::test]
async fn serve_refuses_a_database_with_pending_migrations_before_binding_its_port() {
    let db = TestDatabase::new_unmigrated().await;
    // The port is taken: had `serve` bound it before checking the schema,
    // it would have failed with "cannot listen" instead.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let bind = taken.local_addr().expect("address").to_string();
    let out = run(&["serve"], &borrowed(&serve_env(&db.url, &bind)));
    assert!(!out.status.success());
    let e = stderr(&out);
    assert!(e.contains("pending migrations: run `credencial migrate`"), "{e}");
    assert!(!e.contains("cannot listen"), "{e}");
    assert_eq!(table_count(&db).await, 0, "serve writes nothing");

    // Once migrated, the same settings serve.
    assert!(run(&["migrate"], &[("DATABASE_URL", &db.url)]).status.success());
    drop(taken);
    let port = free_port();
    let env = serve_env(&db.url, &format!("127.0.0.1:{port}"));
    let _serving = start_serving(&["serve"], &borrowed(&env), port).await;
}

#[tokio::test]
async fn serve_refuses_a_database_migrated_by_a_newer_release() {
    let db = TestDatabase::new().await;
    db.record_newer_migration().await;
    let out = run(&["serve"], &borrowed(&serve_env(&db.url, "127.0.0.1:0")));
    assert!(!out.status.success());
    let e = stderr(&out);
    assert!(e.contains("migration(s) this build does not know (the first 29991231000001)"), "{e}");
}

#[tokio::test]
async fn the_demo_migrates_an_empty_database_by_itself() {
    let db = TestDatabase::new_unmigrated().await;
    let port = free_port();
    let bind = format!("127.0.0.1:{port}");
    let _demo = start_serving(&["demo"], &[("DATABASE_URL", &db.url), ("SERVICE_BIND", &bind)], port).await;
    let users: i64 = sqlx::query_scalar("SELECT count(*) FROM users").fetch_one(&db.pool).await.expect("users");
    assert_eq!(users, 3, "ana, bruno and the staff user admin");
}

#[tokio::test]
async fn readyz_says_schema_behind_when_the_database_loses_a_migration_while_serving() {
    let app = spawn_app().await;
    let readyz = || async {
        status_and_json(app.client.get(format!("{}/readyz", app.address)).send().await.expect("sent")).await
    };
    assert_eq!(readyz().await, (200, json!({"status": "ready"})));
    // As after a fail-over to a replica, or a restore of a backup, from
    // before the last migration.
    let last: (i64, String, Vec<u8>) = sqlx::query_as(
        "DELETE FROM _sqlx_migrations WHERE version = (SELECT max(version) FROM _sqlx_migrations) \
         RETURNING version, description, checksum",
    )
    .fetch_one(&app.db.pool)
    .await
    .expect("forget the last migration");
    assert_eq!(
        readyz().await,
        (503, json!({"status": "unavailable", "detail": "schema behind: run credencial migrate"}))
    );
    let (status, _) =
        status_and_json(app.client.get(format!("{}/healthz", app.address)).send().await.expect("sent")).await;
    assert_eq!(status, 200, "alive, only not ready");
    // Migrated again: ready again, without a restart.
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) VALUES ($1, $2, true, $3, 0)",
    )
    .bind(last.0)
    .bind(last.1)
    .bind(last.2)
    .execute(&app.db.pool)
    .await
    .expect("record it again");
    assert_eq!(readyz().await, (200, json!({"status": "ready"})));
}

#[tokio::test]
async fn an_unreachable_database_is_named_with_host_port_and_cause() {
    let port = free_port();
    let url = format!("postgres://postgres:s3cret-pw@127.0.0.1:{port}/credencial");
    for args in [&["migrate"][..], &["serve"], &["demo"], &["client", "list"]] {
        let out = run(args, &borrowed(&serve_env(&url, "127.0.0.1:0")));
        assert!(!out.status.success(), "{args:?}");
        let e = stderr(&out);
        assert!(
            e.contains(&format!("cannot connect to PostgreSQL at 127.0.0.1:{port}: Connection refused")),
            "{args:?}: {e}"
        );
        assert!(!e.contains("s3cret-pw") && !e.contains("timed out"), "{args:?}: {e}");
    }
}

#[tokio::test]
async fn an_unsupported_database_url_scheme_is_refused_by_name() {
    for (url, scheme) in
        [("mysql://root:s3cret-pw@127.0.0.1:3306/credencial", "mysql"), ("redis://:s3cret-pw@127.0.0.1/0", "redis")]
    {
        let out = run(&["migrate"], &[("DATABASE_URL", url)]);
        assert!(!out.status.success());
        let e = stderr(&out);
        assert!(
            e.contains(&format!(
                "setting DATABASE_URL: unsupported database URL scheme `{scheme}`: use sqlite:// or postgres://"
            )),
            "{e}"
        );
        assert!(!e.contains("s3cret-pw"), "{e}");
    }
}

#[tokio::test]
async fn a_provider_value_the_client_component_refuses_stops_the_demo_before_it_writes_naming_it() {
    let db = TestDatabase::new_unmigrated().await;
    let out = run(
        &["demo"],
        &[
            ("DATABASE_URL", &db.url),
            ("SERVICE_BIND", "127.0.0.1:0"),
            ("SERVICE_PROVIDER_BASE_URL", "http://127.0.0.1:9"),
            ("SERVICE_PROVIDER_CLIENT_ID", " "),
            ("SERVICE_PROVIDER_CLIENT_SECRET", "s"),
            ("SERVICE_PROVIDER_REDIRECT_URI", "/auth/callback/#x"),
        ],
    );
    assert!(!out.status.success());
    let e = stderr(&out);
    assert!(e.contains("setting SERVICE_PROVIDER_CLIENT_ID"), "{e}");
    assert!(e.contains("setting SERVICE_PROVIDER_REDIRECT_URI"), "{e}");
    assert!(!e.contains("SERVICE_PROVIDER_BASE_URL:"), "the base URL is fine: {e}");
    assert_eq!(table_count(&db).await, 0, "not migrated, not seeded");
}

#[tokio::test]
async fn a_taken_port_stops_the_demo_before_it_writes_anything() {
    let db = TestDatabase::new_unmigrated().await;
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("hold a port");
    let bind = taken.local_addr().expect("address").to_string();
    let out = run(&["demo"], &[("DATABASE_URL", &db.url), ("SERVICE_BIND", &bind)]);
    assert!(!out.status.success());
    let e = stderr(&out);
    assert!(e.contains("setting SERVICE_BIND") && e.contains("cannot listen"), "{e}");
    assert_eq!(table_count(&db).await, 0, "not migrated, not seeded");
}

#[tokio::test]
async fn a_short_secret_stops_the_demo_before_it_writes_anything() {
    let db = TestDatabase::new_unmigrated().await;
    let out =
        run(&["demo"], &[("DATABASE_URL", &db.url), ("SERVICE_JWT_SECRET", "short"), ("SERVICE_BIND", "127.0.0.1:0")]);
    assert!(!out.status.success());
    let e = stderr(&out);
    assert!(e.contains("setting SERVICE_JWT_SECRET") && e.contains("32 bytes"), "{e}");
    assert_eq!(table_count(&db).await, 0, "not migrated, not seeded");
    // Nor is a database created (a PostgreSQL database, a SQLite file).
    let name = format!("credencial_never_{}", uuid::Uuid::new_v4().simple());
    let missing = db.url.rsplit_once('/').map(|(server, _)| format!("{server}/{name}")).expect("a database path");
    let out =
        run(&["demo"], &[("DATABASE_URL", &missing), ("SERVICE_JWT_SECRET", "short"), ("SERVICE_BIND", "127.0.0.1:0")]);
    assert!(!out.status.success());
    let exists = match db.engine() {
        Engine::Postgres => sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)")
            .bind(&name)
            .fetch_one(&db.pool)
            .await
            .expect("query"),
        Engine::Sqlite => std::path::Path::new(missing.trim_start_matches("sqlite://")).exists(),
    };
    assert!(!exists, "the demo created {name} despite a wrong setting");
}

#[tokio::test]
async fn every_wrong_setting_is_reported_in_one_run_one_per_line() {
    let db = TestDatabase::new_unmigrated().await;
    let missing_ca = std::env::temp_dir().join("credencial-no-such-ca.pem");
    let missing_ca = missing_ca.to_string_lossy();
    let out = run(
        &["demo"],
        &[
            ("DATABASE_URL", &db.url),
            ("SERVICE_JWT_SECRET", "short"),
            ("SERVICE_JWT_LEEWAY_SECS", "-5"),
            ("SERVICE_UPSTREAM_TIMEOUT_MS", "soon"),
            ("SERVICE_LOGIN_THROTTLE_WINDOW_SECS", "0"),
            ("SERVICE_USER_ATTR_MAP", "username=cpf"),
            ("SERVICE_UPSTREAM_CA_FILE", &missing_ca),
            ("SERVICE_UPSTREAM_PROXY", "socks5://proxy.example:1080"),
            ("SERVICE_RECEITA_BASE_URL", "ftp://receita.example"),
            ("SERVICE_BIND", "everywhere"),
            ("SERVICE_WORKERS", "0"),
        ],
    );
    assert!(!out.status.success());
    let e = stderr(&out);
    let expected = [
        "setting SERVICE_JWT_SECRET: ",
        "setting SERVICE_JWT_LEEWAY_SECS: must not be negative",
        "setting SERVICE_UPSTREAM_TIMEOUT_MS: ",
        "setting SERVICE_LOGIN_THROTTLE_WINDOW_SECS: must be between 1 and",
        "setting SERVICE_USER_ATTR_MAP: ",
        "setting SERVICE_UPSTREAM_CA_FILE: CA bundle",
        "setting SERVICE_UPSTREAM_PROXY: must be an http:// or https:// URL",
        "setting SERVICE_RECEITA_BASE_URL: ",
        "setting SERVICE_BIND: must be an address and port",
        "setting SERVICE_WORKERS: must be positive",
    ];
    for line in expected {
        assert_eq!(e.lines().filter(|l| l.contains(line)).count(), 1, "{line:?} once in:\n{e}");
    }
    assert_eq!(e.lines().count(), expected.len(), "one line per problem:\n{e}");
    assert_eq!(table_count(&db).await, 0);
}

#[tokio::test]
async fn an_unknown_setting_suggests_the_nearest_known_name() {
    let out = run(
        &["migrate"],
        &[
            ("DATABASE_URL", "postgres://postgres@127.0.0.1:1/x"),
            ("SERVICE_JWT_SECERT", SECRET),
            ("SERVICE_BANANA", "1"),
        ],
    );
    assert!(!out.status.success());
    let e = stderr(&out);
    assert!(e.contains("unknown setting SERVICE_JWT_SECERT; did you mean SERVICE_JWT_SECRET?"), "{e}");
    assert!(e.lines().any(|l| l.ends_with("unknown setting SERVICE_BANANA")), "nothing near it: {e}");
    assert!(!e.contains(SECRET), "{e}");

    // In the file, the key is named as written there.
    let file = std::env::temp_dir().join(format!("credencial-typo-{}.toml", uuid::Uuid::new_v4()));
    std::fs::write(&file, "upstream_timout_ms = 200\n").expect("write");
    let out = run(
        &["--config", &file.to_string_lossy(), "migrate"],
        &[("DATABASE_URL", "postgres://postgres@127.0.0.1:1/x")],
    );
    let _ = std::fs::remove_file(&file);
    let e = stderr(&out);
    assert!(
        e.contains(&format!(
            "unknown setting upstream_timout_ms in {}; did you mean upstream_timeout_ms?",
            file.display()
        )),
        "{e}"
    );
    // The database URL has one environment name.
    let out = run(&["migrate"], &[("SERVICE_DATABASE_URL", "postgres://postgres@127.0.0.1:1/x")]);
    assert!(
        stderr(&out).contains("unknown setting SERVICE_DATABASE_URL; did you mean DATABASE_URL?"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn every_setting_is_known_by_its_environment_name() {
    let names = credencial::settings::setting_names();
    for name in ["bind", "database_url", "jwt_secret", "log_format", "upstream_ca_file", "upstream_proxy", "user_table"]
    {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    // Every name, written as its environment variable, is taken as that
    // setting (its value may be wrong, but it is never "unknown").
    let env: Vec<(String, &str)> = names
        .iter()
        .filter(|name| **name != "database_url")
        .map(|name| (format!("SERVICE_{}", name.to_ascii_uppercase()), "x"))
        .collect();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let out = run(&["migrate"], &env);
    let e = stderr(&out);
    assert!(!out.status.success() && e.contains("setting SERVICE_JWT_LEEWAY_SECS"), "{e}");
    assert!(!e.contains("unknown setting"), "{e}");
}

#[test]
fn serve_requires_a_signing_key_and_the_user_data_url_and_the_demo_does_not() {
    use credencial::{Mode, Settings};
    let defaults = Settings::default();
    let e = defaults.validate_for(Mode::Serve).expect_err("serve needs both").to_string();
    let lines: Vec<&str> = e.lines().collect();
    assert_eq!(lines.len(), 2, "{e}");
    assert!(lines[0].starts_with("setting SERVICE_JWT_SECRET: is not set"), "{e}");
    assert!(lines[1].starts_with("setting SERVICE_UPSTREAM_BASE_URL: is not set"), "{e}");
    defaults.validate_for(Mode::Demo).expect("the demo makes a secret and serves its sandbox");
    defaults.validate().expect("other commands need neither");
}
