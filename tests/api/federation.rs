//! "Entrar com gov.br" end to end, through the demo's gov.br sandbox
//! (`/sandbox/govbr/`, gov.br-shaped ID tokens over real HTTP): a new
//! account, a link to a proven CPF, a link to a declared CPF confirmed by
//! the password, the level refreshed at each login and validating the
//! registration, the step-up by level (asked by a request or required by
//! the application), logout through gov.br, unlinking;
//! and the refusals — another browser's or a replayed callback, a cancelled
//! login, a provider that is down, a provider setting that is wrong.

use credencial_domain::admin::{Actor, AuditAction, AuditTarget, NewAuditEntry};
use credencial_domain::federation::ReliabilityLevel;
use credencial_domain::oauth::ClientId;
use credencial_domain::UserId;
use credencial_ports::OAuthClientUpdate;

use crate::helpers::{hidden_fields, spawn_app_with, spawn_demo, with, Browser, Page, TestDatabase};

const ANA: &str = "52998224725";
const BRUNO: &str = "12345678909";
const CARLA: &str = "11144477735";

/// A login through the sandbox in `browser`, going on to `next`, as
/// `cpf` at gov.br `level` (`bronze`, `silver`, `gold`) by `method`
/// (`senha`, `app`, `banco`, `certificado`): the page the callback answers.
async fn govbr_login(browser: &mut Browser, next: &str, cpf: &str, level: &str, method: &str) -> Page {
    let callback = govbr_callback(browser, next, &[("cidadao", cpf), ("nivel", level), ("metodo", method)]).await;
    browser.get(&callback).await
}

/// The sandbox's way back to us (not followed yet) after `choices`.
async fn govbr_callback(browser: &mut Browser, next: &str, choices: &[(&str, &str)]) -> String {
    let query: String = url::form_urlencoded::Serializer::new(String::new()).append_pair("next", next).finish();
    let start = browser.get(&format!("/conta/entrar/externo/govbr/?{query}")).await;
    assert_eq!(start.status, 303, "{}", start.body);
    assert!(start.set_cookies.iter().any(|c| c.starts_with("credencial_federado=") && c.contains("HttpOnly")));
    let authorize = start.location.expect("to the sandbox");
    assert!(authorize.starts_with(&format!("{}/sandbox/govbr/authorize?", browser.base)), "{authorize}");
    for required in ["state=", "nonce=", "code_challenge=", "code_challenge_method=S256", "govbr_confiabilidades"] {
        assert!(authorize.contains(required), "{required} in {authorize}");
    }
    let page = browser.get(&authorize).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let mut fields = with(hidden_fields(&page.body), choices);
    if !choices.iter().any(|(k, _)| *k == "acao") {
        fields.push(("acao".into(), "autorizar".into()));
    }
    let back = browser.post("/sandbox/govbr/authorize", &fields).await;
    assert_eq!(back.status, 302, "{}", back.body);
    back.location.expect("back to us")
}

/// Where the "Entrar com gov.br" link of a level page comes back to: the
/// authorization request that asked for the level.
fn govbr_link_next(level_page: &Page) -> String {
    let next = crate::helpers::unescape_html(
        level_page
            .body
            .split("href=\"/conta/entrar/externo/govbr/?next=")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .expect("the gov.br link"),
    );
    let next: String =
        url::form_urlencoded::parse(format!("next={next}").as_bytes()).next().expect("next").1.into_owned();
    assert!(next.starts_with("/oauth/authorize/?"), "{next}");
    next
}

/// The id of the account with `cpf`.
async fn account_of(db: &TestDatabase, cpf: &str) -> UserId {
    let cpf = credencial_domain::Cpf::parse(cpf).expect("cpf");
    let found = db.storage().federated_links.find("govbr", "nobody", Some(&cpf), None).await.expect("find");
    found.by_cpf.expect("an account holds the CPF").user
}

/// The gov.br level stored for `user`'s link.
async fn level_of(db: &TestDatabase, user: UserId) -> Option<ReliabilityLevel> {
    let links = db.storage().federated_links.links_of(user).await.expect("links");
    links.iter().find(|l| l.provider == "govbr").and_then(|l| l.reliability.as_ref()).map(|r| r.level)
}

async fn validated(db: &TestDatabase, user: UserId) -> bool {
    db.storage().profiles.own_profile(user).await.expect("profile").expect("exists").receita_validated
}

