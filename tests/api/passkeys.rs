//! Passkeys (issue 23) over real HTTP: every refusal of the three
//! ceremonies and what the pages promise (the options, the script and its
//! policy). The happy paths need an authenticator: the Chromium journey
//! (tests/browser/passkeys.test.mjs) runs them with the virtual one.

use crate::account::{form_token, signed_in_browser};
use crate::helpers::{hidden_fields, spawn_app, spawn_app_with, unescape_html, with, Browser, Page, TestApp};

const PASSWORD: &str = "senha-da-lia-1";
/// The passkey origin of these apps: pages "at" it send this `Host`.
const HOST: &str = "localhost:4443";

async fn app_with_passkeys() -> TestApp {
    let app = spawn_app_with(|s| s.login.passkey_origin = Some(format!("http://{HOST}"))).await;
    app.add_user("lia", PASSWORD, true).await;
    app
}

/// GETs `path` as a browser at the passkey origin.
async fn get_at_origin(browser: &mut Browser, path: &str) -> Page {
    let request = browser.client.get(format!("{}{path}", browser.base)).header("host", HOST);
    browser.send(request).await
}

/// POSTs `fields` to `path` as a browser at the passkey origin.
async fn post_at_origin(browser: &mut Browser, path: &str, fields: &[(String, String)]) -> Page {
    let request = browser.client.post(format!("{}{path}", browser.base)).header("host", HOST).form(fields);
    browser.send(request).await
}

fn field(page: &Page, name: &str) -> String {
    hidden_fields(&page.body).into_iter().find(|(k, _)| k == name).map(|(_, v)| v).unwrap_or_default()
}

fn options(page: &Page) -> serde_json::Value {
    let raw = page.body.split("data-options=\"").nth(1).and_then(|r| r.split('"').next()).expect("data-options");
    serde_json::from_str(&unescape_html(raw)).expect("options are JSON")
}

/// Starts a login by passkey from the login form: the ceremony page.
async fn start_login(browser: &mut Browser) -> Page {
    let form = get_at_origin(browser, "/conta/entrar/").await;
    assert!(form.body.contains("Entrar com chave de acesso"), "the login form offers passkeys: {}", form.body);
    let fields = vec![("csrf_token".to_owned(), form_token(&form)), ("next".to_owned(), "/conta/".to_owned())];
    post_at_origin(browser, "/conta/entrar/chave/", &fields).await
}

#[tokio::test]
async fn the_login_ceremony_page_carries_a_discoverable_challenge_and_runs_only_the_passkey_script() {
    let app = app_with_passkeys().await;
    let mut browser = Browser::new(&app);
    let page = start_login(&mut browser).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(page.headers["cache-control"], "no-store");
    let csp = page.headers["content-security-policy"].to_str().expect("ascii");
    assert!(csp.ends_with(&format!("; script-src http://{HOST}/conta/chave-de-acesso.js")), "{csp}");
    assert!(!csp.contains("unsafe-inline'; script") && !csp.contains("'unsafe-eval'"), "{csp}");
    assert!(!page.body.contains("<script>"), "nothing inline");
    let options = options(&page);
    let key = &options["publicKey"];
    assert_eq!(key["rpId"], "localhost");
    assert_eq!(key["userVerification"], "required");
    assert!(key["challenge"].as_str().is_some_and(|c| c.len() >= 43), "a 256-bit challenge: {options}");
    assert!(key.get("allowCredentials").is_none_or(|a| a.as_array().is_some_and(Vec::is_empty)), "{options}");
    assert!(options.get("mediation").is_none(), "a modal request, on the button: {options}");
    assert_eq!(field(&page, "etapa"), "concluir");
    assert_eq!(field(&page, "cerimonia").len(), 43);

    let script = browser.get("/conta/chave-de-acesso.js").await;
    assert_eq!(script.status, 200);
    assert_eq!(script.headers["content-type"], "text/javascript; charset=utf-8");
    assert!(script.body.contains("navigator.credentials.get"), "the script asks the authenticator");
}

