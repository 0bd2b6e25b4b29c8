//! The account pages' frame (`/conta/`): the login session they share with
//! the authorization endpoint, the login form and `next`, the overview, the
//! logout, and the fences every POST has.

use crate::helpers::{hidden_fields, spawn_app, with, Browser, Page, TestApp};

/// Logs `username` in at `/conta/entrar/` (coming from `next`) and returns
/// the answer to the login post.
pub(crate) async fn log_in_at_account(browser: &mut Browser, next: &str, username: &str, password: &str) -> Page {
    let form = browser.get(&format!("/conta/entrar/?next={}", urlencode(next))).await;
    assert_eq!(form.status, 200, "{}", form.body);
    let fields = with(hidden_fields(&form.body), &[("username", username), ("password", password)]);
    browser.post("/conta/entrar/", &fields).await
}

/// A browser logged in as `username` (at `/conta/entrar/`).
pub(crate) async fn signed_in_browser(app: &TestApp, username: &str, password: &str) -> Browser {
    let mut browser = Browser::new(app);
    let answer = log_in_at_account(&mut browser, "/conta/", username, password).await;
    assert_eq!(answer.status, 303, "{}", answer.body);
    browser
}

/// The account form token on `page` (every signed-in page's forms carry it).
pub(crate) fn form_token(page: &Page) -> String {
    hidden_fields(&page.body).into_iter().find(|(k, _)| k == "csrf_token").expect("csrf_token").1
}

fn urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

async fn app_with_lia() -> (TestApp, i64) {
    let app = spawn_app().await;
    let id = app.add_user("lia", "senha-da-lia-1", true).await;
    sqlx::query("UPDATE users SET cpf = '52998224725' WHERE id = $1")
        .bind(id)
        .execute(&app.db.pool)
        .await
        .expect("cpf");
    (app, id)
}

#[tokio::test]
async fn without_a_session_a_page_sends_the_browser_to_log_in_and_back() {
    let (app, _) = app_with_lia().await;
    let mut browser = Browser::new(&app);
    let first = browser.get("/conta").await;
    assert_eq!(first.status, 303);
    assert_eq!(first.location.as_deref(), Some("/conta/entrar/?next=%2Fconta"));
    let answer = log_in_at_account(&mut browser, "/conta", "lia", "senha-da-lia-1").await;
    assert_eq!((answer.status, answer.location.as_deref()), (303, Some("/conta")), "{}", answer.body);
    assert!(
        answer
            .set_cookies
            .iter()
            .any(|c| c.starts_with("credencial_session=") && c.contains("Path=/;") && c.contains("HttpOnly")),
        "{:?}",
        answer.set_cookies
    );
    let overview = browser.get("/conta/").await;
    assert_eq!(overview.status, 200, "{}", overview.body);
    assert!(overview.body.contains("Full lia") && overview.body.contains("529.***.***-25"), "{}", overview.body);
    assert!(!overview.body.contains("52998224725") && !overview.body.contains("529.982"), "the CPF is masked");
    assert_eq!(overview.headers["cache-control"], "no-store");
    // A logged-in browser goes straight to `next`.
    let again = browser.get("/conta/entrar/?next=%2Fconta%2Fsair%2F").await;
    assert_eq!((again.status, again.location.as_deref()), (303, Some("/conta/sair/")));
}

#[tokio::test]
async fn the_session_is_the_authorization_endpoints_and_next_never_leaves_the_account() {
    let (app, _) = app_with_lia().await;
    let mut browser = Browser::new(&app);
    let answer = log_in_at_account(&mut browser, "https://evil.example/conta/", "lia", "senha-da-lia-1").await;
    assert_eq!((answer.status, answer.location.as_deref()), (303, Some("/conta/")));
    let answer = log_in_at_account(&mut Browser::new(&app), "//evil.example/", "lia", "senha-da-lia-1").await;
    assert_eq!(answer.location.as_deref(), Some("/conta/"));
    // The same cookie opens the authorization endpoint's consent page.
    crate::oauth::register_clients(&app).await;
    let consent = browser.get(&crate::oauth::portal_request("cpf", "s")).await;
    assert_eq!(consent.status, 200);
    assert!(consent.body.contains("Autorizar acesso"), "no second login: {}", consent.body);
}

