//! `HttpProviderClient` against wiremock on loopback: the authorize URL,
//! the code exchange (form, Basic credentials, answers and refusals) and
//! the profile call.

use std::collections::HashMap;
use std::time::Duration;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use credencial_adapters_upstream::{http_client, BaseUrl, HttpProviderClient, ProviderSettings};
use credencial_domain::oauth::{CodeChallenge, CodeVerifier};
use credencial_domain::ScopeSet;
use credencial_ports::{ProviderClient, ProviderError, UpstreamError};
use secrecy::SecretString;
use serde_json::json;
use url::Url;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const CLIENT_ID: &str = "portal do servidor";
/// Characters that form-urlencoding changes (RFC 6749 §2.3.1).
const CLIENT_SECRET: &str = "s3cr3t+/:é=&";
const REDIRECT_URI: &str = "https://portal.example.gov.br/auth/callback/?from=login";
const CODE: &str = "Sp1TcKLRMRG8PNLQCkUVXxAzMfxGkbBrFEjbhoRIuGI";
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const ACCESS: &str = "eyJhbGciOiJIUzI1NiJ9.eyJ1c2VyX2lkIjoxfQ.c2lnbmF0dXJl";

fn provider_at(base: &str, public_base: &str, timeout: Duration) -> HttpProviderClient {
    HttpProviderClient::new(
        http_client().expect("client"),
        ProviderSettings {
            base: BaseUrl::parse(base).expect("base"),
            public_base: BaseUrl::parse(public_base).expect("public base"),
            client_id: CLIENT_ID.into(),
            client_secret: SecretString::from(CLIENT_SECRET),
            redirect_uri: REDIRECT_URI.into(),
            timeout,
        },
    )
    .expect("valid settings")
}

fn provider(server: &MockServer) -> HttpProviderClient {
    provider_at(&server.uri(), "https://login.example.gov.br", Duration::from_secs(5))
}

/// A provider answering `method path` with `response`.
async fn answering(http_method: &str, at: &str, response: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method(http_method)).and(path(at)).respond_with(response).mount(&server).await;
    server
}

async fn only_request(server: &MockServer) -> Request {
    let mut requests = server.received_requests().await.expect("recording is on");
    assert_eq!(requests.len(), 1, "exactly one request");
    requests.remove(0)
}

fn form_of(request: &Request) -> HashMap<String, String> {
    url::form_urlencoded::parse(&request.body).into_owned().collect()
}

fn header_of<'a>(request: &'a Request, name: &str) -> Option<&'a str> {
    request.headers.get(name).and_then(|v| v.to_str().ok())
}

fn tokens_answer() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "access_token": ACCESS,
        "token_type": "Bearer",
        "expires_in": 300,
        "refresh_token": "refresh-token-text",
        "scope": "dados_publicos cpf email cnes novo_escopo",
    }))
}

fn assert_bad_response<T: std::fmt::Debug>(result: Result<T, ProviderError>, what: &str) {
    assert!(
        matches!(result, Err(ProviderError::Upstream(UpstreamError::BadResponse(_)))),
        "{what}: expected Upstream(BadResponse), got {result:?}"
    );
}

// ------------------------------------------------------------ authorize URL

#[tokio::test]
async fn the_authorize_url_carries_every_parameter_on_the_public_base() {
    let server = MockServer::start().await;
    let start = provider(&server).start(ScopeSet::parse_strict("cnes formacao_academica").expect("known"));

    let url = Url::parse(&start.url).expect("absolute URL");
    assert_eq!(url.origin().ascii_serialization(), "https://login.example.gov.br");
    assert_eq!(url.path(), "/oauth/authorize/");
    let query: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    let names: Vec<&str> = query.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        ["response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method"]
    );
    let query: HashMap<String, String> = query.into_iter().collect();
    assert_eq!(query["response_type"], "code");
    assert_eq!(query["client_id"], CLIENT_ID);
    assert_eq!(query["redirect_uri"], REDIRECT_URI);
    assert_eq!(query["scope"], "cnes formacao_academica");
    assert_eq!(query["state"], start.state);
    assert_eq!(query["code_challenge_method"], "S256");
    assert!(!start.url.contains(' ') && !start.url.contains("?from=login"), "percent-encoded: {}", start.url);
    assert!(server.received_requests().await.expect("recording").is_empty(), "start contacts nothing");
}

