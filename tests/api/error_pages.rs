//! HTML for browsers, JSON for programs: a page route (or an address no
//! route serves) answers a browser's request with a Portuguese error page;
//! the JSON API routes keep their JSON whatever the request accepts; the
//! home page, the privacy notice and the favicon.

use serde_json::Value;

use crate::helpers::{spawn_app, spawn_app_with, TestApp};

/// What Chromium sends when it navigates.
const BROWSER: &str = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";

async fn ask(app: &TestApp, method: reqwest::Method, path: &str, accept: Option<&str>) -> reqwest::Response {
    let mut request = app.client.request(method, format!("{}{path}", app.address));
    if let Some(accept) = accept {
        request = request.header("accept", accept);
    }
    request.send().await.expect("sent")
}

fn content_type(r: &reqwest::Response) -> String {
    r.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned()
}

/// Asserts an error page: the status, HTML in Portuguese with a title, the
/// frame and the way back, never cached, and none of the JSON's English.
async fn assert_error_page(r: reqwest::Response, status: u16, title: &str) -> String {
    assert_eq!(r.status().as_u16(), status, "{:?}", r.url().path());
    assert!(content_type(&r).starts_with("text/html"), "{}", content_type(&r));
    assert_eq!(r.headers()["cache-control"], "no-store");
    let page = r.text().await.expect("body");
    assert!(page.starts_with("<!DOCTYPE html>\n<html lang=\"pt-BR\">"), "{page}");
    assert!(page.contains(&format!("<title>{title} · credencial</title>")), "{page}");
    assert!(page.contains("<a class=\"button\" href=\"/\">Ir para a página inicial</a>"), "{page}");
    assert!(page.contains("href=\"/conta/\""), "{page}");
    for english in ["Not found", "not_found", "detail", "Method"] {
        assert!(!page.contains(english), "{english} in {page}");
    }
    page
}

#[tokio::test]
async fn a_mistyped_address_is_a_portuguese_page_for_a_browser_and_json_for_a_program() {
    let app = spawn_app().await;
    for path in ["/x", "/conta/x", "/admin/x", "/oauth/x", "/auth/x/y"] {
        let r = ask(&app, reqwest::Method::GET, path, Some(BROWSER)).await;
        assert_error_page(r, 404, "Página não encontrada").await;
        for accept in [Some("application/json"), Some("*/*"), None] {
            let r = ask(&app, reqwest::Method::GET, path, accept).await;
            assert_eq!(r.status(), 404, "{path} {accept:?}");
            assert!(content_type(&r).starts_with("application/json"), "{path} {accept:?}");
            let body: Value = r.json().await.expect("json");
            assert_eq!(body["code"], "not_found", "{path} {accept:?}: the JSON is unchanged");
        }
    }
}

#[tokio::test]
async fn a_json_route_never_answers_html() {
    let app = spawn_app().await;
    let cases: [(reqwest::Method, &str, u16); 7] = [
        (reqwest::Method::GET, "/api/token/pair/", 405),
        (reqwest::Method::GET, "/api/perfil/dados/", 405),
        (reqwest::Method::GET, "/api/nada/", 404),
        (reqwest::Method::GET, "/oauth/token/", 405),
        (reqwest::Method::GET, "/usuarios/00000000000/", 403),
        (reqwest::Method::DELETE, "/.well-known/jwks.json", 405),
        (reqwest::Method::POST, "/api/token/verify/", 400),
    ];
    for (method, path, status) in cases {
        let r = ask(&app, method.clone(), path, Some(BROWSER)).await;
        assert_eq!(r.status().as_u16(), status, "{method} {path}");
        assert!(content_type(&r).starts_with("application/json"), "{method} {path}: {}", content_type(&r));
    }
    // The JWT sub-application mounted elsewhere stays JSON there too.
    let app = spawn_app_with(|s| s.server.token_prefix = "/jwt/".into()).await;
    let r = ask(&app, reqwest::Method::GET, "/jwt/pair/", Some(BROWSER)).await;
    assert_eq!(r.status(), 405);
    assert!(content_type(&r).starts_with("application/json"), "{}", content_type(&r));
}

