//! The real binary's commands: `migrate`, `user create|list|set-active|set-password`,
//! `completions` and `man`.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::helpers::TestDatabase;
use serde_json::json;

use crate::helpers::{spawn_app_with, status_and_json};

/// Runs the binary with `args` on `db_url`, `stdin` written to it.
///
/// It blocks its thread until the command exits. A test that runs it beside
/// a server it spawned in its own runtime uses a multi-thread runtime
/// (`#[tokio::test(flavor = "multi_thread")]`): on the default one, the
/// server's tasks stop while the command runs, and a write transaction of
/// the server in flight then (such as the start-up purge's) keeps SQLite's write lock
/// until the command's busy timeout ends it with "database is locked".
pub(crate) fn credencial(db_url: &str, args: &[&str], stdin: &str) -> std::process::Output {
    credencial_as(db_url, None, args, stdin)
}

/// [`credencial`], as the operating-system user `os_user` when given (the
/// actor the audit trail records for the CLI).
pub(crate) fn credencial_as(db_url: &str, os_user: Option<&str>, args: &[&str], stdin: &str) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_credencial"));
    command
        .args(args)
        .env("DATABASE_URL", db_url)
        .env("SERVICE_PASSWORD_ITERATIONS", "1000")
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(os_user) = os_user {
        command.env("USER", os_user);
    }
    let mut child = command.spawn().expect("binary runs");
    child.stdin.take().expect("stdin").write_all(stdin.as_bytes()).expect("write stdin");
    child.wait_with_output().expect("binary exits")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
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

    let app = spawn_app_with(|s| s.storage.database_url = url.into()).await;
    let r = app.post_json("/api/token/pair/", &json!({"username": "carla", "password": "c4rla pass"})).await;
    let (status, body) = status_and_json(r).await;
    assert_eq!((status, body["username"].as_str()), (200, Some("carla")));
    drop(db);
}

#[tokio::test]
async fn user_create_refuses_a_taken_username_and_an_empty_password() {
    let db = TestDatabase::new().await;
    assert!(credencial(&db.url, &["user", "create", "--username", "dora"], "pw-dora-1\n").status.success());
    let again = credencial(&db.url, &["user", "create", "--username", "dora"], "another-pw-2\n");
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

pub(crate) fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub(crate) fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

async fn user_count(db: &TestDatabase) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM users").fetch_one(&db.pool).await.expect("count")
}

#[tokio::test]
async fn user_create_checks_the_cpf_check_digits_and_the_password_rules_before_writing() {
    let db = TestDatabase::new().await;
    let base = ["user", "create", "--username", "fabio", "--email", "fabio@example.gov.br", "--name", "Fabio Lima"];
    let cases: [(&[&str], &str, &str); 6] = [
        (&["--cpf", "12345678901"], "good-password-1\n", "check digits"),
        (&["--cpf", "1234"], "good-password-1\n", "11 digits"),
        (&[], "short\n", "at least 8 characters"),
        (&["--cpf", "52998224725"], "529.982.247-25\n", "must not be the account's CPF"),
        (&[], "FABIO@example.gov.br\n", "must not be the account's e-mail"),
        (&[], "fabio lima\n", "must not be the account's name"),
    ];
    for (extra, password, why) in cases {
        let args: Vec<&str> = base.iter().chain(extra.iter()).copied().collect();
        let out = credencial(&db.url, &args, password);
        assert!(!out.status.success(), "{extra:?} {password:?} was accepted");
        assert!(stderr(&out).contains(why), "{why}: {}", stderr(&out));
    }
    let same_as_username = credencial(&db.url, &["user", "create", "--username", "fabiolima"], "FabioLima\n");
    assert!(stderr(&same_as_username).contains("must not be the account's username"), "{}", stderr(&same_as_username));
    assert_eq!(user_count(&db).await, 0, "nothing was written");
    let ok = credencial(&db.url, &[&base[..], &["--cpf", "529.982.247-25"]].concat(), "good-password-1\n");
    assert!(ok.status.success(), "{}", stderr(&ok));
    let cpf: String = sqlx::query_scalar("SELECT CAST(cpf AS TEXT) FROM users").fetch_one(&db.pool).await.expect("cpf");
    assert_eq!(cpf, "52998224725", "stored as 11 digits");
}

