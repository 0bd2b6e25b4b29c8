//! Creating an account in the panel (`/admin/usuarios/novo/`): a generated
//! temporary password shown once, which the person must change at the
//! first login; field errors; the refusals every panel POST has.

use serde_json::json;

use crate::account::{form_token, log_in_at_account, signed_in_browser};
use crate::admin::{add_staff, staff_browser};
use crate::helpers::{spawn_app, status_and_json, unescape_html, Browser, Page, TestApp};

const NEW: &str = "/admin/usuarios/novo/";

fn fields(token: &str, pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut out = vec![("csrf_token".to_owned(), token.to_owned())];
    out.extend(pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    out
}

fn carla() -> Vec<(&'static str, &'static str)> {
    vec![("username", "carla"), ("nome", "Carla Dias"), ("email", "carla@example.gov.br"), ("cpf", "529.982.247-25")]
}

/// The form's token for the staff browser.
async fn new_form_token(staff: &mut Browser) -> String {
    let form = staff.get(NEW).await;
    assert_eq!(form.status, 200, "{}", form.body);
    form_token(&form)
}

fn shown_password(page: &Page) -> String {
    let start = page.body.find("<p class=\"secret\"><code>").expect("the password is shown") + 24;
    let end = start + page.body[start..].find("</code>").expect("end");
    page.body[start..end].to_owned()
}

async fn count(app: &TestApp, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(&app.db.pool).await.expect("count")
}

#[tokio::test]
async fn a_staff_user_creates_an_account_whose_temporary_password_must_be_changed_at_the_first_login() {
    let app = spawn_app().await;
    add_staff(&app).await;
    let mut staff = staff_browser(&app).await;
    let list = staff.get("/admin/usuarios/").await;
    assert!(
        list.body.contains("<a class=\"button\" href=\"/admin/usuarios/novo/\">Cadastrar conta</a>"),
        "{}",
        list.body
    );

    let token = new_form_token(&mut staff).await;
    let mut form = carla();
    form.push(("equipe", "1"));
    let created = staff.post(NEW, &fields(&token, &form)).await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.headers["cache-control"], "no-store");
    assert!(created.location.is_none(), "no redirect: the password is never in a URL");
    let body = unescape_html(&created.body);
    assert!(
        body.contains("529.***.***-25") && !body.contains("52998224725") && !body.contains("529.982.247-25"),
        "{body}"
    );
    assert!(body.contains("Carla Dias") && body.contains("carla@example.gov.br"), "{body}");
    let temporary = shown_password(&created);
    assert_eq!(temporary.len(), 19, "{temporary}");

    let (crate::database::Flag(staff_flag), crate::database::Flag(must_change)) =
        sqlx::query_as("SELECT is_staff, must_change_password FROM users WHERE username = 'carla'")
            .fetch_one(&app.db.pool)
            .await
            .expect("row");
    assert!(staff_flag && must_change);

    // The person logs in with it and is sent to choose a new one.
    let (status, answer) =
        status_and_json(app.post_json("/api/token/pair/", &json!({"username": "carla", "password": temporary})).await)
            .await;
    assert_eq!((status, answer["code"].as_str()), (401, Some("password_change_required")), "{answer}");
    let mut browser = Browser::new(&app);
    let login = log_in_at_account(&mut browser, "/conta/", "carla", &temporary).await;
    assert_eq!((login.status, login.location.as_deref()), (303, Some("/conta/senha/?trocar=1")), "{}", login.body);

    // The audit entry names the staff user and holds no password.
    let audit = staff.get("/admin/auditoria/?alvo=carla").await;
    let audit_body = unescape_html(&audit.body);
    assert!(audit_body.contains("Conta criada") && audit_body.contains("chefe"), "{audit_body}");
    assert!(audit_body.contains("Senha: [definido]") && audit_body.contains("CPF: 529.***.***-25"), "{audit_body}");
    assert!(audit_body.contains("Troca de senha obrigatória: sim"), "{audit_body}");
    assert!(!audit_body.contains(&temporary) && !audit_body.contains("52998224725"), "{audit_body}");
    let stored: String = sqlx::query_scalar("SELECT CAST(changes AS TEXT) FROM audit_log WHERE action = 'user.create'")
        .fetch_one(&app.db.pool)
        .await
        .expect("entry");
    assert!(!stored.contains(&temporary), "{stored}");
}

