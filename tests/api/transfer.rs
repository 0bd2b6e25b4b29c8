//! `credencial export` and `credencial import` (the real binary): a
//! deployment with the demo's data and some use moves to the other engine
//! and back, every table equal at each step; an import is all or nothing
//! and never into a database that holds data.
//!
//! Each test binary starts on its own engine: `api` moves PostgreSQL →
//! SQLite → PostgreSQL, `api_sqlite` SQLite → PostgreSQL → SQLite.

use std::path::{Path, PathBuf};

use credencial::demo;
use credencial::startup::hasher;
use credencial_domain::profile::{AcademicDegree, Experience};
use credencial_domain::{Degree, Scope, UserId};
use credencial_ports::Snapshot;
use serde_json::{json, Value};

use crate::cli::credencial;
use crate::database::{engine, Engine, TestDatabase};
use crate::helpers::{spawn_app_on, status_and_json, test_settings, Browser, TestApp};
use crate::oauth::{callback, consent_page, decide, portal_request, token_request, PORTAL_SECRET, PORTAL_URI};

fn other(engine: Engine) -> Engine {
    match engine {
        Engine::Postgres => Engine::Sqlite,
        Engine::Sqlite => Engine::Postgres,
    }
}

/// A file name in a fresh temporary directory (removed by the OS's cleaning
/// of /tmp; the export holds only test data).
fn export_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("credencial-export-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    dir.join(name)
}

fn run_ok(url: &str, args: &[&str]) -> String {
    let out = credencial(url, args, "");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{args:?}: {stderr}");
    String::from_utf8_lossy(&out.stdout).into_owned() + &stderr
}

/// The rows of an export by table, instants in whole seconds (SQLite keeps
/// whole seconds; PostgreSQL's fractions are the only thing a move drops).
fn rows(path: &Path) -> (Value, Vec<(String, Value)>) {
    let text = std::fs::read_to_string(path).expect("export");
    let mut lines = text.lines();
    let header: Value = serde_json::from_str(lines.next().expect("header")).expect("header is JSON");
    let rows = lines
        .map(|line| {
            let mut line: Value = serde_json::from_str(line).expect("row is JSON");
            let table = line["table"].as_str().expect("table").to_owned();
            let spec = credencial_ports::TABLES.iter().find(|t| t.name == table).expect("known table");
            for (column, kind) in spec.columns {
                if *kind == credencial_ports::transfer::ColumnKind::Instant {
                    if let Some(seconds) = line["row"][column].as_f64() {
                        line["row"][column] = json!(seconds.floor() as i64);
                    }
                }
            }
            (table, line["row"].take())
        })
        .collect();
    (header, rows)
}

/// The demo's data, plus what use leaves behind: a login and a rotation
/// (refresh tokens with a sealed successor, the login history), a wrong
/// password (a throttle window), an authorization with consent and its
/// code exchange (code, grant, token family), a profile read (the access
/// report), a cached scope.
async fn used_deployment() -> TestApp {
    let (app, ana) = crate::oauth::app().await;
    let storage = app.db.storage();
    let settings = test_settings(&app.db, &app.upstream);
    let h = hasher(&settings).expect("hasher");
    assert_eq!(demo::seed(&storage, &h).await.expect("demo users"), 2, "bruno and admin (ana exists)");
    demo::seed_client(&storage, &h, "http://127.0.0.1:8000/auth/callback/").await.expect("demo client");
    demo::seed_oidc_client(&storage, &h).await.expect("demo OIDC client");

    let (_, refresh) = app.login("ana", "ana-password").await;
    let rotated = app.post_json("/api/token/refresh/", &json!({"refresh": refresh})).await;
    assert_eq!(rotated.status(), 200);
    let wrong = app.post_json("/api/token/pair/", &json!({"username": "bruno", "password": "wrong"})).await;
    assert_eq!(wrong.status(), 401);

    let mut browser = Browser::new(&app);
    let consent = consent_page(&mut browser, &portal_request("formacao_academica", "s1"), "ana", "ana-password").await;
    let code = callback(&decide(&mut browser, &consent, "approve").await, PORTAL_URI)["code"].clone();
    let form = [("grant_type", "authorization_code"), ("code", code.as_str()), ("redirect_uri", PORTAL_URI)];
    let (status, tokens) = status_and_json(token_request(&app, Some(("portal", PORTAL_SECRET)), &form).await).await;
    assert_eq!(status, 200, "{tokens}");
    let access = tokens["access_token"].as_str().expect("access token");
    let read = app.client.post(format!("{}/api/perfil/dados/", app.address)).bearer_auth(access).send().await;
    assert_eq!(read.expect("sent").status(), 200);
    let experience = Experience {
        estabelecimento: "Hospital Universitário".into(),
        profissao: "Enfermeira".into(),
        data_inicio: Some("2015-03-02T08:00:00".into()),
        data_fim: None,
        municipio: "Natal".into(),
        descricao: String::new(),
    };
    storage.profiles.add_experience(UserId(ana), experience).await.expect("experience");
    let degree = AcademicDegree {
        instituicao: "UFRN".into(),
        curso: "Enfermagem".into(),
        data_inicio: "2010-02-01".into(),
        data_fim: Some("2014-12-15".into()),
        municipio: "Natal".into(),
        descricao: String::new(),
        grau: Degree::from_code("GRA").expect("degree"),
    };
    storage.profiles.add_degree(UserId(ana), degree).await.expect("degree");
    storage
        .snapshots
        .put(
            UserId(ana),
            Snapshot {
                scope: Scope::Cnes,
                payload: json!({"vinculos": [{"cnes": "2653818", "ocupacao": "Enfermeiro"}]}),
                fetched_at: 1_900_000_000,
                expires_at: 1_900_086_400,
            },
        )
        .await
        .expect("snapshot");
    app
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_used_deployment_moves_to_the_other_engine_and_back_with_every_row_equal() {
    let source = used_deployment().await;
    let first = export_path("first.jsonl");
    run_ok(&source.db.url, &["export", "--out", first.to_str().expect("path")]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&first).expect("file").permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the export holds personal data");
    }
    let (header, exported) = rows(&first);
    for table in ["users", "oauth_clients", "refresh_tokens", "experiences", "degrees", "scope_snapshots"] {
        assert!(exported.iter().any(|(t, _)| t == table), "{table} has rows to move");
    }
    for table in ["oauth_codes", "login_failures", "oauth_grants", "access_log", "audit_log", "user_logins"] {
        assert!(exported.iter().any(|(t, _)| t == table), "{table} has rows to move");
    }
    assert_eq!(header["tables"]["users"], 3);
    let text = std::fs::read_to_string(&first).expect("export");
    assert!(!text.contains("ana-password") && !text.contains("portal-secret"), "secrets stay hashed");

    // To the other engine: every row equal.
    let target = TestDatabase::on(other(engine())).await;
    let imported = run_ok(&target.url, &["import", "--in", first.to_str().expect("path")]);
    assert!(imported.contains(&format!("imported {} rows", exported.len())), "{imported}");
    let second = export_path("second.jsonl");
    run_ok(&target.url, &["export", "--out", second.to_str().expect("path")]);
    assert_eq!(rows(&second).1, exported, "the other engine holds the same rows");

    // And back, into a fresh database of the first engine.
    let back = TestDatabase::on(engine()).await;
    run_ok(&back.url, &["import", "--in", second.to_str().expect("path")]);
    let third = export_path("third.jsonl");
    run_ok(&back.url, &["export", "--out", third.to_str().expect("path")]);
    assert_eq!(rows(&third).1, exported, "back where it started");

    // The moved deployment serves: the same password logs in, a sign-up
    // after the move gets a new id (the id generators moved past the rows).
    let moved = spawn_app_on(target, |_| {}).await;
    moved.login("ana", "ana-password").await;
    let carla = moved.add_user("carla", "carla-password", true).await;
    let largest = exported
        .iter()
        .filter(|(t, _)| t == "users")
        .map(|(_, row)| row["id"].as_i64().expect("id"))
        .max()
        .expect("users");
    assert!(carla > largest, "{carla} after {largest}");
}

