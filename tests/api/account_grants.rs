//! The authorized applications (`/conta/aplicativos/`) and the access
//! report (`/conta/acessos/`) as a person uses them: what is listed, what
//! *Revogar* ends at once, and every refused revocation.

use crate::account::{form_token, signed_in_browser};
use crate::helpers::{hidden_fields, status_and_json, with, Browser, TestApp};
use crate::profile::{app, consent_to_every_client, register_client, token};

const PASSWORD: &str = "senha-da-lia-1";
const SCOPES: &str = "dados_publicos cpf email";

/// An app with two clients lia has authorized, and lia signed in.
async fn lia() -> (TestApp, i64, Browser) {
    let app = app().await;
    register_client(&app, "portal", SCOPES).await;
    register_client(&app, "agenda", SCOPES).await;
    let id = app.add_user("lia", PASSWORD, true).await;
    consent_to_every_client(&app, id).await;
    let browser = signed_in_browser(&app, "lia", PASSWORD).await;
    (app, id, browser)
}

/// The profile read of `user` by `client`: status, body and request id.
async fn read(app: &TestApp, user: i64, client: &str) -> (u16, serde_json::Value, String) {
    let r = app
        .client
        .post(format!("{}/api/perfil/dados/", app.address))
        .bearer_auth(token(user, SCOPES, client, 300))
        .send()
        .await
        .expect("sent");
    let id = r.headers()["x-request-id"].to_str().expect("ascii").to_owned();
    let (status, body) = status_and_json(r).await;
    (status, body, id)
}

fn revoke_form(token: &str, client: &str) -> Vec<(String, String)> {
    with(vec![], &[("csrf_token", token), ("client_id", client)])
}

#[tokio::test]
async fn revoking_an_application_ends_its_reads_at_once_and_leaves_the_others() {
    let (app, id, mut browser) = lia().await;
    assert_eq!(read(&app, id, "portal").await.0, 200);
    let page = browser.get("/conta/aplicativos/").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("<h2>portal</h2>") && page.body.contains("<h2>agenda</h2>"), "{}", page.body);
    assert!(page.body.contains("Seu CPF"), "the scopes in plain words: {}", page.body);
    // The button asks first: what will happen, and nothing changed yet.
    let asked = browser.post("/conta/aplicativos/", &revoke_form(&form_token(&page), "portal")).await;
    assert_eq!(asked.status, 200, "{}", asked.body);
    assert!(asked.body.contains("<h1>Revogar o acesso de portal?</h1>"), "{}", asked.body);
    assert!(asked.body.contains("deixa de ler os seus dados"), "{}", asked.body);
    assert!(asked.body.contains("<a class=\"button secondary\" href=\"/conta/aplicativos/\">Cancelar</a>"));
    assert_eq!(read(&app, id, "portal").await.0, 200, "nothing revoked before the confirmation");
    let done = browser.post("/conta/aplicativos/", &hidden_fields(&asked.body)).await;
    assert_eq!((done.status, done.location.as_deref()), (303, Some("/conta/aplicativos/?revogado=1")));
    let (status, body, _) = read(&app, id, "portal").await;
    assert_eq!(status, 401, "the portal's unexpired token is refused at once: {body}");
    assert_eq!(read(&app, id, "agenda").await.0, 200, "the other application keeps reading");
    let after = browser.get("/conta/aplicativos/?revogado=1").await;
    assert!(after.body.contains("role=\"status\"") && !after.body.contains("<h2>portal</h2>"), "{}", after.body);
}

#[tokio::test]
async fn a_revocation_that_is_forged_cross_site_foreign_or_junk_changes_nothing() {
    let (app, id, mut browser) = lia().await;
    let page = browser.get("/conta/aplicativos/").await;
    let token = form_token(&page);
    // Another person's session token.
    app.add_user("rui", "senha-do-rui-1", true).await;
    let mut rui = signed_in_browser(&app, "rui", "senha-do-rui-1").await;
    // Every account form of a session carries the same token; rui has no
    // application to list, so it is read from his logout page.
    let ruis_token = form_token(&rui.get("/conta/sair/").await);
    assert_eq!(browser.post("/conta/aplicativos/", &revoke_form(&ruis_token, "portal")).await.status, 403);
    assert_eq!(browser.post("/conta/aplicativos/", &revoke_form("", "portal")).await.status, 403);
    let cross = browser
        .send(
            app.client
                .post(format!("{}/conta/aplicativos/", app.address))
                .header("sec-fetch-site", "cross-site")
                .form(&[("csrf_token", token.as_str()), ("client_id", "portal")]),
        )
        .await;
    assert_eq!(cross.status, 403);
    // Rui has not authorized the portal: nothing of lia's is touched.
    assert_eq!(rui.post("/conta/aplicativos/", &revoke_form(&ruis_token, "portal")).await.status, 404);
    assert_eq!(browser.post("/conta/aplicativos/", &revoke_form(&token, "nobody")).await.status, 404);
    assert_eq!(browser.post("/conta/aplicativos/", &revoke_form(&token, "<junk>")).await.status, 400);
    assert_eq!(browser.post("/conta/aplicativos/", &with(vec![], &[("csrf_token", &token)])).await.status, 400);
    let repeated = with(revoke_form(&token, "portal"), &[("client_id", "agenda")]);
    assert_eq!(browser.post("/conta/aplicativos/", &repeated).await.status, 400);
    assert_eq!(read(&app, id, "portal").await.0, 200, "still authorized");
    // Signed out: to the login form, nothing revoked.
    let out = Browser::new(&app).post("/conta/aplicativos/", &revoke_form(&token, "portal")).await;
    assert_eq!(out.status, 303);
    assert_eq!(read(&app, id, "portal").await.0, 200);
}

#[tokio::test]
async fn the_access_report_lists_each_read_newest_first_with_its_request_id() {
    let (app, id, mut browser) = lia().await;
    let (_, _, first) = read(&app, id, "portal").await;
    let (_, _, second) = read(&app, id, "agenda").await;
    let page = browser.get("/conta/acessos/").await;
    assert_eq!(page.status, 200, "{}", page.body);
    let (a, b) = (page.body.find(&second).expect("second read"), page.body.find(&first).expect("first read"));
    assert!(a < b, "newest first");
    assert!(page.body.contains("Página 1 de 1 (2 leituras)"), "{}", page.body);
    assert!(page.body.contains("guardados por 5 anos"), "{}", page.body);
    assert_eq!(page.headers["cache-control"], "no-store");
    // Junk or a page past the end is a page, never an error.
    for query in ["?pagina=abc", "?pagina=999999999", "?pagina=-1", "?pagina=2"] {
        let page = browser.get(&format!("/conta/acessos/{query}")).await;
        assert_eq!(page.status, 200, "{query}: {}", page.body);
    }
    // Another person sees none of it.
    app.add_user("rui", "senha-do-rui-1", true).await;
    let mut rui = signed_in_browser(&app, "rui", "senha-do-rui-1").await;
    let theirs = rui.get("/conta/acessos/").await;
    assert!(!theirs.body.contains(&first) && theirs.body.contains("Nenhum aplicativo leu"), "{}", theirs.body);
    assert_eq!(Browser::new(&app).get("/conta/acessos/").await.status, 303, "signed out");
}