#[tokio::test]
async fn bad_fields_are_marked_next_to_the_fields_and_nothing_is_written() {
    let app = spawn_app().await;
    add_staff(&app).await;
    let mut staff = staff_browser(&app).await;
    let token = new_form_token(&mut staff).await;
    let bad = [("username", ""), ("nome", "Carla Dias"), ("email", "carla@example.gov.br"), ("cpf", "123.456.789-00")];
    let page = staff.post(NEW, &fields(&token, &bad)).await;
    assert_eq!(page.status, 422, "{}", page.body);
    assert!(page.body.contains("id=\"erro-username\"") && page.body.contains("id=\"erro-cpf\""), "{}", page.body);
    assert!(!page.body.contains("id=\"erro-email\"") && !page.body.contains("id=\"erro-nome\""), "{}", page.body);
    assert!(page.body.contains("value=\"Carla Dias\""), "what was typed stays: {}", page.body);
    let no_email = staff.post(NEW, &fields(&token, &[("username", "carla"), ("nome", "Carla")])).await;
    assert_eq!(no_email.status, 422, "{}", no_email.body);
    assert!(no_email.body.contains("id=\"erro-email\""), "{}", no_email.body);
    assert_eq!(count(&app, "SELECT count(*) FROM users WHERE username = 'carla'").await, 0);
    assert_eq!(count(&app, "SELECT count(*) FROM audit_log").await, 0);
}

#[tokio::test]
async fn a_taken_username_cpf_or_email_is_a_field_error() {
    let app = spawn_app().await;
    add_staff(&app).await;
    let mut staff = staff_browser(&app).await;
    let token = new_form_token(&mut staff).await;
    assert_eq!(staff.post(NEW, &fields(&token, &carla())).await.status, 201);
    let cases = [
        ([("username", "carla"), ("nome", "Outra"), ("email", "outra@example.gov.br"), ("cpf", "")], "erro-username"),
        (
            [("username", "outra"), ("nome", "Outra"), ("email", "outra@example.gov.br"), ("cpf", "52998224725")],
            "erro-cpf",
        ),
        ([("username", "outra"), ("nome", "Outra"), ("email", "CARLA@example.gov.br"), ("cpf", "")], "erro-email"),
    ];
    for (form, marked) in cases {
        let page = staff.post(NEW, &fields(&token, &form)).await;
        assert_eq!(page.status, 409, "{marked}: {}", page.body);
        assert!(page.body.contains(&format!("id=\"{marked}\"")), "{marked}: {}", page.body);
        assert!(unescape_html(&page.body).contains("Já existe uma conta"), "{}", page.body);
    }
    assert_eq!(count(&app, "SELECT count(*) FROM users WHERE username = 'outra'").await, 0);
    assert_eq!(count(&app, "SELECT count(*) FROM audit_log").await, 1, "only the first creation");
}

#[tokio::test]
async fn an_e_mail_that_differs_in_case_or_unicode_form_only_is_taken() {
    let app = spawn_app().await;
    add_staff(&app).await;
    let mut staff = staff_browser(&app).await;
    let token = new_form_token(&mut staff).await;
    let elodie = [("username", "elodie"), ("nome", "Élodie"), ("email", "\u{c9}lodie@example.org"), ("cpf", "")];
    assert_eq!(staff.post(NEW, &fields(&token, &elodie)).await.status, 201);
    // Lower case (é as one code point), then decomposed (e + combining acute).
    for email in ["\u{e9}lodie@example.org", "e\u{301}lodie@EXAMPLE.org"] {
        let twin = [("username", "lodi"), ("nome", "Lodi"), ("email", email), ("cpf", "")];
        let page = staff.post(NEW, &fields(&token, &twin)).await;
        assert_eq!(page.status, 409, "{email:?}: {}", page.body);
        assert!(page.body.contains("id=\"erro-email\""), "{email:?}: {}", page.body);
    }
    assert_eq!(count(&app, "SELECT count(*) FROM users WHERE username = 'lodi'").await, 0);
}

#[tokio::test]
async fn non_staff_cross_site_and_forged_posts_are_refused_and_create_nothing() {
    let app = spawn_app().await;
    add_staff(&app).await;
    app.add_user("lia", "senha-da-lia-1", true).await;
    let mut lia = signed_in_browser(&app, "lia", "senha-da-lia-1").await;
    assert_eq!(lia.get(NEW).await.status, 403);
    let lia_token = form_token(&lia.get("/conta/").await);
    assert_eq!(lia.post(NEW, &fields(&lia_token, &carla())).await.status, 403, "not staff");
    assert_eq!(Browser::new(&app).get(NEW).await.status, 303, "no session: the login page");

    let mut staff = staff_browser(&app).await;
    let token = new_form_token(&mut staff).await;
    let cross = staff
        .send(
            app.client
                .post(format!("{}{NEW}", app.address))
                .header("sec-fetch-site", "cross-site")
                .form(&fields(&token, &carla())),
        )
        .await;
    assert_eq!(cross.status, 403, "{}", cross.body);
    let wrong = staff.post(NEW, &fields(&"x".repeat(43), &carla())).await;
    assert_eq!(wrong.status, 403, "{}", wrong.body);
    let mut twice = fields(&token, &carla());
    twice.push(("username".to_owned(), "outra".to_owned()));
    assert_eq!(staff.post(NEW, &twice).await.status, 400, "a field sent twice");
    assert_eq!(count(&app, "SELECT count(*) FROM users WHERE username = 'carla'").await, 0);
    assert_eq!(count(&app, "SELECT count(*) FROM audit_log").await, 0);
}
