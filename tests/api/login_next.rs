//! Where a login sends the browser (`next`), resolved as the browser
//! resolves a `Location` before the prefix check: a dot segment in any
//! spelling (`..`, `%2e%2e`, `%2E%2E`, `.%2e`, `%2e.`, mixed, with a
//! backslash) that climbs out of `/conta` or `/admin` falls back to the
//! overview, one that stays inside is sent resolved; the client
//! component's login resolves it the same way.

use crate::account::log_in_at_account;
use crate::client_login::log_in;
use crate::helpers::{hidden_fields, spawn_app, spawn_demo, with, Browser};

const PASSWORD: &str = "senha-da-lia-1";

/// `next` values that leave the account and administration pages once
/// resolved (the logout of the client component, say).
const ESCAPES: [&str; 14] = [
    "/conta/../auth/logout/",
    "/conta/%2e%2e/auth/logout/",
    "/conta/%2E%2E/auth/logout/",
    "/conta/%2e%2E/auth/logout/",
    "/conta/.%2e/auth/logout/",
    "/conta/%2e./auth/logout/",
    "/conta/.%2E/auth/logout/",
    "/conta/x/../../auth/logout/",
    "/conta/..",
    "/conta/%2e%2e",
    "/admin/%2e%2e/oauth/authorize/?client_id=x",
    "/conta/..\\auth/logout/",
    "/conta/%2e%2e\\auth/logout/",
    "/conta/x/..//evil.example/",
];

/// `next` values with dot segments that stay inside, and where they lead.
const INSIDE: [(&str, &str); 4] = [
    ("/admin/../conta/", "/conta/"),
    ("/conta/x/%2E%2e/sair/", "/conta/sair/"),
    ("/admin/usuarios/.%2e/auditoria/", "/admin/auditoria/"),
    ("/conta/./senha/", "/conta/senha/"),
];

fn urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

#[tokio::test]
async fn the_account_login_resolves_next_before_the_prefix_check() {
    let app = spawn_app().await;
    app.add_user("lia", PASSWORD, true).await;
    let cases = ESCAPES.iter().map(|n| (*n, "/conta/")).chain(INSIDE);
    for (next, expected) in cases {
        // The login form carries `next` resolved (or the overview) ...
        let mut browser = Browser::new(&app);
        let form = browser.get(&format!("/conta/entrar/?next={}", urlencode(next))).await;
        assert_eq!(form.status, 200, "{next}: {}", form.body);
        let carried = hidden_fields(&form.body).into_iter().find(|(k, _)| k == "next").map(|(_, v)| v);
        assert_eq!(carried.as_deref(), Some(expected), "{next}");
        // ... and the login goes there.
        let answer = log_in_at_account(&mut browser, next, "lia", PASSWORD).await;
        assert_eq!((answer.status, answer.location.as_deref()), (303, Some(expected)), "{next}");
        // A browser with a session is sent at once, to the same place.
        let again = browser.get(&format!("/conta/entrar/?next={}", urlencode(next))).await;
        assert_eq!((again.status, again.location.as_deref()), (303, Some(expected)), "{next}");
        // A login form posted with `next` as sent (not as the page wrote it).
        let mut other = Browser::new(&app);
        let form = other.get("/conta/entrar/").await;
        let fields: Vec<(String, String)> = hidden_fields(&form.body)
            .into_iter()
            .map(|(k, v)| if k == "next" { (k, next.to_owned()) } else { (k, v) })
            .collect();
        let answer = other.post("/conta/entrar/", &with(fields, &[("username", "lia"), ("password", PASSWORD)])).await;
        assert_eq!((answer.status, answer.location.as_deref()), (303, Some(expected)), "posted {next}");
    }
}

#[tokio::test]
async fn the_panel_sends_a_browser_without_a_session_to_log_in_and_back_resolved() {
    let app = spawn_app().await;
    let id = app.add_user("chefe", "senha-do-chefe-1", true).await;
    crate::admin::set_staff(&app, id, true).await;
    let mut browser = Browser::new(&app);
    let answer = log_in_at_account(&mut browser, "/admin/%2e%2e/admin/auditoria/", "chefe", "senha-do-chefe-1").await;
    assert_eq!(answer.location.as_deref(), Some("/admin/auditoria/"));
    let page = browser.get("/admin/auditoria/").await;
    assert_eq!(page.status, 200, "{}", page.body);
}

#[tokio::test]
async fn the_client_component_login_resolves_next_too() {
    let (mut browser, _db) = spawn_demo(|_| {}).await;
    for (next, expected) in [
        ("/auth/%2e%2e/painel/?aba=dados", "/painel/?aba=dados"),
        ("/auth/.%2E/.%2e/painel/", "/painel/"),
        ("/auth/me/../../../x", "/x"),
        ("/auth/./me/", "/auth/me/"),
        ("/a/%2e%2e//evil.example/", "/auth/me/"),
        ("/a/..\\evil.example/", "/auth/me/"),
    ] {
        let done = log_in(&mut browser, "ana", "ana-demo-2026", next).await;
        assert_eq!((done.status, done.location.as_deref()), (303, Some(expected)), "{next}");
    }
}