#[tokio::test]
async fn the_challenge_is_the_s256_of_the_verifier() {
    let server = MockServer::start().await;
    let start = provider(&server).start(ScopeSet::required());
    let url = Url::parse(&start.url).expect("URL");
    let challenge = url.query_pairs().find(|(k, _)| k == "code_challenge").expect("challenge").1.into_owned();

    let verifier = CodeVerifier::parse(&start.pkce_verifier).expect("a valid RFC 7636 verifier");
    assert_eq!(challenge, CodeChallenge::s256(&verifier).as_str());
    assert!(CodeChallenge::parse_s256(&challenge).expect("S256 form").is_proved_by(&verifier));
    assert_eq!(start.pkce_verifier.len(), 43, "32 random bytes, base64url");
}

#[tokio::test]
async fn state_and_verifier_are_fresh_on_every_start() {
    let server = MockServer::start().await;
    let provider = provider(&server);
    let starts: Vec<_> = (0..8).map(|_| provider.start(ScopeSet::required())).collect();
    let mut seen = std::collections::HashSet::new();
    for start in &starts {
        assert_eq!(start.state.len(), 43);
        assert!(seen.insert(start.state.clone()), "state repeated");
        assert!(seen.insert(start.pkce_verifier.clone()), "verifier repeated");
        assert_ne!(start.state, start.pkce_verifier);
    }
}

// ----------------------------------------------------------------- exchange

#[tokio::test]
async fn the_exchange_posts_the_form_with_basic_credentials_and_decodes_the_tokens() {
    let server = answering("POST", "/oauth/token/", tokens_answer()).await;
    let tokens = provider(&server).exchange_code(CODE, VERIFIER).await.expect("tokens");

    assert_eq!(tokens.access_token.as_str(), ACCESS);
    assert_eq!(tokens.scope, ScopeSet::parse_strict("dados_publicos cpf email cnes").expect("known"));
    assert!(!format!("{tokens:?}").contains(ACCESS), "Debug hides the token");

    let request = only_request(&server).await;
    assert_eq!(header_of(&request, "content-type"), Some("application/x-www-form-urlencoded"));
    assert_eq!(header_of(&request, "accept"), Some("application/json"));
    let form = form_of(&request);
    assert_eq!(form.len(), 4, "{form:?}");
    assert_eq!(form["grant_type"], "authorization_code");
    assert_eq!(form["code"], CODE);
    assert_eq!(form["redirect_uri"], REDIRECT_URI);
    assert_eq!(form["code_verifier"], VERIFIER);
    assert!(!form.contains_key("client_secret"), "client_secret_basic only");

    let basic = header_of(&request, "authorization").expect("Authorization").strip_prefix("Basic ").expect("Basic");
    let decoded = String::from_utf8(STANDARD.decode(basic).expect("base64")).expect("text");
    let (id, secret) = decoded.split_once(':').expect("id:secret");
    assert_eq!((id, secret), ("portal+do+servidor", "s3cr3t%2B%2F%3A%C3%A9%3D%26"), "form-urlencoded");
    let decode =
        |s: &str| url::form_urlencoded::parse(format!("v={s}").as_bytes()).next().expect("pair").1.into_owned();
    assert_eq!((decode(id), decode(secret)), (CLIENT_ID.to_owned(), CLIENT_SECRET.to_owned()));
}

#[tokio::test]
async fn an_invalid_grant_answer_is_refused_with_its_code() {
    let answer = ResponseTemplate::new(400)
        .set_body_json(json!({"error": "invalid_grant", "error_description": "code expired or already used"}));
    let server = answering("POST", "/oauth/token/", answer).await;
    let result = provider(&server).exchange_code(CODE, VERIFIER).await;
    assert_eq!(result, Err(ProviderError::Refused("invalid_grant".into())));
}

#[tokio::test]
async fn an_invalid_client_answer_is_refused_with_its_code() {
    let answer = ResponseTemplate::new(401)
        .insert_header("www-authenticate", "Basic realm=\"credencial\"")
        .set_body_json(json!({"error": "invalid_client", "error_description": "client authentication failed"}));
    let server = answering("POST", "/oauth/token/", answer).await;
    let result = provider(&server).exchange_code(CODE, VERIFIER).await;
    assert_eq!(result, Err(ProviderError::Refused("invalid_client".into())));
}

#[tokio::test]
async fn a_server_error_is_an_upstream_failure_even_with_an_oauth_error_body() {
    for answer in [
        ResponseTemplate::new(500).set_body_string("Internal Server Error"),
        ResponseTemplate::new(503).set_body_json(json!({"error": "temporarily_unavailable"})),
    ] {
        let server = answering("POST", "/oauth/token/", answer).await;
        assert_bad_response(provider(&server).exchange_code(CODE, VERIFIER).await, "5xx");
    }
}