#[tokio::test]
async fn a_login_ceremony_is_refused_without_the_form_token_from_another_site_and_for_any_bad_answer() {
    let app = app_with_passkeys().await;
    let mut browser = Browser::new(&app);
    let no_token = post_at_origin(&mut browser, "/conta/entrar/chave/", &[]).await;
    assert_eq!(no_token.status, 403, "a login form's token is required");
    let form = get_at_origin(&mut browser, "/conta/entrar/").await;
    let request = browser
        .client
        .post(format!("{}/conta/entrar/chave/", browser.base))
        .header("sec-fetch-site", "cross-site")
        .form(&[("csrf_token", form_token(&form))]);
    assert_eq!(browser.send(request).await.status, 403, "a cross-site post");

    // A ceremony that does not exist, an answer that is not JSON, an
    // answer that does not verify: no session, the page again.
    let page = start_login(&mut browser).await;
    let ceremony = field(&page, "cerimonia");
    for (cerimonia, credencial) in [
        ("x".repeat(43).as_str(), "{}"),
        (ceremony.as_str(), "not json"),
        (ceremony.as_str(), "{}"), // the ceremony was taken by the answer above
    ] {
        let mut fields: Vec<_> = hidden_fields(&page.body).into_iter().filter(|(k, _)| k != "cerimonia").collect();
        fields.push(("cerimonia".to_owned(), cerimonia.to_owned()));
        fields.push(("credencial".to_owned(), credencial.to_owned()));
        let answer = post_at_origin(&mut browser, "/conta/entrar/chave/", &fields).await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        assert!(answer.body.contains("expirou ou já foi usada"), "{credencial}: {}", answer.body);
        assert!(!answer.set_cookies.iter().any(|c| c.starts_with("credencial_session=")), "no session");
    }
    let fresh = start_login(&mut browser).await;
    let forged = serde_json::json!({
        "id": "AAAA", "rawId": "AAAA", "type": "public-key", "extensions": {},
        "response": {"clientDataJSON": "e30", "authenticatorData": "AAAA", "signature": "AAAA", "userHandle": null}
    });
    let fields = with(hidden_fields(&fresh.body), &[("credencial", &forged.to_string())]);
    let answer = post_at_origin(&mut browser, "/conta/entrar/chave/", &fields).await;
    assert_eq!(answer.status, 200);
    assert!(answer.body.contains("não foi reconhecida"), "{}", answer.body);
    assert!(!answer.set_cookies.iter().any(|c| c.starts_with("credencial_session=")), "no session");
    assert_eq!(browser.get("/conta/").await.location.as_deref(), Some("/conta/entrar/?next=%2Fconta%2F"));
}

#[tokio::test]
async fn registering_asks_the_password_a_name_and_a_discoverable_verified_credential() {
    let app = app_with_passkeys().await;
    let mut lia = signed_in_browser(&app, "lia", PASSWORD).await;
    let security = get_at_origin(&mut lia, "/conta/seguranca/").await;
    assert!(security.body.contains("Cadastrar chave de acesso"), "{}", security.body);
    let token = form_token(&security);
    let start = |senha: &str, nome: &str| {
        vec![
            ("csrf_token".to_owned(), token.clone()),
            ("senha".to_owned(), senha.to_owned()),
            ("nome".to_owned(), nome.to_owned()),
        ]
    };
    let wrong = post_at_origin(&mut lia, "/conta/seguranca/chave/", &start("not it", "Notebook")).await;
    assert_eq!(wrong.status, 422, "the password is asked again");
    assert!(wrong.body.contains("A senha não confere"), "{}", wrong.body);
    let unnamed = post_at_origin(&mut lia, "/conta/seguranca/chave/", &start(PASSWORD, "  ")).await;
    assert_eq!(unnamed.status, 422, "a name is needed");
    let long = post_at_origin(&mut lia, "/conta/seguranca/chave/", &start(PASSWORD, &"x".repeat(61))).await;
    assert_eq!(long.status, 422, "60 characters at most");

    let page = post_at_origin(&mut lia, "/conta/seguranca/chave/", &start(PASSWORD, "Notebook")).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let options = options(&page);
    let key = &options["publicKey"];
    assert_eq!(key["authenticatorSelection"]["residentKey"], "required", "discoverable: {options}");
    assert_eq!(key["authenticatorSelection"]["userVerification"], "required");
    assert_eq!(key["user"]["name"], "lia");
    assert_ne!(key["user"]["id"], "lia", "the user handle is random, not the account's name");
    assert_eq!(field(&page, "nome"), "Notebook");

    // Another person cannot finish lia's ceremony; lia cannot finish it
    // with an answer that does not verify; it is then gone.
    app.add_user("rui", "senha-do-rui-1", true).await;
    let mut rui = signed_in_browser(&app, "rui", "senha-do-rui-1").await;
    let rui_token = form_token(&get_at_origin(&mut rui, "/conta/seguranca/").await);
    let finish = |token: &str, credencial: &str| {
        vec![
            ("csrf_token".to_owned(), token.to_owned()),
            ("etapa".to_owned(), "concluir".to_owned()),
            ("cerimonia".to_owned(), field(&page, "cerimonia")),
            ("nome".to_owned(), "Notebook".to_owned()),
            ("credencial".to_owned(), credencial.to_owned()),
        ]
    };
    let foreign = post_at_origin(&mut rui, "/conta/seguranca/chave/", &finish(&rui_token, "{}")).await;
    assert_eq!(foreign.status, 422, "{}", foreign.body);
    assert!(foreign.body.contains("não foi cadastrada"), "{}", foreign.body);
    let again = post_at_origin(&mut lia, "/conta/seguranca/chave/", &finish(&token, "{}")).await;
    assert_eq!(again.status, 422, "the ceremony was taken by the foreign attempt");
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM passkeys").fetch_one(&app.db.pool).await.expect("count");
    assert_eq!(count, 0, "nothing registered");

    let forged = post_at_origin(&mut lia, "/conta/seguranca/chave/", &finish("not-the-token", "{}")).await;
    assert_eq!(forged.status, 403, "the account form token is required");
    let removed = lia.post("/conta/seguranca/", &[]).await;
    assert_eq!(removed.status, 403, "a post without the token");
    let other = vec![
        ("csrf_token".to_owned(), token.clone()),
        ("acao".to_owned(), "remover-chave".to_owned()),
        ("id".to_owned(), "999999".to_owned()),
        ("senha".to_owned(), PASSWORD.to_owned()),
    ];
    assert_eq!(lia.post("/conta/seguranca/", &other).await.status, 404, "a passkey that is not hers");
}

