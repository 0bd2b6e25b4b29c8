//! The account's own changes over real HTTP: the overview's details form
//! (what is entered is what `POST /api/perfil/dados/` answers next) and the
//! password page (the other browser's session ends, refresh tokens of
//! `pair` and of OAuth2 clients stop working), with every refusal.

use serde_json::{json, Value};

use crate::account::{form_token, signed_in_browser};
use crate::helpers::{hidden_fields, status_and_json, with, Browser, Page, TestApp};
use crate::oauth::{app as oauth_app, callback, consent_page, decide, portal_request, PORTAL_SECRET, PORTAL_URI};

const NEW_PASSWORD: &str = "um novo caminho de pedras";

fn fields(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

/// Posts the overview's details form with `nome`, `email`, `avatar`.
async fn edit(browser: &mut Browser, nome: &str, email: &str, avatar: &str) -> Page {
    let token = form_token(&browser.get("/conta/").await);
    let form = fields(&[("csrf_token", &token), ("nome", nome), ("email", email), ("avatar", avatar)]);
    browser.post("/conta/", &form).await
}

/// Posts the password form.
async fn change_password(browser: &mut Browser, current: &str, new: &str, confirmation: &str) -> Page {
    let token = form_token(&browser.get("/conta/senha/").await);
    let form = fields(&[
        ("csrf_token", &token),
        ("password_atual", current),
        ("password", new),
        ("password_confirmacao", confirmation),
    ]);
    browser.post("/conta/senha/", &form).await
}

/// ana authorizes `portal` for the required scopes in a browser of her
/// own; returns the token response.
async fn portal_tokens(app: &TestApp, password: &str) -> Value {
    let mut browser = Browser::new(app);
    let consent = consent_page(&mut browser, &portal_request("dados_publicos cpf email", "s"), "ana", password).await;
    let location = decide(&mut browser, &consent, "approve").await;
    let code = callback(&location, PORTAL_URI).remove("code").expect("code");
    let form = [("grant_type", "authorization_code"), ("code", code.as_str()), ("redirect_uri", PORTAL_URI)];
    let r = app
        .client
        .post(format!("{}/oauth/token/", app.address))
        .basic_auth("portal", Some(PORTAL_SECRET))
        .form(&form)
        .send()
        .await
        .expect("sent");
    let (status, body) = status_and_json(r).await;
    assert_eq!(status, 200, "{body}");
    body
}

async fn profile(app: &TestApp, access: &str) -> Value {
    let r = app.client.post(format!("{}/api/perfil/dados/", app.address)).bearer_auth(access).send().await;
    let (status, body) = status_and_json(r.expect("sent")).await;
    assert_eq!(status, 200, "{body}");
    body
}

async fn failures_on(app: &TestApp, key: &str) -> i32 {
    sqlx::query_scalar::<_, i32>("SELECT failures FROM login_failures WHERE key = $1")
        .bind(key)
        .fetch_optional(&app.db.pool)
        .await
        .expect("query")
        .unwrap_or(0)
}

// --------------------------------------------------------------- details

#[tokio::test]
async fn what_is_entered_on_the_overview_is_what_the_profile_answers_next() {
    let (app, _) = oauth_app().await;
    let mut browser = signed_in_browser(&app, "ana", "ana-password").await;
    let page = browser.get("/conta/").await;
    assert!(page.body.contains("<label for=\"avatar\">"), "{}", page.body);
    assert!(page.body.contains("value=\"ana@example.gov.br\""), "the form shows the stored values: {}", page.body);
    let saved =
        edit(&mut browser, "Ana Beatriz Souza", "Ana.Souza@example.gov.br", "https://img.example.gov.br/a.png").await;
    assert_eq!((saved.status, saved.location.as_deref()), (303, Some("/conta/?salvo=1")), "{}", saved.body);
    let page = browser.get("/conta/?salvo=1").await;
    assert!(page.body.contains("<p class=\"notice\" role=\"status\">Seus dados foram atualizados.</p>"));
    assert!(page.body.contains("<dd>Ana Beatriz Souza</dd>"), "{}", page.body);
    let tokens = portal_tokens(&app, "ana-password").await;
    let answer = profile(&app, tokens["access_token"].as_str().expect("access")).await;
    assert_eq!(answer["name"], "Ana Beatriz Souza");
    assert_eq!(answer["email"], "Ana.Souza@example.gov.br");
    assert_eq!(answer["avatar"], "https://img.example.gov.br/a.png");
    // An empty avatar clears it.
    assert_eq!(edit(&mut browser, "Ana Beatriz Souza", "ana.souza@example.gov.br", "").await.status, 303);
    let answer = profile(&app, tokens["access_token"].as_str().expect("access")).await;
    assert_eq!((answer["avatar"].as_str(), answer["email"].as_str()), (Some(""), Some("ana.souza@example.gov.br")));
}

#[tokio::test]
async fn refused_details_keep_what_was_typed_and_change_nothing() {
    let (app, _) = oauth_app().await;
    app.add_user("bia", "bia-password", true).await;
    let mut browser = signed_in_browser(&app, "ana", "ana-password").await;
    let cases = [
        ("", "ana@example.gov.br", "", "nome", "Informe o nome completo."),
        ("Ana <b>", "ana@", "", "email", "Informe um e-mail válido"),
        ("Ana", "ana@example.gov.br", "javascript:alert(1)", "avatar", "começando com https://"),
        ("Ana", "BIA@example.gov.br", "", "email", "Este e-mail já está em uso por outra conta."),
    ];
    for (nome, email, avatar, field, text) in cases {
        let answer = edit(&mut browser, nome, email, avatar).await;
        assert_eq!(answer.status, 422, "{field}: {}", answer.body);
        let error = format!("<p class=\"field-error\" id=\"{field}-erro\">");
        let at = answer.body.find(&error).unwrap_or_else(|| panic!("{field}: {}", answer.body));
        assert!(answer.body[at..].contains(text), "{field}: {}", answer.body);
        assert!(answer.body.contains("Os dados não foram alterados."), "{}", answer.body);
        let typed = askama_escaped(email);
        assert!(answer.body.contains(&format!("value=\"{typed}\"")), "typed e-mail stays: {}", answer.body);
    }
    let page = browser.get("/conta/").await;
    assert!(page.body.contains("<dd>Full ana</dd>") && page.body.contains("<dd>ana@example.gov.br</dd>"));
    assert_eq!(failures_on(&app, "address:127.0.0.1").await, 1, "the taken address counted, the rest not");
}

fn askama_escaped(text: &str) -> String {
    text.replace('&', "&#38;").replace('<', "&#60;").replace('>', "&#62;").replace('"', "&#34;")
}

#[tokio::test]
async fn a_details_post_without_the_form_token_from_another_site_or_without_a_session_is_refused() {
    let (app, _) = oauth_app().await;
    let mut browser = signed_in_browser(&app, "ana", "ana-password").await;
    let other = form_token(&signed_in_browser(&app, "ana", "ana-password").await.get("/conta/").await);
    let form = |token: &str| fields(&[("csrf_token", token), ("nome", "Forjado"), ("email", "f@x.gov.br")]);
    assert_eq!(browser.post("/conta/", &form(&other)).await.status, 403, "another session's token");
    assert_eq!(browser.post("/conta/", &fields(&[("nome", "Forjado"), ("email", "f@x.gov.br")])).await.status, 403);
    let token = form_token(&browser.get("/conta/").await);
    let cross = browser
        .send(
            app.client
                .post(format!("{}/conta/", app.address))
                .header("sec-fetch-site", "cross-site")
                .form(&form(&token)),
        )
        .await;
    assert_eq!(cross.status, 403, "{}", cross.body);
    let nobody = Browser::new(&app).post("/conta/", &form(&token)).await;
    assert_eq!((nobody.status, nobody.location.as_deref()), (303, Some("/conta/entrar/?next=%2Fconta%2F")));
    let mut twice = form(&token);
    twice.push(("email".into(), "g@x.gov.br".into()));
    assert_eq!(browser.post("/conta/", &twice).await.status, 400, "a field sent twice");
    assert!(!browser.get("/conta/").await.body.contains("Forjado"), "nothing changed");
}

// -------------------------------------------------------------- password

#[tokio::test]
async fn a_password_change_ends_the_other_browsers_session_and_every_refresh_token() {
    let (app, _) = oauth_app().await;
    let mut here = signed_in_browser(&app, "ana", "ana-password").await;
    let mut there = signed_in_browser(&app, "ana", "ana-password").await;
    let (_, pair_refresh) = app.login("ana", "ana-password").await;
    let oauth_refresh =
        portal_tokens(&app, "ana-password").await["refresh_token"].as_str().expect("refresh").to_owned();

    let page = here.get("/conta/senha/").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("<a href=\"/conta/senha/\" aria-current=\"page\">Senha</a>"), "{}", page.body);
    let changed = change_password(&mut here, "ana-password", NEW_PASSWORD, NEW_PASSWORD).await;
    assert_eq!((changed.status, changed.location.as_deref()), (303, Some("/conta/senha/?alterada=1")));
    assert!(changed.set_cookies.iter().any(|c| c.starts_with("credencial_session=")), "a fresh session here");
    let done = here.get("/conta/senha/?alterada=1").await;
    assert!(done.body.contains("<p class=\"notice\" role=\"status\">Senha alterada."), "{}", done.body);
    assert_eq!(here.get("/conta/").await.status, 200, "this browser stays signed in");

    let gone = there.get("/conta/").await;
    assert_eq!((gone.status, gone.location.as_deref()), (303, Some("/conta/entrar/?next=%2Fconta%2F")));
    assert!(gone.set_cookies.iter().any(|c| c.starts_with("credencial_session=;")), "its cookie is cleared");
    let login = there.get(&portal_request("cpf", "s")).await;
    assert!(login.body.contains("name=\"password\"") && !login.body.contains("Autorizar acesso"), "{}", login.body);

    let r = app.post_json("/api/token/refresh/", &json!({"refresh": pair_refresh})).await;
    let (status, body) = status_and_json(r).await;
    assert_eq!((status, body["code"].as_str()), (401, Some("token_not_valid")), "{body}");
    let r = app
        .client
        .post(format!("{}/oauth/token/", app.address))
        .basic_auth("portal", Some(PORTAL_SECRET))
        .form(&[("grant_type", "refresh_token"), ("refresh_token", oauth_refresh.as_str())])
        .send()
        .await
        .expect("sent");
    let (status, body) = status_and_json(r).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_grant")), "{body}");

    let old = app.post_json("/api/token/pair/", &json!({"username": "ana", "password": "ana-password"})).await;
    assert_eq!(old.status(), 401);
    app.login("ana", NEW_PASSWORD).await;
}