#[tokio::test]
async fn a_wrong_password_a_forged_or_cross_site_login_are_refused() {
    let (app, _) = app_with_lia().await;
    let mut browser = Browser::new(&app);
    let wrong = log_in_at_account(&mut browser, "/conta/", "lia", "nope-nope").await;
    assert_eq!(wrong.status, 200);
    assert!(wrong.body.contains("Usuário ou senha inválidos."), "{}", wrong.body);
    assert!(!wrong.set_cookies.iter().any(|c| c.starts_with("credencial_session=")));
    // No login cookie: the token cannot be checked.
    let form = browser.get("/conta/entrar/").await;
    let fields = with(hidden_fields(&form.body), &[("username", "lia"), ("password", "senha-da-lia-1")]);
    let mut other = Browser::new(&app);
    let forged = other.post("/conta/entrar/", &fields).await;
    assert_eq!(forged.status, 400, "{}", forged.body);
    assert!(forged.body.contains("O formulário expirou"), "{}", forged.body);
    let cross = browser
        .send(
            app.client
                .post(format!("{}/conta/entrar/", app.address))
                .header("sec-fetch-site", "cross-site")
                .form(&fields),
        )
        .await;
    assert_eq!(cross.status, 403, "{}", cross.body);
    assert!(!cross.set_cookies.iter().any(|c| c.starts_with("credencial_session=")));
    // Junk forms are a 400 page, never a 5xx.
    let junk = browser
        .send(
            app.client
                .post(format!("{}/conta/entrar/", app.address))
                .header("content-type", "application/json")
                .body("{"),
        )
        .await;
    assert_eq!(junk.status, 400, "{}", junk.body);
}

#[tokio::test]
async fn logout_needs_the_form_token_and_ends_the_session() {
    let (app, _) = app_with_lia().await;
    let mut browser = signed_in_browser(&app, "lia", "senha-da-lia-1").await;
    let page = browser.get("/conta/sair/").await;
    assert_eq!(page.status, 200, "{}", page.body);
    let token = form_token(&page);
    // Another person's token (another session) does not end this one.
    let other = signed_in_browser(&app, "lia", "senha-da-lia-1").await;
    let mut other = other;
    let other_token = form_token(&other.get("/conta/sair/").await);
    assert_ne!(token, other_token);
    let forged = browser.post("/conta/sair/", &[("csrf_token".into(), other_token)]).await;
    assert_eq!(forged.status, 403, "{}", forged.body);
    let missing = browser.post("/conta/sair/", &[]).await;
    assert_eq!(missing.status, 403);
    let cross = browser
        .send(
            app.client
                .post(format!("{}/conta/sair/", app.address))
                .header("sec-fetch-site", "same-site")
                .form(&[("csrf_token", token.as_str())]),
        )
        .await;
    assert_eq!(cross.status, 403);
    assert_eq!(browser.get("/conta/").await.status, 200, "still signed in");
    let out = browser.post("/conta/sair/", &[("csrf_token".into(), token)]).await;
    assert_eq!((out.status, out.location.as_deref()), (303, Some("/conta/entrar/")));
    assert_eq!(browser.get("/conta/").await.status, 303, "signed out");
    assert_eq!(other.get("/conta/").await.status, 200, "the other browser keeps its session");
}

#[tokio::test]
async fn a_deactivated_account_loses_its_pages_at_once() {
    let (app, id) = app_with_lia().await;
    let mut browser = signed_in_browser(&app, "lia", "senha-da-lia-1").await;
    sqlx::query("UPDATE users SET is_active = FALSE WHERE id = $1").bind(id).execute(&app.db.pool).await.expect("off");
    let page = browser.get("/conta/").await;
    assert_eq!((page.status, page.location.as_deref()), (303, Some("/conta/entrar/?next=%2Fconta%2F")));
    assert!(page.set_cookies.iter().any(|c| c.starts_with("credencial_session=;")), "{:?}", page.set_cookies);
}
