//! HEAD on every route that answers GET (RFC 9110 §9.3.2): the same status
//! and the same headers as the GET, and no content. The routes are the
//! server's own inventory (the one the OpenAPI test compares with the
//! description), on a demo app with the metrics on, so that every route is
//! mounted: the API, the pages of `/oauth/`, `/conta/`, `/admin/` and
//! `/auth/`, `/healthz`, `/readyz`, `/.well-known/*`, `/metrics` and the
//! sandboxes. Each is asked anonymously, as a person signed in (with the
//! route's credentials) and as a staff user, over raw HTTP/1.1, so that the
//! test sees the bytes the server writes after the head.

use std::collections::BTreeSet;

use credencial::demo;
use credencial_application::ApiTokenService;
use credencial_domain::admin::{Actor, ApiPermissions};
use credencial_domain::oauth::ClientId;
use credencial_domain::{ScopeSet, UserId};
use secrecy::ExposeSecret;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::account::log_in_at_account;
use crate::helpers::{spawn_demo, Browser};
use crate::profile::now;

/// One answer as it came over the wire.
#[derive(Debug)]
struct Answer {
    status: u16,
    /// Every header, lower-cased names, in the order sent.
    headers: Vec<(String, String)>,
    /// Every byte after the head.
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// Sends `method path` with `headers` on a connection of its own (closed by
/// the server after the answer) and reads everything the server writes.
async fn raw(address: &str, method: &str, path: &str, headers: &[(String, String)]) -> Answer {
    let host = address.trim_start_matches("http://");
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    let mut stream = tokio::net::TcpStream::connect(host).await.expect("connect");
    stream.write_all(request.as_bytes()).await.expect("request written");
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).await.expect("answer read");
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or_else(|| panic!("{method} {path}: no head"));
    let head = String::from_utf8(bytes[..end].to_vec()).expect("ASCII head");
    let mut lines = head.split("\r\n");
    let status = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok()).expect("status line");
    let headers = lines
        .map(|l| {
            let (name, value) = l.split_once(':').expect("name: value");
            (name.to_ascii_lowercase(), value.trim().to_owned())
        })
        .collect();
    Answer { status, headers, body: bytes[end + 4..].to_vec() }
}

/// The query parameters whose values are made afresh for every request
/// (a login's state and PKCE challenge, an authorization code).
const FRESH_PARAMETERS: [&str; 4] = ["state", "nonce", "code_challenge", "code"];

/// The headers of an answer, sorted, with the values made afresh for every
/// request masked: `Date`, `X-Request-Id`, a cookie's value (its name and
/// attributes kept), the fresh parameters of a `Location`; and, for the
/// metrics, whose text counts the requests themselves, the length.
fn comparable(path: &str, answer: &Answer) -> Vec<(String, String)> {
    let mut headers: Vec<(String, String)> = answer
        .headers
        .iter()
        .map(|(name, value)| {
            let value = match name.as_str() {
                "date" | "x-request-id" => "…".to_owned(),
                "content-length" if bare(path) == "/metrics" => "…".to_owned(),
                "set-cookie" => match value.split_once('=') {
                    Some((cookie, rest)) => {
                        format!("{cookie}=…{}", rest.find(';').map(|i| &rest[i..]).unwrap_or(""))
                    }
                    None => value.clone(),
                },
                "location" => match value.split_once('?') {
                    Some((target, query)) => {
                        let query: Vec<String> = query
                            .split('&')
                            .map(|pair| match pair.split_once('=') {
                                Some((k, _)) if FRESH_PARAMETERS.contains(&k) => format!("{k}=…"),
                                _ => pair.to_owned(),
                            })
                            .collect();
                        format!("{target}?{}", query.join("&"))
                    }
                    None => value.clone(),
                },
                _ => value.clone(),
            };
            (name.clone(), value)
        })
        .collect();
    headers.sort();
    headers
}

/// A path without its trailing slash (the server answers both).
fn bare(path: &str) -> &str {
    match path.trim_end_matches('/') {
        "" => "/",
        p => p,
    }
}

/// What the walk fills the routes' parameters and credentials with.
struct Fixture {
    ana: i64,
    experience: i64,
    degree: i64,
    /// A first-party access token of ana (`/api/token/*`).
    access: String,
    /// An OAuth2 access token of ana with `openid` (`/oauth/userinfo/`).
    openid: String,
    /// A user-management API token of `demo-host` (`/usuarios/`).
    api_token: String,
    redirect_uri: String,
}

