//! Remembered consent over real HTTP (issue 12, item 4): a browser with a
//! cookie jar, `portal` from the OAuth2 tests, ana; redirects read from
//! `Location`. The consent stored by an approval skips the page next time;
//! a wider request asks again and widens it; `prompt` decides what may be
//! shown.

use std::collections::HashMap;

use serde_json::Value;

use crate::helpers::{hidden_fields, status_and_json, with, Browser, TestApp};
use crate::oauth::{after_login, app, callback, consent_page, decide, portal_request, PORTAL_SECRET, PORTAL_URI};

/// `portal_request` with `prompt`.
fn with_prompt(path: &str, prompt: &str) -> String {
    format!("{path}&prompt={}", url::form_urlencoded::byte_serialize(prompt.as_bytes()).collect::<String>())
}

/// The query of a 302 to the portal, from `GET path` in `browser`.
pub(crate) async fn redirected(browser: &mut Browser, path: &str) -> HashMap<String, String> {
    let page = browser.get(path).await;
    assert_eq!(page.status, 302, "a redirect to the client expected: {}", page.body);
    callback(&page.location.expect("Location"), PORTAL_URI)
}

/// Redeems a portal code; the token response.
pub(crate) async fn exchange(app: &TestApp, code: &str) -> (u16, Value) {
    let r = app
        .client
        .post(format!("{}/oauth/token/", app.address))
        .basic_auth("portal", Some(PORTAL_SECRET))
        .form(&[("grant_type", "authorization_code"), ("code", code), ("redirect_uri", PORTAL_URI)])
        .send()
        .await
        .expect("sent");
    status_and_json(r).await
}

/// The scopes stored for ana's grant to portal.
async fn stored_scopes(app: &TestApp, ana: i64) -> Option<Vec<String>> {
    let portal = credencial_domain::oauth::ClientId::parse("portal").expect("client id");
    app.db.storage().grants.granted_scopes(credencial_domain::UserId(ana), &portal).await.expect("grant").map(
        |scopes| {
            let mut names: Vec<String> = scopes.iter().map(|s| s.name().to_owned()).collect();
            names.sort_unstable();
            names
        },
    )
}

/// Ana logs in and approves `scope` for portal; the browser keeps her session.
pub(crate) async fn approved(app: &TestApp, scope: &str) -> Browser {
    let mut browser = Browser::new(app);
    let consent = consent_page(&mut browser, &portal_request(scope, "first"), "ana", "ana-password").await;
    let location = decide(&mut browser, &consent, "approve").await;
    assert!(callback(&location, PORTAL_URI).contains_key("code"));
    browser
}

#[tokio::test]
async fn a_second_authorization_skips_the_consent_page_and_answers_with_a_code() {
    let (app, ana) = app().await;
    let mut browser = approved(&app, "cnes").await;
    assert_eq!(
        stored_scopes(&app, ana).await,
        Some(vec!["cnes".into(), "cpf".into(), "dados_publicos".into(), "email".into()])
    );

    let q = redirected(&mut browser, &portal_request("cnes", "second")).await;
    assert_eq!(q["state"], "second");
    let (status, tokens) = exchange(&app, &q["code"]).await;
    assert_eq!((status, tokens["scope"].as_str()), (200, Some("dados_publicos cpf email cnes")), "{tokens}");

    // In a new browser: the login form, then straight back to the client.
    let mut other = Browser::new(&app);
    let page = after_login(&mut other, &portal_request("cnes", "third"), "ana", "ana-password").await;
    assert_eq!(page.status, 302, "no consent page: {}", page.body);
    let q = callback(&page.location.expect("Location"), PORTAL_URI);
    assert_eq!((q["state"].as_str(), q.contains_key("code")), ("third", true));
}

#[tokio::test]
async fn a_wider_scope_asks_again_and_approving_widens_the_stored_consent() {
    let (app, ana) = app().await;
    let mut browser = approved(&app, "cnes").await;
    let page = browser.get(&portal_request("cnes formacao_academica", "wider")).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("Autorizar acesso") && page.body.contains("Sua formação acadêmica"), "{}", page.body);
    let location = decide(&mut browser, &page, "approve").await;
    assert_eq!(callback(&location, PORTAL_URI)["state"], "wider");
    assert_eq!(
        stored_scopes(&app, ana).await,
        Some(vec!["cnes".into(), "cpf".into(), "dados_publicos".into(), "email".into(), "formacao_academica".into()]),
        "the union of both approvals"
    );
    for scope in ["formacao_academica", "cnes", "cnes formacao_academica", ""] {
        let q = redirected(&mut browser, &portal_request(scope, "s")).await;
        assert!(q.contains_key("code"), "{scope:?} is covered");
    }
}