#[tokio::test]
async fn a_first_govbr_login_makes_an_account_without_a_password_that_carries_the_level() {
    let (mut browser, db) = spawn_demo(|_| {}).await;
    let login = browser.get("/conta/entrar/").await;
    assert!(login.body.contains("/conta/entrar/externo/govbr/?next="), "the gov.br button");
    assert!(login.body.contains("Entrar com <strong>gov.br</strong>"));

    let page = govbr_login(&mut browser, "/conta/", CARLA, "silver", "app").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("Conta criada"), "{}", page.body);
    assert!(page.set_cookies.iter().any(|c| c.starts_with("credencial_session=")));
    assert!(page.set_cookies.iter().any(|c| c.starts_with("credencial_federado=;") && c.contains("Max-Age=0")));

    let overview = browser.get("/conta/").await;
    assert_eq!(overview.status, 200);
    assert!(overview.body.contains("Carla Mendes Rocha"));
    let carla = account_of(&db, CARLA).await;
    assert_eq!(level_of(&db, carla).await, Some(ReliabilityLevel::Prata));
    assert!(validated(&db, carla).await, "prata validates the registration by default");

    let security = browser.get("/conta/seguranca/").await;
    assert!(security.body.contains("Contas vinculadas") && security.body.contains("nível prata"), "{}", security.body);
    assert!(security.body.contains("Conta vinculada a gov.br"), "the link is in the activity");
    assert!(security.body.contains("Entrada com gov.br"), "the login is in the activity, naming gov.br");

    // No password opens the account.
    let mut other = Browser::new_at(&browser.base, browser.client.clone());
    let form = other.get("/conta/entrar/").await;
    let fields = with(hidden_fields(&form.body), &[("username", CARLA), ("password", "!federated")]);
    let refused = other.post("/conta/entrar/", &fields).await;
    assert_eq!(refused.status, 200, "the form again");
    assert!(refused.body.contains("Usuário ou senha inválidos"), "{}", refused.body);
}

/// The login into the account holding the CPF that the confirmation page
/// `page` asks for, as `username` with `password`: the answer of the
/// login form's POST (303 to the link's page when right).
async fn log_into_the_account(browser: &mut Browser, page: &Page, username: &str, password: &str) -> Page {
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("Confirme a sua conta"), "{}", page.body);
    assert!(page.set_cookies.iter().any(|c| c.starts_with("credencial_vinculo=") && c.contains("HttpOnly")));
    assert!(!page.set_cookies.iter().any(|c| c.starts_with("credencial_session=")), "no session before the login");
    let href = page.body.split("href=\"/conta/entrar/?next=").nth(1).and_then(|r| r.split('"').next()).expect("link");
    let form = browser.get(&format!("/conta/entrar/?next={href}")).await;
    let fields = with(hidden_fields(&form.body), &[("username", username), ("password", password)]);
    browser.post("/conta/entrar/", &fields).await
}

/// A first login through gov.br of `cpf` at `level` into the account that
/// holds the CPF (`username`, `password`): the page after the link.
async fn govbr_link(browser: &mut Browser, cpf: &str, level: &str, username: &str, password: &str) -> Page {
    let page = govbr_login(browser, "/conta/", cpf, level, "certificado").await;
    let logged_in = log_into_the_account(browser, &page, username, password).await;
    assert_eq!(logged_in.status, 303, "{}", logged_in.body);
    assert_eq!(logged_in.location.as_deref(), Some("/conta/entrar/vincular/"));
    browser.get("/conta/entrar/vincular/").await
}

#[tokio::test]
async fn a_govbr_login_links_the_account_holding_the_cpf_after_its_login_and_refreshes_the_level() {
    let (mut browser, db) = spawn_demo(|_| {}).await;
    let ana = account_of(&db, ANA).await;
    let page = govbr_link(&mut browser, ANA, "gold", "ana", "ana-demo-2026").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("Conta vinculada"), "{}", page.body);
    assert!(!page.body.contains("comprovado"), "her CPF was proven already");
    assert!(page.set_cookies.iter().any(|c| c.starts_with("credencial_vinculo=;") && c.contains("Max-Age=0")));
    assert_eq!(level_of(&db, ana).await, Some(ReliabilityLevel::Ouro));

    // The next login goes straight on, and reads the level again.
    let mut again = Browser::new_at(&browser.base, browser.client.clone());
    let page = govbr_login(&mut again, "/conta/sessoes/", ANA, "bronze", "senha").await;
    assert_eq!(page.status, 303, "{}", page.body);
    assert_eq!(page.location.as_deref(), Some("/conta/sessoes/"));
    assert_eq!(level_of(&db, ana).await, Some(ReliabilityLevel::Bronze));
    assert!(validated(&db, ana).await, "a lower level never takes a validation back");
}

#[tokio::test]
async fn a_declared_cpf_is_linked_only_after_a_login_into_its_account_and_is_then_proven() {
    let (mut browser, db) = spawn_demo(|_| {}).await;
    let bruno = account_of(&db, BRUNO).await;
    assert!(!validated(&db, bruno).await);
    let page = govbr_login(&mut browser, "/conta/", BRUNO, "silver", "senha").await;
    assert!(page.body.contains("comprovado"), "he is told the link will prove his CPF: {}", page.body);

    let wrong = log_into_the_account(&mut browser, &page, "bruno", "errada").await;
    assert_eq!(wrong.status, 200, "the login form again");
    assert_eq!(level_of(&db, bruno).await, None, "nothing linked");
    // Without a session the link's page sends to the login form.
    assert_eq!(browser.get("/conta/entrar/vincular/").await.status, 303);
    assert_eq!(level_of(&db, bruno).await, None);

    let fields = with(hidden_fields(&wrong.body), &[("username", "bruno"), ("password", "bruno-demo-2026")]);
    let right = browser.post("/conta/entrar/", &fields).await;
    assert_eq!(right.location.as_deref(), Some("/conta/entrar/vincular/"), "{}", right.body);
    let linked = browser.get("/conta/entrar/vincular/").await;
    assert_eq!(linked.status, 200, "{}", linked.body);
    assert!(linked.body.contains("comprovado"), "he is told his CPF is proven now: {}", linked.body);
    assert_eq!(level_of(&db, bruno).await, Some(ReliabilityLevel::Prata));
    assert!(validated(&db, bruno).await);

    // The waiting link was used up.
    assert_eq!(browser.get("/conta/entrar/vincular/").await.status, 400);
}

