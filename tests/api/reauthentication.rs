//! Re-authentication and the security activity (issue 23, item 7), over
//! real HTTP: a session older than 5 minutes is asked the password again
//! before ending other sessions or changing the e-mail (the form's fields
//! carried through the confirmation page; a wrong password changes
//! nothing); the security page lists logins and changes newest first.

use crate::account::{form_token, signed_in_browser};
use crate::helpers::{hidden_fields, spawn_app, with, Browser, TestApp};

const PASSWORD: &str = "senha-da-lia-1";

/// Makes every session of `user` look authenticated 10 minutes ago.
async fn age_sessions(app: &TestApp, user: i64) {
    sqlx::query("UPDATE sessions SET auth_time = auth_time - 600 WHERE user_id = $1")
        .bind(user)
        .execute(&app.db.pool)
        .await
        .expect("aged");
}

async fn sessions_of(app: &TestApp, user: i64) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM sessions WHERE user_id = $1")
        .bind(user)
        .fetch_one(&app.db.pool)
        .await
        .expect("count")
}

#[tokio::test]
async fn ending_other_sessions_asks_the_password_of_a_session_older_than_five_minutes() {
    let app = spawn_app().await;
    let id = app.add_user("lia", PASSWORD, true).await;
    let _other = signed_in_browser(&app, "lia", PASSWORD).await;
    let mut lia = signed_in_browser(&app, "lia", PASSWORD).await;
    age_sessions(&app, id).await;
    let token = form_token(&lia.get("/conta/sessoes/").await);
    let end_others = vec![("csrf_token".to_owned(), token), ("acao".to_owned(), "encerrar_outras".to_owned())];

    let asked = lia.post("/conta/sessoes/", &end_others).await;
    assert_eq!(asked.status, 200, "{}", asked.body);
    assert!(asked.body.contains("Confirme que é você"), "{}", asked.body);
    assert_eq!(asked.headers["cache-control"], "no-store");
    assert_eq!(sessions_of(&app, id).await, 2, "nothing ended before the password");
    let carried = hidden_fields(&asked.body);
    assert!(carried.iter().any(|(k, v)| k == "acao" && v == "encerrar_outras"), "the form is carried: {carried:?}");

    let wrong = lia.post("/conta/sessoes/", &with(carried.clone(), &[("senha_confirmacao", "not it")])).await;
    assert_eq!(wrong.status, 422, "{}", wrong.body);
    assert!(wrong.body.contains("A senha não confere"), "{}", wrong.body);
    assert_eq!(sessions_of(&app, id).await, 2, "a wrong password ends nothing");

    let done = lia.post("/conta/sessoes/", &with(carried, &[("senha_confirmacao", PASSWORD)])).await;
    assert_eq!(done.location.as_deref(), Some("/conta/sessoes/?encerradas=1"), "{}", done.body);
    assert_eq!(sessions_of(&app, id).await, 1, "only this browser's is left");

    // The confirmation counts as an authentication: the next change within
    // 5 minutes goes through without the password.
    let _third = signed_in_browser(&app, "lia", PASSWORD).await;
    let token = form_token(&lia.get("/conta/sessoes/").await);
    let again = vec![("csrf_token".to_owned(), token), ("acao".to_owned(), "encerrar_outras".to_owned())];
    assert_eq!(lia.post("/conta/sessoes/", &again).await.location.as_deref(), Some("/conta/sessoes/?encerradas=1"));
}

#[tokio::test]
async fn a_new_e_mail_asks_the_password_of_an_old_session_and_a_new_name_does_not() {
    let app = spawn_app().await;
    let id = app.add_user("lia", PASSWORD, true).await;
    let mut lia = signed_in_browser(&app, "lia", PASSWORD).await;
    age_sessions(&app, id).await;
    let form = lia.get("/conta/").await;
    let fields = hidden_fields(&form.body);
    let email: String = sqlx::query_scalar("SELECT email FROM users WHERE id = $1")
        .bind(id)
        .fetch_one(&app.db.pool)
        .await
        .expect("email");
    let details = |nome: &str, email: &str| with(fields.clone(), &[("nome", nome), ("email", email), ("avatar", "")]);

    let renamed = lia.post("/conta/", &details("Lia Nova", &email)).await;
    assert_eq!(renamed.status, 303, "the same e-mail: no password asked: {}", renamed.body);

    let asked = lia.post("/conta/", &details("Lia Nova", "lia.nova@example.gov.br")).await;
    assert_eq!(asked.status, 200, "{}", asked.body);
    assert!(asked.body.contains("trocar o e-mail"), "{}", asked.body);
    let stored: String = sqlx::query_scalar("SELECT email FROM users WHERE id = $1")
        .bind(id)
        .fetch_one(&app.db.pool)
        .await
        .expect("email");
    assert_eq!(stored, email, "not changed before the password");
    let done = lia.post("/conta/", &with(hidden_fields(&asked.body), &[("senha_confirmacao", PASSWORD)])).await;
    assert_eq!(done.status, 303, "{}", done.body);
    let stored: String = sqlx::query_scalar("SELECT email FROM users WHERE id = $1")
        .bind(id)
        .fetch_one(&app.db.pool)
        .await
        .expect("email");
    assert_eq!(stored, "lia.nova@example.gov.br");
}

#[tokio::test]
async fn the_security_page_lists_logins_and_changes_newest_first_with_device_and_place() {
    let app = spawn_app().await;
    app.add_user("lia", PASSWORD, true).await;
    let mut lia = signed_in_browser(&app, "lia", PASSWORD).await;
    let token = form_token(&lia.get("/conta/seguranca/").await);
    let fields = vec![("csrf_token".to_owned(), token.clone()), ("acao".to_owned(), "encerrar-outras".to_owned())];
    assert_eq!(lia.post("/conta/seguranca/", &fields).await.status, 303);
    let mut other = Browser::new(&app);
    let wrong = crate::account::log_in_at_account(&mut other, "/conta/", "lia", "not it").await;
    assert_eq!(wrong.status, 200, "a failed login is no entry");

    let page = lia.get("/conta/seguranca/").await;
    let activity = page.body.split("id=\"atividade\"").nth(1).expect("the activity section");
    let ended = activity.find("Sessões em outros navegadores encerradas").expect("the ending is listed");
    let login = activity.find("Entrada com senha").expect("the login is listed");
    assert!(ended < login, "newest first: {activity}");
    assert!(activity.contains("127.0.0.0/24"), "the approximate place, never the address: {activity}");
    assert!(!activity.contains("127.0.0.1"), "{activity}");
    assert_eq!(activity.matches("Entrada com").count(), 1, "one login: {activity}");
}
