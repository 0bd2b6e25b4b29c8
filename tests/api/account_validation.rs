//! The tax-id validation page over real HTTP (`/conta/validacao/`), with
//! wiremock as the tax authority: a match validates the account and
//! `receita_federal` is answered from then on; a mismatch says so and
//! nothing more; the sixth attempt in a day is refused; a registry that is
//! down or not configured changes nothing and costs no attempt.

use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::account::{form_token, signed_in_browser};
use crate::helpers::{spawn_app_with, with, Browser, Page, TestApp};
use crate::profile::{answered_profile, app, consent_to_every_client, register_client, BRUNO_CPF};

const PASSWORD: &str = "senha-do-bruno-1";
const SCOPES: &str = "dados_publicos cpf receita_federal";
const MISMATCH: &str = "Os dados informados não conferem com o cadastro da Receita Federal.";

fn record() -> Value {
    json!({"nome": "BRUNO CARVALHO LIMA", "dtNascimento": "1991-07-21", "sexo": "M", "mae": "JOANA PEREIRA LIMA",
           "noMunicipio": "MOSSORO", "uf": "RN"})
}

/// bruno, with a CPF unless `cpf` is `None`, signed in on `app`.
async fn bruno_on(app: &TestApp, cpf: Option<&str>) -> (i64, Browser) {
    register_client(app, "host", SCOPES).await;
    let id = app.add_user("bruno", PASSWORD, true).await;
    sqlx::query("UPDATE users SET cpf = $1 WHERE id = $2").bind(cpf).bind(id).execute(&app.db.pool).await.expect("cpf");
    consent_to_every_client(app, id).await;
    (id, signed_in_browser(app, "bruno", PASSWORD).await)
}

/// The tax authority answers `status` with `body` for bruno's CPF, `times`
/// times exactly.
async fn registry_answers(app: &TestApp, status: u16, body: Value, times: u64) {
    Mock::given(method("GET"))
        .and(path(format!("/receita/cpf/{BRUNO_CPF}")))
        .respond_with(ResponseTemplate::new(status).set_body_json(body))
        .expect(times)
        .mount(&app.upstream)
        .await;
}

/// One attempt with the page's token.
async fn attempt(browser: &mut Browser, data_nascimento: &str, nome_mae: &str) -> Page {
    let page = browser.get("/conta/validacao/").await;
    assert_eq!(page.status, 200, "{}", page.body);
    let fields = [("data_nascimento", data_nascimento), ("nome_mae", nome_mae)];
    browser.post("/conta/validacao/", &with(vec![("csrf_token".into(), form_token(&page))], &fields)).await
}

/// The announced message of `page` (its `role="alert"` paragraph).
fn alert(page: &Page) -> String {
    let (_, rest) = page.body.split_once("role=\"alert\">").unwrap_or_else(|| panic!("no alert: {}", page.body));
    rest.split_once("</p>").expect("end").0.to_owned()
}

async fn validated(app: &TestApp, user: i64) -> bool {
    let crate::database::Flag(validated) = sqlx::query_scalar("SELECT receita_validated FROM users WHERE id = $1")
        .bind(user)
        .fetch_one(&app.db.pool)
        .await
        .expect("row");
    validated
}

async fn attempts(app: &TestApp, user: i64) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM tax_id_attempts WHERE user_id = $1")
        .bind(user)
        .fetch_one(&app.db.pool)
        .await
        .expect("count")
}

async fn receita_federal(app: &TestApp, user: i64) -> Value {
    answered_profile(app, user, SCOPES, "host").await["receita_federal"].clone()
}

#[tokio::test]
async fn a_match_validates_the_account_and_receita_federal_is_answered_from_then_on() {
    let app = app().await;
    let (bruno, mut browser) = bruno_on(&app, Some(BRUNO_CPF)).await;
    // One registry call: the comparison's record is the one the profile
    // then answers, from the scope cache.
    registry_answers(&app, 200, record(), 1).await;
    assert_eq!(
        receita_federal(&app, bruno).await,
        json!({"erro": "Os dados do usuário não foram validados na Receita Federal."})
    );
    let form = browser.get("/conta/validacao/").await;
    assert_eq!(form.headers["cache-control"], "no-store");
    assert!(form.body.contains("name=\"data_nascimento\"") && form.body.contains("name=\"nome_mae\""), "{}", form.body);
    assert!(form.body.contains("Você tem 5 tentativas nas próximas 24 horas."), "{}", form.body);

    let done = attempt(&mut browser, "1991-07-21", "  joana  PEREIRA líma ").await;
    assert_eq!((done.status, done.location.as_deref()), (303, Some("/conta/validacao/")), "{}", done.body);
    assert!(validated(&app, bruno).await);
    let page = browser.get("/conta/validacao/").await;
    assert!(page.body.contains("role=\"status\">Seu cadastro está validado pela Receita Federal."), "{}", page.body);
    assert!(!page.body.contains("<form method=\"post\" action=\"/conta/validacao/\""), "no form any more");
    assert_eq!(receita_federal(&app, bruno).await, record());
    let overview = browser.get("/conta/").await;
    assert!(overview.body.contains("Cadastro validado"), "{}", overview.body);
    // Posting again changes nothing.
    let token = form_token(&browser.get("/conta/sair/").await);
    let again = browser
        .post(
            "/conta/validacao/",
            &[
                ("csrf_token".into(), token),
                ("data_nascimento".into(), "2000-01-01".into()),
                ("nome_mae".into(), "Outra".into()),
            ],
        )
        .await;
    assert_eq!((again.status, again.location.as_deref()), (303, Some("/conta/validacao/")));
    assert_eq!(attempts(&app, bruno).await, 1);
    app.upstream.verify().await;
}