#[tokio::test]
async fn a_waiting_link_is_never_made_for_another_account_or_in_another_browser() {
    let (mut browser, db) = spawn_demo(|_| {}).await;
    let page = govbr_login(&mut browser, "/conta/", ANA, "silver", "senha").await;
    // Another browser with a session of its own has no waiting link.
    let mut other = Browser::new_at(&browser.base, browser.client.clone());
    let form = other.get("/conta/entrar/").await;
    let fields = with(hidden_fields(&form.body), &[("username", "ana"), ("password", "ana-demo-2026")]);
    other.post("/conta/entrar/", &fields).await;
    assert_eq!(other.get("/conta/entrar/vincular/").await.status, 400);
    // bruno logs in where ana's link waits: it is dropped, not made.
    let logged_in = log_into_the_account(&mut browser, &page, "bruno", "bruno-demo-2026").await;
    assert_eq!(logged_in.status, 303);
    let refused = browser.get("/conta/entrar/vincular/").await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert!(refused.body.contains("não é a que tem este CPF"), "{}", refused.body);
    assert_eq!(level_of(&db, account_of(&db, ANA).await).await, None);
    assert_eq!(level_of(&db, account_of(&db, BRUNO).await).await, None);
}

#[tokio::test]
async fn a_callback_is_refused_in_another_browser_and_the_second_time() {
    let (mut browser, _db) = spawn_demo(|_| {}).await;
    let callback =
        govbr_callback(&mut browser, "/conta/", &[("cidadao", ANA), ("nivel", "gold"), ("metodo", "senha")]).await;

    let mut attacker = Browser::new_at(&browser.base, browser.client.clone());
    let refused = attacker.get(&callback).await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert!(refused.body.contains("não corresponde a uma entrada iniciada neste navegador"));
    assert!(!refused.set_cookies.iter().any(|c| c.starts_with("credencial_session=")));

    // Whoever sees the callback URL (a log, a shared screen) cannot plant
    // the browser's cookie from it: the cookie holds a binding of the
    // browser's own, not the state the URL carries (RFC 9700 §4.5).
    let state = url::Url::parse(&callback)
        .expect("an absolute URL")
        .query_pairs()
        .find(|(k, _)| k == "state")
        .map(|(_, v)| v.into_owned())
        .expect("state");
    let planted = attacker.client.get(&callback).header("cookie", format!("credencial_federado={state}"));
    let refused = attacker.send(planted).await;
    assert_eq!(refused.status, 400, "a stolen callback URL signs nobody in: {}", refused.body);
    assert!(!refused.set_cookies.iter().any(|c| c.starts_with("credencial_session=")));

    let done = browser.get(&callback).await;
    assert_eq!(done.status, 200, "the browser that started it still can: {}", done.body);
    let replay = browser.get(&callback).await;
    assert_eq!(replay.status, 400, "a state is used once");
}

#[tokio::test]
async fn a_login_cancelled_at_govbr_is_a_clear_page() {
    let (mut browser, _db) = spawn_demo(|_| {}).await;
    let callback = govbr_callback(&mut browser, "/conta/", &[("acao", "cancelar")]).await;
    assert!(callback.contains("error=access_denied"), "{callback}");
    let page = browser.get(&callback).await;
    assert_eq!(page.status, 400, "{}", page.body);
    assert!(page.body.contains("Entrada cancelada"));
}

#[tokio::test]
async fn an_application_asking_for_prata_sends_a_bronze_login_through_govbr_again() {
    let (mut browser, _db) = spawn_demo(|_| {}).await;
    let page = govbr_login(&mut browser, "/conta/", CARLA, "bronze", "senha").await;
    assert_eq!(page.status, 200, "{}", page.body);
    let to_app = browser.get("/auth/login/").await;
    let authorize = to_app.location.expect("to the provider");
    let path = authorize.trim_start_matches(&browser.base).to_owned();
    let demanding = format!("{path}&acr_values=urn%3Acredencial%3Aacr%3Agovbr%3Aprata");

    let level = browser.get(&demanding).await;
    assert_eq!(level.status, 403, "{}", level.body);
    assert!(level.body.contains("nível <strong>prata</strong>"), "{}", level.body);
    assert!(level.body.contains("https://confiabilidades.acesso.gov.br/"), "where to raise it");
    // A lower demand is met by the bronze login.
    let without = browser.get(&format!("{path}&acr_values=urn%3Acredencial%3Aacr%3Agovbr%3Abronze")).await;
    assert_ne!(without.status, 403, "bronze is met: {}", without.body);

    let next = govbr_link_next(&level);
    let page = govbr_login(&mut browser, &next, CARLA, "silver", "senha").await;
    assert_eq!(page.status, 303, "{}", page.body);
    let back = browser.get(page.location.as_deref().expect("back to the request")).await;
    assert_ne!(back.status, 403, "prata meets the demand: {}", back.body);
}

