//! NUL and the other control characters in client text (docs/decisions.md,
//! "Control characters in client text"): wherever a client's string could
//! reach SQL — the panel's search and audit filters, the login forms, the
//! token pair, the OAuth2 endpoints, the user-management API — a NUL
//! (percent-encoded, or raw in a body) is a clear 400 (no match for a path
//! look-up), and another control character is judged by the field's own
//! rule or matches nothing; never a 5xx, on both engines. PostgreSQL
//! refuses a NUL in text (`invalid byte sequence for encoding "UTF8":
//! 0x00`), which answered 503.

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE};
use serde_json::{json, Value};

use crate::account::form_token;
use crate::admin::{add_staff, staff_browser};
use crate::helpers::{hidden_fields, spawn_app, status_and_json, with, Browser, Page, TestApp};
use crate::user_directory::api_token;

/// What a page says about a NUL.
const PAGE_MESSAGE: &str = "caractere nulo";

/// Percent-encoded values with a NUL, for query strings and paths.
const ENCODED: [&str; 4] = ["%00", "ana%00", "%00ana", "a%00%00b"];

/// Values with a NUL, for bodies.
const RAW: [&str; 3] = ["\0", "ana\0", "a\0b"];

/// Percent-encoded values with another control character.
const OTHER_ENCODED: [&str; 3] = ["%01", "ana%1B", "%7F"];

/// Values with another control character.
const OTHER_RAW: [&str; 2] = ["\u{1}", "ana\u{1b}"];

/// A page answered 400 with the Portuguese message.
fn assert_refused_page(page: &Page, what: &str) {
    assert_eq!(page.status, 400, "{what}: {}", page.body);
    assert!(page.body.contains(PAGE_MESSAGE), "{what}: {}", page.body);
}

#[tokio::test]
async fn every_panel_search_and_audit_filter_refuses_a_nul() {
    let app = spawn_app().await;
    add_staff(&app).await;
    app.add_user("ana", "senha-da-ana-1", true).await;
    let mut browser = staff_browser(&app).await;
    for value in ENCODED {
        for query in [
            format!("q={value}"),
            format!("q=ana&depois={value}"),
            format!("{value}=ana"),
            format!("ator={value}"),
            format!("alvo={value}"),
            format!("ator=chefe&alvo={value}&antes=1"),
            format!("antes={value}"),
        ] {
            for path in ["/admin/usuarios/", "/admin/auditoria/"] {
                let page = browser.get(&format!("{path}?{query}")).await;
                assert_refused_page(&page, &format!("{path}?{query}"));
            }
        }
    }
    // Another control character is text that matches no one.
    for value in OTHER_ENCODED.iter().chain(&["an%09a", "an%0A%0Da"]) {
        let page = browser.get(&format!("/admin/usuarios/?q={value}")).await;
        assert!(page.status == 200 && page.body.contains("Nenhuma conta encontrada"), "{value}: {}", page.body);
        for filter in ["ator", "alvo"] {
            let page = browser.get(&format!("/admin/auditoria/?{filter}={value}")).await;
            assert!(page.status == 200 && page.body.contains("Nenhum registro"), "{value}: {}", page.body);
        }
    }
    // The panel still works afterwards.
    let page = browser.get("/admin/usuarios/?q=ana").await;
    assert!(page.status == 200 && page.body.contains(">ana</a>"), "{}", page.body);
}

#[tokio::test]
async fn an_account_path_with_a_nul_is_the_404_page() {
    let app = spawn_app().await;
    add_staff(&app).await;
    let mut browser = staff_browser(&app).await;
    for path in ["/admin/usuarios/%00/", "/admin/usuarios/1%00/", "/admin/aplicativos/%00/", "/admin/usuarios/1%01/"] {
        let page = browser.get(path).await;
        assert_eq!(page.status, 404, "{path}: {}", page.body);
    }
}

/// Posts the login form of `/conta/entrar/` with `username` and `password`,
/// encoded by the client (`%00`) or as raw bytes.
async fn post_login(browser: &mut Browser, username: &str, password: &str, raw: bool) -> Page {
    let form = browser.get("/conta/entrar/").await;
    assert_eq!(form.status, 200, "{}", form.body);
    let fields = with(hidden_fields(&form.body), &[("username", username), ("password", password)]);
    if !raw {
        return browser.post("/conta/entrar/", &fields).await;
    }
    let body: Vec<u8> = fields
        .iter()
        .map(|(k, v)| {
            let k: String = url::form_urlencoded::byte_serialize(k.as_bytes()).collect();
            // The value as typed: a NUL stays a NUL byte on the wire.
            let v = v.replace('%', "%25").replace('&', "%26").replace('+', "%2B");
            format!("{k}={v}")
        })
        .collect::<Vec<_>>()
        .join("&")
        .into_bytes();
    let request = browser
        .client
        .post(format!("{}/conta/entrar/", browser.base))
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(body);
    browser.send(request).await
}

