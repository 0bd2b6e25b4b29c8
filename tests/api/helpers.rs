//! `spawn_app()`: the real service on a random port, a fresh database, and
//! a wiremock server behind the upstream base URL.

use std::collections::HashMap;

use credencial::demo;
use credencial::settings::Settings;
use credencial::startup::{hasher, Application, Mode};
use credencial::storage::Storage;
use credencial_domain::{DjangoPbkdf2, UserData, Username};
use credencial_ports::NewUser;

pub use crate::database::TestDatabase;
use reqwest::header::{LOCATION, SET_COOKIE};
use secrecy::SecretString;
use serde_json::Value;
use wiremock::MockServer;

/// The HS256 secret of the test app.
pub const SECRET: &str = "test-secret-of-at-least-thirty-two-bytes!";
/// Iterations for test users (low, so that tests stay fast).
pub const ITERATIONS: u32 = 1_000;

/// A running app and what it talks to.
pub struct TestApp {
    /// `http://127.0.0.1:<port>`.
    pub address: String,
    /// The app's database.
    pub db: TestDatabase,
    /// Stands in for the upstream user-data resource.
    pub upstream: MockServer,
    /// A client that never follows redirects.
    pub client: reqwest::Client,
}

/// The folder of the key pairs the tests sign with (they protect nothing).
pub const TEST_KEYS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/crates/domain/tests/keys");

/// The codec of the tokens the test app issues to client applications:
/// its OpenID Connect key pair (`rsa_private.pem`, RS256), not the HS256
/// secret that first-party tokens share with SUAP-side APIs.
pub fn client_token_codec() -> credencial_domain::TokenCodec {
    let pem = std::fs::read(format!("{TEST_KEYS}/rsa_private.pem")).expect("the test key pair");
    let keys = credencial_domain::JwtKeys::from_private_pem(credencial_domain::JwtAlgorithm::RS256, &pem)
        .expect("an RS256 key");
    credencial_domain::TokenCodec::new(keys, 0).expect("a codec")
}

/// Settings for a test app on `db` with `upstream` as the user-data resource.
pub fn test_settings(db: &TestDatabase, upstream: &MockServer) -> Settings {
    let mut s = Settings::default();
    s.server.bind = "127.0.0.1:0".into();
    s.server.workers = Some(2);
    s.storage.database_url = SecretString::from(db.url.clone());
    s.tokens.jwt_secret = Some(SecretString::from(SECRET));
    // A fixed provider key: making an RSA key per test would cost seconds
    // in a debug build.
    s.tokens.oidc_signing_key_file = Some(format!("{TEST_KEYS}/rsa_private.pem").into());
    s.login.second_factor_key_file = Some(format!("{TEST_KEYS}/second_factor.key").into());
    // The panel's tests sign staff in with a password; the policy's own
    // tests turn it on (tests/api/second_factor.rs).
    s.login.staff_second_factor = Some(false);
    s.login.password_iterations = ITERATIONS;
    s.registries.upstream_base_url = Some(base_url(upstream.uri()));
    s.registries.upstream_timeout_ms = 500;
    s
}

/// `text` as a base URL setting (the loader parses the same text).
pub fn base_url(text: impl AsRef<str>) -> credencial_adapters_upstream::BaseUrl {
    credencial_adapters_upstream::BaseUrl::parse(text.as_ref()).expect("a base URL")
}

/// `text` as an issuer URL setting.
pub fn issuer_url(text: impl AsRef<str>) -> credencial_domain::oauth::discovery::IssuerUrl {
    credencial_domain::oauth::discovery::IssuerUrl::parse(text.as_ref()).expect("an issuer URL")
}

/// Starts the app with default test settings.
pub async fn spawn_app() -> TestApp {
    spawn_app_with(|_| {}).await
}

/// Starts the app after `adjust` has changed the test settings.
pub async fn spawn_app_with(adjust: impl FnOnce(&mut Settings)) -> TestApp {
    // Quiet unless asked: TEST_LOG=1 cargo test …
    spawn_app_on(TestDatabase::new().await, adjust).await
}

