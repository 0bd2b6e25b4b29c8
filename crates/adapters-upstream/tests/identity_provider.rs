//! The brokered login's adapter against a real OpenID provider on
//! loopback (wiremock): discovery, keys, the code's redemption and every
//! refusal — a foreign `nonce`, issuer or audience, an expired token, a bad
//! signature, an unknown key id, the provider down, slow or refusing, and
//! endpoints or redirects pointing at another host.

use std::time::Duration;

use base64::Engine as _;
use credencial_adapters_upstream::{
    http_client, HttpIdentityProvider, IdentityProviderSettings, InvalidIdentityProvider,
};
use credencial_domain::federation::id_token::IdTokenRejection;
use credencial_domain::oauth::id_token::at_hash;
use credencial_ports::{FederationError, IdentityProvider, UpstreamError};
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{json, Value};
use sha2::Digest as _;
use url::Url;
use wiremock::matchers::{body_string_contains, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const RSA_KEY: &[u8] = include_bytes!("../../domain/tests/keys/rsa_private.pem");
const OTHER_RSA_KEY: &[u8] = include_bytes!("../../domain/tests/keys/rsa_other_private.pem");
const CLIENT: &str = "credencial-local";
const SECRET: &str = "segredo do cliente";
const REDIRECT: &str = "http://127.0.0.1:8000/conta/entrar/govbr/retorno/";
const NOW: i64 = 1_800_000_000;

/// A provider on loopback: its issuer is the server's URL with a slash.
struct Provider {
    server: MockServer,
    issuer: String,
}

impl Provider {
    async fn start() -> Self {
        let server = MockServer::start().await;
        let issuer = format!("{}/", server.uri());
        Self { server, issuer }
    }

    /// Serves a discovery document naming this server's endpoints.
    async fn discovery(&self, expected_calls: u64) {
        let uri = self.server.uri();
        Mock::given(method("GET"))
            .and(path("/.well-known/openid-configuration"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "issuer": self.issuer,
                "authorization_endpoint": format!("{uri}/authorize"),
                "token_endpoint": format!("{uri}/token"),
                "jwks_uri": format!("{uri}/jwk"),
                "end_session_endpoint": format!("{uri}/logout"),
            })))
            .expect(expected_calls)
            .mount(&self.server)
            .await;
    }

    /// Serves the key set of `keys` (PEM, key id), at most `times` times.
    async fn keys(&self, keys: &[(&[u8], &str)], times: Option<u64>) {
        let set: Vec<Jwk> = keys.iter().map(|(pem, kid)| jwk(pem, kid)).collect();
        let mock = Mock::given(method("GET"))
            .and(path("/jwk"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({"keys": set})));
        match times {
            Some(0) => mock.expect(0).mount(&self.server).await,
            Some(n) => mock.up_to_n_times(n).expect(n).mount(&self.server).await,
            None => mock.mount(&self.server).await,
        }
    }

    /// Answers the token request with `id_token` (and an access token).
    async fn token_answer(&self, id_token: String) {
        Mock::given(method("POST"))
            .and(path("/token"))
            .and(body_string_contains("code_verifier=verificador"))
            .and(body_string_contains("grant_type=authorization_code"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "access_token": "at-1", "token_type": "Bearer", "id_token": id_token, "expires_in": 60,
            })))
            .mount(&self.server)
            .await;
    }

    fn adapter(&self) -> HttpIdentityProvider {
        HttpIdentityProvider::new(http_client().expect("client"), settings(&self.issuer)).expect("valid settings")
    }

    /// The claims of a good ID token of this provider for this login.
    fn claims(&self) -> Value {
        json!({
            "iss": self.issuer, "aud": CLIENT, "sub": "52998224725", "exp": NOW + 60, "iat": NOW,
            "nonce": "nonce-1", "at_hash": at_hash("at-1"), "email_verified": "true",
        })
    }
}

fn settings(issuer: &str) -> IdentityProviderSettings {
    IdentityProviderSettings {
        issuer: issuer.to_owned(),
        client_id: CLIENT.into(),
        client_secret: SECRET.to_owned().into(),
        scopes: ["openid", "email", "profile", "govbr_confiabilidades"].map(String::from).to_vec(),
        algorithms: vec![Algorithm::RS256],
        logout_url: None,
        timeout: Duration::from_secs(2),
        keys_refresh: Duration::from_secs(1),
    }
}

fn jwk(pem: &[u8], kid: &str) -> Jwk {
    let mut jwk = Jwk::from_encoding_key(&EncodingKey::from_rsa_pem(pem).expect("PEM"), Algorithm::RS256).expect("JWK");
    jwk.common.key_id = Some(kid.to_owned());
    jwk
}

