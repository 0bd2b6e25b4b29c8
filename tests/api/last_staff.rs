//! The last active staff account keeps its access: the CLI refuses to
//! demote or deactivate it with a message, and two staff users who take
//! each other's access in the panel at the same moment leave one of them
//! staff (the other sees the panel's Portuguese refusal, or has already
//! lost the panel), on both engines.

use crate::account::form_token;
use crate::cli::{credencial_as, stderr};
use crate::helpers::{spawn_app, Browser, Page, TestApp, TestDatabase};

/// What the panel says when the change would leave no active staff account.
const LAST_STAFF: &str = "Esta é a última conta ativa da equipe";

/// Rounds of the panel race.
const ROUNDS: usize = 6;

async fn active_staff(db: &TestDatabase) -> Vec<String> {
    sqlx::query_scalar("SELECT username FROM users WHERE is_active AND is_staff ORDER BY username")
        .fetch_all(&db.pool)
        .await
        .expect("staff")
}

#[tokio::test]
async fn the_cli_refuses_to_demote_or_deactivate_the_last_active_staff_account() {
    let db = TestDatabase::new().await;
    let run = |args: &[&str], stdin: &str| credencial_as(&db.url, Some("opera"), args, stdin);
    for name in ["chefe", "gil"] {
        let created = run(&["user", "create", "--username", name], &format!("{name}-password-2026\n"));
        assert!(created.status.success(), "{}", stderr(&created));
    }
    assert!(run(&["user", "set-staff", "--username", "chefe", "true"], "").status.success());
    for args in
        [["user", "set-staff", "--username", "chefe", "false"], ["user", "set-active", "--username", "chefe", "false"]]
    {
        let refused = run(&args, "");
        assert!(!refused.status.success(), "{args:?}");
        let message = stderr(&refused);
        assert!(message.contains("the last active staff account can be neither demoted nor deactivated"), "{message}");
        assert_eq!(active_staff(&db).await, ["chefe"], "{args:?}: nothing changed");
    }
    // With a second staff account, the first may go; then the second is the last.
    assert!(run(&["user", "set-staff", "--username", "gil", "true"], "").status.success());
    let demoted = run(&["user", "set-staff", "--username", "chefe", "false"], "");
    assert!(demoted.status.success(), "{}", stderr(&demoted));
    let refused = run(&["user", "set-active", "--username", "gil", "false"], "");
    assert!(
        !refused.status.success() && stderr(&refused).contains("last active staff account"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(active_staff(&db).await, ["gil"]);
}

/// A browser signed in as `username`, on the account page of `target`:
/// the browser and the page's form token.
async fn on_account_page(app: &TestApp, username: &str, password: &str, target: i64) -> (Browser, String) {
    let mut browser = crate::account::signed_in_browser(app, username, password).await;
    let page = browser.get(&format!("/admin/usuarios/{target}/")).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let token = form_token(&page);
    (browser, token)
}

/// Whether `answer` is the panel's 303 back to the account page after `acao`.
fn done(answer: &Page, acao: &str) -> bool {
    answer.status == 303 && answer.location.as_deref().is_some_and(|l| l.ends_with(&format!("?feito={acao}")))
}

/// `chefe` and `bruno`, both staff, each take `acao` from the other in the
/// panel at once, [`ROUNDS`] times: one wins each round; the other gets the
/// 409 page that says why, or has lost the panel already (403, or the
/// login page once deactivated); one active staff account remains.
async fn race(acao: &str) {
    let app = spawn_app().await;
    let chefe = app.add_user("chefe", "senha-do-chefe-1", true).await;
    let bruno = app.add_user("bruno", "senha-do-bruno-1", true).await;
    for round in 0..ROUNDS {
        sqlx::query("UPDATE users SET is_active = TRUE, is_staff = TRUE").execute(&app.db.pool).await.expect("reset");
        let (mut a, a_token) = on_account_page(&app, "chefe", "senha-do-chefe-1", bruno).await;
        let (mut b, b_token) = on_account_page(&app, "bruno", "senha-do-bruno-1", chefe).await;
        let fields = |token: &str| {
            [
                ("csrf_token".to_owned(), token.to_owned()),
                ("acao".to_owned(), acao.to_owned()),
                ("confirmado".to_owned(), "sim".to_owned()),
            ]
        };
        let (a_fields, b_fields) = (fields(&a_token), fields(&b_token));
        let (a_path, b_path) = (format!("/admin/usuarios/{bruno}/"), format!("/admin/usuarios/{chefe}/"));
        let (first, second) = tokio::join!(a.post(&a_path, &a_fields), b.post(&b_path, &b_fields));
        let answers = [first, second];
        let won = answers.iter().filter(|p| done(p, acao)).count();
        assert_eq!(won, 1, "round {round}: {answers:?}");
        let lost = answers.iter().find(|p| !done(p, acao)).expect("a loser");
        let refused = lost.status == 409 && lost.body.contains(LAST_STAFF);
        let no_longer_staff = lost.status == 403
            || (lost.status == 303 && lost.location.as_deref().is_some_and(|l| l.starts_with("/conta/entrar/")));
        assert!(refused || no_longer_staff, "round {round}: {lost:?}");
        assert_eq!(active_staff(&app.db).await.len(), 1, "round {round}: one active staff account remains");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_staff_users_demoting_each_other_at_once_leave_one_staff() {
    race("equipe-nao").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_staff_users_deactivating_each_other_at_once_leave_one_staff() {
    race("desativar").await;
}
