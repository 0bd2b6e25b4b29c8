//! The JSON log format (`SERVICE_LOG_FORMAT=json`) through the code path
//! production uses, at debug level: every line is a JSON object, every line
//! written inside a request carries its id at the top level (the id of the
//! response's `X-Request-Id`), and a full run — every route, the OAuth2 flow
//! and the client component's journey — logs no password, secret, token,
//! code, PKCE verifier or cookie value. Its own test binary, because it
//! installs a global subscriber that captures every line.

#[path = "api/database.rs"]
#[allow(dead_code)]
mod database;
#[path = "api/helpers.rs"]
#[allow(dead_code)]
mod helpers;

#[path = "support/log_capture.rs"]
mod log_capture;

use std::sync::OnceLock;

use credencial::demo;
use reqwest::header::HeaderMap;
use serde_json::{json, Value};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::EnvFilter;
use url::Url;

use helpers::{hidden_fields, spawn_app, spawn_demo, with, Browser, Page};
use log_capture::LogCapture;

/// The one capture of this binary, installed on first use.
fn capture() -> &'static LogCapture {
    static CAPTURE: OnceLock<LogCapture> = OnceLock::new();
    CAPTURE.get_or_init(|| {
        let capture = LogCapture::default();
        credencial::telemetry::subscriber("json", EnvFilter::new("debug"), capture.clone())
            .try_init()
            .expect("one subscriber for this binary");
        capture
    })
}

/// Every captured line, each parsed (panics on a line that is not a JSON object).
fn json_lines() -> Vec<Value> {
    capture()
        .text()
        .lines()
        .map(|line| match serde_json::from_str::<Value>(line) {
            Ok(value @ Value::Object(_)) => value,
            _ => panic!("not a JSON object: {line}"),
        })
        .collect()
}

fn request_id_of(headers: &HeaderMap) -> String {
    headers.get("x-request-id").expect("X-Request-Id").to_str().expect("ascii").to_owned()
}

/// The message of the one line a finished request writes.
const REQUEST_LINE: &str = "request finished";