#[tokio::test]
async fn logging_out_of_a_govbr_session_ends_it_here_and_goes_through_govbr() {
    let (mut browser, _db) = spawn_demo(|_| {}).await;
    govbr_login(&mut browser, "/conta/", CARLA, "silver", "senha").await;
    let session = browser.jar.get("credencial_session").cloned().expect("a session");
    let form = browser.get("/conta/sair/").await;
    let out = browser.post("/conta/sair/", &hidden_fields(&form.body)).await;
    assert_eq!(out.status, 303, "{}", out.body);
    let location = out.location.expect("Location");
    let expected = format!("{}/sandbox/govbr/logout?post_logout_redirect_uri=", browser.base);
    assert!(location.starts_with(&expected), "{location}");
    let back = browser.get(&location).await;
    assert_eq!(back.location.as_deref(), Some(format!("{}/conta/entrar/", browser.base).as_str()));

    let mut copy = Browser::new_at(&browser.base, browser.client.clone());
    copy.jar.insert("credencial_session".into(), session);
    assert_eq!(copy.get("/conta/").await.status, 303, "the session ended on the server");

    // A password session logs out locally.
    let mut local = Browser::new_at(&browser.base, browser.client.clone());
    let form = local.get("/conta/entrar/").await;
    local
        .post("/conta/entrar/", &with(hidden_fields(&form.body), &[("username", "ana"), ("password", "ana-demo-2026")]))
        .await;
    let form = local.get("/conta/sair/").await;
    let out = local.post("/conta/sair/", &hidden_fields(&form.body)).await;
    assert_eq!(out.location.as_deref(), Some("/conta/entrar/"));
}

#[tokio::test]
async fn a_link_is_undone_only_while_another_way_to_log_in_remains() {
    let (mut browser, db) = spawn_demo(|_| {}).await;
    govbr_login(&mut browser, "/conta/", CARLA, "silver", "senha").await;
    let security = browser.get("/conta/seguranca/").await;
    assert!(security.body.contains("A sua conta não tem senha"), "{}", security.body);
    assert!(!security.body.contains("Desfazer o vínculo"), "no button for what would be refused");
    let token = hidden_fields(&security.body).into_iter().find(|(k, _)| k == "csrf_token").expect("token").1;
    let refused = browser
        .post(
            "/conta/seguranca/vinculos/",
            &[
                ("csrf_token".into(), token.clone()),
                ("provedor".into(), "govbr".into()),
                ("confirmado".into(), "sim".into()),
            ],
        )
        .await;
    assert_eq!(refused.status, 409, "her only way in: {}", refused.body);
    assert!(level_of(&db, account_of(&db, CARLA).await).await.is_some());

    let mut ana = Browser::new_at(&browser.base, browser.client.clone());
    govbr_link(&mut ana, ANA, "silver", "ana", "ana-demo-2026").await;
    let security = ana.get("/conta/seguranca/").await;
    let token = hidden_fields(&security.body).into_iter().find(|(k, _)| k == "csrf_token").expect("token").1;
    let forged = ana
        .post("/conta/seguranca/vinculos/", &[("csrf_token".into(), "x".into()), ("provedor".into(), "govbr".into())])
        .await;
    assert_eq!(forged.status, 403, "a form without the session's token: {}", forged.body);
    // The button asks first, and the link stays until the confirmation.
    let asked = ana
        .post("/conta/seguranca/vinculos/", &[("csrf_token".into(), token), ("provedor".into(), "govbr".into())])
        .await;
    assert_eq!(asked.status, 200, "{}", asked.body);
    assert!(asked.body.contains("<h1>Desfazer o vínculo com gov.br?</h1>"), "{}", asked.body);
    let ana_id = account_of(&db, ANA).await;
    assert!(level_of(&db, ana_id).await.is_some(), "nothing undone before the confirmation");
    let done = ana.post("/conta/seguranca/vinculos/", &hidden_fields(&asked.body)).await;
    assert_eq!(done.status, 303, "{}", done.body);
    assert_eq!(level_of(&db, ana_id).await, None, "the link is gone");
    let security = ana.get("/conta/seguranca/").await;
    assert!(security.body.contains("Vínculo com gov.br desfeito"), "in the activity");
}

#[tokio::test]
async fn a_provider_that_is_down_is_a_clear_page_and_nothing_else() {
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    let app = spawn_app_with(|s| {
        s.mail.public_url = Some(crate::helpers::issuer_url("http://127.0.0.1:9"));
        s.federation.providers = vec![credencial::settings::ProviderSettings {
            id: "govbr".into(),
            name: None,
            profile: "govbr".into(),
            issuer: format!("http://127.0.0.1:{port}/"),
            client_id: "cliente".into(),
            client_secret: "segredo".to_owned().into(),
            scopes: None,
            link_by: None,
            algorithms: None,
            logout_url: None,
            timeout_ms: Some(500),
            satisfies_second_factor: None,
        }];
    })
    .await;
    let mut browser = Browser::new(&app);
    let page = browser.get("/conta/entrar/externo/govbr/?next=/conta/").await;
    assert_eq!(page.status, 502, "{}", page.body);
    assert!(page.body.contains("Provedor indisponível"));
    let unknown = browser.get("/conta/entrar/externo/outro/").await;
    assert_eq!(unknown.status, 404, "{}", unknown.body);
    let no_state = browser.get("/conta/entrar/externo/govbr/retorno/?code=x&state=y").await;
    assert_eq!(no_state.status, 400, "{}", no_state.body);
}