#[tokio::test]
async fn the_login_form_refuses_a_nul_in_any_field() {
    let app = spawn_app().await;
    app.add_user("ana", "senha-da-ana-1", true).await;
    let mut browser = Browser::new(&app);
    for value in RAW {
        for raw in [false, true] {
            for (username, password) in [(value, "senha-da-ana-1"), ("ana", value), (value, value)] {
                let page = post_login(&mut browser, username, password, raw).await;
                assert_refused_page(&page, &format!("{username:?}/{password:?} raw={raw}"));
            }
        }
    }
    // Another control character: a username no one has.
    for value in OTHER_RAW {
        for raw in [false, true] {
            let page = post_login(&mut browser, value, "senha-da-ana-1", raw).await;
            assert!(
                page.status == 200 && page.body.contains("Usuário ou senha inválidos."),
                "{value:?}: {}",
                page.body
            );
        }
    }
    // The `next` of the login page with a NUL is no `next`: the overview.
    let form = browser.get("/conta/entrar/?next=%2Fconta%2F%00").await;
    assert_eq!(form.status, 200, "{}", form.body);
    let page = post_login(&mut browser, "ana", "senha-da-ana-1", false).await;
    assert_eq!((page.status, page.location.as_deref()), (303, Some("/conta/")), "{}", page.body);
}

#[tokio::test]
async fn the_token_pair_refuses_a_nul_in_its_json_with_drf_s_message() {
    let app = spawn_app().await;
    app.add_user("ana", "senha-da-ana-1", true).await;
    for value in RAW {
        for (body, field) in [
            (json!({"username": value, "password": "senha-da-ana-1"}), "username"),
            (json!({"username": "ana", "password": value}), "password"),
        ] {
            let (status, answer) = status_and_json(app.post_json("/api/token/pair/", &body).await).await;
            assert_eq!((status, &answer), (400, &json!({ field: ["Null characters are not allowed."] })), "{body}");
        }
        // A field the route does not read is not looked at, as DRF ignores it.
        let body = json!({"username": "ana", "password": "senha-da-ana-1", "extra": {"list": [value]}});
        assert_eq!(app.post_json("/api/token/pair/", &body).await.status(), 200, "{body}");
    }
    // Another control character: a username no one has.
    for value in OTHER_RAW {
        let body = json!({"username": value, "password": "senha-da-ana-1"});
        let (status, answer) = status_and_json(app.post_json("/api/token/pair/", &body).await).await;
        assert_eq!((status, answer["code"].as_str()), (401, Some("authentication_failed")), "{body}");
    }
    // A raw NUL byte inside a JSON string is no JSON at all.
    let r = app
        .client
        .post(format!("{}/api/token/pair/", app.address))
        .header(CONTENT_TYPE, "application/json")
        .body(b"{\"username\": \"a\0b\", \"password\": \"x\"}".to_vec())
        .send()
        .await
        .expect("sent");
    assert_eq!(r.status(), 400);
    // Nothing was counted against the account: it still logs in.
    app.login("ana", "senha-da-ana-1").await;
}

async fn directory_get(app: &TestApp, path: &str, token: &str) -> (u16, Value) {
    let r = app
        .client
        .get(format!("{}{path}", app.address))
        .header(AUTHORIZATION, format!("Token {token}"))
        .send()
        .await
        .expect("sent");
    status_and_json(r).await
}

