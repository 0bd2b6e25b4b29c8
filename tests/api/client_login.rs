//! The client component end to end: the demo runs the host application as
//! the client `demo-host` against itself; a browser (cookie jar, redirects
//! followed by hand) logs in at `/auth/login/`, consents at the provider,
//! comes back to `/auth/callback/` and reads its record at `/auth/me/`.

use crate::helpers::TestDatabase;
use credencial::demo;
use url::Url;

use crate::helpers::{hidden_fields, spawn_demo, with, Browser, Page};

/// `/auth/login/?next=…` → the provider's authorize page; returns its URL.
async fn start_login(browser: &mut Browser, next: &str) -> String {
    let query = url::form_urlencoded::Serializer::new(String::new()).append_pair("next", next).finish();
    let start = browser.get(&format!("/auth/login/?{query}")).await;
    assert_eq!(start.status, 303, "{}", start.body);
    assert!(
        start.set_cookies.iter().any(|c| c.starts_with("credencial_client_login=")
            && c.contains("HttpOnly")
            && c.contains("SameSite=Lax")
            && c.contains("Max-Age=600")),
        "{:?}",
        start.set_cookies
    );
    let authorize = start.location.expect("Location");
    assert!(authorize.starts_with(&format!("{}/oauth/authorize/?", browser.base)), "{authorize}");
    let url = Url::parse(&authorize).expect("url");
    let param = |name: &str| url.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned());
    assert_eq!(param("client_id").as_deref(), Some(demo::DEMO_CLIENT_ID));
    assert_eq!(param("code_challenge_method").as_deref(), Some("S256"));
    let scope = param("scope").expect("scope");
    assert!(scope.contains("receita_federal") && scope.contains("cpf"), "{scope}");
    authorize
}

/// Logs in at the provider and approves (or denies); returns the redirect
/// back to `/auth/callback/`. When the user's consent to the demo client is
/// remembered (a second login), the provider sends the browser back at
/// once, and only `approve` is possible.
async fn at_the_provider(browser: &mut Browser, authorize: &str, user: &str, password: &str, action: &str) -> String {
    let mut consent = browser.get(authorize).await;
    if consent.status == 200 && !consent.body.contains("Autorizar acesso") {
        // No provider session yet: the login form first.
        let fields = with(hidden_fields(&consent.body), &[("username", user), ("password", password)]);
        let logged_in = browser.post("/oauth/authorize/", &fields).await;
        assert_eq!(logged_in.status, 303, "{}", logged_in.body);
        consent = browser.get(&logged_in.location.expect("back")).await;
    }
    let back = if consent.status == 302 {
        assert_eq!(action, "approve", "consent remembered: there is no page to deny on");
        consent.location.expect("Location")
    } else {
        assert_eq!(consent.status, 200, "{}", consent.body);
        assert!(consent.body.contains("Autorizar acesso"), "{}", consent.body);
        let decided =
            browser.post("/oauth/authorize/", &with(hidden_fields(&consent.body), &[("action", action)])).await;
        assert_eq!(decided.status, 303, "{}", decided.body);
        decided.location.expect("Location")
    };
    assert!(back.starts_with(&format!("{}/auth/callback/?", browser.base)), "{back}");
    back
}

/// The whole login as `user`, starting with `next`; returns the callback's
/// answer.
pub(crate) async fn log_in(browser: &mut Browser, user: &str, password: &str, next: &str) -> Page {
    let authorize = start_login(browser, next).await;
    let back = at_the_provider(browser, &authorize, user, password, "approve").await;
    browser.get(&back).await
}

#[derive(Debug, PartialEq)]
pub(crate) struct HostRow {
    pub(crate) username: String,
    pub(crate) cpf: Option<String>,
    pub(crate) email: Option<String>,
    pub(crate) first_name: Option<String>,
    pub(crate) last_name: Option<String>,
    pub(crate) birth_date: Option<String>,
    pub(crate) mother_name: Option<String>,
    pub(crate) city: Option<String>,
    pub(crate) state: Option<String>,
    pub(crate) has_profile: bool,
}

type Columns = (
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    crate::database::Flag,
);

