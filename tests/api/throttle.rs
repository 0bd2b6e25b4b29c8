//! Brute-force limits over real HTTP: `pair`, the login form of
//! `/oauth/authorize/` (per username and per address) and client secrets at
//! `/oauth/token/` (per address), counted in PostgreSQL so that two
//! instances on one database limit as one.

use credencial::settings::Settings;
use reqwest::header::{CACHE_CONTROL, RETRY_AFTER};
use serde_json::json;

use crate::helpers::{hidden_fields, spawn_app, spawn_app_with, status_and_json, with, Browser, TestApp};
use crate::oauth::{register_clients, store_portal_code, PORTAL_SECRET, PORTAL_URI};

/// A window short enough for a test to wait for its end, and long enough
/// for five hashed failures on a busy CI machine to fall inside it.
const SHORT_WINDOW_SECS: u64 = 5;

fn short_window(s: &mut Settings) {
    s.login.login_throttle_window_secs = SHORT_WINDOW_SECS as u32;
}

async fn pair(app: &TestApp, username: &str, password: &str) -> reqwest::Response {
    app.post_json("/api/token/pair/", &json!({"username": username, "password": password})).await
}

/// `Retry-After` of a response, as whole seconds.
fn retry_after(r: &reqwest::Response) -> u64 {
    let value = r.headers().get(RETRY_AFTER).expect("Retry-After").to_str().expect("ascii");
    value.parse().unwrap_or_else(|_| panic!("Retry-After is whole seconds: {value:?}"))
}

/// Asserts the contract's 429 of `pair` and returns its `Retry-After`.
async fn assert_pair_throttled(r: reqwest::Response, window_secs: u64) -> u64 {
    let wait = retry_after(&r);
    assert!((1..=window_secs).contains(&wait), "Retry-After {wait} within the window of {window_secs} s");
    let (status, body) = status_and_json(r).await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(
        body,
        json!({"detail": format!("Request was throttled. Expected available in {wait} seconds."), "code": "throttled"})
    );
    wait
}

/// Failures counted in the database on `key`.
async fn failures_on(app: &TestApp, key: &str) -> i32 {
    sqlx::query_scalar::<_, i32>("SELECT failures FROM login_failures WHERE key = $1")
        .bind(key)
        .fetch_optional(&app.db.pool)
        .await
        .expect("query")
        .unwrap_or(0)
}

async fn sleep_secs(secs: u64) {
    tokio::time::sleep(std::time::Duration::from_secs(secs)).await;
}

// ------------------------------------------------------------------- pair

#[tokio::test]
async fn five_wrong_passwords_get_429_with_retry_after_and_then_even_the_right_one_does() {
    let app = spawn_app().await;
    app.add_user("maria", "pw-maria-1", true).await;
    for attempt in 1..=5 {
        let (status, body) = status_and_json(pair(&app, "maria", "wrong").await).await;
        assert_eq!((status, body["code"].as_str()), (401, Some("authentication_failed")), "attempt {attempt}");
    }
    assert_pair_throttled(pair(&app, "maria", "wrong").await, 300).await;
    assert_pair_throttled(pair(&app, "maria", "pw-maria-1").await, 300).await;
    // Another user from the same address is not limited by maria's failures.
    app.add_user("joao", "pw-joao-1", true).await;
    app.login("joao", "pw-joao-1").await;
}

#[tokio::test]
async fn the_right_password_works_again_after_the_window() {
    let app = spawn_app_with(short_window).await;
    app.add_user("maria", "pw-maria-1", true).await;
    for _ in 0..5 {
        assert_eq!(pair(&app, "maria", "wrong").await.status(), 401);
    }
    let wait = assert_pair_throttled(pair(&app, "maria", "pw-maria-1").await, SHORT_WINDOW_SECS).await;
    sleep_secs(wait).await;
    app.login("maria", "pw-maria-1").await;
}

