//! RP-initiated logout (`/oauth/logout/`) over real HTTP: with and without
//! an `id_token_hint`, to a registered and an unregistered
//! `post_logout_redirect_uri`, the confirmation form and its refusals, and
//! forged or foreign hints; then the provider session is gone
//! (`prompt=none` answers `login_required`).

use std::collections::HashMap;

use credencial_adapters_postgres::testing::setup_audit;
use credencial_domain::oauth::ClientId;
use credencial_ports::OAuthClientUpdate;

use crate::helpers::{hidden_fields, with, Browser, Page, TestApp, TEST_KEYS};
use crate::oauth::{callback, PORTAL_URI};
use crate::oidc::{oidc_app, portal_oidc_request, signed_in, ISSUER};

/// portal's registered post-logout URI.
const AFTER_LOGOUT: &str = "https://portal.example.gov.br/saiu?volta=1";

async fn register_post_logout_uri(app: &TestApp) {
    let update = OAuthClientUpdate { post_logout_redirect_uris: Some(vec![AFTER_LOGOUT.into()]), ..Default::default() };
    app.db
        .storage()
        .clients
        .update(&ClientId::parse("portal").expect("id"), update, &setup_audit())
        .await
        .expect("stored")
        .expect("portal exists");
}

/// `/oauth/logout/?…`.
fn logout_path(pairs: &[(&str, &str)]) -> String {
    let query = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish();
    format!("/oauth/logout/?{query}")
}

/// Whether `page` clears the login session's cookie.
fn clears_session(page: &Page) -> bool {
    page.set_cookies.iter().any(|c| c.starts_with("credencial_session=;") && c.contains("Max-Age=0"))
}

/// Whether `browser` still has a provider session: `prompt=none` gives a
/// code, not `login_required`.
async fn still_signed_in(browser: &mut Browser) -> bool {
    let page = browser.get(&portal_oidc_request("openid", &[("prompt", "none")])).await;
    let query: HashMap<String, String> = callback(&page.location.expect("redirected"), PORTAL_URI);
    match query.get("error").map(String::as_str) {
        None => true,
        Some("login_required") => false,
        Some(other) => panic!("unexpected {other}"),
    }
}

#[tokio::test]
async fn a_hint_and_a_registered_uri_end_the_session_at_once_and_go_back_with_the_state() {
    let (app, _) = oidc_app(|_| {}).await;
    register_post_logout_uri(&app).await;
    let (mut browser, tokens) = signed_in(&app, "openid").await;
    assert!(still_signed_in(&mut browser).await);
    let mut thief = Browser::new(&app);
    thief.jar = browser.jar.clone();
    let hint = tokens["id_token"].as_str().expect("id_token");
    let page = browser
        .get(&logout_path(&[("id_token_hint", hint), ("post_logout_redirect_uri", AFTER_LOGOUT), ("state", "bye 1")]))
        .await;
    assert!(!still_signed_in(&mut thief).await, "a copy of the cookie is over too: the session ended on the server");
    assert_eq!(page.status, 302, "{}", page.body);
    assert_eq!(page.location.as_deref(), Some("https://portal.example.gov.br/saiu?volta=1&state=bye+1"));
    assert!(clears_session(&page), "{:?}", page.set_cookies);
    assert!(!still_signed_in(&mut browser).await, "prompt=none is login_required now");
}

#[tokio::test]
async fn an_unregistered_uri_is_never_followed_the_page_says_you_left() {
    let (app, _) = oidc_app(|_| {}).await;
    register_post_logout_uri(&app).await;
    let (mut browser, tokens) = signed_in(&app, "openid").await;
    let hint = tokens["id_token"].as_str().expect("id_token");
    for uri in ["https://evil.example/saiu", "https://portal.example.gov.br/saiu", PORTAL_URI] {
        let page = browser.get(&logout_path(&[("id_token_hint", hint), ("post_logout_redirect_uri", uri)])).await;
        assert_eq!((page.status, page.location.as_deref()), (200, None), "{uri}");
        assert!(page.body.contains("Você saiu do credencial") && page.body.contains("não está registrado"));
        assert!(page.body.contains("Portal do Servidor"), "names the application");
    }
    assert!(!still_signed_in(&mut browser).await);
}