/// The settings of a standard provider: another credencial at `issuer`,
/// where this one is the demo's `demo-host` client, linking by verified
/// address.
fn credencial_upstream(issuer: &str) -> credencial::settings::ProviderSettings {
    credencial::settings::ProviderSettings {
        id: "credencial".into(),
        name: Some("Credencial da Universidade".into()),
        profile: "oidc".into(),
        issuer: issuer.into(),
        client_id: credencial::demo::DEMO_CLIENT_ID.into(),
        client_secret: credencial::demo::DEMO_CLIENT_SECRET.to_owned().into(),
        scopes: Some(vec!["openid".into(), "email".into()]),
        link_by: Some("email".into()),
        algorithms: None,
        logout_url: None,
        timeout_ms: Some(2_000),
        satisfies_second_factor: None,
    }
}

async fn set_email_verified(db: &TestDatabase, username: &str, verified: bool) {
    let sql =
        format!("UPDATE users SET email_verified = {} WHERE username = $1", if verified { "TRUE" } else { "FALSE" });
    sqlx::query(&sql).bind(username).execute(&db.pool).await.expect("update");
}

/// A login at `downstream` through the upstream credencial where
/// `upstream` is logged in: the page `downstream`'s callback answers.
async fn login_through(downstream: &mut Browser, upstream: &mut Browser) -> Page {
    let start = downstream.get("/conta/entrar/externo/credencial/?next=/conta/").await;
    assert_eq!(start.status, 303, "{}", start.body);
    let authorize = start.location.expect("to the upstream");
    assert!(authorize.starts_with(&format!("{}/oauth/authorize", upstream.base)), "{authorize}");
    let page = upstream.get(&authorize).await;
    let back = match page.status {
        302 => page.location.expect("back"),
        200 => crate::oauth::decide(upstream, &page, "approve").await,
        other => panic!("{other}: {}", page.body),
    };
    assert!(back.starts_with(&format!("{}/conta/entrar/externo/credencial/retorno/", downstream.base)), "{back}");
    downstream.get(&back).await
}

#[tokio::test]
async fn another_credencial_is_an_upstream_that_links_by_a_verified_address_only() {
    let (mut upstream, upstream_db) = spawn_demo(|_| {}).await;
    let issuer = upstream.base.clone();
    let (mut downstream, downstream_db) =
        spawn_demo(|s| s.federation.providers = vec![credencial_upstream(&issuer)]).await;
    // The upstream knows this service's callback.
    let storage = upstream_db.storage();
    let id = credencial_domain::oauth::ClientId::parse(credencial::demo::DEMO_CLIENT_ID).expect("id");
    let callback = format!("{}/conta/entrar/externo/credencial/retorno/", downstream.base);
    let changes = credencial_ports::OAuthClientUpdate {
        redirect_uris: Some(vec![format!("{issuer}/auth/callback/"), callback]),
        ..Default::default()
    };
    let entry = credencial_application::admin::audit_entry(
        &credencial_domain::admin::Actor::Cli { os_user: "teste".into() },
        credencial_domain::admin::AuditAction::ClientUpdate,
        credencial_domain::admin::AuditTarget::Client(id.clone()),
    );
    storage.clients.update(&id, changes, &entry).await.expect("update").expect("the demo client");
    let login = downstream.get("/conta/entrar/").await;
    assert!(login.body.contains("Entrar com Credencial da Universidade"), "the provider's button by name");

    // ana logs in upstream with her password.
    let form = upstream.get("/conta/entrar/").await;
    let fields = with(hidden_fields(&form.body), &[("username", "ana"), ("password", "ana-demo-2026")]);
    assert_eq!(upstream.post("/conta/entrar/", &fields).await.status, 303);

    // An address the upstream never verified finds nothing.
    set_email_verified(&upstream_db, "ana", false).await;
    let page = login_through(&mut downstream, &mut upstream).await;
    assert_eq!(page.status, 403, "{}", page.body);
    assert!(page.body.contains("não informou o dado que identifica a sua conta"), "{}", page.body);

    // Verified upstream, but never confirmed here: no link either.
    set_email_verified(&upstream_db, "ana", true).await;
    let page = login_through(&mut downstream, &mut upstream).await;
    assert_eq!(page.status, 403, "{}", page.body);
    assert!(page.body.contains("nunca confirmou esse endereço"), "{}", page.body);

    // Confirmed on both sides: linked, and the session says `fed`.
    set_email_verified(&downstream_db, "ana", true).await;
    let page = login_through(&mut downstream, &mut upstream).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("Sua conta foi vinculada a Credencial da Universidade"), "{}", page.body);
    let sessions = downstream.get("/conta/sessoes/").await;
    assert!(sessions.body.contains("provedor de identidade externo"), "{}", sessions.body);
    let ana = downstream_db.storage().users.find_credentials("ana").await.expect("read").expect("ana").id;
    let links = downstream_db.storage().federated_links.links_of(ana).await.expect("links");
    assert_eq!(links.len(), 1);
    assert_eq!((links[0].provider.as_str(), links[0].proves_cpf, &links[0].reliability), ("credencial", false, &None));
}