#[tokio::test]
async fn prompt_consent_always_shows_the_page_and_the_form_carries_it() {
    let (app, _) = app().await;
    let mut browser = approved(&app, "cnes").await;
    let page = browser.get(&with_prompt(&portal_request("cnes", "again"), "consent")).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("Autorizar acesso"), "{}", page.body);
    assert!(hidden_fields(&page.body).contains(&("prompt".to_owned(), "consent".to_owned())));
    let location = decide(&mut browser, &page, "approve").await;
    let q = callback(&location, PORTAL_URI);
    assert_eq!((q["state"].as_str(), q.contains_key("code")), ("again", true));
}

#[tokio::test]
async fn prompt_none_answers_login_required_or_consent_required_instead_of_a_page() {
    let (app, _) = app().await;
    let mut browser = Browser::new(&app);
    let none = with_prompt(&portal_request("cnes", "silent"), "none");
    let q = redirected(&mut browser, &none).await;
    assert_eq!((q["error"].as_str(), q["state"].as_str()), ("login_required", "silent"));
    assert!(!q.contains_key("code"));

    // Logged in, nothing consented yet.
    let _ = consent_page(&mut browser, &portal_request("cnes", "s"), "ana", "ana-password").await;
    let q = redirected(&mut browser, &none).await;
    assert_eq!((q["error"].as_str(), q["state"].as_str()), ("consent_required", "silent"));

    let mut browser = approved(&app, "cnes").await;
    let q = redirected(&mut browser, &none).await;
    assert!(q.contains_key("code") && !q.contains_key("error"), "covered: a code without a page: {q:?}");
    let q = redirected(&mut browser, &with_prompt(&portal_request("cnes formacao_academica", "w"), "none")).await;
    assert_eq!(q["error"], "consent_required", "wider than the stored consent");
}

#[tokio::test]
async fn prompt_login_shows_the_form_even_with_a_session_and_then_goes_on() {
    let (app, _) = app().await;
    let mut browser = approved(&app, "cnes").await;
    let path = with_prompt(&portal_request("cnes", "relogin"), "login");
    let login = browser.get(&path).await;
    assert_eq!(login.status, 200, "{}", login.body);
    assert!(login.body.contains("name=\"password\""), "the login form: {}", login.body);
    assert!(hidden_fields(&login.body).contains(&("prompt".to_owned(), "login".to_owned())));
    let fields = with(hidden_fields(&login.body), &[("username", "ana"), ("password", "ana-password")]);
    let logged_in = browser.post("/oauth/authorize/", &fields).await;
    assert_eq!(logged_in.status, 303, "{}", logged_in.body);
    let back = logged_in.location.expect("back");
    assert!(!back.contains("prompt="), "login is done; the form must not come again: {back}");
    let q = redirected(&mut browser, &back).await;
    assert_eq!((q["state"].as_str(), q.contains_key("code")), ("relogin", true));
}

#[tokio::test]
async fn an_unknown_prompt_value_goes_back_as_invalid_request() {
    let (app, _) = app().await;
    let mut browser = approved(&app, "cnes").await;
    for prompt in ["always", "none consent"] {
        let q = redirected(&mut browser, &with_prompt(&portal_request("cnes", "bad"), prompt)).await;
        assert_eq!((q["error"].as_str(), q["state"].as_str()), ("invalid_request", "bad"), "{prompt}");
        assert!(!q.contains_key("code"));
    }
}

#[tokio::test]
async fn the_consent_page_names_the_account_and_leads_to_another_login() {
    let (app, _) = app().await;
    let mut browser = Browser::new(&app);
    let page = consent_page(&mut browser, &portal_request("cnes", "who"), "ana", "ana-password").await;
    let body = crate::helpers::unescape_html(&page.body);
    let named = body.split("Você entrou como <strong>").nth(1).expect("the account is named");
    let name = named.split("</strong>").next().unwrap_or_default();
    assert!(!name.trim().is_empty(), "{body}");
    let switch = body
        .split("<a href=\"")
        .filter_map(|rest| rest.split('"').next())
        .find(|href| href.contains("prompt=login"))
        .expect("Não é você? leads to a login");
    assert!(body.contains("Não é você? Entrar com outra conta"), "{body}");
    let login = browser.get(switch).await;
    assert_eq!(login.status, 200, "{}", login.body);
    assert!(login.body.contains("name=\"password\""), "the login form, though signed in: {}", login.body);
    assert!(hidden_fields(&login.body).contains(&("state".to_owned(), "who".to_owned())), "the same request");
}