#[tokio::test]
async fn unusable_token_answers_are_upstream_failures() {
    let cases = [
        ("no access_token", ResponseTemplate::new(200).set_body_json(json!({"token_type": "Bearer", "scope": "cpf"}))),
        ("not JSON", ResponseTemplate::new(200).set_body_string("<html>ok</html>")),
        ("a JSON list", ResponseTemplate::new(200).set_body_json(json!(["access_token"]))),
        ("400 without an error", ResponseTemplate::new(400).set_body_string("Bad Request")),
        (
            "too large",
            ResponseTemplate::new(200).set_body_string(format!("{{\"access_token\":\"{}\"}}", "a".repeat(2048))),
        ),
    ];
    for (what, answer) in cases {
        let server = answering("POST", "/oauth/token/", answer).await;
        let provider = provider(&server).with_max_body_bytes(1024);
        assert_bad_response(provider.exchange_code(CODE, VERIFIER).await, what);
    }
}

#[tokio::test]
async fn a_slow_token_endpoint_is_a_timeout() {
    let server = answering("POST", "/oauth/token/", tokens_answer().set_delay(Duration::from_secs(3))).await;
    let provider = provider_at(&server.uri(), &server.uri(), Duration::from_millis(200));
    let started = std::time::Instant::now();
    let result = provider.exchange_code(CODE, VERIFIER).await;
    assert_eq!(result, Err(ProviderError::Upstream(UpstreamError::Timeout)));
    assert!(started.elapsed() < Duration::from_secs(2), "gave up at the time-out");
}

#[tokio::test]
async fn a_redirect_from_the_token_endpoint_is_not_followed() {
    let server = MockServer::start().await;
    let elsewhere = format!("{}/elsewhere/", server.uri());
    Mock::given(path("/oauth/token/"))
        .respond_with(ResponseTemplate::new(307).insert_header("location", elsewhere.as_str()))
        .mount(&server)
        .await;
    Mock::given(path("/elsewhere/")).respond_with(tokens_answer()).mount(&server).await;

    assert_bad_response(provider(&server).exchange_code(CODE, VERIFIER).await, "307");
    let paths: Vec<String> =
        server.received_requests().await.expect("recording").iter().map(|r| r.url.path().to_owned()).collect();
    assert_eq!(paths, ["/oauth/token/"], "the code and verifier went nowhere else");
}

// ------------------------------------------------------------------ profile

#[tokio::test]
async fn the_profile_call_posts_with_the_bearer_token_and_decodes_the_object() {
    let profile = json!({"name": "Ana", "avatar": null, "cpf": "52998224725", "email": "ana@example.gov.br"});
    let server = answering("POST", "/api/perfil/dados/", ResponseTemplate::new(200).set_body_json(&profile)).await;
    let map = provider(&server).fetch_profile(ACCESS).await.expect("profile");
    assert_eq!(serde_json::Value::Object(map), profile);
    let request = only_request(&server).await;
    assert_eq!(header_of(&request, "authorization"), Some(format!("Bearer {ACCESS}").as_str()));
    assert_eq!(header_of(&request, "accept"), Some("application/json"));
}

#[tokio::test]
async fn a_refused_access_token_is_refused_as_invalid_token() {
    let answer = ResponseTemplate::new(401).set_body_json(json!({"detail": "x", "code": "token_not_valid"}));
    let server = answering("POST", "/api/perfil/dados/", answer).await;
    let result = provider(&server).fetch_profile(ACCESS).await;
    assert_eq!(result, Err(ProviderError::Refused("invalid_token".into())));
}

#[tokio::test]
async fn unusable_profile_answers_are_upstream_failures() {
    let cases = [
        ("500", ResponseTemplate::new(500).set_body_json(json!({"detail": "boom"}))),
        ("403", ResponseTemplate::new(403).set_body_json(json!({"detail": "no"}))),
        ("302", ResponseTemplate::new(302).insert_header("location", "http://127.0.0.1:9/")),
        ("not JSON", ResponseTemplate::new(200).set_body_string("<html>")),
        ("not an object", ResponseTemplate::new(200).set_body_json(json!([1, 2]))),
    ];
    for (what, answer) in cases {
        let server = answering("POST", "/api/perfil/dados/", answer).await;
        assert_bad_response(provider(&server).fetch_profile(ACCESS).await, what);
    }
}

#[tokio::test]
async fn a_slow_profile_endpoint_is_a_timeout() {
    let answer = ResponseTemplate::new(200).set_body_json(json!({})).set_delay(Duration::from_secs(3));
    let server = answering("POST", "/api/perfil/dados/", answer).await;
    let provider = provider_at(&server.uri(), &server.uri(), Duration::from_millis(200));
    assert_eq!(provider.fetch_profile(ACCESS).await, Err(ProviderError::Upstream(UpstreamError::Timeout)));
}