#[tokio::test]
async fn without_a_hint_the_person_confirms_on_a_form_that_only_this_session_can_post() {
    let (app, _) = oidc_app(|_| {}).await;
    register_post_logout_uri(&app).await;
    let (mut browser, _) = signed_in(&app, "openid").await;
    let path = logout_path(&[("client_id", "portal"), ("post_logout_redirect_uri", AFTER_LOGOUT), ("state", "s")]);
    let confirm = browser.get(&path).await;
    assert_eq!(confirm.status, 200, "{}", confirm.body);
    assert!(confirm.body.contains("Sair do credencial?") && confirm.body.contains("Portal do Servidor"));
    assert!(!clears_session(&confirm), "a bare link ends nothing");
    assert!(still_signed_in(&mut browser).await);
    let fields = hidden_fields(&confirm.body);

    // Another site's post, a wrong token, or the token of a changed request: refused.
    let cross_site = browser.client.post(format!("{}/oauth/logout/", browser.base)).form(&fields);
    let refused = browser.send(cross_site.header("sec-fetch-site", "cross-site")).await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    let mut wrong = fields.clone();
    wrong.iter_mut().filter(|(k, _)| k == "csrf_token").for_each(|(_, v)| *v = "x".repeat(43));
    assert_eq!(browser.post("/oauth/logout/", &wrong).await.status, 400);
    let mut changed = fields.clone();
    changed.iter_mut().filter(|(k, _)| k == "state").for_each(|(_, v)| *v = "other".into());
    assert_eq!(browser.post("/oauth/logout/", &changed).await.status, 400);
    assert!(still_signed_in(&mut browser).await, "nothing ended");

    let done = browser.post("/oauth/logout/", &fields).await;
    assert_eq!((done.status, done.location.as_deref()), (303, Some(format!("{AFTER_LOGOUT}&state=s").as_str())));
    assert!(clears_session(&done));
    assert!(!still_signed_in(&mut browser).await);
}

#[tokio::test]
async fn without_a_session_there_is_nothing_to_confirm() {
    let (app, _) = oidc_app(|_| {}).await;
    register_post_logout_uri(&app).await;
    let mut browser = Browser::new(&app);
    let page = browser.get(&logout_path(&[("client_id", "portal"), ("post_logout_redirect_uri", AFTER_LOGOUT)])).await;
    assert_eq!((page.status, page.location.as_deref()), (302, Some(AFTER_LOGOUT)));
    let page = browser.get("/oauth/logout/").await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("Você saiu do credencial") && !page.body.contains("não está registrado"));
}

#[tokio::test]
async fn a_forged_or_foreign_hint_or_a_contradicting_client_ends_nothing() {
    let (app, _) = oidc_app(|_| {}).await;
    register_post_logout_uri(&app).await;
    let (mut browser, tokens) = signed_in(&app, "openid").await;
    let hint = tokens["id_token"].as_str().expect("id_token");

    // Signed by another key; issued by another issuer with our very key; an
    // access token of ours; garbage.
    let (other_key, _) =
        oidc_app(|s| s.tokens.oidc_signing_key_file = Some(format!("{TEST_KEYS}/rsa_other_private.pem").into())).await;
    let (_, forged) = signed_in(&other_key, "openid").await;
    let (elsewhere, _) =
        oidc_app(|s| s.tokens.issuer_url = Some(crate::helpers::issuer_url(format!("{ISSUER}/outro")))).await;
    let (_, foreign) = signed_in(&elsewhere, "openid").await;
    let hints = [
        ("another key", forged["id_token"].as_str().expect("id_token")),
        ("another issuer", foreign["id_token"].as_str().expect("id_token")),
        ("an access token", tokens["access_token"].as_str().expect("access")),
        ("garbage", "not.a.token"),
    ];
    for (what, bad) in hints {
        let page =
            browser.get(&logout_path(&[("id_token_hint", bad), ("post_logout_redirect_uri", AFTER_LOGOUT)])).await;
        assert_eq!((page.status, page.location.as_deref()), (400, None), "{what}");
        assert!(!clears_session(&page), "{what}");
        assert!(page.body.contains("Não foi possível sair"), "{what}: {}", page.body);
    }
    let contradicting = logout_path(&[("id_token_hint", hint), ("client_id", "spa")]);
    let page = browser.get(&contradicting).await;
    assert_eq!(page.status, 400);
    assert!(still_signed_in(&mut browser).await, "every refusal left the session alone");
}

#[tokio::test]
async fn a_hint_of_another_person_asks_this_one_to_confirm() {
    let (app, _) = oidc_app(|_| {}).await;
    register_post_logout_uri(&app).await;
    let (_, tokens) = signed_in(&app, "openid").await;
    let hint = tokens["id_token"].as_str().expect("id_token");
    app.add_user("bruno", "bruno-password", true).await;
    let mut bruno = Browser::new(&app);
    let page =
        crate::oauth::after_login(&mut bruno, &portal_oidc_request("openid", &[]), "bruno", "bruno-password").await;
    let _ = crate::oauth::decide(&mut bruno, &page, "approve").await;
    let confirm = bruno.get(&logout_path(&[("id_token_hint", hint), ("post_logout_redirect_uri", AFTER_LOGOUT)])).await;
    assert_eq!(confirm.status, 200, "ana's ID token does not end bruno's session unasked");
    assert!(confirm.body.contains("Sair do credencial?") && !clears_session(&confirm));
    let done = bruno.post("/oauth/logout/", &with(hidden_fields(&confirm.body), &[])).await;
    assert_eq!(done.status, 303);
    assert!(clears_session(&done));
}