#[tokio::test]
async fn a_limited_request_is_not_counted_so_it_cost_no_hash() {
    let app = spawn_app().await;
    app.add_user("maria", "pw-maria-1", true).await;
    for _ in 0..5 {
        assert_eq!(pair(&app, "maria", "wrong").await.status(), 401);
    }
    assert_eq!(failures_on(&app, "username:maria").await, 5);
    assert_eq!(failures_on(&app, "address:127.0.0.1").await, 5);
    // Each of these would be a sixth, seventh… failure if it had been
    // checked; refused before hashing, none is.
    for password in ["wrong", "also-wrong", "pw-maria-1", "wrong", "pw-maria-1"] {
        assert_eq!(pair(&app, "maria", password).await.status(), 429);
    }
    assert_eq!(failures_on(&app, "username:maria").await, 5);
    assert_eq!(failures_on(&app, "address:127.0.0.1").await, 5);
}

#[tokio::test]
async fn a_success_resets_the_username_but_not_the_address() {
    let app = spawn_app().await;
    app.add_user("maria", "pw-maria-1", true).await;
    for _ in 0..4 {
        assert_eq!(pair(&app, "maria", "wrong").await.status(), 401);
    }
    app.login("maria", "pw-maria-1").await;
    assert_eq!(failures_on(&app, "username:maria").await, 0);
    assert_eq!(failures_on(&app, "address:127.0.0.1").await, 4);
}

#[tokio::test]
async fn an_account_has_one_count_whether_its_cpf_punctuated_or_bare_or_its_username_named_it() {
    let app = spawn_app().await;
    let maria = app.add_user("maria", "pw-maria-1", true).await;
    sqlx::query("UPDATE users SET cpf = '52998224725' WHERE id = $1")
        .bind(maria)
        .execute(&app.db.pool)
        .await
        .expect("maria's CPF");
    for login in ["529.982.247-25", "52998224725", "529.982.247-25", "52998224725", "529982247-25"] {
        let (status, body) = status_and_json(pair(&app, login, "wrong").await).await;
        assert_eq!((status, body["code"].as_str()), (401, Some("authentication_failed")), "{login}");
    }
    // The 6th guess, through the username, is refused: one count per account.
    assert_pair_throttled(pair(&app, "maria", "pw-maria-1").await, 300).await;
    assert_pair_throttled(pair(&app, "529.982.247-25", "pw-maria-1").await, 300).await;
    assert_eq!(failures_on(&app, "username:maria").await, 5);
    assert_eq!(failures_on(&app, "username:52998224725").await, 0, "no second count under the CPF");
    // The address counted each guess once, as before.
    assert_eq!(failures_on(&app, "address:127.0.0.1").await, 5);
}

#[tokio::test]
async fn an_unknown_cpf_is_limited_like_a_known_one_whatever_its_punctuation() {
    let app = spawn_app().await;
    for login in ["111.444.777-35", "11144477735", "111.444.777-35", "11144477735", "111444777-35"] {
        assert_eq!(pair(&app, login, "guess").await.status(), 401, "{login}");
    }
    assert_pair_throttled(pair(&app, "11144477735", "guess").await, 300).await;
    assert_eq!(failures_on(&app, "username:11144477735").await, 5);
}

#[tokio::test]
async fn the_address_limit_holds_across_usernames() {
    let app = spawn_app().await;
    app.add_user("maria", "pw-maria-1", true).await;
    // The default: 20 failures per address, each username failing once.
    for i in 0..20 {
        assert_eq!(pair(&app, &format!("user{i}"), "guess").await.status(), 401, "user{i}");
    }
    assert_eq!(failures_on(&app, "address:127.0.0.1").await, 20);
    assert_pair_throttled(pair(&app, "maria", "pw-maria-1").await, 300).await;
    assert_eq!(failures_on(&app, "username:maria").await, 0, "maria herself never failed");
}