#[tokio::test]
async fn a_mismatch_says_so_without_naming_the_field_or_the_registry_s_values() {
    let app = app().await;
    let (bruno, mut browser) = bruno_on(&app, Some(BRUNO_CPF)).await;
    registry_answers(&app, 200, record(), 1).await;
    for (date, mae, left) in [("1990-01-02", "Maria Aparecida", 4), ("1991-07-21", "Maria Aparecida", 3)] {
        let page = attempt(&mut browser, date, mae).await;
        assert_eq!(page.status, 422, "{}", page.body);
        assert_eq!(alert(&page), format!("{MISMATCH} Restam {left} tentativas nas próximas 24 horas."));
        assert!(page.body.contains(&format!("value=\"{date}\"")) && page.body.contains("value=\"Maria Aparecida\""));
        for secret in ["JOANA", "Joana", "MOSSORO", "BRUNO CARVALHO"] {
            assert!(!page.body.contains(secret), "{secret} leaked: {}", page.body);
        }
    }
    assert!(!validated(&app, bruno).await);
    assert_eq!(attempts(&app, bruno).await, 2);
    assert_eq!(
        receita_federal(&app, bruno).await,
        json!({"erro": "Os dados do usuário não foram validados na Receita Federal."})
    );
}

#[tokio::test]
async fn the_sixth_attempt_in_a_day_is_refused_with_the_time_to_wait() {
    let app = app().await;
    let (bruno, mut browser) = bruno_on(&app, Some(BRUNO_CPF)).await;
    registry_answers(&app, 200, record(), 1).await;
    for _ in 0..4 {
        assert_eq!(attempt(&mut browser, "1990-01-02", "Maria").await.status, 422);
    }
    let fifth = attempt(&mut browser, "1990-01-02", "Maria").await;
    assert_eq!(fifth.status, 422, "{}", fifth.body);
    assert_eq!(
        alert(&fifth),
        format!("{MISMATCH} Você atingiu o limite de 5 tentativas em 24 horas. Tente novamente em 24 h.")
    );
    assert!(!fifth.body.contains("name=\"nome_mae\""), "no form once the attempts are used up");
    let page = browser.get("/conta/validacao/").await;
    assert_eq!(page.status, 200);
    assert_eq!(alert(&page), "Você atingiu o limite de 5 tentativas em 24 horas. Tente novamente em 24 h.");
    // The sixth, with the right data and the token of another page, is
    // refused before the registry is asked.
    let token = form_token(&browser.get("/conta/sair/").await);
    let sixth = browser
        .post(
            "/conta/validacao/",
            &[
                ("csrf_token".into(), token),
                ("data_nascimento".into(), "1991-07-21".into()),
                ("nome_mae".into(), "Joana Pereira Lima".into()),
            ],
        )
        .await;
    assert_eq!(sixth.status, 429, "{}", sixth.body);
    let wait: i64 = sixth.headers["retry-after"].to_str().expect("ascii").parse().expect("seconds");
    assert!((86_000..=86_400).contains(&wait), "{wait}");
    assert!(alert(&sixth).starts_with("Você atingiu o limite de 5 tentativas em 24 horas."), "{}", sixth.body);
    assert!(!validated(&app, bruno).await);
    assert_eq!(attempts(&app, bruno).await, 5);
    app.upstream.verify().await;
}

#[tokio::test]
async fn a_registry_that_fails_changes_nothing_and_costs_no_attempt() {
    let app = app().await;
    let (bruno, mut browser) = bruno_on(&app, Some(BRUNO_CPF)).await;
    registry_answers(&app, 500, json!({"detail": "erro"}), 2).await;
    for _ in 0..2 {
        let page = attempt(&mut browser, "1991-07-21", "Joana Pereira Lima").await;
        assert_eq!(page.status, 503, "{}", page.body);
        assert!(page.headers.contains_key("retry-after"));
        assert_eq!(
            alert(&page),
            "O serviço da Receita Federal está indisponível no momento. Nada foi alterado e esta tentativa não foi \
             contada. Tente novamente mais tarde."
        );
        assert!(page.body.contains("value=\"Joana Pereira Lima\""), "the form keeps what was typed");
        assert!(page.body.contains("Você tem 5 tentativas"), "{}", page.body);
    }
    assert!(!validated(&app, bruno).await);
    assert_eq!(attempts(&app, bruno).await, 0);
    app.upstream.verify().await;
}