/// The path and query a pattern of the inventory is asked at; panics on a
/// parameter it does not know, so that a new route gets its values here.
fn concrete(pattern: &str, f: &Fixture) -> String {
    let path = bare(pattern);
    let path = if path.starts_with("/conta/experiencias/") {
        path.replace("{id}", &f.experience.to_string())
    } else if path.starts_with("/conta/formacoes/") {
        path.replace("{id}", &f.degree.to_string())
    } else {
        path.replace("{id}", &f.ana.to_string())
    };
    let path =
        path.replace("{client_id}", demo::DEMO_CLIENT_ID).replace("{cpf_ou_email}", ANA_CPF).replace("{cpf}", ANA_CPF);
    // A reset link of the right shape that was never issued (410 both ways).
    let path = path.replace("{token}", &"A".repeat(43));
    // The demo's gov.br sandbox.
    let path = path.replace("{provider}", "govbr");
    assert!(!path.contains('{'), "{pattern}: a parameter this test does not fill");
    let query = match path.as_str() {
        "/usuarios" => format!("?cpfs={ANA_CPF}"),
        "/oauth/authorize" => format!(
            "?response_type=code&client_id={}&redirect_uri={}&scope=openid&state=s1",
            demo::DEMO_CLIENT_ID,
            url::form_urlencoded::byte_serialize(f.redirect_uri.as_bytes()).collect::<String>()
        ),
        "/admin/usuarios" => "?q=ana".to_owned(),
        _ => String::new(),
    };
    format!("{path}/{query}")
}

/// The credentials a route reads besides the login session.
fn credentials(path: &str, f: &Fixture) -> Option<(String, String)> {
    let authorization = |value: String| Some(("Authorization".to_owned(), value));
    if ["/api/token/user-info", "/api/token/rh/eu", "/_sandbox/rh/api/rh/eu"].iter().any(|p| path.starts_with(p)) {
        authorization(format!("Bearer {}", f.access))
    } else if path.starts_with("/oauth/userinfo") {
        authorization(format!("Bearer {}", f.openid))
    } else if path.starts_with("/usuarios") {
        authorization(format!("Token {}", f.api_token))
    } else {
        None
    }
}

/// The demo's ana (a full profile).
const ANA_CPF: &str = "52998224725";

/// A `Cookie` header with the login session of `username`.
async fn session(browser: &Browser, username: &str, password: &str) -> (String, String) {
    let mut browser = Browser::new_at(&browser.base, browser.client.clone());
    let answer = log_in_at_account(&mut browser, "/conta/", username, password).await;
    assert_eq!(answer.status, 303, "{username} logs in: {}", answer.body);
    let cookie = browser.jar.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; ");
    ("Cookie".to_owned(), cookie)
}