#[tokio::test]
async fn the_limit_holds_across_two_instances_on_one_database() {
    let first = spawn_app().await;
    first.add_user("maria", "pw-maria-1", true).await;
    let db_url = first.db.url.clone();
    let second = spawn_app_with(|s| s.storage.database_url = db_url.into()).await;
    for app in [&first, &second, &first, &second, &first] {
        assert_eq!(pair(app, "maria", "wrong").await.status(), 401);
    }
    assert_pair_throttled(pair(&second, "maria", "pw-maria-1").await, 300).await;
    assert_pair_throttled(pair(&first, "maria", "pw-maria-1").await, 300).await;
}

#[tokio::test]
async fn a_zero_count_disables_its_limit() {
    let app = spawn_app_with(|s| {
        s.login.login_throttle_username_failures = 0;
        s.login.login_throttle_address_failures = 0;
    })
    .await;
    app.add_user("maria", "pw-maria-1", true).await;
    for _ in 0..25 {
        assert_eq!(pair(&app, "maria", "wrong").await.status(), 401);
    }
    app.login("maria", "pw-maria-1").await;
    let rows: i64 =
        sqlx::query_scalar("SELECT count(*) FROM login_failures").fetch_one(&app.db.pool).await.expect("count");
    assert_eq!(rows, 0, "nothing is counted");
}

// ---------------------------------------------------------- client address

#[tokio::test]
async fn behind_a_proxy_the_configured_header_names_the_address_and_its_last_value_counts() {
    let app = spawn_app_with(|s| {
        s.login.login_throttle_username_failures = 0;
        s.login.login_throttle_address_failures = 2;
        s.server.client_address_header = Some("X-Forwarded-For".into());
    })
    .await;
    app.add_user("maria", "pw-maria-1", true).await;
    let from = |forwarded: &str| {
        app.client
            .post(format!("{}/api/token/pair/", app.address))
            .header("x-forwarded-for", forwarded)
            .json(&json!({"username": "maria", "password": "wrong"}))
    };
    // The client forges a first value; the proxy appends the real one.
    assert_eq!(from("10.9.9.9, 203.0.113.5").send().await.expect("sent").status(), 401);
    assert_eq!(from("10.8.8.8, 203.0.113.5").send().await.expect("sent").status(), 401);
    assert_eq!(from("203.0.113.5").send().await.expect("sent").status(), 429);
    assert_eq!(from("203.0.113.6").send().await.expect("sent").status(), 401, "another client is not limited");
    assert_eq!(failures_on(&app, "address:203.0.113.5").await, 2);
    assert_eq!(failures_on(&app, "address:127.0.0.1").await, 0);
}

#[tokio::test]
async fn without_the_setting_forwarding_headers_are_ignored() {
    let app = spawn_app_with(|s| {
        s.login.login_throttle_username_failures = 0;
        s.login.login_throttle_address_failures = 2;
    })
    .await;
    for forwarded in ["198.51.100.1", "198.51.100.2", "198.51.100.3"] {
        let r = app
            .client
            .post(format!("{}/api/token/pair/", app.address))
            .header("x-forwarded-for", forwarded)
            .header("x-real-ip", forwarded)
            .json(&json!({"username": "maria", "password": "wrong"}))
            .send()
            .await
            .expect("sent");
        let expected = if forwarded.ends_with('3') { 429 } else { 401 };
        assert_eq!(r.status(), expected, "{forwarded}: the peer 127.0.0.1 counts");
    }
}

// -------------------------------------------------------- /oauth/authorize/

fn portal_authorize_path() -> String {
    let query = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs([
            ("response_type", "code"),
            ("client_id", "portal"),
            ("redirect_uri", PORTAL_URI),
            ("state", "s"),
        ])
        .finish();
    format!("/oauth/authorize/?{query}")
}