/// Starts the app on `db` (e.g. `TestDatabase::postgres()` for what only
/// PostgreSQL does) after `adjust` has changed the test settings.
pub async fn spawn_app_on(db: TestDatabase, adjust: impl FnOnce(&mut Settings)) -> TestApp {
    // Quiet unless asked: TEST_LOG=1 cargo test …
    if std::env::var_os("TEST_LOG").is_some() {
        // One writer for the whole test binary, kept to its end.
        static LOG: std::sync::Once = std::sync::Once::new();
        LOG.call_once(|| std::mem::forget(credencial::telemetry::init("text")));
    }
    let upstream = MockServer::start().await;
    let mut settings = test_settings(&db, &upstream);
    adjust(&mut settings);
    // The storage follows the settings, so a test can point two apps at one database.
    let storage =
        Storage::connect(settings.database_url(), 10, std::time::Duration::from_secs(10)).await.expect("connect");
    let app = Application::build(&settings, Mode::Serve, storage).await.expect("app builds");
    let address = format!("http://127.0.0.1:{}", app.port());
    tokio::spawn(app.run_until_stopped());
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client");
    TestApp { address, db, upstream, client }
}

/// Creates a user with `password` in `db`; returns its id.
pub async fn add_user_to(db: &TestDatabase, username: &str, password: &str, active: bool) -> i64 {
    let hash = DjangoPbkdf2::derive(password, "testsalt", ITERATIONS).expect("hash").encode();
    db.storage()
        .users
        .create(NewUser {
            username: Username::parse(username).expect("username"),
            password_hash: hash,
            is_active: active,
            data: UserData {
                identificacao: format!("id-{username}"),
                nome_usual: format!("Nome {username}"),
                email: format!("{username}@example.gov.br"),
                campus: "Campus Teste".into(),
                tipo_usuario: "Servidor".into(),
            },
            name: format!("Full {username}"),
            cpf: None,
        })
        .await
        .expect("user created")
        .0
}

impl TestApp {
    /// Creates a user with `password`; returns its id.
    pub async fn add_user(&self, username: &str, password: &str, active: bool) -> i64 {
        add_user_to(&self.db, username, password, active).await
    }

    /// POSTs `body` as JSON to `path`.
    pub async fn post_json(&self, path: &str, body: &Value) -> reqwest::Response {
        self.client.post(format!("{}{path}", self.address)).json(body).send().await.expect("request sent")
    }

    /// Logs in and returns `(access, refresh)`.
    pub async fn login(&self, username: &str, password: &str) -> (String, String) {
        let r =
            self.post_json("/api/token/pair/", &serde_json::json!({"username": username, "password": password})).await;
        assert_eq!(r.status(), 200, "login of {username}");
        let body: Value = r.json().await.expect("json");
        (body["access"].as_str().expect("access").to_owned(), body["refresh"].as_str().expect("refresh").to_owned())
    }
}

/// A demo app (seeded users, the `demo-host` client registered for this
/// port) after `adjust`; returns the browser's view and the database.
pub async fn spawn_demo(adjust: impl FnOnce(&mut Settings)) -> (Browser, TestDatabase) {
    let db = TestDatabase::new().await;
    let unused = MockServer::start().await;
    let mut settings = test_settings(&db, &unused);
    settings.registries.upstream_base_url = None;
    adjust(&mut settings);
    let h = hasher(&settings).expect("hasher");
    let storage = db.storage();
    demo::seed(&storage, &h).await.expect("users");
    let app = Application::build(&settings, Mode::Demo, storage.clone()).await.expect("demo builds");
    let base = format!("http://127.0.0.1:{}", app.port());
    demo::seed_client(&storage, &h, &format!("{base}/auth/callback/")).await.expect("client");
    tokio::spawn(app.run_until_stopped());
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client");
    (Browser { base, client, jar: Default::default() }, db)
}

/// Status and JSON body of a response (panics if the body is not JSON).
pub async fn status_and_json(r: reqwest::Response) -> (u16, Value) {
    let status = r.status().as_u16();
    let text = r.text().await.expect("body");
    let json = serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text:?}"));
    (status, json)
}

/// A browser: a cookie jar and a client that never follows redirects.
pub struct Browser {
    /// `http://127.0.0.1:<port>` of the app.
    pub base: String,
    /// A client that never follows redirects.
    pub client: reqwest::Client,
    /// Cookies by name (paths are ignored).
    pub jar: HashMap<String, String>,
}