#[tokio::test]
async fn a_wrong_current_password_or_a_bad_new_one_is_refused_and_changes_nothing() {
    let (app, _) = oauth_app().await;
    let mut browser = signed_in_browser(&app, "ana", "ana-password").await;
    let cases = [
        ("wrong-password", NEW_PASSWORD, NEW_PASSWORD, "password_atual", "A senha atual não confere."),
        ("", NEW_PASSWORD, NEW_PASSWORD, "password_atual", "Informe a senha atual."),
        ("ana-password", "", "", "password", "Informe a nova senha."),
        ("ana-password", NEW_PASSWORD, "outra coisa", "password_confirmacao", "não confere"),
        ("ana-password", "curta", "curta", "password", "pelo menos 8 caracteres"),
        ("ana-password", "password1", "password1", "password", "muito comum"),
        ("ana-password", "ana@example.gov.br", "ana@example.gov.br", "password", "ao seu e-mail"),
    ];
    for (current, new, confirmation, field, text) in cases {
        let answer = change_password(&mut browser, current, new, confirmation).await;
        assert_eq!(answer.status, 422, "{field}: {}", answer.body);
        let error = format!("<p class=\"field-error\" id=\"{field}-erro\">");
        let at = answer.body.find(&error).unwrap_or_else(|| panic!("{field}: {}", answer.body));
        assert!(answer.body[at..].contains(text), "{field} {text}: {}", answer.body);
        assert!(!answer.body.contains("ana-password") && !answer.body.contains(NEW_PASSWORD), "never echoed");
        assert!(!answer.set_cookies.iter().any(|c| c.starts_with("credencial_session=")));
    }
    assert_eq!(failures_on(&app, "username:ana").await, 1, "only the wrong current password counted");
    assert_eq!(browser.get("/conta/").await.status, 200, "still signed in");
    app.login("ana", "ana-password").await;
}