#[tokio::test]
async fn the_login_form_shares_the_limit_with_pair_and_answers_its_page_with_429() {
    let app = spawn_app().await;
    register_clients(&app).await;
    for _ in 0..3 {
        assert_eq!(pair(&app, "ana", "wrong").await.status(), 401);
    }
    let mut browser = Browser::new(&app);
    let login = browser.get(&portal_authorize_path()).await;
    let form = |password: &str| with(hidden_fields(&login.body), &[("username", "ana"), ("password", password)]);
    for _ in 0..2 {
        let page = browser.post("/oauth/authorize/", &form("wrong")).await;
        assert_eq!(page.status, 200);
        assert!(page.body.contains("Usuário ou senha inválidos."), "{}", page.body);
    }
    let page = browser.post("/oauth/authorize/", &form("ana-password")).await;
    assert_eq!(page.status, 429, "{}", page.body);
    let wait: u64 = page.headers.get(RETRY_AFTER).expect("Retry-After").to_str().expect("ascii").parse().expect("secs");
    assert!((1..=300).contains(&wait));
    assert!(page.headers.get("content-type").is_some_and(|v| v.to_str().is_ok_and(|t| t.starts_with("text/html"))));
    // The wait in whole minutes, rounded up (5 for the 300-second window).
    let minutes = wait.div_ceil(60);
    let unit = if minutes == 1 { "minuto" } else { "minutos" };
    assert!(
        page.body.contains(&format!("Muitas tentativas sem sucesso. Tente novamente em {minutes} {unit}.")),
        "{}",
        page.body
    );
    assert!(page.body.contains("name=\"password\""), "the form again");
    assert!(!browser.jar.contains_key("credencial_session"), "no session");
    // And pair sees the failures of the form.
    assert_pair_throttled(pair(&app, "ana", "ana-password").await, 300).await;
}

// ----------------------------------------------------------- /oauth/token/

async fn exchange(app: &TestApp, secret: &str, code: &str) -> reqwest::Response {
    let form = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", PORTAL_URI)];
    app.client
        .post(format!("{}/oauth/token/", app.address))
        .basic_auth("portal", Some(secret))
        .form(&form)
        .send()
        .await
        .expect("sent")
}

/// Asserts the contract's 429 of `/oauth/token/` and returns its `Retry-After`.
async fn assert_token_throttled(r: reqwest::Response, window_secs: u64) -> u64 {
    let wait = retry_after(&r);
    assert!((1..=window_secs).contains(&wait), "Retry-After {wait}");
    assert_eq!(r.headers().get(CACHE_CONTROL).and_then(|v| v.to_str().ok()), Some("no-store"));
    let (status, body) = status_and_json(r).await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(
        body,
        json!({
            "error": "too_many_requests",
            "error_description": format!("Too many failed attempts. Retry after {wait} seconds."),
        })
    );
    wait
}

/// A short window and 5 failures per address.
fn five_per_address(s: &mut Settings) {
    short_window(s);
    s.login.login_throttle_address_failures = 5;
}

#[tokio::test]
async fn wrong_client_secrets_from_one_address_get_429_and_the_right_secret_works_after_the_window() {
    let app = spawn_app_with(five_per_address).await;
    let ana = register_clients(&app).await;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs() as i64;
    store_portal_code(&app, ana, "code-for-the-portal", now + 60).await;
    for _ in 0..5 {
        let (status, body) = status_and_json(exchange(&app, "not-the-secret", "code-for-the-portal").await).await;
        assert_eq!((status, body["error"].as_str()), (401, Some("invalid_client")));
    }
    assert_token_throttled(exchange(&app, "not-the-secret", "code-for-the-portal").await, SHORT_WINDOW_SECS).await;
    let wait =
        assert_token_throttled(exchange(&app, PORTAL_SECRET, "code-for-the-portal").await, SHORT_WINDOW_SECS).await;
    assert_eq!(failures_on(&app, "address:127.0.0.1").await, 5, "limited requests are not counted");

    sleep_secs(wait).await;
    let (status, body) = status_and_json(exchange(&app, PORTAL_SECRET, "code-for-the-portal").await).await;
    assert_eq!(status, 200, "{body}");
    assert!(body["access_token"].is_string());
    assert_eq!(failures_on(&app, "address:127.0.0.1").await, 5, "the address keeps its count");
}