pub(crate) async fn host_row(db: &TestDatabase, username: &str) -> HostRow {
    let (username, cpf, email, first_name, last_name, birth_date, mother_name, city, state, has_profile): Columns =
        sqlx::query_as(
            "SELECT CAST(username AS TEXT), CAST(cpf AS TEXT), CAST(email AS TEXT), CAST(first_name AS TEXT), \
             CAST(last_name AS TEXT), CAST(birth_date AS TEXT), mother_name, city, CAST(state AS TEXT), \
             CASE WHEN profile IS NULL THEN 0 ELSE 1 END FROM host_users WHERE username = $1",
        )
        .bind(username)
        .fetch_one(&db.pool)
        .await
        .expect("host user row");
    HostRow {
        username,
        cpf,
        email,
        first_name,
        last_name,
        birth_date,
        mother_name,
        city,
        state,
        has_profile: has_profile.0,
    }
}

#[tokio::test]
async fn ana_logs_in_and_her_record_gets_every_mapped_column() {
    let (mut browser, db) = spawn_demo(|_| {}).await;
    let me = browser.get("/auth/me/").await;
    assert_eq!((me.status, me.location.as_deref()), (303, Some("/auth/login/?next=%2Fauth%2Fme%2F")));

    let done = log_in(&mut browser, "ana", "ana-demo-2026", "/auth/me/").await;
    assert_eq!((done.status, done.location.as_deref()), (303, Some("/auth/me/")), "{}", done.body);
    assert!(
        done.set_cookies.iter().any(|c| c.starts_with("credencial_host_session=")
            && c.contains("HttpOnly")
            && c.contains("SameSite=Lax")
            && c.contains("Path=/;")),
        "{:?}",
        done.set_cookies
    );
    assert!(done.set_cookies.iter().any(|c| c.starts_with("credencial_client_login=;") && c.contains("Max-Age=0")));

    assert_eq!(
        host_row(&db, "52998224725").await,
        HostRow {
            username: "52998224725".into(),
            cpf: Some("52998224725".into()),
            email: Some("ana.souza@demo.credencial.gov.br".into()),
            first_name: Some("Ana".into()),
            last_name: Some("Beatriz Souza".into()),
            birth_date: Some("1988-03-14".into()),
            mother_name: Some("MARIA DAS GRACAS SOUZA".into()),
            city: Some("NATAL".into()),
            state: Some("RN".into()),
            has_profile: true,
        }
    );
    let page = browser.get("/auth/me/").await;
    assert_eq!(page.status, 200, "{}", page.body);
    for shown in ["529.***.***-25", "Beatriz Souza", "**/**/1988", "M. D. G. S.", "formacao_academica"] {
        assert!(page.body.contains(shown), "{shown} missing from {}", page.body);
    }
    // Personal data masked (LGPD): the full values stay in the table.
    for full in ["52998224725", "1988-03-14", "MARIA DAS GRACAS SOUZA"] {
        assert!(!page.body.contains(full), "{full} shown in full: {}", page.body);
    }
    assert!(page.body.contains("<th scope=\"row\">Data de nascimento</th>"));

    // Logging in again updates the same row.
    let again = log_in(&mut browser, "ana", "ana-demo-2026", "/auth/me/").await;
    assert_eq!(again.status, 303);
    let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM host_users").fetch_one(&db.pool).await.expect("count");
    assert_eq!(rows, 1);

    // The record page carries personal data: no cache may keep it.
    assert_eq!(
        (page.headers["cache-control"].to_str().ok(), page.headers["pragma"].to_str().ok()),
        (Some("no-store"), Some("no-cache"))
    );
    // The second login started a new session (its cookie carries a new
    // expiry once the clock has moved on a second), and the logout form's
    // token is keyed by it: log out from the page of this session.
    let page = browser.get("/auth/me/").await;
    let out = browser.post("/auth/logout/", &hidden_fields(&page.body)).await;
    assert_eq!((out.status, out.location.as_deref()), (303, Some("/auth/logout/")));
    assert_eq!(browser.get("/auth/me/").await.status, 303, "the session is gone");
}