#[tokio::test]
async fn an_import_refuses_a_database_with_data_and_a_bad_file_writes_nothing() {
    let source = used_deployment().await;
    let export = export_path("export.jsonl");
    run_ok(&source.db.url, &["export", "--out", export.to_str().expect("path")]);

    // Into a database that holds data: refused, nothing added.
    let busy = TestDatabase::on(other(engine())).await;
    let users_before = crate::helpers::add_user_to(&busy, "zeca", "zeca-password", true).await;
    let out = credencial(&busy.url, &["import", "--in", export.to_str().expect("path")], "");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("the target database is not empty"));
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM users").fetch_one(&busy.pool).await.expect("count");
    assert_eq!((count, users_before > 0), (1, true), "only zeca");

    // A file whose last row breaks the schema (a grant of an unknown
    // client): the whole import is rolled back.
    let text = std::fs::read_to_string(&export).expect("export");
    let broken = export_path("broken.jsonl");
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let header: Value = serde_json::from_str(&lines[0]).expect("header");
    let mut header = header;
    let grants = header["tables"]["oauth_grants"].as_u64().expect("grants");
    header["tables"]["oauth_grants"] = json!(grants + 1);
    lines[0] = header.to_string();
    let grant = json!({"table": "oauth_grants", "row": {"user_id": 1, "client_id": "nobody", "scopes": ["cpf"],
            "first_granted_at": 1_900_000_000, "last_used_at": 1_900_000_000}})
    .to_string();
    // At the end of the file, after later tables' rows: refused for its place.
    let mut misplaced = lines.clone();
    misplaced.push(grant.clone());
    std::fs::write(&broken, misplaced.join("\n")).expect("write");
    let empty = TestDatabase::on(other(engine())).await;
    let out = credencial(&empty.url, &["import", "--in", broken.to_str().expect("path")], "");
    assert!(!out.status.success(), "a row out of the schema's order is refused");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("schema's order"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(empty.table_rows().await, 0, "nothing of the file was kept");
    // In its place (before the tables that follow grants): refused by the schema.
    let later = ["access_log", "audit_log", "user_logins", "security_events"];
    let place = lines
        .iter()
        .skip(1)
        .position(|l| later.iter().any(|t| l.contains(&format!("\"table\":\"{t}\""))))
        .map_or(lines.len(), |i| i + 1);
    lines.insert(place, grant);
    std::fs::remove_file(&broken).expect("removed");
    std::fs::write(&broken, lines.join("\n")).expect("write");
    let out = credencial(&empty.url, &["import", "--in", broken.to_str().expect("path")], "");
    assert!(!out.status.success(), "a grant of an unknown client is refused");
    let stderr = String::from_utf8_lossy(&out.stderr).to_lowercase();
    assert!(stderr.contains("foreign key"), "refused for the grant's client: {stderr}");
    assert_eq!(empty.table_rows().await, 0, "nothing of the file was kept");

    // An existing file is never overwritten by an export.
    let out = credencial(&source.db.url, &["export", "--out", export.to_str().expect("path")], "");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("never overwritten"));
}