#[tokio::test]
async fn user_list_pages_through_the_users_with_their_cpf_masked() {
    let db = TestDatabase::new().await;
    for (name, cpf) in [("gil", "52998224725"), ("hana", "11144477735"), ("ivo", "12345678909")] {
        let out = credencial(&db.url, &["user", "create", "--username", name, "--cpf", cpf], "a-good-password\n");
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let first = credencial(&db.url, &["user", "list", "--per-page", "2"], "");
    assert!(first.status.success(), "{}", stderr(&first));
    let text = stdout(&first);
    assert!(text.contains("gil") && text.contains("hana") && !text.contains("ivo"), "{text}");
    assert!(text.contains("529.***.***-25") && !text.contains("52998224725"), "CPFs are masked: {text}");
    assert!(text.contains("3 users; next page: --after hana"), "{text}");
    let second = stdout(&credencial(&db.url, &["user", "list", "--per-page", "2", "--after", "hana"], ""));
    assert!(second.contains("ivo") && !second.contains("gil") && second.contains("no more pages"), "{second}");
    let zero = credencial(&db.url, &["user", "list", "--per-page", "0"], "");
    assert!(!zero.status.success() && stderr(&zero).contains("pages hold 1 to 500"), "{}", stderr(&zero));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_active_false_ends_every_session_of_the_user_and_true_lets_them_back_in() {
    let db = TestDatabase::new().await;
    let url = db.url.clone();
    assert!(credencial(&url, &["user", "create", "--username", "jade"], "jade-password\n").status.success());
    let app = spawn_app_with(|s| s.storage.database_url = url.clone().into()).await;
    let login = json!({"username": "jade", "password": "jade-password"});
    let (_, pair) = status_and_json(app.post_json("/api/token/pair/", &login).await).await;
    let (_, second) = status_and_json(app.post_json("/api/token/pair/", &login).await).await;

    let off = credencial(&url, &["user", "set-active", "--username", "jade", "false"], "");
    assert!(off.status.success(), "{}", stderr(&off));
    assert!(stdout(&off).contains("jade is now inactive; 2 refresh token(s) revoked"), "{}", stdout(&off));
    for refresh in [&pair["refresh"], &second["refresh"]] {
        let (status, _) =
            status_and_json(app.post_json("/api/token/refresh/", &json!({"refresh": refresh})).await).await;
        assert_eq!(status, 401, "every family is revoked");
    }
    let (status, _) = status_and_json(app.post_json("/api/token/pair/", &login).await).await;
    assert_eq!(status, 401, "an inactive account cannot log in");

    let on = credencial(&url, &["user", "set-active", "--username", "jade", "true"], "");
    assert!(on.status.success() && stdout(&on).contains("jade is now active"), "{}", stdout(&on));
    let (status, _) = status_and_json(app.post_json("/api/token/pair/", &login).await).await;
    assert_eq!(status, 200);

    let nobody = credencial(&url, &["user", "set-active", "--username", "nobody", "false"], "");
    assert!(!nobody.status.success() && stderr(&nobody).contains("no such user"), "{}", stderr(&nobody));
    let junk = credencial(&url, &["user", "set-active", "--username", "jade", "maybe"], "");
    assert!(!junk.status.success(), "only true or false");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_password_checks_the_rules_and_revokes_every_refresh_token() {
    let db = TestDatabase::new().await;
    let url = db.url.clone();
    let create = ["user", "create", "--username", "kai", "--email", "kai@example.gov.br"];
    assert!(credencial(&url, &create, "kai-old-password\n").status.success());
    let app = spawn_app_with(|s| s.storage.database_url = url.clone().into()).await;
    let (_, pair) = status_and_json(
        app.post_json("/api/token/pair/", &json!({"username": "kai", "password": "kai-old-password"})).await,
    )
    .await;

    for (weak, why) in [("short\n", "at least 8 characters"), ("kai@example.gov.br\n", "e-mail")] {
        let out = credencial(&url, &["user", "set-password", "--username", "kai"], weak);
        assert!(!out.status.success() && stderr(&out).contains(why), "{}", stderr(&out));
    }
    let (status, _) =
        status_and_json(app.post_json("/api/token/verify/", &json!({"token": pair["refresh"]})).await).await;
    assert_eq!(status, 200, "a refused new password changes nothing");

    let out = credencial(&url, &["user", "set-password", "--username", "kai"], "kai-new-password\n");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("1 refresh token(s) revoked"), "{}", stdout(&out));
    assert!(!stdout(&out).contains("kai-new-password"), "never echoed");
    let (status, _) =
        status_and_json(app.post_json("/api/token/refresh/", &json!({"refresh": pair["refresh"]})).await).await;
    assert_eq!(status, 401, "the session started with the old password is over");
    for (password, want) in [("kai-old-password", 401), ("kai-new-password", 200)] {
        let (status, _) =
            status_and_json(app.post_json("/api/token/pair/", &json!({"username": "kai", "password": password})).await)
                .await;
        assert_eq!(status, want, "{password}");
    }
}

#[test]
fn completions_and_the_man_page_need_no_database() {
    let nowhere = "postgres://postgres@127.0.0.1:9/none";
    let bash = credencial(nowhere, &["completions", "bash"], "");
    assert!(bash.status.success(), "{}", stderr(&bash));
    assert!(stdout(&bash).contains("set-password") && stdout(&bash).contains("complete "), "{}", stdout(&bash));
    let man = credencial(nowhere, &["man"], "");
    assert!(man.status.success(), "{}", stderr(&man));
    assert!(stdout(&man).starts_with(".ie") && stdout(&man).contains(".TH credencial 1"), "{}", stdout(&man));
    assert!(!credencial(nowhere, &["completions", "cmd.exe"], "").status.success());
}