#[tokio::test]
async fn logout_takes_a_post_with_the_pages_token_and_a_forged_one_ends_nothing() {
    let (mut browser, _db) = spawn_demo(|_| {}).await;
    let done = log_in(&mut browser, "ana", "ana-demo-2026", "/auth/me/").await;
    assert_eq!(done.status, 303, "{}", done.body);

    // GET shows the button and ends nothing.
    let page = browser.get("/auth/logout/").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("<form method=\"post\" action=\"/auth/logout/\""), "{}", page.body);
    let fields = hidden_fields(&page.body);
    assert_eq!(fields.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), ["csrf_token"]);
    assert_eq!(browser.get("/auth/me/").await.status, 200, "a GET ends no session");

    // Forged posts: no token, a wrong one, another session's, or the right
    // one from another origin. Each gets a 403 page and the session lives.
    let mut other = Browser::new_at(&browser.base, browser.client.clone());
    let bruno = log_in(&mut other, "bruno", "bruno-demo-2026", "/auth/me/").await;
    assert_eq!(bruno.status, 303, "{}", bruno.body);
    let brunos_token = hidden_fields(&other.get("/auth/logout/").await.body);
    let wrong = vec![("csrf_token".to_owned(), "A".repeat(43))];
    for forged in [vec![], wrong, brunos_token] {
        let out = browser.post("/auth/logout/", &forged).await;
        assert_eq!(out.status, 403, "{forged:?}: {}", out.body);
        assert!(out.body.contains("Saída não confirmada"));
        assert!(out.set_cookies.is_empty(), "no cookie is cleared: {:?}", out.set_cookies);
    }
    for site in ["cross-site", "same-site"] {
        let request =
            browser.client.post(format!("{}/auth/logout/", browser.base)).header("sec-fetch-site", site).form(&fields);
        let out = browser.send(request).await;
        assert_eq!(out.status, 403, "{site}");
    }
    assert_eq!(browser.get("/auth/me/").await.status, 200, "the session outlived every forged post");

    // The page's own post, from the same origin, ends it.
    let request = browser
        .client
        .post(format!("{}/auth/logout/", browser.base))
        .header("sec-fetch-site", "same-origin")
        .form(&fields);
    let out = browser.send(request).await;
    assert_eq!((out.status, out.location.as_deref()), (303, Some("/auth/logout/")));
    assert!(out.set_cookies.iter().any(|c| c.starts_with("credencial_host_session=;") && c.contains("Max-Age=0")));
    assert_eq!(browser.get("/auth/me/").await.status, 303, "the session is gone");
    // Without a session, GET and POST have nothing to end: the page after
    // leaving, with a link to log in again (not a redirect into the login,
    // which the remembered consent would turn into a new session at once).
    let left = browser.get("/auth/logout/").await;
    assert_eq!((left.status, left.location.as_deref()), (200, None));
    assert!(
        left.body.contains("Você saiu desta aplicação") && left.body.contains("href=\"/auth/login/\""),
        "{}",
        left.body
    );
    assert!(left.set_cookies.is_empty(), "{:?}", left.set_cookies);
    assert_eq!(browser.post("/auth/logout/", &fields).await.location.as_deref(), Some("/auth/logout/"));
    assert_eq!(browser.get("/auth/me/").await.status, 303, "and nothing logged the person back in");
    // Bruno's session, in his own browser, was never touched.
    assert_eq!(other.get("/auth/me/").await.status, 200);
}

#[tokio::test]
async fn bruno_is_created_without_the_columns_of_the_tax_authority() {
    let (mut browser, db) = spawn_demo(|_| {}).await;
    let done = log_in(&mut browser, "bruno", "bruno-demo-2026", "/auth/me/").await;
    assert_eq!((done.status, done.location.as_deref()), (303, Some("/auth/me/")), "{}", done.body);
    let row = host_row(&db, "12345678909").await;
    assert_eq!((row.first_name.as_deref(), row.last_name.as_deref()), (Some("Bruno"), Some("Carvalho Lima")));
    assert_eq!((row.birth_date, row.mother_name, row.city, row.state), (None, None, None, None));
    assert!(row.has_profile, "fulljson keeps the answer, erro included");
    let page = browser.get("/auth/me/").await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("— (vazio)") && page.body.contains("Carvalho Lima"), "{}", page.body);
}

#[tokio::test]
async fn a_callback_that_does_not_match_the_login_in_progress_gets_a_400_page() {
    let (mut browser, db) = spawn_demo(|_| {}).await;
    let none = browser.get("/auth/callback/?code=abc&state=xyz").await;
    assert_eq!(none.status, 400, "no login in progress");
    assert!(none.body.contains("Não foi possível concluir a entrada"), "{}", none.body);

    let authorize = start_login(&mut browser, "/auth/me/").await;
    let back = at_the_provider(&mut browser, &authorize, "ana", "ana-demo-2026", "approve").await;
    let mut forged = Url::parse(&back).expect("url");
    let code = forged.query_pairs().find(|(k, _)| k == "code").map(|(_, v)| v.into_owned()).expect("code");
    forged.query_pairs_mut().clear().append_pair("code", &code).append_pair("state", "another-state");
    let page = browser.get(forged.as_str()).await;
    assert_eq!(page.status, 400, "{}", page.body);
    assert!(page.body.contains("Não foi possível concluir a entrada"));
    assert!(page.headers.get("content-type").is_some_and(|v| v.to_str().unwrap_or("").starts_with("text/html")));
    let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM host_users").fetch_one(&db.pool).await.expect("count");
    assert_eq!(rows, 0, "nothing written");
}