#[tokio::test]
async fn a_method_a_page_does_not_take_is_a_page_that_keeps_the_allow_header() {
    let app = spawn_app().await;
    let r = ask(&app, reqwest::Method::PUT, "/conta/entrar/", Some(BROWSER)).await;
    let allow = r.headers().get("allow").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    assert!(allow.contains("GET") && allow.contains("POST"), "{allow}");
    assert_error_page(r, 405, "Operação não permitida").await;
    let r = ask(&app, reqwest::Method::PUT, "/conta/entrar/", Some("application/json")).await;
    assert_eq!(r.status(), 405);
    assert!(content_type(&r).starts_with("application/json"));
}

#[tokio::test]
async fn a_body_too_large_is_a_page_on_a_page_route_and_json_on_an_api_route() {
    let app = spawn_app().await;
    let post = |path: &str, content_type: &str| {
        app.client
            .post(format!("{}{path}", app.address))
            .header("accept", BROWSER)
            .header("content-type", content_type.to_owned())
            .body(format!("username={}", "a".repeat(300 * 1024)))
            .send()
    };
    // The login form answers its own refusal with its page.
    let r = post("/conta/entrar/", "application/x-www-form-urlencoded").await.expect("sent");
    assert_eq!(r.status(), 413);
    assert!(content_type(&r).starts_with("text/html"));
    // An address no route serves: the generic page.
    let r = post("/conta/nada/", "application/x-www-form-urlencoded").await.expect("sent");
    assert_error_page(r, 404, "Página não encontrada").await;
    // The API keeps its JSON for the same browser.
    let r = post("/api/token/pair/", "application/json").await.expect("sent");
    assert_eq!(r.status(), 413);
    let body: Value = r.json().await.expect("json");
    assert_eq!(body["code"], "payload_too_large");
}

#[tokio::test]
async fn the_home_page_says_what_the_service_is_and_links_the_account_and_the_privacy_notice() {
    let app = spawn_app().await;
    for accept in [Some(BROWSER), None] {
        let r = ask(&app, reqwest::Method::GET, "/", accept).await;
        assert_eq!(r.status(), 200);
        assert!(content_type(&r).starts_with("text/html"));
        let page = r.text().await.expect("body");
        assert!(page.contains("<title>Início · credencial</title>"), "{page}");
        assert!(page.contains("href=\"/conta/\"") && page.contains("href=\"/privacidade/\""), "{page}");
        assert!(!page.contains("/conta/cadastro/"), "sign-up is off in serve: not offered");
    }
    let r = ask(&app, reqwest::Method::GET, "/favicon.ico", Some("image/avif,image/webp,image/*,*/*;q=0.8")).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "image/svg+xml");
    assert!(r.text().await.expect("body").starts_with("<svg"));
}

#[tokio::test]
async fn the_privacy_notice_states_the_configured_retention() {
    let app = spawn_app().await;
    let page = ask(&app, reqwest::Method::GET, "/privacidade/", Some(BROWSER)).await.text().await.expect("body");
    assert!(page.contains("1.825 dias"), "the default, with the thousands dot: {page}");
    assert!(page.contains("30 minutos sem uso") && page.contains("12 horas depois"), "{page}");
    for link in ["/conta/acessos/", "/conta/aplicativos/", "/conta/seguranca/", "/conta/sessoes/"] {
        assert!(page.contains(&format!("href=\"{link}\"")), "{link}");
    }
    let app = spawn_app_with(|s| {
        s.storage.access_log_retention_days = 365;
        s.login.session_idle_secs = 600;
    })
    .await;
    let page = ask(&app, reqwest::Method::GET, "/privacidade/", None).await.text().await.expect("body");
    assert!(page.contains("365 dias") && page.contains("10 minutos sem uso"), "{page}");
}
