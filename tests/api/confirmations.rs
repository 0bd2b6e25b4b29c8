//! The step before a destructive or privileged action (issue 26, item 5):
//! each action of the panel posted without the confirmation answers a page
//! that says what will happen, names the account or application, carries
//! the same fields back and changes nothing; with it, the action runs.
//! (Minha conta's revocation and unlinking: account_grants.rs and
//! federation.rs.)

use crate::account::form_token;
use crate::admin::staff_browser;
use crate::admin_applications::panel;
use crate::admin_users::with_bruno;
use crate::database::Flag;
use crate::helpers::{hidden_fields, spawn_app, Browser, Page};

/// Posts `fields` with the page's form token to `path`, without the confirmation.
async fn unconfirmed(browser: &mut Browser, page_path: &str, path: &str, fields: &[(&str, &str)]) -> Page {
    let page = browser.get(page_path).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let mut form = vec![("csrf_token".to_owned(), form_token(&page))];
    form.extend(fields.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    browser.post(path, &form).await
}

/// Asserts a confirmation page: the question, a way back, the same fields
/// carried with the confirmation.
fn assert_asks(page: &Page, question: &str, back: &str, carried: &[(&str, &str)]) {
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(page.headers["cache-control"], "no-store");
    assert!(page.body.contains(&format!("<h1>{question}</h1>")), "{question}: {}", page.body);
    assert!(
        page.body.contains(&format!("<a class=\"button secondary\" href=\"{back}\">Cancelar</a>")),
        "{}",
        page.body
    );
    let fields = hidden_fields(&page.body);
    for (name, value) in carried.iter().chain(&[("confirmado", "sim")]) {
        assert!(fields.iter().any(|(k, v)| k == name && v == value), "{name}={value} carried: {fields:?}");
    }
    assert!(fields.iter().any(|(k, _)| k == "csrf_token"), "the form token carried");
}

#[tokio::test]
async fn every_account_action_of_the_panel_asks_first_and_changes_nothing_until_confirmed() {
    let app = spawn_app().await;
    let bruno = with_bruno(&app).await;
    let mut staff = staff_browser(&app).await;
    let path = format!("/admin/usuarios/{bruno}/");
    let state = || async {
        let (Flag(active), Flag(staff), password) =
            sqlx::query_as::<_, (Flag, Flag, String)>("SELECT is_active, is_staff, password FROM users WHERE id = $1")
                .bind(bruno)
                .fetch_one(&app.db.pool)
                .await
                .expect("state");
        (active, staff, password)
    };
    let before = state().await;
    let asked = [
        ("desativar", "Desativar a conta de Full bruno (bruno)?"),
        ("senha-temporaria", "Definir uma senha temporária para Full bruno (bruno)?"),
        ("equipe-sim", "Dar a Full bruno (bruno) acesso à administração?"),
        ("encerrar-sessoes", "Encerrar todas as sessões de Full bruno (bruno)?"),
        ("liberar-login", "Liberar o login bloqueado de Full bruno (bruno)?"),
    ];
    for (acao, question) in asked {
        let page = unconfirmed(&mut staff, &path, &path, &[("acao", acao)]).await;
        assert_asks(&page, question, &path, &[("acao", acao)]);
    }
    assert_eq!(state().await, before, "nothing changed without the confirmation");
    let audited: i64 =
        sqlx::query_scalar("SELECT count(*) FROM audit_log").fetch_one(&app.db.pool).await.expect("audit");
    assert_eq!(audited, 0, "nothing audited");

    // The confirmation page's own form runs the action.
    let page = unconfirmed(&mut staff, &path, &path, &[("acao", "desativar")]).await;
    let done = staff.post(&path, &hidden_fields(&page.body)).await;
    assert_eq!(done.status, 303, "{}", done.body);
    assert!(!state().await.0, "deactivated");

    // A confirmation for an account that does not exist: the 404 page.
    let missing = unconfirmed(&mut staff, &path, "/admin/usuarios/99999/", &[("acao", "desativar")]).await;
    assert_eq!(missing.status, 404);
}

#[tokio::test]
async fn a_new_secret_and_a_change_of_status_ask_first() {
    let (app, _, mut staff) = panel().await;
    let page_path = "/admin/aplicativos/portal/";
    let secret = || async {
        let (hash, Flag(active)) = sqlx::query_as::<_, (Option<String>, Flag)>(
            "SELECT secret_hash, is_active FROM oauth_clients WHERE client_id = 'portal'",
        )
        .fetch_one(&app.db.pool)
        .await
        .expect("client");
        (hash, active)
    };
    let before = secret().await;
    let rotate = unconfirmed(&mut staff, page_path, "/admin/aplicativos/portal/segredo/", &[]).await;
    assert_asks(&rotate, "Gerar um novo segredo para Portal do Servidor?", page_path, &[]);
    assert!(rotate.body.contains("deixa de valer na hora"), "{}", rotate.body);
    let off = unconfirmed(&mut staff, page_path, "/admin/aplicativos/portal/ativacao/", &[("ativo", "0")]).await;
    assert_asks(&off, "Desativar a aplicação Portal do Servidor?", page_path, &[("ativo", "0")]);
    assert_eq!(secret().await, before, "nothing changed without the confirmation");

    let done = staff.post("/admin/aplicativos/portal/ativacao/", &hidden_fields(&off.body)).await;
    assert_eq!(done.status, 303, "{}", done.body);
    assert!(!secret().await.1, "deactivated once confirmed");
}
