//! The CLI does what the panel does: `audit list` (the panel's
//! `/admin/auditoria/`) and `user create --temporary-password` (the panel's
//! `/admin/usuarios/novo/`).

use std::process::Output;

use crate::helpers::TestDatabase;

use crate::cli::{credencial_as, stderr, stdout};

/// Runs the binary as the operating-system user `os_user`.
fn as_operator(db_url: &str, os_user: &str, args: &[&str], stdin: &str) -> Output {
    credencial_as(db_url, Some(os_user), args, stdin)
}

fn ok(out: Output) -> String {
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
}

#[tokio::test]
async fn audit_list_shows_a_cli_change_with_its_fields_and_filters_by_target_and_actor() {
    let db = TestDatabase::new().await;
    ok(as_operator(
        &db.url,
        "opera",
        &["user", "create", "--username", "gil", "--name", "Gil Souza", "--cpf", "52998224725"],
        "gil-password-2026\n",
    ));
    ok(as_operator(&db.url, "outro", &["user", "set-staff", "--username", "gil", "true"], ""));

    let listed = ok(as_operator(&db.url, "x", &["audit", "list", "--target", "gil"], ""));
    let lines: Vec<&str> = listed.lines().collect();
    assert!(lines[0].starts_with("WHEN (BRT)"), "{listed}");
    assert_eq!(lines.len(), 4, "a header, two entries and the pager: {listed}");
    // Newest first.
    assert!(lines[1].contains("outro") && lines[1].contains("Acesso à administração alterado"), "{listed}");
    assert!(lines[1].contains("is_staff=true"), "{listed}");
    assert!(lines[2].contains("linha de comando") && lines[2].contains("opera"), "{listed}");
    assert!(lines[2].contains("Conta criada") && lines[2].contains("name=Gil Souza"), "{listed}");
    assert!(lines[2].contains("cpf=529.***.***-25") && lines[2].contains("password=[definido]"), "{listed}");
    assert!(!listed.contains("gil-password-2026") && !listed.contains("52998224725"), "{listed}");
    // dd/mm/aaaa hh:mm.
    let when = &lines[1][..16];
    assert!(when.as_bytes()[2] == b'/' && when.as_bytes()[5] == b'/' && when.as_bytes()[13] == b':', "{when}");
    assert_eq!(lines[3], "2 entries; no more pages", "{listed}");

    let by_actor = ok(as_operator(&db.url, "x", &["audit", "list", "--actor", "OPERA"], ""));
    assert!(by_actor.contains("Conta criada") && !by_actor.contains("Acesso à administração"), "{by_actor}");
    assert!(by_actor.contains("1 entries; no more pages"), "{by_actor}");

    let both = ok(as_operator(&db.url, "x", &["audit", "list", "--actor", "outro", "--target", "gil"], ""));
    assert!(both.contains("1 entries;") && both.contains("is_staff=true"), "{both}");
    drop(db);
}

#[tokio::test]
async fn audit_list_of_nothing_is_an_empty_table_and_the_next_page_is_asked_by_key() {
    let db = TestDatabase::new().await;
    ok(as_operator(&db.url, "opera", &["user", "create", "--username", "hana"], "hana-password-2026\n"));
    ok(as_operator(&db.url, "opera", &["user", "create", "--username", "ivo"], "ivo-password-2026\n"));
    let none = ok(as_operator(&db.url, "x", &["audit", "list", "--target", "nobody"], ""));
    assert_eq!(none.lines().count(), 2, "{none}");
    assert!(none.contains("0 entries; no more pages"), "{none}");
    let all = ok(as_operator(&db.url, "x", &["audit", "list"], ""));
    assert!(all.contains("2 entries; no more pages"), "{all}");
    let ids: Vec<i64> = sqlx_ids(&db).await;
    let older = ok(as_operator(&db.url, "x", &["audit", "list", "--before", &ids[1].to_string()], ""));
    assert!(older.contains("hana") && !older.contains("ivo"), "only the entries older than the one given: {older}");
    let junk = as_operator(&db.url, "x", &["audit", "list", "--before", "abc"], "");
    assert!(!junk.status.success() && stderr(&junk).contains("--before"), "{}", stderr(&junk));
    drop(db);
}

/// The audit entries' ids, oldest first.
async fn sqlx_ids(db: &TestDatabase) -> Vec<i64> {
    sqlx::query_scalar::<_, i64>("SELECT id FROM audit_log ORDER BY id").fetch_all(&db.pool).await.expect("ids")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_create_with_a_temporary_password_prints_it_last_and_it_must_be_changed() {
    let db = TestDatabase::new().await;
    let out = ok(as_operator(
        &db.url,
        "opera",
        &[
            "user",
            "create",
            "--username",
            "ivo",
            "--email",
            "ivo@example.gov.br",
            "--cpf",
            "52998224725",
            "--temporary-password",
        ],
        "",
    ));
    let password = out.lines().last().expect("a last line").to_owned();
    assert_eq!(password.len(), 19, "{out}");
    assert!(out.contains("created user ivo") && out.contains("must change"), "{out}");
    let crate::database::Flag(must_change) =
        sqlx::query_scalar("SELECT must_change_password FROM users WHERE username = 'ivo'")
            .fetch_one(&db.pool)
            .await
            .expect("row");
    assert!(must_change);

    let url = db.url.clone();
    let app = crate::helpers::spawn_app_with(|s| s.storage.database_url = url.into()).await;
    let (status, body) = crate::helpers::status_and_json(
        app.post_json("/api/token/pair/", &serde_json::json!({"username": "ivo", "password": password})).await,
    )
    .await;
    assert_eq!((status, body["code"].as_str()), (401, Some("password_change_required")), "{body}");

    let trail = ok(as_operator(&db.url, "x", &["audit", "list", "--target", "ivo"], ""));
    assert!(trail.contains("must_change_password=true") && trail.contains("password=[definido]"), "{trail}");
    assert!(!trail.contains(&password), "{trail}");

    let taken = as_operator(
        &db.url,
        "opera",
        &["user", "create", "--username", "eva", "--cpf", "52998224725", "--temporary-password"],
        "",
    );
    assert!(
        !taken.status.success() && stderr(&taken).contains("a user with this CPF already exists"),
        "{}",
        stderr(&taken)
    );
    drop(db);
}
