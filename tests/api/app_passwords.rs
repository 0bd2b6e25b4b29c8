//! Application passwords (issue 43), over real HTTP: made at
//! `/conta/seguranca/` (name and current password; shown once, no-store),
//! listed with their last use, revoked after a confirmation; accepted at
//! `/api/token/pair/` for an account with a second factor, and nowhere
//! else (the account's and the authorization endpoint's login forms,
//! re-authentication). Each refusal is written as the attempt it stops.

use credencial_domain::{JwtKeys, TokenCodec};
use serde_json::{json, Value};

use crate::account::{form_token, log_in_at_account, signed_in_browser};
use crate::helpers::{hidden_fields, spawn_app, status_and_json, unescape_html, Browser, Page, TestApp, SECRET};
use crate::second_factor::{enrol, PASSWORD};

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs() as i64
}

/// Posts `acao` (and `extra`) to the security page with its form token.
async fn act(browser: &mut Browser, acao: &str, extra: &[(&str, &str)]) -> Page {
    let token = form_token(&browser.get("/conta/seguranca/").await);
    let mut fields = vec![("csrf_token".to_owned(), token), ("acao".to_owned(), acao.to_owned())];
    fields.extend(extra.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    browser.post("/conta/seguranca/", &fields).await
}

/// The application password a result page shows.
fn shown_password(page: &Page) -> String {
    let start = page.body.find("<code class=\"api-token\">").expect("the new password is shown") + 24;
    let end = start + page.body[start..].find("</code>").expect("closed");
    unescape_html(&page.body[start..end])
}

/// Makes an application password named `name` for the browser's account.
async fn create(browser: &mut Browser, name: &str) -> String {
    let page = act(browser, "criar-senha-app", &[("nome", name), ("senha", PASSWORD)]).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(page.headers["cache-control"], "no-store", "the page carries a secret");
    assert!(page.body.contains("/api/token/pair/"), "says how a SUAP client uses it: {}", page.body);
    shown_password(&page)
}

/// `username`, with an authenticator app, signed in at the account pages.
async fn with_an_app(app: &TestApp, username: &str) -> Browser {
    app.add_user(username, PASSWORD, true).await;
    let mut browser = signed_in_browser(app, username, PASSWORD).await;
    enrol(&mut browser).await;
    browser
}

async fn pair(app: &TestApp, username: &str, password: &str) -> (u16, Value) {
    status_and_json(app.post_json("/api/token/pair/", &json!({"username": username, "password": password})).await).await
}

async fn refresh(app: &TestApp, token: &Value) -> (u16, Value) {
    status_and_json(app.post_json("/api/token/refresh/", &json!({"refresh": token})).await).await
}

async fn events(app: &TestApp, kind: &str) -> i64 {
    sqlx::query_scalar::<_, i64>("SELECT count(*) FROM security_events WHERE kind = $1")
        .bind(kind)
        .fetch_one(&app.db.pool)
        .await
        .expect("count")
}

#[tokio::test]
async fn an_application_password_buys_a_pair_for_an_account_with_a_factor_and_shows_its_last_use() {
    let app = spawn_app().await;
    let mut browser = with_an_app(&app, "lia").await;
    let password = create(&mut browser, "Cliente SUAP").await;
    assert!(password.starts_with("credapp-"), "{password}");
    assert_eq!(events(&app, "app_password_created").await, 1, "in the security activity");
    let stored: Vec<u8> = sqlx::query_scalar("SELECT password_hash FROM application_passwords")
        .fetch_one(&app.db.pool)
        .await
        .expect("row");
    assert_eq!(stored.len(), 32, "a hash is stored, never the password");
    let listed = browser.get("/conta/seguranca/").await;
    assert!(listed.body.contains("Cliente SUAP") && listed.body.contains("Último uso: nunca"), "{}", listed.body);
    assert!(!listed.body.contains(&password), "shown once");

    // The password alone is refused for this account; the application
    // password is enough, without a code.
    let (status, body) = pair(&app, "lia", PASSWORD).await;
    assert_eq!((status, body["code"].as_str()), (401, Some("second_factor_required")), "{body}");
    let (status, tokens) = pair(&app, "lia", &password).await;
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(tokens["username"], "lia");
    let verify = app.post_json("/api/token/verify/", &json!({"token": tokens["access"]})).await;
    assert_eq!(verify.status(), 200);
    let (status, refreshed) = refresh(&app, &tokens["refresh"]).await;
    assert_eq!(status, 200, "its family refreshes while it lives: {refreshed}");

    // The access token keeps simplejwt's shape; the refresh token carries
    // the application password (read by this service only).
    let codec = TokenCodec::new(JwtKeys::hmac(SECRET.as_bytes()).expect("secret"), 0).expect("codec");
    let access = codec.decode(tokens["access"].as_str().expect("access"), now()).expect("access");
    assert_eq!((access.app_password, access.amr), (None, None), "no private claim on the access token");
    let family = codec.decode(refreshed["refresh"].as_str().expect("refresh"), now()).expect("refresh");
    assert!(family.app_password.is_some(), "kept through rotations");
    assert_eq!(family.amr.as_deref(), Some(&["app".to_owned()][..]));

    let listed = browser.get("/conta/seguranca/").await;
    assert!(!listed.body.contains("Último uso: nunca"), "its last use is shown: {}", listed.body);
}

#[tokio::test]
async fn a_wrong_or_another_persons_application_password_is_refused_and_counts_as_a_wrong_password() {
    let app = spawn_app().await;
    let mut lia = with_an_app(&app, "lia").await;
    let mut bia = with_an_app(&app, "bia").await;
    let lias = create(&mut lia, "Cliente SUAP").await;
    let bias = create(&mut bia, "Script").await;

    // A guessed one of the right shape, and bia's own one named for lia.
    let guessed = "credapp-abcde-fghjk-mnpqr-stuvw-xyzab-cdefg";
    for wrong in [guessed, bias.as_str()] {
        let (status, body) = pair(&app, "lia", wrong).await;
        assert_eq!((status, body["code"].as_str()), (401, Some("authentication_failed")), "{body}");
    }
    // An unknown account answers alike.
    let (status, body) = pair(&app, "ninguem", &lias).await;
    assert_eq!((status, body["code"].as_str()), (401, Some("authentication_failed")), "{body}");
    // bia's still works for bia; lia's for lia.
    assert_eq!(pair(&app, "bia", &bias).await.0, 200);
    assert_eq!(pair(&app, "lia", &lias).await.0, 200);

    // Wrong ones spend the password's budget: after the limit, even the
    // right one waits.
    let mut last = 0;
    for _ in 0..10 {
        last = pair(&app, "lia", guessed).await.0;
        if last == 429 {
            break;
        }
    }
    assert_eq!(last, 429, "throttled like a password");
    assert_eq!(pair(&app, "lia", &lias).await.0, 429);
}

#[tokio::test]
async fn a_revoked_application_password_buys_nothing_and_its_families_stop_refreshing() {
    let app = spawn_app().await;
    let mut browser = with_an_app(&app, "lia").await;
    let password = create(&mut browser, "Cliente SUAP").await;
    let kept = create(&mut browser, "Outro").await;
    let (_, tokens) = pair(&app, "lia", &password).await;
    let (_, other) = pair(&app, "lia", &kept).await;
    let id: i64 = sqlx::query_scalar("SELECT id FROM application_passwords WHERE name = 'Cliente SUAP'")
        .fetch_one(&app.db.pool)
        .await
        .expect("id");

    // The revoke button asks first; the question page changes nothing.
    let asked = act(&mut browser, "revogar-senha-app", &[("id", &id.to_string())]).await;
    assert_eq!(asked.status, 200, "{}", asked.body);
    assert!(asked.body.contains("Revogar a senha de aplicativo «Cliente SUAP»?"), "{}", asked.body);
    assert_eq!(pair(&app, "lia", &password).await.0, 200, "not revoked yet");
    let confirmed = browser.post("/conta/seguranca/", &hidden_fields(&asked.body)).await;
    assert_eq!(confirmed.status, 200, "{}", confirmed.body);
    assert!(confirmed.body.contains("Senha de aplicativo revogada"), "{}", confirmed.body);
    assert_eq!(events(&app, "app_password_revoked").await, 1);

    let (status, body) = pair(&app, "lia", &password).await;
    assert_eq!((status, body["code"].as_str()), (401, Some("authentication_failed")), "{body}");
    let (status, body) = refresh(&app, &tokens["refresh"]).await;
    assert_eq!(status, 401, "the family it started ends: {body}");
    // The other application password's family goes on.
    assert_eq!(refresh(&app, &other["refresh"]).await.0, 200);

    // Revoking it again, or another person's, finds nothing.
    let again = act(&mut browser, "revogar-senha-app", &[("id", &id.to_string()), ("confirmado", "sim")]).await;
    assert_eq!(again.status, 404, "{}", again.body);
}

#[tokio::test]
async fn an_application_password_opens_no_browser_login_and_no_re_authentication() {
    let app = spawn_app().await;
    let mut browser = with_an_app(&app, "lia").await;
    let password = create(&mut browser, "Cliente SUAP").await;

    // The account's login form.
    let mut other = Browser::new(&app);
    let answer = log_in_at_account(&mut other, "/conta/", "lia", &password).await;
    assert_ne!(answer.status, 303, "not signed in: {}", answer.body);
    assert!(!answer.set_cookies.iter().any(|c| c.starts_with("credencial_session=")), "no session");

    // The login form of the authorization endpoint (an application's login).
    crate::oauth::register_clients(&app).await;
    let mut at_oauth = Browser::new(&app);
    let form = at_oauth.get(&crate::oauth::portal_request("dados_publicos", "s1")).await;
    assert_eq!(form.status, 200, "{}", form.body);
    let fields = crate::helpers::with(hidden_fields(&form.body), &[("username", "lia"), ("password", &password)]);
    let answer = at_oauth.post("/oauth/authorize/", &fields).await;
    assert_ne!(answer.status, 303, "not signed in: {}", answer.body);
    assert!(!answer.set_cookies.iter().any(|c| c.starts_with("credencial_session=")), "no session");

    // Re-authentication before a change of factors.
    let refused = act(&mut browser, "criar-senha-app", &[("nome", "Mais uma"), ("senha", &password)]).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    let count: i64 =
        sqlx::query_scalar("SELECT count(*) FROM application_passwords").fetch_one(&app.db.pool).await.expect("n");
    assert_eq!(count, 1);
}

#[tokio::test]
async fn creation_needs_the_current_password_a_short_name_and_a_same_site_form() {
    let app = spawn_app().await;
    let mut browser = with_an_app(&app, "lia").await;
    let count = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM application_passwords")
            .fetch_one(&app.db.pool)
            .await
            .expect("n")
    };

    let wrong = act(&mut browser, "criar-senha-app", &[("nome", "Cliente SUAP"), ("senha", "not it")]).await;
    assert_eq!(wrong.status, 422, "{}", wrong.body);
    assert!(!wrong.body.contains("<code class=\"api-token\">"), "nothing shown");
    let long = "x".repeat(61);
    let too_long = act(&mut browser, "criar-senha-app", &[("nome", &long), ("senha", PASSWORD)]).await;
    assert_eq!(too_long.status, 422, "{}", too_long.body);
    assert!(too_long.body.contains("no máximo 60 caracteres"), "{}", too_long.body);
    assert_eq!(count().await, 0);

    // Without the form's token, or from another site: refused.
    let missing = browser
        .post(
            "/conta/seguranca/",
            &[
                ("acao".into(), "criar-senha-app".into()),
                ("nome".into(), "X".into()),
                ("senha".into(), PASSWORD.into()),
            ],
        )
        .await;
    assert_eq!(missing.status, 403, "{}", missing.body);
    let token = form_token(&browser.get("/conta/seguranca/").await);
    let cross = browser
        .send(
            app.client.post(format!("{}/conta/seguranca/", app.address)).header("sec-fetch-site", "cross-site").form(
                &[("csrf_token", token.as_str()), ("acao", "criar-senha-app"), ("nome", "X"), ("senha", PASSWORD)],
            ),
        )
        .await;
    assert_eq!(cross.status, 403, "{}", cross.body);
    assert_eq!(count().await, 0);

    // The limit per account.
    for n in 0..10 {
        create(&mut browser, &format!("Programa {n}")).await;
    }
    let full = act(&mut browser, "criar-senha-app", &[("nome", "Mais um"), ("senha", PASSWORD)]).await;
    assert_eq!(full.status, 422, "{}", full.body);
    assert_eq!(count().await, 10);
}