#[tokio::test]
async fn denied_consent_gets_a_403_page_and_no_session() {
    let (mut browser, _db) = spawn_demo(|_| {}).await;
    let authorize = start_login(&mut browser, "/auth/me/").await;
    let back = at_the_provider(&mut browser, &authorize, "ana", "ana-demo-2026", "deny").await;
    assert!(back.contains("error=access_denied"), "{back}");
    let page = browser.get(&back).await;
    assert_eq!(page.status, 403, "{}", page.body);
    assert!(page.body.contains("Acesso negado"), "{}", page.body);
    assert!(!browser.jar.contains_key("credencial_host_session"));
}

#[tokio::test]
async fn a_provider_that_is_down_gets_a_502_page() {
    let (mut browser, _db) = spawn_demo(|s| {
        s.client.provider_base_url = Some(crate::helpers::base_url("http://127.0.0.1:9"));
        s.client.provider_client_id = Some(demo::DEMO_CLIENT_ID.into());
        s.client.provider_client_secret = Some(demo::DEMO_CLIENT_SECRET.to_owned().into());
        s.client.provider_redirect_uri = Some("http://127.0.0.1:8000/auth/callback/".into());
        s.client.provider_timeout_ms = 1_000;
    })
    .await;
    let start = browser.get("/auth/login/").await;
    let authorize = Url::parse(&start.location.expect("Location")).expect("url");
    assert_eq!(authorize.port(), Some(9));
    let state = authorize.query_pairs().find(|(k, _)| k == "state").map(|(_, v)| v.into_owned()).expect("state");
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("code", "a-code")
        .append_pair("state", &state)
        .finish();
    let page = browser.get(&format!("/auth/callback/?{query}")).await;
    assert_eq!(page.status, 502, "{}", page.body);
    assert!(page.body.contains("Provedor de identidade indisponível"), "{}", page.body);
}

#[tokio::test]
async fn an_off_site_next_falls_back_to_the_record_page() {
    let (mut browser, _db) = spawn_demo(|_| {}).await;
    let done = log_in(&mut browser, "ana", "ana-demo-2026", "https://evil.example/").await;
    assert_eq!((done.status, done.location.as_deref()), (303, Some("/auth/me/")));
    for off_site in ["//evil.example/x", "/\\evil.example"] {
        let done = log_in(&mut browser, "ana", "ana-demo-2026", off_site).await;
        assert_eq!(done.location.as_deref(), Some("/auth/me/"), "{off_site}");
    }
    let done = log_in(&mut browser, "ana", "ana-demo-2026", "/painel/?aba=dados").await;
    assert_eq!(done.location.as_deref(), Some("/painel/?aba=dados"), "a path of this site is kept");
}

#[tokio::test]
async fn an_inactive_host_user_gets_a_403_page() {
    let (mut browser, db) = spawn_demo(|_| {}).await;
    assert_eq!(log_in(&mut browser, "ana", "ana-demo-2026", "/auth/me/").await.status, 303);
    sqlx::query("UPDATE host_users SET is_active = false").execute(&db.pool).await.expect("deactivate");
    let page = log_in(&mut browser, "ana", "ana-demo-2026", "/auth/me/").await;
    assert_eq!(page.status, 403, "{}", page.body);
    assert!(page.body.contains("Conta desativada"), "{}", page.body);
}

/// A host user column as text (timestamps as Unix seconds on both engines).
async fn seconds_of(db: &TestDatabase, column: &str) -> Option<i64> {
    let sql = match crate::database::engine() == crate::database::Engine::Sqlite {
        true => format!("SELECT CAST({column} AS INTEGER) FROM host_users WHERE username = '52998224725'"),
        false => format!(
            "SELECT CAST(extract(epoch FROM {column}) AS BIGINT) FROM host_users WHERE username = '52998224725'"
        ),
    };
    sqlx::query_scalar(&sql).fetch_one(&db.pool).await.expect("row")
}