#[tokio::test]
async fn a_registry_with_nothing_listening_or_not_configured_changes_nothing() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    for receita in [Some(crate::helpers::base_url(format!("http://127.0.0.1:{closed}/receita"))), None] {
        let app = spawn_app_with(|s| {
            s.registries.receita_base_url = receita.clone();
            s.registries.receita_timeout_ms = 300;
        })
        .await;
        let (bruno, mut browser) = bruno_on(&app, Some(BRUNO_CPF)).await;
        let page = attempt(&mut browser, "1991-07-21", "Joana Pereira Lima").await;
        assert_eq!(page.status, 503, "{receita:?}: {}", page.body);
        assert!(alert(&page).ends_with("Tente novamente mais tarde."), "{}", page.body);
        assert!(!validated(&app, bruno).await);
        assert_eq!(attempts(&app, bruno).await, 0);
    }
}

#[tokio::test]
async fn an_account_without_cpf_is_told_so_and_nothing_is_asked() {
    let app = app().await;
    let (bruno, mut browser) = bruno_on(&app, None).await;
    registry_answers(&app, 200, record(), 0).await;
    let page = browser.get("/conta/validacao/").await;
    assert_eq!(page.status, 200);
    assert!(alert(&page).starts_with("Sua conta não tem um CPF válido cadastrado"), "{}", page.body);
    assert!(!page.body.contains("name=\"nome_mae\""));
    let token = form_token(&browser.get("/conta/sair/").await);
    let posted = browser
        .post(
            "/conta/validacao/",
            &[
                ("csrf_token".into(), token),
                ("data_nascimento".into(), "1991-07-21".into()),
                ("nome_mae".into(), "Joana".into()),
            ],
        )
        .await;
    assert_eq!(posted.status, 409, "{}", posted.body);
    assert_eq!(attempts(&app, bruno).await, 0);
    app.upstream.verify().await;
}

#[tokio::test]
async fn forged_cross_site_and_junk_posts_are_refused_before_any_attempt() {
    let app = app().await;
    let (bruno, mut browser) = bruno_on(&app, Some(BRUNO_CPF)).await;
    registry_answers(&app, 200, record(), 0).await;
    let token = form_token(&browser.get("/conta/validacao/").await);
    let right = |csrf: &str| {
        vec![
            ("csrf_token".to_owned(), csrf.to_owned()),
            ("data_nascimento".to_owned(), "1991-07-21".to_owned()),
            ("nome_mae".to_owned(), "Joana Pereira Lima".to_owned()),
        ]
    };
    assert_eq!(browser.post("/conta/validacao/", &right("forjado")).await.status, 403);
    assert_eq!(browser.post("/conta/validacao/", &right("")).await.status, 403);
    let url = format!("{}/conta/validacao/", app.address);
    let cross = browser.send(app.client.post(&url).header("sec-fetch-site", "cross-site").form(&right(&token))).await;
    assert_eq!(cross.status, 403, "{}", cross.body);
    let json = browser.send(app.client.post(&url).header("content-type", "application/json").body("[")).await;
    assert_eq!(json.status, 400);
    let repeated = browser.post("/conta/validacao/", &with(right(&token), &[("nome_mae", "Outra")])).await;
    assert_eq!(repeated.status, 400, "{}", repeated.body);
    let malformed = browser
        .post(
            "/conta/validacao/",
            &[
                ("csrf_token".into(), token.clone()),
                ("data_nascimento".into(), "21/07/1991".into()),
                ("nome_mae".into(), " ".into()),
            ],
        )
        .await;
    assert_eq!(malformed.status, 422, "{}", malformed.body);
    assert!(malformed.body.contains("id=\"erro-data_nascimento\">Informe uma data válida"), "{}", malformed.body);
    assert!(malformed.body.contains("id=\"erro-nome_mae\">Informe o nome da mãe."), "{}", malformed.body);
    let mut signed_out = Browser::new(&app);
    let answer = signed_out.post("/conta/validacao/", &right(&token)).await;
    assert_eq!((answer.status, answer.location.as_deref()), (303, Some("/conta/entrar/?next=%2Fconta%2Fvalidacao%2F")));
    assert!(!validated(&app, bruno).await);
    assert_eq!(attempts(&app, bruno).await, 0);
    app.upstream.verify().await;
}