#[tokio::test]
async fn a_password_post_without_the_form_token_or_from_another_site_is_refused() {
    let (app, _) = oauth_app().await;
    let mut browser = signed_in_browser(&app, "ana", "ana-password").await;
    let form = fields(&[
        ("password_atual", "ana-password"),
        ("password", NEW_PASSWORD),
        ("password_confirmacao", NEW_PASSWORD),
    ]);
    assert_eq!(browser.post("/conta/senha/", &form).await.status, 403, "no token");
    let token = form_token(&browser.get("/conta/senha/").await);
    let with_token = with(form.clone(), &[("csrf_token", &token)]);
    let cross = browser
        .send(
            app.client
                .post(format!("{}/conta/senha/", app.address))
                .header("sec-fetch-site", "same-site")
                .form(&with_token),
        )
        .await;
    assert_eq!(cross.status, 403, "{}", cross.body);
    let nobody = Browser::new(&app).post("/conta/senha/", &with_token).await;
    assert_eq!(nobody.location.as_deref(), Some("/conta/entrar/?next=%2Fconta%2Fsenha%2F"));
    let nobody = Browser::new(&app).get("/conta/senha/").await;
    assert_eq!(nobody.status, 303);
    app.login("ana", "ana-password").await;
    assert!(hidden_fields(&browser.get("/conta/senha/").await.body).iter().any(|(k, _)| k == "csrf_token"));
}
