//! Sign-up at `/conta/cadastro/` over real HTTP: the new account is signed
//! in and logs in with its CPF or its username (at the account's login
//! form, `/oauth/authorize/` and `pair`); every refusal keeps what was
//! typed and names the field; a taken CPF or e-mail counts toward the
//! per-address limit; the fences of every form; and a 404 page when the
//! setting is off.

use credencial::settings::Settings;
use reqwest::header::RETRY_AFTER;
use serde_json::json;

use crate::account::{form_token, log_in_at_account};
use crate::helpers::{hidden_fields, spawn_app, spawn_app_with, status_and_json, with, Browser, Page, TestApp};
use crate::oauth::{consent_page, portal_request, register_clients};

const CPF: &str = "529.982.247-25";
const PASSWORD: &str = "ipê amarelo no cerrado";

/// Changes to carla's sign-up fields: a field and its new value (`None`
/// leaves the field out).
type Changes<'a> = &'a [(&'a str, Option<&'a str>)];

async fn signup_app() -> TestApp {
    spawn_app_with(|s: &mut Settings| s.login.signup_enabled = Some(true)).await
}

/// The sign-up fields of carla, with `changes` applied (a field set to
/// `None` is left out).
fn carla(changes: Changes<'_>) -> Vec<(&'static str, String)> {
    let mut fields: Vec<(&'static str, String)> = [
        ("cpf", CPF),
        ("nome", "Carla Dias Moreira"),
        ("email", "carla@example.gov.br"),
        ("username", "carla"),
        ("password", PASSWORD),
        ("password_confirmacao", PASSWORD),
    ]
    .into_iter()
    .map(|(k, v)| (k, v.to_owned()))
    .collect();
    for (name, value) in changes {
        let name = name_static(name);
        fields.retain(|(k, _)| *k != name);
        if let Some(v) = value {
            fields.push((name, (*v).to_owned()));
        }
    }
    fields
}

fn name_static(name: &str) -> &'static str {
    ["cpf", "nome", "email", "username", "password", "password_confirmacao"]
        .into_iter()
        .find(|n| *n == name)
        .expect("a field of the form")
}