#[tokio::test]
async fn making_and_revoking_one_are_told_by_mail() {
    let sink = credencial_adapters_upstream::testing::SmtpSink::start().await;
    let app = crate::recovery::app_mailing_to(&sink, |_| {}).await;
    let mut browser = signed_in_browser(&app, "lia", PASSWORD).await;
    enrol(&mut browser).await;
    let told = |subject: &'static str| {
        let pool = app.db.pool.clone();
        async move {
            sqlx::query_scalar::<_, i64>("SELECT count(*) FROM mail_outbox WHERE recipient LIKE $1 AND subject LIKE $2")
                .bind("%lia@example.gov.br%")
                .bind(format!("%{subject}%"))
                .fetch_one(&pool)
                .await
                .expect("count")
        }
    };
    create(&mut browser, "Cliente SUAP").await;
    assert_eq!(told("uma senha de aplicativo foi criada").await, 1);
    let id: i64 = sqlx::query_scalar("SELECT id FROM application_passwords").fetch_one(&app.db.pool).await.expect("id");
    let revoked = act(&mut browser, "revogar-senha-app", &[("id", &id.to_string()), ("confirmado", "sim")]).await;
    assert_eq!(revoked.status, 200, "{}", revoked.body);
    assert_eq!(told("uma senha de aplicativo foi revogada").await, 1);
}