#[tokio::test]
async fn the_second_factor_by_passkey_needs_a_session_that_may_step_up_and_a_passkey() {
    let app = app_with_passkeys().await;
    let mut stranger = Browser::new(&app);
    let answer = post_at_origin(&mut stranger, "/conta/entrar/verificar/chave/", &[]).await;
    assert_eq!(answer.status, 303, "no session: to the login form");
    assert!(answer.location.as_deref().is_some_and(|l| l.starts_with("/conta/entrar/")), "{answer:?}");
    let mut lia = signed_in_browser(&app, "lia", PASSWORD).await;
    let token = form_token(&lia.get("/conta/").await);
    let fields = vec![("csrf_token".to_owned(), token), ("next".to_owned(), "/conta/".to_owned())];
    let none = post_at_origin(&mut lia, "/conta/entrar/verificar/chave/", &fields).await;
    assert_eq!(none.status, 400, "a step-up by passkey without one: {}", none.body);
    assert!(none.body.contains("não tem chaves de acesso"), "{}", none.body);
}

#[tokio::test]
async fn without_a_passkey_origin_nothing_offers_passkeys_and_their_posts_are_not_found() {
    let app = spawn_app().await;
    app.add_user("lia", PASSWORD, true).await;
    let mut browser = Browser::new(&app);
    let form = browser.get("/conta/entrar/").await;
    assert!(!form.body.contains("chave de acesso"), "{}", form.body);
    let fields = vec![("csrf_token".to_owned(), form_token(&form))];
    assert_eq!(browser.post("/conta/entrar/chave/", &fields).await.status, 404);
    let mut lia = signed_in_browser(&app, "lia", PASSWORD).await;
    let security = lia.get("/conta/seguranca/").await;
    assert!(!security.body.contains("Chaves de acesso"), "{}", security.body);
}

#[tokio::test]
async fn a_page_outside_the_passkey_origin_points_to_it_instead_of_offering_a_ceremony() {
    let app = app_with_passkeys().await;
    let mut lia = signed_in_browser(&app, "lia", PASSWORD).await;
    let security = lia.get("/conta/seguranca/").await;
    assert!(security.body.contains(&format!("href=\"http://{HOST}/conta/seguranca/\"")), "{}", security.body);
    assert!(!security.body.contains("Cadastrar chave de acesso"), "{}", security.body);
    let token = form_token(&security);
    let fields = vec![
        ("csrf_token".to_owned(), token),
        ("senha".to_owned(), PASSWORD.to_owned()),
        ("nome".to_owned(), "Notebook".to_owned()),
    ];
    assert_eq!(lia.post("/conta/seguranca/chave/", &fields).await.status, 404, "registration only at the origin");
}