fn sign(claims: &Value, pem: &[u8], kid: Option<&str>) -> String {
    let mut header = Header::new(Algorithm::RS256);
    header.kid = kid.map(str::to_owned);
    jsonwebtoken::encode(&header, claims, &EncodingKey::from_rsa_pem(pem).expect("PEM")).expect("signs")
}

async fn finish(adapter: &HttpIdentityProvider) -> Result<serde_json::Map<String, Value>, FederationError> {
    adapter.finish("code-1", "verificador", "nonce-1", REDIRECT, NOW).await.map(|verified| verified.claims)
}

#[tokio::test]
async fn a_login_starts_with_pkce_state_and_nonce_on_the_discovered_endpoint_fetched_once() {
    let provider = Provider::start().await;
    provider.discovery(1).await;
    let adapter = provider.adapter();
    let first = adapter.start(REDIRECT).await.expect("starts");
    let second = adapter.start(REDIRECT).await.expect("starts again from the cache");
    let url = Url::parse(&first.url).expect("a URL");
    assert_eq!(url.path(), "/authorize");
    let query: std::collections::HashMap<_, _> = url.query_pairs().into_owned().collect();
    assert_eq!(query["response_type"], "code");
    assert_eq!(query["client_id"], CLIENT);
    assert_eq!(query["redirect_uri"], REDIRECT);
    assert_eq!(query["scope"], "openid email profile govbr_confiabilidades");
    assert_eq!(query["code_challenge_method"], "S256");
    assert_eq!(&query["state"], first.state.expose());
    assert_eq!(&query["nonce"], first.nonce.expose());
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(sha2::Sha256::digest(first.pkce_verifier.expose().as_bytes()));
    assert_eq!(query["code_challenge"], challenge, "S256 of the verifier, never the verifier");
    assert_ne!(first.state, second.state);
    assert_ne!(first.nonce, second.nonce);
}

#[tokio::test]
async fn a_good_code_gives_the_verified_claims_and_the_secret_goes_by_basic() {
    let provider = Provider::start().await;
    provider.discovery(1).await;
    provider.keys(&[(RSA_KEY, "k1")], None).await;
    Mock::given(method("POST"))
        .and(path("/token"))
        .and(header("authorization", "Basic Y3JlZGVuY2lhbC1sb2NhbDpzZWdyZWRvK2RvK2NsaWVudGU="))
        .and(body_string_contains("code=code-1"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "access_token": "at-1", "token_type": "Bearer", "id_token": sign(&provider.claims(), RSA_KEY, Some("k1")),
        })))
        .expect(1)
        .mount(&provider.server)
        .await;
    let claims = finish(&provider.adapter()).await.expect("verified");
    assert_eq!(claims["sub"], "52998224725");
    assert_eq!(claims["email_verified"], "true");
}

#[tokio::test]
async fn an_id_token_for_another_login_issuer_or_client_or_expired_is_refused() {
    for (change, refusal) in [
        (json!({"nonce": "nonce-2"}), IdTokenRejection::Nonce),
        (json!({"iss": "https://sso.acesso.gov.br/"}), IdTokenRejection::Issuer),
        (json!({"aud": "another-client"}), IdTokenRejection::Audience),
        (json!({"exp": NOW - 120}), IdTokenRejection::Expired),
        (json!({"at_hash": at_hash("at-2")}), IdTokenRejection::AccessTokenHash),
    ] {
        let provider = Provider::start().await;
        provider.discovery(1).await;
        provider.keys(&[(RSA_KEY, "k1")], None).await;
        let mut claims = provider.claims();
        for (name, value) in change.as_object().expect("object") {
            claims[name] = value.clone();
        }
        provider.token_answer(sign(&claims, RSA_KEY, Some("k1"))).await;
        assert_eq!(finish(&provider.adapter()).await, Err(FederationError::Rejected(refusal)), "{change}");
    }
}

#[tokio::test]
async fn a_signature_by_another_key_or_an_unpinned_algorithm_is_refused() {
    let provider = Provider::start().await;
    provider.discovery(1).await;
    provider.keys(&[(RSA_KEY, "k1")], None).await;
    let adapter = provider.adapter();
    provider.token_answer(sign(&provider.claims(), OTHER_RSA_KEY, Some("k1"))).await;
    assert_eq!(finish(&adapter).await, Err(FederationError::Signature));

    // HS256 with the provider's key material as the secret: the algorithm
    // confusion attack; only the pinned RS256 is taken.
    let provider = Provider::start().await;
    provider.discovery(1).await;
    provider.keys(&[(RSA_KEY, "k1")], None).await;
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some("k1".into());
    let forged = jsonwebtoken::encode(&header, &provider.claims(), &EncodingKey::from_secret(RSA_KEY)).expect("signs");
    provider.token_answer(forged).await;
    assert_eq!(finish(&provider.adapter()).await, Err(FederationError::Signature));
}