/// Opens the form in `browser` and posts `fields` with its token.
async fn sign_up(browser: &mut Browser, fields: &[(&'static str, String)]) -> Page {
    let form = browser.get("/conta/cadastro/").await;
    assert_eq!(form.status, 200, "{}", form.body);
    let typed: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    browser.post("/conta/cadastro/", &with(hidden_fields(&form.body), &typed)).await
}

async fn users(app: &TestApp) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM users").fetch_one(&app.db.pool).await.expect("count")
}

async fn failures_on(app: &TestApp, key: &str) -> i32 {
    sqlx::query_scalar::<_, i32>("SELECT failures FROM login_failures WHERE key = $1")
        .bind(key)
        .fetch_optional(&app.db.pool)
        .await
        .expect("query")
        .unwrap_or(0)
}

fn session_cookie_set(page: &Page) -> bool {
    page.set_cookies.iter().any(|c| c.starts_with("credencial_session=") && c.contains("HttpOnly"))
}

#[tokio::test]
async fn a_person_signs_up_is_signed_in_and_logs_in_with_the_cpf_or_the_username() {
    let app = signup_app().await;
    let mut browser = Browser::new(&app);
    let form = browser.get("/conta/cadastro/").await;
    assert_eq!(form.headers["cache-control"], "no-store");
    for label in ["<label for=\"cpf\">CPF</label>", "<label for=\"nome\">Nome completo</label>", "Confirme a senha"] {
        assert!(form.body.contains(label), "{label}: {}", form.body);
    }
    let created = sign_up(&mut browser, &carla(&[])).await;
    assert_eq!((created.status, created.location.as_deref()), (303, Some("/conta/")), "{}", created.body);
    assert!(session_cookie_set(&created), "{:?}", created.set_cookies);
    let overview = browser.get("/conta/").await;
    assert_eq!(overview.status, 200, "{}", overview.body);
    assert!(overview.body.contains("Carla Dias Moreira") && overview.body.contains("529.***.***-25"));
    assert!(!overview.body.contains("52998224725"), "the CPF is masked");
    // Signed in, the sign-up page sends the browser to the overview.
    assert_eq!(browser.get("/conta/cadastro/").await.location.as_deref(), Some("/conta/"));

    for login in [CPF, "52998224725", "carla", "CARLA"] {
        let answer = log_in_at_account(&mut Browser::new(&app), "/conta/", login, PASSWORD).await;
        if login == "CARLA" {
            assert_eq!(answer.status, 200, "a username is matched exactly");
            continue;
        }
        assert_eq!((answer.status, answer.location.as_deref()), (303, Some("/conta/")), "{login}: {}", answer.body);
    }
    let pair = app.post_json("/api/token/pair/", &json!({"username": CPF, "password": PASSWORD})).await;
    let (status, body) = status_and_json(pair).await;
    assert_eq!((status, body["username"].as_str()), (200, Some("carla")), "{body}");
    register_clients(&app).await;
    consent_page(&mut Browser::new(&app), &portal_request("cpf", "s"), "52998224725", PASSWORD).await;
}

#[tokio::test]
async fn every_refused_field_is_named_and_the_form_keeps_what_was_typed() {
    let app = signup_app().await;
    let cases: [(Changes, &str, &str); 10] = [
        (&[("cpf", Some("529.982.247-24"))], "cpf", "dígitos verificadores não conferem"),
        (&[("cpf", Some("123"))], "cpf", "O CPF tem 11 dígitos"),
        (&[("cpf", None)], "cpf", "Informe o CPF."),
        (&[("nome", None)], "nome", "Informe o nome completo."),
        (&[("email", Some("carla@"))], "email", "Informe um e-mail válido"),
        (&[("username", Some("9lives"))], "username", "comece com uma letra"),
        (&[("password", Some("curta")), ("password_confirmacao", Some("curta"))], "password", "pelo menos 8"),
        (&[("password", Some("senha123")), ("password_confirmacao", Some("senha123"))], "password", "muito comum"),
        (&[("password", Some("52998224725")), ("password_confirmacao", Some("52998224725"))], "password", "ao seu CPF"),
        (&[("password_confirmacao", Some("outra frase qualquer"))], "password_confirmacao", "não confere"),
    ];
    for (changes, field, text) in cases {
        let mut browser = Browser::new(&app);
        let answer = sign_up(&mut browser, &carla(changes)).await;
        assert_eq!(answer.status, 422, "{field}: {}", answer.body);
        let error = format!("<p class=\"field-error\" id=\"{field}-erro\">");
        let at = answer.body.find(&error).unwrap_or_else(|| panic!("{field}: no error in {}", answer.body));
        assert!(answer.body[at..].contains(text), "{field}: {text} expected in {}", answer.body);
        assert!(answer.body.contains("Não foi possível criar a conta"), "{}", answer.body);
        if field != "nome" {
            assert!(answer.body.contains("value=\"Carla Dias Moreira\""), "typed values stay: {}", answer.body);
        }
        assert!(!answer.body.contains(PASSWORD), "a password is never shown again");
        assert!(!session_cookie_set(&answer));
    }
    assert_eq!(users(&app).await, 0, "nothing was created");
    assert_eq!(failures_on(&app, "address:127.0.0.1").await, 0, "a refused form counts nothing");
}

#[tokio::test]
async fn a_taken_cpf_or_e_mail_is_a_field_error_and_counts_toward_the_address_limit() {
    let app = spawn_app_with(|s: &mut Settings| {
        s.login.signup_enabled = Some(true);
        s.login.login_throttle_address_failures = 3;
    })
    .await;
    assert_eq!(sign_up(&mut Browser::new(&app), &carla(&[])).await.status, 303);
    let cpf = sign_up(
        &mut Browser::new(&app),
        &carla(&[("email", Some("outra@example.gov.br")), ("username", Some("outra")), ("cpf", Some("52998224725"))]),
    )
    .await;
    assert_eq!(cpf.status, 422, "{}", cpf.body);
    assert!(cpf.body.contains("Já existe uma conta com este CPF."), "{}", cpf.body);
    assert!(!cpf.body.contains("Este e-mail já está em uso"), "{}", cpf.body);
    let email = sign_up(
        &mut Browser::new(&app),
        &carla(&[
            ("email", Some("CARLA@Example.gov.br")),
            ("username", Some("outra")),
            ("cpf", Some("111.444.777-35")),
        ]),
    )
    .await;
    assert_eq!(email.status, 422, "{}", email.body);
    assert!(email.body.contains("Este e-mail já está em uso por outra conta."), "{}", email.body);
    let username =
        sign_up(&mut Browser::new(&app), &carla(&[("email", Some("u@x.gov.br")), ("cpf", Some("111.444.777-35"))]))
            .await;
    assert!(username.body.contains("Este nome de usuário já está em uso."), "{}", username.body);
    assert_eq!(failures_on(&app, "address:127.0.0.1").await, 3);
    assert_eq!(users(&app).await, 1);
    // The address is now limited: a sign-up with free values is refused
    // before anything is stored, and so is the login form.
    let fresh = carla(&[("email", Some("dora@x.gov.br")), ("username", Some("dora")), ("cpf", Some("111.444.777-35"))]);
    let mut browser = Browser::new(&app);
    let form = browser.get("/conta/cadastro/").await;
    let typed: Vec<(&str, &str)> = fresh.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = browser.post("/conta/cadastro/", &with(hidden_fields(&form.body), &typed)).await;
    assert_eq!(r.status, 429, "{}", r.body);
    assert!(r.body.contains("Muitas tentativas sem sucesso. Tente novamente em"), "{}", r.body);
    assert!(r.headers.contains_key(RETRY_AFTER), "{:?}", r.headers);
    assert_eq!(users(&app).await, 1);
    let login = log_in_at_account(&mut Browser::new(&app), "/conta/", "carla", PASSWORD).await;
    assert_eq!(login.status, 429, "one limit for the login form and the sign-up");
}

#[tokio::test]
async fn an_e_mail_that_differs_in_case_or_unicode_form_only_is_taken_and_the_address_is_kept_as_typed() {
    let app = signup_app().await;
    let first = sign_up(&mut Browser::new(&app), &carla(&[("email", Some("\u{c9}lodie@example.org"))])).await;
    assert_eq!(first.status, 303, "{}", first.body);
    // Lower case (é as one code point), then decomposed (e + combining acute).
    for email in ["\u{e9}lodie@example.org", "e\u{301}lodie@EXAMPLE.org"] {
        let twin = carla(&[("email", Some(email)), ("username", Some("lodi")), ("cpf", Some("111.444.777-35"))]);
        let page = sign_up(&mut Browser::new(&app), &twin).await;
        assert_eq!(page.status, 422, "{email:?}: {}", page.body);
        assert!(page.body.contains("Este e-mail já está em uso por outra conta."), "{email:?}: {}", page.body);
    }
    assert_eq!(users(&app).await, 1);
    let stored: String = sqlx::query_scalar("SELECT email FROM users").fetch_one(&app.db.pool).await.expect("email");
    assert_eq!(stored, "\u{c9}lodie@example.org");
}

#[tokio::test]
async fn forged_cross_site_and_unreadable_sign_ups_are_refused() {
    let app = signup_app().await;
    let mut browser = Browser::new(&app);
    let form = browser.get("/conta/cadastro/").await;
    let typed: Vec<(String, String)> = carla(&[]).into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    let mut fields = hidden_fields(&form.body);
    fields.extend(typed.iter().cloned());
    // Without the browser's key cookie (another browser), the token is no good.
    let forged = Browser::new(&app).post("/conta/cadastro/", &fields).await;
    assert_eq!(forged.status, 400, "{}", forged.body);
    assert!(forged.body.contains("O formulário expirou"), "{}", forged.body);
    assert!(forged.body.contains("value=\"Carla Dias Moreira\""), "what was typed stays");
    let mut wrong = typed.clone();
    wrong.push(("csrf_token".into(), "A".repeat(43)));
    assert_eq!(browser.post("/conta/cadastro/", &wrong).await.status, 400);
    assert_eq!(browser.post("/conta/cadastro/", &typed).await.status, 400, "no token at all");
    let cross = browser
        .send(
            app.client
                .post(format!("{}/conta/cadastro/", app.address))
                .header("sec-fetch-site", "cross-site")
                .form(&fields),
        )
        .await;
    assert_eq!(cross.status, 403, "{}", cross.body);
    let mut twice = fields.clone();
    twice.push(("cpf".into(), "111.444.777-35".into()));
    assert_eq!(browser.post("/conta/cadastro/", &twice).await.status, 400, "a field sent twice");
    let junk = browser
        .send(
            app.client
                .post(format!("{}/conta/cadastro/", app.address))
                .header("content-type", "application/json")
                .body("{"),
        )
        .await;
    assert_eq!(junk.status, 400, "{}", junk.body);
    assert_eq!(users(&app).await, 0);
    // The real form still works afterwards.
    assert_eq!(browser.post("/conta/cadastro/", &fields).await.status, 303);
}

#[tokio::test]
async fn sign_up_is_a_404_page_when_the_setting_is_off() {
    let app = spawn_app().await;
    let mut browser = Browser::new(&app);
    let form = browser.get("/conta/cadastro/").await;
    assert_eq!(form.status, 404, "{}", form.body);
    assert!(form.headers["content-type"].to_str().expect("ascii").starts_with("text/html"));
    assert!(form.body.contains("O cadastro de novas contas não está aberto neste serviço."), "{}", form.body);
    let typed: Vec<(String, String)> = carla(&[]).into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    assert_eq!(browser.post("/conta/cadastro/", &typed).await.status, 404);
    assert_eq!(users(&app).await, 0);
    let login = browser.get("/conta/entrar/").await;
    assert!(!login.body.contains("/conta/cadastro/"), "no link to it: {}", login.body);
}

#[tokio::test]
async fn a_signed_in_account_page_has_no_sign_up_token_and_the_sign_up_form_has_no_session_token() {
    // The two kinds of form token never stand in for each other.
    let app = signup_app().await;
    let mut browser = Browser::new(&app);
    assert_eq!(sign_up(&mut browser, &carla(&[])).await.status, 303);
    let token = form_token(&browser.get("/conta/").await);
    let mut other = Browser::new(&app);
    other.get("/conta/cadastro/").await;
    let typed = carla(&[("cpf", Some("111.444.777-35")), ("email", Some("d@x.gov.br")), ("username", Some("dora"))]);
    let mut fields: Vec<(String, String)> = typed.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    fields.push(("csrf_token".into(), token));
    assert_eq!(other.post("/conta/cadastro/", &fields).await.status, 400);
}

#[tokio::test]
async fn the_application_login_links_to_sign_up_and_the_new_account_comes_back_to_the_authorization() {
    let app = signup_app().await;
    register_clients(&app).await;
    let mut browser = Browser::new(&app);
    let login = browser.get(&portal_request("cnes", "novo")).await;
    assert_eq!(login.status, 200, "{}", login.body);
    let body = crate::helpers::unescape_html(&login.body);
    assert!(body.contains("Ainda não tem conta?"), "{body}");
    let href = body
        .split("<a href=\"")
        .filter_map(|rest| rest.split('"').next())
        .find(|href| href.starts_with("/conta/cadastro/"))
        .expect("the login form links to sign-up")
        .to_owned();
    let form = browser.get(&href).await;
    assert_eq!(form.status, 200, "{}", form.body);
    let hidden = hidden_fields(&form.body);
    assert!(hidden.iter().any(|(k, v)| k == "next" && v.starts_with("/oauth/authorize/")), "{hidden:?}");
    let fields = carla(&[]);
    let typed: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let created = browser.post("/conta/cadastro/", &with(hidden, &typed)).await;
    assert_eq!(created.status, 303, "{}", created.body);
    let back = created.location.expect("where the new account goes");
    assert!(back.starts_with("/oauth/authorize/") && back.contains("state=novo"), "back to the request: {back}");
    let consent = browser.get(&back).await;
    assert!(consent.body.contains("Autorizar acesso"), "signed in, the consent page: {}", consent.body);

    // Another host, or a path outside the account and the authorization
    // endpoint, is not carried: the new account would land on the overview.
    let mut other = Browser::new(&app);
    for next in ["https://evil.example/", "//evil.example/", "/admin/usuarios/../../x"] {
        let path = format!(
            "/conta/cadastro/?next={}",
            url::form_urlencoded::byte_serialize(next.as_bytes()).collect::<String>()
        );
        let form = other.get(&path).await;
        assert_eq!(form.status, 200, "{}", form.body);
        let carried: Vec<_> = hidden_fields(&form.body).into_iter().filter(|(k, _)| k == "next").collect();
        assert!(carried.iter().all(|(_, v)| v.starts_with("/conta") || v.starts_with("/admin")), "{next}: {carried:?}");
    }

    // Sign-up closed (serve's default): no link.
    let (closed, _) = crate::oauth::app().await;
    let login = Browser::new(&closed).get(&portal_request("cnes", "s")).await;
    assert!(!login.body.contains("/conta/cadastro/"), "{}", login.body);
}