#[tokio::test]
async fn the_demo_sets_last_login_on_every_login_and_shows_it() {
    let (mut browser, db) = spawn_demo(|_| {}).await;
    assert_eq!(log_in(&mut browser, "ana", "ana-demo-2026", "/auth/me/").await.status, 303);
    let first = seconds_of(&db, "last_login").await.expect("set at the first login");
    let now =
        i64::try_from(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs())
            .expect("now");
    assert!((now - first).abs() < 60, "the login's time: {first} vs {now}");
    sqlx::query("UPDATE host_users SET last_login = NULL").execute(&db.pool).await.expect("clear");
    assert_eq!(log_in(&mut browser, "ana", "ana-demo-2026", "/auth/me/").await.status, 303);
    assert!(seconds_of(&db, "last_login").await.is_some(), "set again by the next login");
    let me = browser.get("/auth/me/").await;
    let row = me.body.split("data-column=\"last_login\"").nth(1).and_then(|r| r.split("</tr>").next()).expect("row");
    assert!(row.contains("Último acesso") && !row.contains("(vazio)"), "{row}");
}

#[tokio::test]
async fn with_create_users_off_only_existing_host_users_log_in() {
    let (mut browser, db) = spawn_demo(|s| s.client.create_users = false).await;
    let page = log_in(&mut browser, "ana", "ana-demo-2026", "/auth/me/").await;
    assert_eq!(page.status, 403, "{}", page.body);
    assert!(page.body.contains("Sem cadastro nesta aplicação"), "{}", page.body);
    let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM host_users").fetch_one(&db.pool).await.expect("count");
    assert_eq!(rows, 0, "nobody created");
    sqlx::query("INSERT INTO host_users (username, first_name) VALUES ('52998224725', 'Ana da Casa')")
        .execute(&db.pool)
        .await
        .expect("an existing host user");
    assert_eq!(log_in(&mut browser, "ana", "ana-demo-2026", "/auth/me/").await.status, 303);
    assert_eq!(host_row(&db, "52998224725").await.first_name.as_deref(), Some("Ana"), "mapped columns refreshed");
}

#[tokio::test]
async fn only_the_listed_columns_are_refreshed_and_defaults_go_into_new_rows() {
    let (mut browser, db) = spawn_demo(|s| {
        s.client.update_fields_on_login = Some(vec!["email".into()]);
        s.client.user_defaults = r#"{"city": "Cidade padrão"}"#.into();
        s.client.date_joined_column = Some("date_joined".into());
    })
    .await;
    assert_eq!(log_in(&mut browser, "ana", "ana-demo-2026", "/auth/me/").await.status, 303);
    let created = host_row(&db, "52998224725").await;
    assert_eq!(created.first_name.as_deref(), Some("Ana"));
    sqlx::query("UPDATE host_users SET first_name = 'Editado', email = 'velho@example.org', city = 'Outra'")
        .execute(&db.pool)
        .await
        .expect("edit");
    assert_eq!(log_in(&mut browser, "ana", "ana-demo-2026", "/auth/me/").await.status, 303);
    let after = host_row(&db, "52998224725").await;
    assert_eq!(after.first_name.as_deref(), Some("Editado"), "written on creation only");
    assert_ne!(after.email.as_deref(), Some("velho@example.org"), "email is refreshed on every login");
    assert_eq!(after.city.as_deref(), Some("Outra"), "a mapped column not listed keeps the host's edit");
}

#[tokio::test]
async fn the_options_are_checked_at_start_and_name_the_setting() {
    for (adjust, expected) in [
        (
            Box::new(|s: &mut credencial::settings::Settings| {
                s.client.update_fields_on_login = Some(vec!["is_staff".into()])
            }) as Box<dyn FnOnce(&mut credencial::settings::Settings)>,
            "SERVICE_UPDATE_FIELDS_ON_LOGIN",
        ),
        (Box::new(|s| s.client.user_defaults = r#"{"nope": "x"}"#.into()), "SERVICE_USER_DEFAULTS"),
        (Box::new(|s| s.client.user_defaults = r#"{"city": 3}"#.into()), "SERVICE_USER_DEFAULTS"),
        (Box::new(|s| s.client.last_login_column = Some("email".into())), "SERVICE_LAST_LOGIN_COLUMN"),
        (Box::new(|s| s.client.date_joined_column = Some("joined".into())), "SERVICE_DATE_JOINED_COLUMN"),
    ] {
        let db = TestDatabase::new().await;
        let unused = wiremock::MockServer::start().await;
        let mut settings = crate::helpers::test_settings(&db, &unused);
        settings.registries.upstream_base_url = None;
        adjust(&mut settings);
        let built =
            credencial::startup::Application::build(&settings, credencial::startup::Mode::Demo, db.storage()).await;
        let e = format!("{:#}", built.err().expect("the start is refused"));
        assert!(e.contains(expected), "{expected}: {e}");
    }
}