/// A provider whose key set held only k1 when the adapter (with
/// `keys_refresh`) verified a first token by it, now ready for the test's
/// next answers (discovery is not fetched again).
async fn after_a_first_login(keys_refresh: Duration) -> (Provider, HttpIdentityProvider) {
    let provider = Provider::start().await;
    provider.discovery(1).await;
    provider.keys(&[(RSA_KEY, "k1")], Some(1)).await;
    let adapter = HttpIdentityProvider::new(
        http_client().expect("client"),
        IdentityProviderSettings { keys_refresh, ..settings(&provider.issuer) },
    )
    .expect("valid");
    provider.token_answer(sign(&provider.claims(), RSA_KEY, Some("k1"))).await;
    finish(&adapter).await.expect("k1 verifies");
    provider.server.reset().await;
    provider.discovery(0).await;
    (provider, adapter)
}

#[tokio::test]
async fn an_unknown_key_id_refreshes_the_keys_once_and_then_verifies() {
    // The provider then rotates to k2.
    let (provider, adapter) = after_a_first_login(Duration::from_secs(1)).await;
    provider.keys(&[(RSA_KEY, "k1"), (OTHER_RSA_KEY, "k2")], Some(1)).await;
    // Past the least time between two fetches for an unknown key id.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    provider.token_answer(sign(&provider.claims(), OTHER_RSA_KEY, Some("k2"))).await;
    finish(&adapter).await.expect("k2 verifies after one refresh");
    finish(&adapter).await.expect("k2 again, from the cache");
}

#[tokio::test]
async fn made_up_key_ids_do_not_refetch_the_keys_within_the_refresh_interval() {
    let (provider, adapter) = after_a_first_login(Duration::from_secs(600)).await;
    provider.keys(&[(RSA_KEY, "k1")], Some(0)).await;
    for kid in ["made-up-1", "made-up-2"] {
        provider.token_answer(sign(&provider.claims(), RSA_KEY, Some(kid))).await;
        assert_eq!(finish(&adapter).await, Err(FederationError::Signature), "{kid}");
    }
}

#[tokio::test]
async fn keys_that_cannot_be_fetched_again_are_still_used_and_a_failure_is_not_retried_at_once() {
    // The key set now fails; a token of an unknown key id asks for it once.
    let (provider, adapter) = after_a_first_login(Duration::from_secs(1)).await;
    Mock::given(method("GET"))
        .and(path("/jwk"))
        .respond_with(ResponseTemplate::new(503))
        .expect(1)
        .mount(&provider.server)
        .await;
    provider.token_answer(sign(&provider.claims(), RSA_KEY, Some("k9"))).await;
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    assert_eq!(finish(&adapter).await, Err(FederationError::Signature), "k9 is in no set it has");
    assert_eq!(finish(&adapter).await, Err(FederationError::Signature), "the failure is remembered: no second fetch");
    Mock::given(method("POST"))
        .and(path("/token"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "access_token": "at-1", "id_token": sign(&provider.claims(), RSA_KEY, Some("k1")),
        })))
        .with_priority(1)
        .mount(&provider.server)
        .await;
    finish(&adapter).await.expect("the last keys still verify k1");
}

#[tokio::test]
async fn the_provider_s_refusal_is_its_error_code() {
    let provider = Provider::start().await;
    provider.discovery(1).await;
    Mock::given(method("POST"))
        .and(path("/token"))
        .respond_with(
            ResponseTemplate::new(400)
                .set_body_json(json!({"error": "invalid_grant", "error_description": "código expirado"})),
        )
        .mount(&provider.server)
        .await;
    assert_eq!(finish(&provider.adapter()).await, Err(FederationError::Refused("invalid_grant".into())));
}

#[tokio::test]
async fn a_provider_down_or_slow_is_an_upstream_failure() {
    // A port nothing listens on (wiremock's servers are pooled: a dropped
    // one may serve another test).
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("address").port();
    let issuer = format!("http://127.0.0.1:{port}/");
    let down = HttpIdentityProvider::new(http_client().expect("client"), settings(&issuer)).expect("valid");
    assert!(matches!(down.start(REDIRECT).await, Err(FederationError::Upstream(UpstreamError::BadResponse(_)))));

    let provider = Provider::start().await;
    provider.discovery(1).await;
    provider.keys(&[(RSA_KEY, "k1")], None).await;
    Mock::given(method("POST"))
        .and(path("/token"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(4)))
        .mount(&provider.server)
        .await;
    assert_eq!(finish(&provider.adapter()).await, Err(FederationError::Upstream(UpstreamError::Timeout)));
}