#[tokio::test]
async fn the_user_directory_refuses_a_nul_in_its_queries_and_bodies_and_finds_nothing_at_such_a_path() {
    let app = spawn_app().await;
    let token = api_token(&app, "sistema", "users:read,users:create").await;
    for value in ENCODED.iter().chain(&OTHER_ENCODED) {
        for path in [
            format!("/usuarios/{value}/"),
            format!("/usuarios/joana{value}@example.org/"),
            format!("/usuarios/joana@example.org{value}"),
            format!("/usuarios/529.982.247-25{value}/"),
        ] {
            let (status, body) = directory_get(&app, &path, &token).await;
            assert_eq!((status, body["detail"].as_str()), (404, Some("Not found.")), "{path}: {body}");
        }
    }
    // A NUL in the query is DRF's 400 on its field ...
    for value in ENCODED {
        for (query, field) in [
            (format!("cpfs={value}"), "cpfs"),
            (format!("cpfs=52998224725,{value}"), "cpfs"),
            (format!("cpfs=52998224725&page={value}"), "page"),
        ] {
            let (status, body) = directory_get(&app, &format!("/usuarios/?{query}"), &token).await;
            assert_eq!((status, body), (400, json!({ field: ["Null characters are not allowed."] })), "{query}");
        }
    }
    // ... and another control character is no CPF: no match.
    for value in OTHER_ENCODED {
        let (status, body) = directory_get(&app, &format!("/usuarios/?cpfs={value}"), &token).await;
        assert_eq!((status, body), (200, json!([])), "{value}");
    }
    // In the creation's form, a NUL is DRF's 400 on the field; another
    // control character the field's own 400.
    for value in RAW.iter().chain(&OTHER_RAW) {
        for field in ["cpf", "email", "nome", "genero", "data_de_nascimento"] {
            let mut form = serde_json::Map::new();
            for (name, v) in [
                ("cpf", "529.982.247-25"),
                ("email", "joana@example.org"),
                ("nome", "Joana Silva"),
                ("genero", "F"),
                ("data_de_nascimento", "1990-04-12"),
            ] {
                form.insert(name.into(), Value::String(if name == field { format!("{v}{value}") } else { v.into() }));
            }
            for as_json in [true, false] {
                let request = app
                    .client
                    .post(format!("{}/usuarios/", app.address))
                    .header(AUTHORIZATION, format!("Token {token}"));
                let request = if as_json { request.json(&form) } else { request.form(&form) };
                let (status, body) = status_and_json(request.send().await.expect("sent")).await;
                assert_eq!(status, 400, "{field} json={as_json}: {body}");
                assert!(body.get(field).is_some(), "{field} json={as_json}: {body}");
            }
        }
    }
    let users: i64 = sqlx::query_scalar("SELECT count(*) FROM users").fetch_one(&app.db.pool).await.expect("count");
    assert_eq!(users, 0, "nothing was created");
}

#[tokio::test]
async fn the_panel_forms_refuse_a_nul_with_their_portuguese_error() {
    let app = spawn_app().await;
    add_staff(&app).await;
    let bruno = app.add_user("bruno", "senha-do-bruno-1", true).await;
    let mut browser = staff_browser(&app).await;
    let path = format!("/admin/usuarios/{bruno}/");
    let token = form_token(&browser.get(&path).await);
    for value in RAW {
        let fields = [("csrf_token".to_owned(), token.clone()), ("acao".to_owned(), format!("desativar{value}"))];
        let page = browser.post(&path, &fields).await;
        assert_refused_page(&page, &format!("{value:?}"));
    }
}

#[tokio::test]
async fn the_authorization_and_token_endpoints_refuse_a_nul_as_a_bad_request() {
    let (app, _) = crate::oauth::app().await;
    let mut browser = Browser::new(&app);
    // The login step of the authorization endpoint: its error page.
    let login = browser.get(&crate::oauth::portal_request("cnes", "s")).await;
    assert_eq!(login.status, 200, "{}", login.body);
    for value in RAW {
        let fields = with(hidden_fields(&login.body), &[("username", value), ("password", "ana-password")]);
        let page = browser.post("/oauth/authorize/", &fields).await;
        assert_eq!(page.status, 400, "{value:?}: {}", page.body);
        // In Portuguese; the English detail is logged under the request's code.
        assert!(page.body.contains("parâmetros repetidos ou inválidos"), "{}", page.body);
        assert!(!page.body.contains("holds a NUL"), "{}", page.body);
    }
    // Its query: the same page, nothing sent to the client.
    let page = browser.get(&crate::oauth::portal_request("cnes", "s\0")).await;
    assert!(page.status == 400 && page.location.is_none(), "{page:?}");
    // The token endpoint: invalid_request.
    for body in ["grant_type=authorization_code&code=a%00b", "grant_type=refresh_token&refresh_token=%00"] {
        let r = app
            .client
            .post(format!("{}/oauth/token/", app.address))
            .basic_auth("portal", Some(crate::oauth::PORTAL_SECRET))
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .expect("sent");
        let (status, answer) = status_and_json(r).await;
        assert_eq!((status, answer["error"].as_str()), (400, Some("invalid_request")), "{body}: {answer}");
    }
}