#[tokio::test]
async fn applications_granted_the_cpf_read_how_govbr_vouched_for_it() {
    let (mut browser, _db) = spawn_demo(|_| {}).await;
    govbr_link(&mut browser, ANA, "gold", "ana", "ana-demo-2026").await;
    // The demo's host application maps the whole profile (`fulljson`).
    let authorize = browser.get("/auth/login/").await.location.expect("to the provider");
    let consent = browser.get(&authorize).await;
    assert_eq!(consent.status, 200, "{}", consent.body);
    let callback = crate::oauth::decide(&mut browser, &consent, "approve").await;
    let me = browser.get(&callback).await;
    let me = browser.get(me.location.as_deref().expect("to /auth/me/")).await;
    let text = crate::helpers::unescape_html(&me.body);
    assert!(text.contains("confiabilidade_govbr"), "{text}");
    assert!(text.contains(r#""nivel":"ouro""#) || text.contains(r#""nivel": "ouro""#), "{text}");
    assert!(text.contains("801"), "the seal: {text}");
}

#[tokio::test]
async fn an_application_whose_minimum_level_is_prata_sends_a_bronze_login_through_govbr_again() {
    let (mut browser, db) = spawn_demo(|_| {}).await;
    // The demo's host application requires prata (as the panel or
    // `credencial client update --minimum-govbr-level prata` set it).
    let host = ClientId::parse(credencial::demo::DEMO_CLIENT_ID).expect("id");
    let entry = NewAuditEntry::new(
        Actor::Cli { os_user: "test".into() },
        AuditAction::ClientUpdate,
        AuditTarget::Client(host.clone()),
    )
    .with("minimum_govbr_level", "prata");
    let prata = OAuthClientUpdate { minimum_govbr_level: Some(Some(ReliabilityLevel::Prata)), ..Default::default() };
    db.storage().clients.update(&host, prata, &entry).await.expect("update").expect("the demo's client");

    let page = govbr_login(&mut browser, "/conta/", CARLA, "bronze", "senha").await;
    assert_eq!(page.status, 200, "{}", page.body);
    let to_app = browser.get("/auth/login/").await;
    let authorize = to_app.location.expect("to the provider");
    let level = browser.get(&authorize).await;
    assert_eq!(level.status, 403, "{}", level.body);
    assert!(level.body.contains("nível <strong>prata</strong>"), "{}", level.body);

    let next = govbr_link_next(&level);
    let page = govbr_login(&mut browser, &next, CARLA, "silver", "senha").await;
    assert_eq!(page.status, 303, "{}", page.body);
    let back = browser.get(page.location.as_deref().expect("back to the request")).await;
    assert_ne!(back.status, 403, "prata meets the application's level: {}", back.body);
    assert!(back.body.contains("Autorizar acesso"), "the consent: {}", back.body);
}

/// bruno, logged in with his password in `browser`, turns on an
/// authenticator app: its secret and his recovery codes.
async fn bruno_with_an_app(browser: &mut Browser) -> (credencial_domain::second_factor::TotpSecret, Vec<String>) {
    use credencial_domain::second_factor::{step_of, TotpSecret};
    let form = browser.get("/conta/entrar/").await;
    let fields = with(hidden_fields(&form.body), &[("username", "bruno"), ("password", "bruno-demo-2026")]);
    browser.post("/conta/entrar/", &fields).await;
    let act = |page: &Page, extra: &[(&str, &str)]| {
        let token = crate::account::form_token(page);
        let mut fields = vec![("csrf_token".to_owned(), token)];
        fields.extend(extra.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        fields
    };
    let security = browser.get("/conta/seguranca/").await;
    let started =
        browser.post("/conta/seguranca/", &act(&security, &[("acao", "iniciar"), ("senha", "bruno-demo-2026")])).await;
    let text =
        started.body.split("<code class=\"secret\">").nth(1).and_then(|r| r.split("</code>").next()).expect("secret");
    let secret = TotpSecret::from_base32(&crate::helpers::unescape_html(text)).expect("base32");
    let security = browser.get("/conta/seguranca/").await;
    let code = secret.code_at(step_of(now()));
    let enrolled =
        browser.post("/conta/seguranca/", &act(&security, &[("acao", "confirmar"), ("codigo", &code)])).await;
    assert_eq!(enrolled.status, 200, "{}", enrolled.body);
    let codes = enrolled.body.split("<li><code>").skip(1).filter_map(|r| r.split("</code>").next());
    (secret, codes.map(str::to_owned).collect())
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs() as i64
}

/// Passes the code's page `to_code` in `browser` with the app's next code:
/// where it sends the browser.
async fn pass_code(
    browser: &mut Browser,
    to_code: &str,
    secret: &credencial_domain::second_factor::TotpSecret,
    ahead: i64,
) -> Page {
    let verify = browser.get(to_code).await;
    assert_eq!(verify.status, 200, "{}", verify.body);
    let code = secret.code_at(credencial_domain::second_factor::step_of(now()) + ahead);
    browser.post("/conta/entrar/verificar/", &with(hidden_fields(&verify.body), &[("codigo", &code)])).await
}

#[tokio::test]
async fn an_account_with_a_second_factor_is_linked_only_after_its_code() {
    let (mut browser, db) = spawn_demo(|_| {}).await;
    let (secret, _) = bruno_with_an_app(&mut browser).await;

    // In another browser, gov.br finds his account; his password alone
    // does not make the link.
    let mut other = Browser::new_at(&browser.base, browser.client.clone());
    let page = govbr_login(&mut other, "/conta/", BRUNO, "silver", "senha").await;
    let password = log_into_the_account(&mut other, &page, "bruno", "bruno-demo-2026").await;
    assert_eq!(password.status, 303);
    let to_code = password.location.expect("to the code's page");
    assert!(to_code.starts_with("/conta/entrar/verificar/"), "{to_code}");
    let early = other.get("/conta/entrar/vincular/").await;
    assert_ne!(early.status, 200, "no link before the code: {}", early.body);
    let bruno = account_of(&db, BRUNO).await;
    assert_eq!(level_of(&db, bruno).await, None);

    // With the code, the link is made.
    let answered = pass_code(&mut other, &to_code, &secret, 1).await;
    assert_eq!(answered.location.as_deref(), Some("/conta/entrar/vincular/"), "{}", answered.body);
    let linked = other.get("/conta/entrar/vincular/").await;
    assert_eq!(linked.status, 200, "{}", linked.body);
    assert!(linked.body.contains("Conta vinculada"), "{}", linked.body);
    assert_eq!(level_of(&db, bruno).await, Some(ReliabilityLevel::Prata));
}

#[tokio::test]
async fn a_govbr_login_by_password_alone_into_an_account_with_a_second_factor_asks_its_code() {
    let (mut browser, db) = spawn_demo(|_| {}).await;
    let (secret, recovery_codes) = bruno_with_an_app(&mut browser).await;
    let mut linking = Browser::new_at(&browser.base, browser.client.clone());
    let page = govbr_login(&mut linking, "/conta/", BRUNO, "silver", "senha").await;
    let password = log_into_the_account(&mut linking, &page, "bruno", "bruno-demo-2026").await;
    let linked = pass_code(&mut linking, &password.location.expect("to the code"), &secret, 1).await;
    assert_eq!(linked.location.as_deref(), Some("/conta/entrar/vincular/"), "{}", linked.body);
    let linked = linking.get("/conta/entrar/vincular/").await;
    assert!(linked.body.contains("Conta vinculada"), "{}", linked.body);
    let bruno = account_of(&db, BRUNO).await;

    // Someone who got his gov.br password (bronze: the easiest account to
    // open with another person's CPF) is asked bruno's own code here…
    let mut thief = Browser::new_at(&browser.base, browser.client.clone());
    let page = govbr_login(&mut thief, "/conta/dados/", BRUNO, "bronze", "senha").await;
    assert_eq!(page.status, 303, "{}", page.body);
    let to_code = page.location.expect("to the code");
    assert!(to_code.starts_with("/conta/entrar/verificar/"), "{to_code}");
    let data = thief.get("/conta/dados/").await;
    assert_ne!(data.status, 200, "no page before the code: {}", data.body);
    assert!(!data.body.contains("bruno-demo"), "nothing of his");

    // …and bruno, who has it, goes on; his session says gov.br and the
    // code, never a local password nobody typed here.
    let mut own = Browser::new_at(&browser.base, browser.client.clone());
    let page = govbr_login(&mut own, "/conta/sessoes/", BRUNO, "bronze", "senha").await;
    let verify = own.get(&page.location.expect("to the code")).await;
    assert!(verify.body.contains("entrada pelo provedor de identidade deu certo"), "{}", verify.body);
    assert!(!verify.body.contains("senha está certa"), "no password was typed here: {}", verify.body);
    let fields = with(hidden_fields(&verify.body), &[("codigo", &recovery_codes[0])]);
    let passed = own.post("/conta/entrar/verificar/", &fields).await;
    assert_eq!(passed.location.as_deref(), Some("/conta/sessoes/"), "{}", passed.body);
    let amr: String = sqlx::query_scalar("SELECT amr FROM sessions WHERE user_id = $1 ORDER BY id DESC LIMIT 1")
        .bind(bruno.0)
        .fetch_one(&db.pool)
        .await
        .expect("the session");
    let proof = credencial_domain::assurance::Proof::from_stored(&amr, "urn:credencial:acr:govbr:bronze", 0);
    assert_eq!(proof.amr_claim(), ["fed", "pwd", "otp", "mfa"], "stored as {amr:?}");
    let sessions = own.get("/conta/sessoes/").await;
    assert!(sessions.body.contains("provedor de identidade externo e código de recuperação"), "{}", sessions.body);
    // Its logout still goes through gov.br: what the login kept for it was
    // carried over to the session that replaced the waiting one, and the
    // logout takes it.
    let kept = || async {
        let count: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM webauthn_ceremonies WHERE user_id = $1 AND purpose = 'federated_session'",
        )
        .bind(bruno.0)
        .fetch_one(&db.pool)
        .await
        .expect("count");
        count
    };
    let before = kept().await;
    let form = own.get("/conta/sair/").await;
    let out = own.post("/conta/sair/", &hidden_fields(&form.body)).await;
    let location = out.location.expect("to gov.br");
    assert!(location.starts_with(&format!("{}/sandbox/govbr/logout?", own.base)), "{location}");
    assert_eq!(kept().await, before - 1, "the logout found what its session kept");

    // A login that passed two factors at gov.br (prata with its app) goes
    // straight on.
    let mut strong = Browser::new_at(&browser.base, browser.client.clone());
    let page = govbr_login(&mut strong, "/conta/", BRUNO, "silver", "app").await;
    assert_eq!(page.location.as_deref(), Some("/conta/"), "{}", page.body);
}

#[tokio::test]
async fn logging_out_of_a_session_from_an_oidc_upstream_ends_the_upstream_session_through_its_end_session_endpoint() {
    // On a shared computer, a logout here that left the upstream session
    // alive let the next "Entrar com …" sign the previous person in.
    let (mut upstream, upstream_db) = spawn_demo(|_| {}).await;
    let issuer = upstream.base.clone();
    let (mut downstream, downstream_db) =
        spawn_demo(|s| s.federation.providers = vec![credencial_upstream(&issuer)]).await;
    // The upstream knows this service's callback and its page after logout.
    let id = ClientId::parse(credencial::demo::DEMO_CLIENT_ID).expect("id");
    let after_logout = format!("{}/conta/entrar/", downstream.base);
    let changes = OAuthClientUpdate {
        redirect_uris: Some(vec![
            format!("{issuer}/auth/callback/"),
            format!("{}/conta/entrar/externo/credencial/retorno/", downstream.base),
        ]),
        post_logout_redirect_uris: Some(vec![after_logout.clone()]),
        ..Default::default()
    };
    let entry = credencial_application::admin::audit_entry(
        &Actor::Cli { os_user: "teste".into() },
        AuditAction::ClientUpdate,
        AuditTarget::Client(id.clone()),
    );
    upstream_db.storage().clients.update(&id, changes, &entry).await.expect("update").expect("the demo client");
    set_email_verified(&upstream_db, "ana", true).await;
    set_email_verified(&downstream_db, "ana", true).await;
    let form = upstream.get("/conta/entrar/").await;
    let fields = with(hidden_fields(&form.body), &[("username", "ana"), ("password", "ana-demo-2026")]);
    assert_eq!(upstream.post("/conta/entrar/", &fields).await.status, 303);
    let page = login_through(&mut downstream, &mut upstream).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(downstream.get("/conta/").await.status, 200, "signed in here");

    // Logging out here goes through the upstream's end_session_endpoint,
    // with the ID token of the login as the hint.
    let form = downstream.get("/conta/sair/").await;
    let out = downstream.post("/conta/sair/", &hidden_fields(&form.body)).await;
    assert_eq!(out.status, 303, "{}", out.body);
    let location = out.location.expect("to the upstream");
    let url = url::Url::parse(&location).expect("an absolute URL");
    assert!(location.starts_with(&format!("{issuer}/oauth/logout/?")), "{location}");
    let query: std::collections::HashMap<String, String> = url.query_pairs().into_owned().collect();
    assert_eq!(query.get("post_logout_redirect_uri"), Some(&after_logout));
    assert_eq!(query.get("client_id").map(String::as_str), Some(credencial::demo::DEMO_CLIENT_ID));
    let hint = query.get("id_token_hint").expect("the ID token as hint");
    let hinted = crate::oauth::claims(hint);
    assert_eq!((hinted["iss"].as_str(), hinted["aud"].as_str()), (Some(issuer.as_str()), Some("demo-host")));
    assert_eq!(downstream.get("/conta/").await.status, 303, "the session here ended");

    // The upstream ends its session at once (the hint names its person)
    // and sends the browser back to the registered page.
    let back = upstream.get(&location).await;
    assert!(matches!(back.status, 302 | 303), "{}: {}", back.status, back.body);
    assert_eq!(back.location.as_deref(), Some(after_logout.as_str()));
    assert_eq!(upstream.get("/conta/").await.status, 303, "the upstream session ended");

    // The next "Entrar com …" asks for the password at the upstream.
    let start = downstream.get("/conta/entrar/externo/credencial/?next=/conta/").await;
    let authorize = upstream.get(&start.location.expect("to the upstream")).await;
    assert_eq!(authorize.status, 200, "a login form, not a code: {:?}", authorize.location);
    assert!(authorize.body.contains("name=\"password\""), "{}", authorize.body);

    // A second logout of a session kept nowhere (a password login) stays local.
    let form = downstream.get("/conta/entrar/").await;
    let fields = with(hidden_fields(&form.body), &[("username", "ana"), ("password", "ana-demo-2026")]);
    assert_eq!(downstream.post("/conta/entrar/", &fields).await.status, 303);
    let form = downstream.get("/conta/sair/").await;
    let out = downstream.post("/conta/sair/", &hidden_fields(&form.body)).await;
    assert_eq!(out.location.as_deref(), Some("/conta/entrar/"));
}
