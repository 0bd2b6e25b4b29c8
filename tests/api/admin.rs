//! The administration panel's frame (`/admin/`): who may enter (a staff
//! user's login session; the login page without one, 403 for anyone else,
//! at once when the flag is taken away) and the audit trail's page.

use crate::account::{log_in_at_account, signed_in_browser};
use crate::helpers::{spawn_app, Browser, TestApp};

/// A staff user `chefe` (password `senha-do-chefe-1`) in `app`; returns its id.
pub(crate) async fn add_staff(app: &TestApp) -> i64 {
    let id = app.add_user("chefe", "senha-do-chefe-1", true).await;
    set_staff(app, id, true).await;
    id
}

/// Sets the staff flag of user `id` in the database (as an operator would).
pub(crate) async fn set_staff(app: &TestApp, id: i64, staff: bool) {
    sqlx::query("UPDATE users SET is_staff = $2 WHERE id = $1")
        .bind(id)
        .bind(staff)
        .execute(&app.db.pool)
        .await
        .expect("is_staff");
}

/// A browser signed in as the staff user `chefe`.
pub(crate) async fn staff_browser(app: &TestApp) -> Browser {
    signed_in_browser(app, "chefe", "senha-do-chefe-1").await
}

#[tokio::test]
async fn without_a_session_the_panel_sends_the_browser_to_log_in_and_back() {
    let app = spawn_app().await;
    add_staff(&app).await;
    let mut browser = Browser::new(&app);
    for path in ["/admin/", "/admin/auditoria/"] {
        let page = browser.get(path).await;
        assert_eq!(page.status, 303, "{path}");
        let expected = format!("/conta/entrar/?next={}", path.replace('/', "%2F"));
        assert_eq!(page.location.as_deref(), Some(expected.as_str()), "{path}");
    }
    let answer = log_in_at_account(&mut browser, "/admin/auditoria/", "chefe", "senha-do-chefe-1").await;
    assert_eq!((answer.status, answer.location.as_deref()), (303, Some("/admin/auditoria/")), "{}", answer.body);
    let page = browser.get("/admin/auditoria/").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("<h1>Auditoria</h1>"), "{}", page.body);
    assert_eq!(page.headers["cache-control"], "no-store");
    // `next` may name a panel page, never something that only starts alike.
    let answer = log_in_at_account(&mut Browser::new(&app), "/administrador", "chefe", "senha-do-chefe-1").await;
    assert_eq!(answer.location.as_deref(), Some("/conta/"));
}

#[tokio::test]
async fn a_user_who_is_not_staff_is_refused_and_loses_access_when_the_flag_goes() {
    let app = spawn_app().await;
    app.add_user("lia", "senha-da-lia-1", true).await;
    let staff = add_staff(&app).await;
    let mut lia = signed_in_browser(&app, "lia", "senha-da-lia-1").await;
    for path in ["/admin/", "/admin/auditoria/", "/admin/auditoria/?ator=chefe"] {
        let page = lia.get(path).await;
        assert_eq!(page.status, 403, "{path}: {}", page.body);
        assert!(page.body.contains("não tem acesso"), "{}", page.body);
    }
    let mut chefe = staff_browser(&app).await;
    let home = chefe.get("/admin/").await;
    assert_eq!(home.status, 200, "{}", home.body);
    assert!(home.body.contains("<strong>chefe</strong>"), "{}", home.body);
    // Taking the flag away takes effect on the next request.
    set_staff(&app, staff, false).await;
    assert_eq!(chefe.get("/admin/").await.status, 403);
}