/// What the browser got back.
#[derive(Debug)]
pub struct Page {
    /// Status code.
    pub status: u16,
    /// `Location`, if any.
    pub location: Option<String>,
    /// Every `Set-Cookie`.
    pub set_cookies: Vec<String>,
    /// All headers.
    pub headers: reqwest::header::HeaderMap,
    /// The body as text.
    pub body: String,
}

impl Browser {
    /// A browser with an empty jar on `app`.
    pub fn new(app: &TestApp) -> Self {
        Self::new_at(&app.address, app.client.clone())
    }

    /// A browser with an empty jar on the app at `base`, through `client`.
    pub fn new_at(base: &str, client: reqwest::Client) -> Self {
        Self { base: base.to_owned(), client, jar: HashMap::new() }
    }

    fn cookie_header(&self) -> String {
        self.jar.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; ")
    }

    /// Sends `request` with the jar's cookies and keeps the cookies set.
    pub async fn send(&mut self, request: reqwest::RequestBuilder) -> Page {
        let request = if self.jar.is_empty() { request } else { request.header("cookie", self.cookie_header()) };
        let r = request.send().await.expect("sent");
        let set_cookies: Vec<String> =
            r.headers().get_all(SET_COOKIE).iter().map(|v| v.to_str().expect("ascii").to_owned()).collect();
        for c in &set_cookies {
            let (pair, attributes) = c.split_once(';').unwrap_or((c, ""));
            let (name, value) = pair.split_once('=').expect("name=value");
            if attributes.contains("Max-Age=0") {
                self.jar.remove(name);
            } else {
                self.jar.insert(name.to_owned(), value.to_owned());
            }
        }
        let location = r.headers().get(LOCATION).map(|v| v.to_str().expect("ascii").to_owned());
        let headers = r.headers().clone();
        Page { status: r.status().as_u16(), location, set_cookies, headers, body: r.text().await.expect("body") }
    }

    /// GETs a path of the app, or an absolute URL.
    pub async fn get(&mut self, path_and_query: &str) -> Page {
        let url = if path_and_query.starts_with("http") {
            path_and_query.to_owned()
        } else {
            format!("{}{path_and_query}", self.base)
        };
        let request = self.client.get(url);
        self.send(request).await
    }

    /// POSTs `fields` as a form to a path of the app.
    pub async fn post(&mut self, path: &str, fields: &[(String, String)]) -> Page {
        let request = self.client.post(format!("{}{path}", self.base)).form(fields);
        self.send(request).await
    }
}

/// Decodes the character references that a page's templates write
/// (askama writes `&#60;`, `&#34;`, …; the named ones are accepted too).
pub fn unescape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let Some(end) = rest.find(';').filter(|&end| end <= 10) else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let entity = &rest[1..end];
        let decoded = match entity {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            "amp" => Some('&'),
            _ => entity
                .strip_prefix("#x")
                .map(|hex| u32::from_str_radix(hex, 16))
                .or_else(|| entity.strip_prefix('#').map(str::parse::<u32>))
                .and_then(|code| code.ok())
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The hidden fields of a page's form (`<input type="hidden" name="X"
/// value="Y">`, in that order), unescaped.
pub fn hidden_fields(html: &str) -> Vec<(String, String)> {
    html.split("<input type=\"hidden\" name=\"")
        .skip(1)
        .map(|rest| {
            let (name, rest) = rest.split_once("\" value=\"").expect("value");
            let (value, _) = rest.split_once('"').expect("end of value");
            (unescape_html(name), unescape_html(value))
        })
        .collect()
}

/// `fields` and `extra`.
pub fn with(mut fields: Vec<(String, String)>, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    fields.extend(extra.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    fields
}

#[test]
fn hidden_fields_decode_the_references_the_templates_write() {
    let page = "<input type=\"hidden\" name=\"state\" value=\"&#60;a&#62; &#34;b&#34; &#39;c&#39; &#38;amp; &amp;x &#x41; & ;\">\n\
                <input type=\"hidden\" name=\"csrf_token\" value=\"t\">";
    assert_eq!(
        hidden_fields(page),
        [("state".to_owned(), "<a> \"b\" 'c' &amp; &x A & ;".to_owned()), ("csrf_token".to_owned(), "t".to_owned())]
    );
}