/// Waits until the line that ends request `id` has been written.
async fn wait_for_end_of(id: &str) {
    capture().wait_for_line(|l| l.contains(id) && l.contains(&format!(r#""message":"{REQUEST_LINE}""#))).await;
}

#[tokio::test]
async fn every_line_written_inside_a_request_carries_its_id_at_the_top_level() {
    capture();
    let app = spawn_app().await;
    let get = |path: &str| app.client.get(format!("{}{path}", app.address)).send();
    let ready = get("/readyz").await.expect("sent");
    let unknown_user = app.post_json("/api/token/pair/", &json!({"username": "nobody", "password": "whatever"})).await;
    assert_eq!((ready.status().as_u16(), unknown_user.status().as_u16()), (200, 401));
    app.db.drop_now().await;
    let unavailable = get("/readyz").await.expect("sent");
    assert_eq!(unavailable.status(), 503);
    let ids: Vec<String> = [&ready, &unknown_user, &unavailable].map(|r| request_id_of(r.headers())).into();
    for id in &ids {
        wait_for_end_of(id).await;
    }

    let lines = json_lines();
    let of = |id: &str| lines.iter().filter(|l| l["request_id"] == id).collect::<Vec<_>>();
    // A line names its request once (a JSON parser would keep either of two
    // `request_id` members silently), and no line is a formatted span.
    for raw in capture().text().lines() {
        assert!(raw.matches(r#""request_id":"#).count() <= 1, "request_id twice: {raw}");
    }
    assert!(lines.iter().all(|l| l.get("span").is_none() && l.get("spans").is_none()), "{lines:?}");
    // One line per finished request, with its method, route template,
    // status and latency.
    for (id, method, route, status) in
        [(&ids[0], "GET", "/readyz", 200), (&ids[1], "POST", "/api/token/pair", 401), (&ids[2], "GET", "/readyz", 503)]
    {
        let ends: Vec<_> = of(id).into_iter().filter(|l| l["message"] == REQUEST_LINE).collect();
        assert_eq!(ends.len(), 1, "{ends:?}");
        let end = ends[0];
        assert_eq!(
            (&end["level"], &end["http.method"], &end["http.route"], &end["http.status_code"]),
            (&json!("INFO"), &json!(method), &json!(route), &json!(status)),
            "{end}"
        );
        assert!(end["latency_us"].is_u64(), "{end}");
    }
    // Each request's lines, including what the handlers log inside it.
    let [unknown_user, unavailable] = [of(&ids[1]), of(&ids[2])];
    assert!(
        unknown_user.iter().any(|l| l["level"] == "DEBUG" && l["message"] != REQUEST_LINE),
        "the login's database queries are logged inside it: {unknown_user:?}"
    );
    assert!(
        unavailable.iter().any(|l| l["level"] == "WARN" && l["message"] == "not ready: database unreachable"),
        "{unavailable:?}"
    );
    // A line outside any request has no request id.
    let serving = lines.iter().find(|l| l["message"] == "credencial is serving").expect("start-up line");
    assert!(serving.get("request_id").is_none(), "{serving}");
}

/// What must never be logged, with a name for the failure message.
#[derive(Default)]
struct Secrets(Vec<(String, String)>);

impl Secrets {
    fn add(&mut self, what: &str, value: &str) {
        assert!(value.len() >= 8, "{what} is too short to search for: {value:?}");
        self.0.push((what.to_owned(), value.to_owned()));
    }

    /// A JWT, and its signature on its own.
    fn add_token(&mut self, what: &str, token: &str) {
        self.add(what, token);
        self.add(&format!("{what} (signature)"), token.rsplit('.').next().expect("signature"));
    }

    /// The values of a page's cookies and of its forms' hidden fields.
    fn add_page(&mut self, page: &Page) {
        for cookie in &page.set_cookies {
            let (name, value) = cookie.split(';').next().and_then(|pair| pair.split_once('=')).expect("name=value");
            if !value.is_empty() {
                self.add(&format!("cookie {name}"), value);
            }
        }
        for (name, value) in hidden_fields(&page.body) {
            if name == "csrf_token" {
                self.add("form token", &value);
            }
        }
    }
}

const WRONG_PASSWORD: &str = "not-ana-s-password-42";
const REGISTRY_KEYS: [&str; 3] = ["receita-key-7f3a9c1e5b", "cnes-key-2d8e4f6a0c", "cdp-key-9b1c3e5d7f"];
/// RFC 7636 Appendix B.
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

async fn post_json(browser: &Browser, path: &str, body: Value) -> (u16, Value) {
    let r = browser.client.post(format!("{}{path}", browser.base)).json(&body).send().await.expect("sent");
    (r.status().as_u16(), r.json().await.expect("JSON"))
}

/// The string field `name` of a JSON answer.
fn text(body: &Value, name: &str) -> String {
    body[name].as_str().unwrap_or_else(|| panic!("no {name} in {body}")).to_owned()
}

#[tokio::test]
async fn a_full_run_at_debug_level_logs_no_password_secret_token_code_or_cookie() {
    capture();
    let (mut browser, _db) = spawn_demo(|s| {
        s.registries.receita_api_key = Some(REGISTRY_KEYS[0].into());
        s.registries.cnes_api_key = Some(REGISTRY_KEYS[1].into());
        s.registries.cdp_api_key = Some(REGISTRY_KEYS[2].into());
    })
    .await;
    let ana = &demo::DEMO_USERS[0];
    let mut secrets = Secrets::default();
    secrets.add("password", ana.password);
    secrets.add("wrong password", WRONG_PASSWORD);
    secrets.add("JWT secret", helpers::SECRET);
    secrets.add("client secret", demo::DEMO_CLIENT_SECRET);
    for key in REGISTRY_KEYS {
        secrets.add("registry API key", key);
    }
    secrets.add("PKCE verifier", VERIFIER);

    // The token service: pair (wrong, right), verify, refresh, a tampered refresh, both consume routes.
    let (status, _) =
        post_json(&browser, "/api/token/pair/", json!({"username": ana.username, "password": WRONG_PASSWORD})).await;
    assert_eq!(status, 401);
    // The password typed into the username field, until that "username" is
    // limited: the refusal's log line must not name it.
    let mistyped = json!({"username": ana.password, "password": WRONG_PASSWORD});
    let mut statuses = Vec::new();
    for _ in 0..6 {
        statuses.push(post_json(&browser, "/api/token/pair/", mistyped.clone()).await.0);
    }
    assert_eq!(statuses, [401, 401, 401, 401, 401, 429]);
    let (status, pair) =
        post_json(&browser, "/api/token/pair/", json!({"username": ana.username, "password": ana.password})).await;
    assert_eq!(status, 200, "{pair}");
    let (access, refresh) = (text(&pair, "access"), text(&pair, "refresh"));
    assert_eq!(post_json(&browser, "/api/token/verify/", json!({"token": access})).await.0, 200);
    let (status, renewed) = post_json(&browser, "/api/token/refresh/", json!({"refresh": refresh})).await;
    assert_eq!(status, 200, "{renewed}");
    let (access2, refresh2) = (text(&renewed, "access"), text(&renewed, "refresh"));
    let mut tampered = refresh2.clone();
    let last = if tampered.ends_with('A') { "B" } else { "A" };
    tampered.replace_range(tampered.len() - 1.., last);
    assert_eq!(post_json(&browser, "/api/token/refresh/", json!({"refresh": tampered})).await.0, 401);
    let user_info = browser.client.get(format!("{}/api/token/user-info/", browser.base)).bearer_auth(&access2);
    assert_eq!(user_info.send().await.expect("sent").status(), 200);
    let (status, _) =
        post_json(&browser, "/api/token/rh/eu/", json!({"token": access2, "endpoint": "/api/rh/eu/"})).await;
    assert_eq!(status, 200);
    for (what, token) in [("access", &access), ("refresh", &refresh), ("access", &access2), ("refresh", &refresh2)] {
        secrets.add_token(&format!("{what} token"), token);
    }
    secrets.add("tampered refresh token", &tampered);

    // The OAuth2 provider as a browser and a client drive it: login form,
    // consent, code exchange with PKCE and the client secret, profile read,
    // refresh grant.
    let redirect_uri = format!("{}/auth/callback/", browser.base);
    let query = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs([
            ("response_type", "code"),
            ("client_id", demo::DEMO_CLIENT_ID),
            ("redirect_uri", &redirect_uri),
            ("scope", "receita_federal cnes cursos_cdp"),
            ("state", "state-of-the-run"),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
        ])
        .finish();
    let login = browser.get(&format!("/oauth/authorize/?{query}")).await;
    secrets.add_page(&login);
    let fields = with(hidden_fields(&login.body), &[("username", ana.username), ("password", ana.password)]);
    let logged_in = browser.post("/oauth/authorize/", &fields).await;
    assert_eq!(logged_in.status, 303, "{}", logged_in.body);
    secrets.add_page(&logged_in);
    let consent = browser.get(&logged_in.location.expect("back to the request")).await;
    secrets.add_page(&consent);
    let approved =
        browser.post("/oauth/authorize/", &with(hidden_fields(&consent.body), &[("action", "approve")])).await;
    let location = Url::parse(&approved.location.expect("redirect with the code")).expect("URL");
    let code = location.query_pairs().find(|(k, _)| k == "code").expect("code").1.into_owned();
    secrets.add("authorization code", &code);
    let token_endpoint = format!("{}/oauth/token/", browser.base);
    let exchange =
        browser.client.post(&token_endpoint).basic_auth(demo::DEMO_CLIENT_ID, Some(demo::DEMO_CLIENT_SECRET)).form(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", &redirect_uri),
            ("code_verifier", VERIFIER),
        ]);
    let grant: Value = exchange.send().await.expect("sent").json().await.expect("JSON");
    let (oauth_access, oauth_refresh) = (text(&grant, "access_token"), text(&grant, "refresh_token"));
    let profile = browser.client.post(format!("{}/api/perfil/dados/", browser.base)).bearer_auth(&oauth_access);
    let profile: Value = profile.send().await.expect("sent").json().await.expect("JSON");
    assert!(profile["receita_federal"].is_object() && profile.get("cnes").is_some(), "{profile}");
    let renewal = browser
        .client
        .post(&token_endpoint)
        .basic_auth(demo::DEMO_CLIENT_ID, Some(demo::DEMO_CLIENT_SECRET))
        .form(&[("grant_type", "refresh_token"), ("refresh_token", &oauth_refresh)]);
    let renewed: Value = renewal.send().await.expect("sent").json().await.expect("JSON");
    for (what, key) in [("OAuth access", "access_token"), ("OAuth refresh", "refresh_token")] {
        secrets.add_token(&format!("{what} token"), &text(&grant, key));
        secrets.add_token(&format!("renewed {what} token"), &text(&renewed, key));
    }

    // The client component's journey in a fresh browser: /auth/login/, the
    // provider's login form and consent, /auth/callback/, /auth/me/.
    let mut host = Browser { base: browser.base.clone(), client: browser.client.clone(), jar: Default::default() };
    let start = host.get("/auth/login/").await;
    secrets.add_page(&start);
    let provider_login = host.get(&start.location.expect("to the provider")).await;
    secrets.add_page(&provider_login);
    let fields = with(hidden_fields(&provider_login.body), &[("username", ana.username), ("password", ana.password)]);
    let logged_in = host.post("/oauth/authorize/", &fields).await;
    secrets.add_page(&logged_in);
    let consent = host.get(&logged_in.location.expect("back to the request")).await;
    secrets.add_page(&consent);
    let approved = host.post("/oauth/authorize/", &with(hidden_fields(&consent.body), &[("action", "approve")])).await;
    let back = approved.location.expect("back to the host");
    let code = Url::parse(&back).expect("URL").query_pairs().find(|(k, _)| k == "code").expect("code").1.into_owned();
    secrets.add("the host's authorization code", &code);
    let landed = host.get(&back).await;
    assert_eq!(landed.status, 303, "{}", landed.body);
    secrets.add_page(&landed);
    let me = host.get(&landed.location.expect("to the record")).await;
    assert_eq!(me.status, 200, "{}", me.body);
    assert!(me.body.contains("Ana"), "{}", me.body);

    // The last request: once its line is written, so are the others'.
    let last = host.get("/healthz").await;
    wait_for_end_of(&request_id_of(&last.headers)).await;

    let lines = json_lines();
    assert!(lines.iter().any(|l| l["level"] == "DEBUG"), "the run was logged at debug level");
    // The registry snapshots are written from a task of their own (so that a
    // cancelled request does not lose them); their lines belong to the
    // request that fetched them all the same.
    let snapshot_writes: Vec<&Value> = lines
        .iter()
        .filter(|l| l["db.statement"].as_str().is_some_and(|sql| sql.contains("INSERT INTO scope_snapshots")))
        .collect();
    assert!(!snapshot_writes.is_empty(), "the cold profile read stored its snapshots");
    for line in snapshot_writes {
        assert!(
            line["request_id"].as_str().is_some_and(|id| !id.is_empty()),
            "a snapshot write without its request id: {line}"
        );
    }
    let logs = capture().text();
    for (what, value) in &secrets.0 {
        assert!(!logs.contains(value.as_str()), "the logs leak a {what}: {value}");
    }
    let mut kinds: Vec<&str> = secrets.0.iter().map(|(what, _)| what.as_str()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    eprintln!("{} log lines scanned for {} secret values: {}", lines.len(), secrets.0.len(), kinds.join(", "));
}