#[tokio::test]
async fn endpoints_on_another_host_and_redirects_send_nothing_there() {
    let elsewhere = MockServer::start().await;
    Mock::given(wiremock::matchers::any()).respond_with(ResponseTemplate::new(200)).expect(0).mount(&elsewhere).await;

    // A key-set URL on another host: the discovery document is refused.
    let provider = Provider::start().await;
    Mock::given(method("GET"))
        .and(path("/.well-known/openid-configuration"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "issuer": provider.issuer,
            "authorization_endpoint": format!("{}/authorize", provider.server.uri()),
            "token_endpoint": format!("{}/token", provider.server.uri()),
            "jwks_uri": format!("{}/jwk", elsewhere.uri()),
        })))
        .mount(&provider.server)
        .await;
    assert!(matches!(
        provider.adapter().start(REDIRECT).await,
        Err(FederationError::Upstream(UpstreamError::BadResponse(_)))
    ));

    // A token endpoint that redirects elsewhere: not followed.
    let provider = Provider::start().await;
    provider.discovery(1).await;
    Mock::given(method("POST"))
        .and(path("/token"))
        .respond_with(ResponseTemplate::new(307).insert_header("location", format!("{}/token", elsewhere.uri())))
        .mount(&provider.server)
        .await;
    assert!(matches!(finish(&provider.adapter()).await, Err(FederationError::Upstream(UpstreamError::BadResponse(_)))));

    // A discovery document of another issuer.
    let provider = Provider::start().await;
    Mock::given(method("GET"))
        .and(path("/.well-known/openid-configuration"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"issuer": elsewhere.uri()})))
        .mount(&provider.server)
        .await;
    assert!(matches!(
        provider.adapter().start(REDIRECT).await,
        Err(FederationError::Upstream(UpstreamError::BadResponse(_)))
    ));
}

#[tokio::test]
async fn logout_goes_through_the_provider_s_end_session_endpoint_and_back_with_the_id_token_as_hint() {
    let provider = Provider::start().await;
    provider.discovery(1).await;
    let adapter = provider.adapter();
    let url = adapter
        .logout_url("http://127.0.0.1:8000/conta/saiu/", Some("the.id.token"))
        .await
        .expect("known")
        .expect("has one");
    let url = Url::parse(&url).expect("a URL");
    assert_eq!(url.path(), "/logout");
    let query: std::collections::HashMap<String, String> = url.query_pairs().into_owned().collect();
    assert_eq!(query["post_logout_redirect_uri"], "http://127.0.0.1:8000/conta/saiu/");
    assert_eq!(query["id_token_hint"], "the.id.token");
    assert_eq!(query["client_id"], CLIENT);
    let without = adapter.logout_url("http://127.0.0.1:8000/conta/saiu/", None).await.expect("known").expect("one");
    assert!(!without.contains("id_token_hint"), "{without}");
}

#[tokio::test]
async fn a_logout_page_named_in_the_settings_gets_no_hint() {
    let provider = Provider::start().await;
    let settings = IdentityProviderSettings {
        logout_url: Some(format!("{}/sair", provider.server.uri())),
        ..settings(&provider.issuer)
    };
    let adapter = HttpIdentityProvider::new(http_client().expect("client"), settings).expect("valid");
    let url = adapter.logout_url("http://127.0.0.1:8000/conta/saiu/", Some("the.id.token")).await.expect("ok");
    let url = url.expect("the configured page");
    assert!(url.starts_with(&format!("{}/sair?post_logout_redirect_uri=", provider.server.uri())), "{url}");
    assert!(!url.contains("id_token_hint") && !url.contains("the.id.token"), "{url}");
}

#[test]
fn unusable_settings_are_refused_naming_the_setting() {
    let client = http_client().expect("client");
    let refused = |settings| HttpIdentityProvider::new(client.clone(), settings).map(|_| ()).expect_err("refused");
    let base = settings("https://sso.staging.acesso.gov.br/");
    assert_eq!(
        refused(IdentityProviderSettings { issuer: "http://sso.acesso.gov.br/".into(), ..base.clone() }),
        InvalidIdentityProvider::Issuer
    );
    assert_eq!(
        refused(IdentityProviderSettings { client_id: " ".into(), ..base.clone() }),
        InvalidIdentityProvider::ClientId
    );
    assert_eq!(
        refused(IdentityProviderSettings { scopes: vec!["email".into()], ..base.clone() }),
        InvalidIdentityProvider::Scopes
    );
    assert_eq!(
        refused(IdentityProviderSettings { algorithms: vec![Algorithm::HS256], ..base.clone() }),
        InvalidIdentityProvider::Algorithms
    );
    assert_eq!(
        refused(IdentityProviderSettings { logout_url: Some("https://evil.example/logout".into()), ..base.clone() }),
        InvalidIdentityProvider::LogoutUrl
    );
    assert_eq!(refused(IdentityProviderSettings { timeout: Duration::ZERO, ..base }), InvalidIdentityProvider::Timeout);
}