#[tokio::test]
async fn head_answers_every_get_route_with_the_status_and_headers_of_the_get_and_no_content() {
    let (browser, db) = spawn_demo(|s| s.server.metrics_enabled = Some(true)).await;
    let base = browser.base.clone();

    let r = browser.client.get(format!("{base}{}", credencial_app_actix::routes::INVENTORY_PATH)).send().await;
    let mounted: BTreeSet<String> = r.expect("sent").json().await.expect("JSON list");
    let mut patterns: BTreeSet<&str> =
        mounted.iter().map(|p| bare(p)).filter(|p| *p != credencial_app_actix::routes::INVENTORY_PATH).collect();
    for page in ["/conta/entrar", "/admin", "/auth/login", "/healthz", "/.well-known/jwks.json", "/metrics"] {
        assert!(patterns.contains(page), "every route is mounted: {page} in {patterns:?}");
    }
    assert!(patterns.iter().any(|p| p.starts_with("/_sandbox")), "the sandboxes too: {patterns:?}");
    // A path no route serves: the same 404 either way.
    patterns.insert("/nowhere");

    let ana: i64 =
        sqlx::query_scalar("SELECT id FROM users WHERE username = 'ana'").fetch_one(&db.pool).await.expect("ana");
    let entry = |table: &str| format!("SELECT id FROM {table} WHERE user_id = $1 ORDER BY id LIMIT 1");
    let experience: i64 = sqlx::query_scalar(&entry("experiences")).bind(ana).fetch_one(&db.pool).await.expect("one");
    let degree: i64 = sqlx::query_scalar(&entry("degrees")).bind(ana).fetch_one(&db.pool).await.expect("one");
    let pair: serde_json::Value = browser
        .client
        .post(format!("{base}/api/token/pair/"))
        .json(&json!({"username": "ana", "password": "ana-demo-2026"}))
        .send()
        .await
        .expect("sent")
        .json()
        .await
        .expect("pair");
    let api_token = ApiTokenService::new(db.storage().directory)
        .issue(
            &Actor::Cli { os_user: "test".into() },
            &ClientId::parse(demo::DEMO_CLIENT_ID).expect("client id"),
            ApiPermissions::parse("users:read").expect("permissions"),
        )
        .await
        .expect("issued")
        .expect("demo-host exists")
        .expose_secret()
        .to_owned();
    let fixture = Fixture {
        ana,
        experience,
        degree,
        access: pair["access"].as_str().expect("access").to_owned(),
        openid: crate::profile::token(ana, "openid", demo::DEMO_CLIENT_ID, 300),
        api_token,
        redirect_uri: format!("{base}/auth/callback/"),
    };
    // ana's consent to demo-host, which her OAuth2 token needs at userinfo.
    db.storage()
        .grants
        .widen(UserId(ana), &ClientId::parse(demo::DEMO_CLIENT_ID).expect("client id"), ScopeSet::all(), now())
        .await
        .expect("grant");
    let person = session(&browser, "ana", "ana-demo-2026").await;
    let staff = session(&browser, "admin", "admin-demo-2026").await;

    let mut answered_get = BTreeSet::new();
    for pattern in &patterns {
        let path = concrete(pattern, &fixture);
        let signed_in = |cookie: &(String, String)| {
            let mut headers = vec![cookie.clone()];
            headers.extend(credentials(&path, &fixture));
            headers
        };
        for (who, headers) in [("anonymous", vec![]), ("ana", signed_in(&person)), ("admin", signed_in(&staff))] {
            let what = format!("{path} as {who}");
            let get = raw(&base, "GET", &path, &headers).await;
            let head = raw(&base, "HEAD", &path, &headers).await;
            assert!(head.body.is_empty(), "{what}: HEAD wrote {} bytes after the head", head.body.len());
            if get.status == 405 {
                // A route without GET refuses HEAD too, and says what it answers.
                let allow = get.header("allow").expect("Allow");
                assert_eq!((head.status, head.header("allow")), (405, Some(allow)), "{what}");
                assert!(!allow.contains("HEAD"), "{what}: {allow}");
                continue;
            }
            answered_get.insert(bare(pattern).to_owned());
            if let Some(length) = get.header("content-length") {
                assert_eq!(length, get.body.len().to_string(), "{what}: the GET's length");
            }
            assert_eq!(head.status, get.status, "{what}: {:?}", String::from_utf8_lossy(&get.body));
            assert_eq!(comparable(&path, &head), comparable(&path, &get), "{what}: the headers");
        }
    }
    // The walk reached the routes it is about.
    for page in [
        "/healthz",
        "/readyz",
        "/.well-known/jwks.json",
        "/.well-known/openid-configuration",
        "/api/openapi.json",
        "/metrics",
        "/oauth/authorize",
        "/conta",
        "/conta/experiencias/{id}",
        "/admin/usuarios/{id}",
        "/auth/login",
        "/usuarios/{cpf_ou_email}",
        "/api/token/user-info",
        "/oauth/userinfo",
    ] {
        assert!(answered_get.contains(page), "{page} answered GET: {answered_get:?}");
    }
}

#[tokio::test]
async fn head_answers_with_the_length_get_would_send_and_then_nothing() {
    let (browser, _db) = spawn_demo(|_| {}).await;
    for path in ["/healthz", "/api/openapi.json", "/.well-known/openid-configuration"] {
        let get = raw(&browser.base, "GET", path, &[]).await;
        let head = raw(&browser.base, "HEAD", path, &[]).await;
        assert_eq!((get.status, head.status), (200, 200), "{path}");
        let length = get.body.len().to_string();
        assert!(get.body.len() > 2, "{path}: a body to leave out");
        assert_eq!(head.header("content-length"), Some(length.as_str()), "{path}");
        assert_eq!(head.header("content-type"), get.header("content-type"), "{path}");
        assert!(head.body.is_empty(), "{path}");
    }
}

#[tokio::test]
async fn a_wrong_method_lists_head_wherever_it_lists_get() {
    let (browser, _db) = spawn_demo(|_| {}).await;
    for (method, path, allow) in [
        ("POST", "/healthz", "GET, HEAD"),
        ("DELETE", "/.well-known/jwks.json", "GET, HEAD"),
        ("PUT", "/conta/entrar/", "GET, HEAD, POST"),
        ("PATCH", "/api/token/user-info/", "GET, HEAD, POST"),
        ("HEAD", "/api/token/pair/", "POST"),
        ("HEAD", "/oauth/token/", "POST"),
    ] {
        let answer = raw(&browser.base, method, path, &[]).await;
        assert_eq!((answer.status, answer.header("allow")), (405, Some(allow)), "{method} {path}");
    }
}