#[tokio::test]
async fn the_audit_page_lists_entries_newest_first_and_filters_by_actor_and_target() {
    let app = spawn_app().await;
    add_staff(&app).await;
    for (actor, target, action) in [
        ("chefe", "portal", "client.deactivate"),
        ("root", "lia", "user.deactivate"),
        ("chefe", "lia", "user.reactivate"),
    ] {
        sqlx::query(
            "INSERT INTO audit_log (actor_kind, actor, action, target_kind, target, changes) \
             VALUES ('staff', $1, $2, 'client', $3, '[[\"is_active\", \"false\"]]')",
        )
        .bind(actor)
        .bind(action)
        .bind(target)
        .execute(&app.db.pool)
        .await
        .expect("entry");
    }
    let mut browser = staff_browser(&app).await;
    let all = browser.get("/admin/auditoria/").await;
    assert_eq!(all.status, 200, "{}", all.body);
    let order: Vec<usize> = ["Conta reativada", "Conta desativada", "Aplicação desativada"]
        .iter()
        .map(|label| all.body.find(label).unwrap_or_else(|| panic!("{label} in {}", all.body)))
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "newest first: {order:?}");
    assert!(all.body.contains("Ativa: não"), "{}", all.body);

    let by_actor = browser.get("/admin/auditoria/?ator=CHEFE").await;
    assert!(by_actor.body.contains("Conta reativada") && by_actor.body.contains("Aplicação desativada"));
    assert!(!by_actor.body.contains("Conta desativada"), "{}", by_actor.body);
    let both = browser.get("/admin/auditoria/?ator=chefe&alvo=lia").await;
    assert!(both.body.contains("Conta reativada") && !both.body.contains("Aplicação desativada"), "{}", both.body);
    let none = browser.get("/admin/auditoria/?alvo=ninguem&antes=abc").await;
    assert_eq!(none.status, 200);
    assert!(none.body.contains("Nenhum registro"), "{}", none.body);
}

#[tokio::test]
async fn the_audit_page_pages_older_entries_by_key_and_keeps_the_filter() {
    let app = spawn_app().await;
    add_staff(&app).await;
    let mut browser = staff_browser(&app).await;
    for i in 0..55 {
        sqlx::query(
            "INSERT INTO audit_log (actor_kind, actor, action, target_kind, target) \
             VALUES ('cli', 'root', 'user.create', 'user', $1)",
        )
        .bind(format!("alvo{i:02}"))
        .execute(&app.db.pool)
        .await
        .expect("append");
    }
    let first = browser.get("/admin/auditoria/?ator=root").await;
    assert!(first.body.contains("<caption>55 registros</caption>"), "{}", first.body);
    assert!(first.body.contains(">alvo54<") && first.body.contains(">alvo05<"), "the newest 50");
    assert!(!first.body.contains(">alvo04<"), "{}", first.body);
    let next = first.body.split("href=\"/admin/auditoria/?").find(|s| s.contains("rel=\"next\"")).expect("a next page");
    let next = next.split('"').next().expect("its query").replace("&#38;", "&");
    assert!(next.starts_with("ator=root&alvo=&antes="), "the filter travels with the page: {next}");
    let older = browser.get(&format!("/admin/auditoria/?{next}")).await;
    assert!(older.body.contains(">alvo04<") && older.body.contains(">alvo00<"), "{}", older.body);
    assert!(!older.body.contains(">alvo05<"), "no entry twice: {}", older.body);
    assert!(older.body.contains("55 registros, continuação da lista"), "{}", older.body);
    assert!(older.body.contains("rel=\"first\">Mais recentes"), "{}", older.body);
    assert!(!older.body.contains("rel=\"next\""), "the oldest page: {}", older.body);
    let other = browser.get("/admin/auditoria/?ator=ninguem").await;
    assert!(other.body.contains("Nenhum registro") && !other.body.contains("rel=\"next\""), "{}", other.body);
}

#[tokio::test]
async fn the_audit_trail_refuses_updates_and_deletes() {
    let app = spawn_app().await;
    sqlx::query("INSERT INTO audit_log (actor_kind, actor, action, target_kind, target) VALUES ('cli', 'root', 'user.create', 'user', 'lia')")
        .execute(&app.db.pool)
        .await
        .expect("append");
    for statement in ["UPDATE audit_log SET actor = 'someone-else'", "DELETE FROM audit_log"] {
        let e = sqlx::query(statement).execute(&app.db.pool).await.expect_err(statement);
        assert!(e.to_string().contains("append-only"), "{statement}: {e}");
    }
}