#[tokio::test]
async fn wrong_secrets_for_a_client_id_do_not_lock_that_client_out_elsewhere() {
    // Behind a proxy, so that the test can speak from two addresses.
    let app = spawn_app_with(|s| {
        five_per_address(s);
        s.server.client_address_header = Some("X-Forwarded-For".into());
    })
    .await;
    let ana = register_clients(&app).await;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs() as i64;
    store_portal_code(&app, ana, "code-for-the-portal", now + 60).await;
    let from = |address: &'static str, secret: &'static str| {
        app.client
            .post(format!("{}/oauth/token/", app.address))
            .header("x-forwarded-for", address)
            .basic_auth("portal", Some(secret))
            .form(&[
                ("grant_type", "authorization_code"),
                ("code", "code-for-the-portal"),
                ("redirect_uri", PORTAL_URI),
            ])
            .send()
    };
    // The client id is public (it is in every authorization URL): anyone can
    // send wrong secrets for it, up to their own address's limit.
    for _ in 0..5 {
        assert_eq!(from("203.0.113.66", "guess").await.expect("sent").status(), 401);
    }
    assert_token_throttled(from("203.0.113.66", "guess").await.expect("sent"), SHORT_WINDOW_SECS).await;
    // The application itself, from its own address, still gets its tokens.
    let (status, body) = status_and_json(from("198.51.100.7", PORTAL_SECRET).await.expect("sent")).await;
    assert_eq!(status, 200, "{body}");
    assert!(body["access_token"].is_string());
}

#[tokio::test]
async fn an_unknown_client_id_counts_against_the_address_like_a_registered_one() {
    let app = spawn_app_with(|s| s.login.login_throttle_address_failures = 5).await;
    let request = || {
        app.client
            .post(format!("{}/oauth/token/", app.address))
            .basic_auth("no-such-client", Some("guess"))
            .form(&[("grant_type", "authorization_code"), ("code", "c")])
            .send()
    };
    for _ in 0..5 {
        assert_eq!(request().await.expect("sent").status(), 401);
    }
    assert_token_throttled(request().await.expect("sent"), 300).await;
    assert_eq!(failures_on(&app, "address:127.0.0.1").await, 5);
}

// ---------------------------------------------------------------- settings

#[test]
fn throttle_settings_are_validated_naming_the_setting() {
    type Adjust = fn(&mut Settings);
    let cases: [(&str, Adjust); 4] = [
        ("SERVICE_LOGIN_THROTTLE_WINDOW_SECS", |s| s.login.login_throttle_window_secs = 0),
        ("SERVICE_LOGIN_THROTTLE_WINDOW_SECS", |s| s.login.login_throttle_window_secs = 86_401),
        ("SERVICE_CLIENT_ADDRESS_HEADER", |s| s.server.client_address_header = Some("X Forwarded".into())),
        // RFC 7239's header holds `for=…` pairs, not addresses: refused, not silently the peer.
        ("SERVICE_CLIENT_ADDRESS_HEADER", |s| s.server.client_address_header = Some("Forwarded".into())),
    ];
    for (name, adjust) in cases {
        let mut s = Settings::default();
        adjust(&mut s);
        let e = s.validate().expect_err("invalid").to_string();
        assert!(e.contains(name), "{e}");
    }
    let defaults = Settings::default();
    assert_eq!(
        (
            defaults.login.login_throttle_username_failures,
            defaults.login.login_throttle_address_failures,
            defaults.login.login_throttle_window_secs
        ),
        (5, 20, 300)
    );
}

#[test]
fn throttle_settings_load_from_the_file() {
    let dir = std::env::temp_dir().join(format!("credencial-throttle-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("credencial.toml");
    std::fs::write(
        &file,
        "login_throttle_username_failures = 3\nlogin_throttle_address_failures = 0\n\
         login_throttle_window_secs = 60\nclient_address_header = \"X-Real-IP\"\n",
    )
    .expect("write");
    let s = Settings::load(Some(&file)).expect("loads");
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(
        (
            s.login.login_throttle_username_failures,
            s.login.login_throttle_address_failures,
            s.login.login_throttle_window_secs
        ),
        (3, 0, 60)
    );
    assert_eq!(s.server.client_address_header.as_deref(), Some("X-Real-IP"));
}
