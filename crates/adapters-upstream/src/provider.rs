//! [`ProviderClient`] over HTTP: the client component's calls to an OAuth2
//! provider with credencial's contract.
//!
//! | call | request |
//! |---|---|
//! | [`ProviderClient::start`] | none: builds `{public_base}/oauth/authorize/?response_type=code&…` |
//! | [`ProviderClient::exchange_code`] | `POST {base}/oauth/token/`, form-encoded, `client_secret_basic` |
//! | [`ProviderClient::fetch_profile`] | `POST {base}/api/perfil/dados/` with `Authorization: Bearer` |
//! | [`ProviderClient::logout_token_payload`] | `GET {base}/.well-known/jwks.json` (cached) |
//!
//! Hand-written on the shared client rather than with the `oauth2` crate
//! (`docs/decisions.md` says why). Tokens, codes, verifiers, the client
//! secret and the profile payload are never logged and never put in an
//! error text.

use std::time::Duration;

use async_trait::async_trait;
use credencial_domain::oauth::backchannel_logout::logout_token_type_accepted;
use credencial_domain::oauth::discovery::JWKS_PATH;
use credencial_domain::oauth::{GRANT_TYPE_AUTHORIZATION_CODE, PKCE_METHOD_S256, RESPONSE_TYPE_CODE};
use credencial_domain::{ScopeSet, UpstreamPath};
use credencial_ports::{
    AuthorizationStart, ProviderClient, ProviderError, ProviderSession, ProviderTokens, UpstreamError,
};
use secrecy::SecretString;
use thiserror::Error;
use url::Url;

use crate::client::BaseUrl;
use crate::oauth_call::{call, json_object, random_text, refusal_code, s256, with_client_credentials};
use crate::published_keys::{PublishedKeys, Unverified};

/// A provider call gives up after this long unless configured otherwise.
pub const DEFAULT_PROVIDER_TIMEOUT: Duration = Duration::from_secs(5);

/// Largest provider body accepted by default (1 MiB; a full profile with
/// every scope is a few KiB).
pub const DEFAULT_PROVIDER_MAX_BODY_BYTES: usize = 1024 * 1024;

/// The provider's authorization endpoint, below the public base.
const AUTHORIZE_PATH: &str = "/oauth/authorize/";
/// The provider's token endpoint, below the base.
const TOKEN_PATH: &str = "/oauth/token/";
/// The provider's profile endpoint, below the base.
const PROFILE_PATH: &str = "/api/perfil/dados/";

/// The algorithms a logout token may be signed with: asymmetric ones only
/// (an HS256 token keyed with a published public key is refused).
const LOGOUT_ALGORITHMS: [jsonwebtoken::Algorithm; 9] = [
    jsonwebtoken::Algorithm::RS256,
    jsonwebtoken::Algorithm::RS384,
    jsonwebtoken::Algorithm::RS512,
    jsonwebtoken::Algorithm::PS256,
    jsonwebtoken::Algorithm::PS384,
    jsonwebtoken::Algorithm::PS512,
    jsonwebtoken::Algorithm::ES256,
    jsonwebtoken::Algorithm::ES384,
    jsonwebtoken::Algorithm::EdDSA,
];
/// How soon a logout token naming a key id the provider's set lacks may
/// fetch the set again.
const LOGOUT_KEYS_REFRESH: Duration = Duration::from_secs(60);
/// The largest key set accepted from the provider.
const LOGOUT_KEYS_MAX_BYTES: usize = 64 * 1024;

/// How the client component reaches its provider. `Debug` never shows the
/// secret.
#[derive(Debug, Clone)]
pub struct ProviderSettings {
    /// The provider's origin for server-to-server calls (`/oauth/token/`,
    /// `/api/perfil/dados/`), e.g. `http://127.0.0.1:8000`.
    pub base: BaseUrl,
    /// The provider's origin as the user's browser reaches it (the
    /// authorize page); often the same as `base`.
    pub public_base: BaseUrl,
    /// This application's `client_id` at the provider.
    pub client_id: String,
    /// This application's client secret (sent with HTTP Basic).
    pub client_secret: SecretString,
    /// The redirect URI registered at the provider, sent exactly as given.
    pub redirect_uri: String,
    /// Time-out of one whole call (connecting, waiting and reading the body).
    pub timeout: Duration,
}

/// The provider settings cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum InvalidProviderSettings {
    /// The client id is empty or has control characters.
    #[error("the provider client id must be non-empty text without control characters")]
    ClientId,
    /// The redirect URI is not an absolute http(s) URL without fragment.
    #[error("the provider redirect URI must be an absolute http(s) URL without fragment")]
    RedirectUri,
    /// The time-out is zero.
    #[error("the provider time-out must be greater than zero")]
    Timeout,
    /// A base URL cannot hold the provider's endpoint paths.
    #[error("the provider base URL cannot hold the endpoint paths")]
    BaseUrl,
}

/// [`ProviderClient`] over HTTP, on the shared pooled client (no redirects,
/// no proxies).
#[derive(Debug, Clone)]
pub struct HttpProviderClient {
    client: reqwest::Client,
    keys: std::sync::Arc<PublishedKeys>,
    jwks_url: Url,
    authorize_url: Url,
    token_url: Url,
    profile_url: Url,
    client_id: String,
    client_secret: SecretString,
    redirect_uri: String,
    timeout: Duration,
    max_body_bytes: usize,
}

impl HttpProviderClient {
    /// A provider client from `settings`, calling through the shared
    /// `client`, with the default body cap. Errors name the unusable
    /// setting.
    pub fn new(client: reqwest::Client, settings: ProviderSettings) -> Result<Self, InvalidProviderSettings> {
        let ProviderSettings { base, public_base, client_id, client_secret, redirect_uri, timeout } = settings;
        check_client_id(&client_id)?;
        check_redirect_uri(&redirect_uri)?;
        if timeout.is_zero() {
            return Err(InvalidProviderSettings::Timeout);
        }
        Ok(Self {
            keys: std::sync::Arc::new(PublishedKeys::new(
                client.clone(),
                timeout,
                LOGOUT_KEYS_REFRESH,
                LOGOUT_KEYS_MAX_BYTES,
            )),
            jwks_url: endpoint(&base, JWKS_PATH)?,
            client,
            authorize_url: endpoint(&public_base, AUTHORIZE_PATH)?,
            token_url: endpoint(&base, TOKEN_PATH)?,
            profile_url: endpoint(&base, PROFILE_PATH)?,
            client_id,
            client_secret,
            redirect_uri,
            timeout,
            max_body_bytes: DEFAULT_PROVIDER_MAX_BODY_BYTES,
        })
    }

    /// Caps the accepted body size.
    pub fn with_max_body_bytes(mut self, max: usize) -> Self {
        self.max_body_bytes = max;
        self
    }
}

/// `path` (a constant plain path) below `base`, on `base`'s origin.
/// Checks a client id for the provider: non-empty text without control
/// characters. Errors: `ClientId`.
pub fn check_client_id(client_id: &str) -> Result<(), InvalidProviderSettings> {
    if client_id.trim().is_empty() || client_id.chars().any(char::is_control) {
        return Err(InvalidProviderSettings::ClientId);
    }
    Ok(())
}

/// Checks a redirect URI for the provider: an absolute http(s) URL with a
/// host and no fragment. Errors: `RedirectUri`.
pub fn check_redirect_uri(redirect_uri: &str) -> Result<(), InvalidProviderSettings> {
    let ok = Url::parse(redirect_uri)
        .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some() && u.fragment().is_none());
    if ok {
        Ok(())
    } else {
        Err(InvalidProviderSettings::RedirectUri)
    }
}

impl InvalidProviderSettings {
    /// The setting (without prefix) whose value this refuses.
    pub fn setting(&self) -> &'static str {
        match self {
            Self::ClientId => "provider_client_id",
            Self::RedirectUri => "provider_redirect_uri",
            Self::Timeout => "provider_timeout_ms",
            Self::BaseUrl => "provider_base_url",
        }
    }
}

fn endpoint(base: &BaseUrl, path: &str) -> Result<Url, InvalidProviderSettings> {
    let url = UpstreamPath::parse(path).map(|path| base.join(&path)).map_err(|_| InvalidProviderSettings::BaseUrl)?;
    if base.same_origin(&url) {
        Ok(url)
    } else {
        Err(InvalidProviderSettings::BaseUrl)
    }
}

/// Reads a successful token answer: `access_token` (required, Bearer),
/// `scope` (space-separated; unknown names ignored; absent means the
/// provider's required scopes) and the login session an `id_token` names
/// (its audience must be `client_id`).
fn decode_tokens(body: &[u8], client_id: &str) -> Result<ProviderTokens, UpstreamError> {
    let map =
        json_object(body).ok_or_else(|| UpstreamError::BadResponse("token answer is not a JSON object".into()))?;
    let access_token = match map.get("access_token").and_then(serde_json::Value::as_str) {
        Some(token) if !token.is_empty() => token.to_owned(),
        _ => return Err(UpstreamError::BadResponse("token answer without access_token".into())),
    };
    match map.get("token_type").and_then(serde_json::Value::as_str) {
        Some(kind) if kind.eq_ignore_ascii_case("bearer") => {}
        None => {}
        Some(_) => return Err(UpstreamError::BadResponse("token answer with a token_type other than Bearer".into())),
    }
    let scope = match map.get("scope").and_then(serde_json::Value::as_str) {
        Some(text) => ScopeSet::parse_lenient(text),
        None => ScopeSet::required(),
    };
    let session = match map.get("id_token").and_then(serde_json::Value::as_str) {
        Some(id_token) => Some(
            id_token_session(id_token, client_id)
                .ok_or_else(|| UpstreamError::BadResponse("an id_token that is not for this client".into()))?,
        ),
        None => None,
    };
    Ok(ProviderTokens { access_token: access_token.into(), scope, session })
}

/// The `sub` and `sid` of an ID token whose audience is `client_id`.
fn id_token_session(id_token: &str, client_id: &str) -> Option<ProviderSession> {
    use base64::Engine;
    let payload = id_token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).ok()?;
    let claims: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let for_us = match &claims["aud"] {
        serde_json::Value::String(aud) => aud == client_id,
        serde_json::Value::Array(auds) => auds.iter().any(|a| a.as_str() == Some(client_id)),
        _ => false,
    };
    let sub = claims["sub"].as_str().filter(|s| !s.is_empty() && for_us)?.to_owned();
    Some(ProviderSession { sub, sid: claims["sid"].as_str().map(str::to_owned) })
}

/// Logs a failed call: the kind of failure only, never a body.
fn logged(call: &'static str, result: Result<ProviderTokens, ProviderError>) -> Result<ProviderTokens, ProviderError> {
    log_failure(call, result.as_ref().err());
    result
}

/// Logs a failed call's kind (the refusal code or the upstream error text).
fn log_failure(call: &'static str, error: Option<&ProviderError>) {
    match error {
        Some(ProviderError::Refused(code)) => tracing::info!(call, error = %code, "provider refused"),
        Some(ProviderError::Upstream(e)) => tracing::warn!(call, error = %e, "provider call failed"),
        None => {}
    }
}

#[async_trait]
impl ProviderClient for HttpProviderClient {
    fn start(&self, scopes: ScopeSet) -> AuthorizationStart {
        let state = random_text();
        let pkce_verifier = random_text();
        let mut url = self.authorize_url.clone();
        url.query_pairs_mut()
            .append_pair("response_type", RESPONSE_TYPE_CODE)
            .append_pair("client_id", &self.client_id)
            .append_pair("redirect_uri", &self.redirect_uri)
            .append_pair("scope", &scopes.to_scope_string())
            .append_pair("state", &state)
            .append_pair("code_challenge", &s256(&pkce_verifier))
            .append_pair("code_challenge_method", PKCE_METHOD_S256);
        AuthorizationStart { url: url.into(), state, pkce_verifier }
    }

    async fn exchange_code(&self, code: &str, pkce_verifier: &str) -> Result<ProviderTokens, ProviderError> {
        let form = [
            ("grant_type", GRANT_TYPE_AUTHORIZATION_CODE),
            ("code", code),
            ("redirect_uri", self.redirect_uri.as_str()),
            ("code_verifier", pkce_verifier),
        ];
        let request =
            with_client_credentials(self.client.post(self.token_url.clone()), &self.client_id, &self.client_secret)
                .form(&form);
        let result = async {
            let (status, body) = call(request, self.timeout, self.max_body_bytes).await?;
            if status.is_success() {
                return Ok(decode_tokens(&body, &self.client_id)?);
            }
            match refusal_code(&body) {
                Some(code) => Err(ProviderError::Refused(code)),
                None => {
                    Err(UpstreamError::BadResponse(format!("status {} without an OAuth2 error", status.as_u16()))
                        .into())
                }
            }
        }
        .await;
        logged("token", result)
    }

    async fn logout_token_payload(&self, logout_token: &str) -> Result<serde_json::Value, ProviderError> {
        let refused = || ProviderError::Refused("invalid_token".into());
        // A logout token names the key it was signed with, and is typed as
        // one (or, from before explicit typing, as a plain JWT).
        let Ok(header) = jsonwebtoken::decode_header(logout_token) else { return Err(refused()) };
        if header.kid.is_none() || !logout_token_type_accepted(header.typ.as_deref()) {
            return Err(refused());
        }
        let result = match self.keys.verified_claims(&self.jwks_url, logout_token, &LOGOUT_ALGORITHMS).await {
            Ok(claims) => Ok(serde_json::Value::Object(claims)),
            Err(Unverified::Signature) => Err(refused()),
            Err(Unverified::Upstream(e)) => Err(e.into()),
        };
        log_failure("keys", result.as_ref().err());
        result
    }

    async fn fetch_profile(
        &self,
        access_token: &str,
    ) -> Result<serde_json::Map<String, serde_json::Value>, ProviderError> {
        let request = self.client.post(self.profile_url.clone()).bearer_auth(access_token);
        let result = async {
            let (status, body) = call(request, self.timeout, self.max_body_bytes).await?;
            match status.as_u16() {
                401 => Err(ProviderError::Refused("invalid_token".into())),
                200..=299 => json_object(&body)
                    .ok_or_else(|| UpstreamError::BadResponse("profile answer is not a JSON object".into()).into()),
                other => Err(UpstreamError::BadResponse(format!("status {other}")).into()),
            }
        }
        .await;
        log_failure("profile", result.as_ref().err());
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> ProviderSettings {
        ProviderSettings {
            base: BaseUrl::parse("http://127.0.0.1:8000").expect("base"),
            public_base: BaseUrl::parse("https://login.example.gov.br/").expect("public base"),
            client_id: "portal".into(),
            client_secret: SecretString::from("s3cr3t-value"),
            redirect_uri: "https://portal.example.gov.br/auth/callback/".into(),
            timeout: Duration::from_secs(1),
        }
    }

    #[test]
    fn the_client_secret_never_shows_in_debug_output() {
        let provider = HttpProviderClient::new(reqwest::Client::new(), settings()).expect("valid");
        assert!(!format!("{provider:?}").contains("s3cr3t"));
        assert!(!format!("{:?}", settings()).contains("s3cr3t"));
    }

    #[test]
    fn unusable_settings_are_refused_naming_the_setting() {
        let with = |change: fn(&mut ProviderSettings)| {
            let mut s = settings();
            change(&mut s);
            HttpProviderClient::new(reqwest::Client::new(), s).map(|_| ())
        };
        assert_eq!(with(|s| s.client_id = " ".into()), Err(InvalidProviderSettings::ClientId));
        assert_eq!(with(|s| s.redirect_uri = "/relative".into()), Err(InvalidProviderSettings::RedirectUri));
        assert_eq!(with(|s| s.redirect_uri = "https://x/cb#f".into()), Err(InvalidProviderSettings::RedirectUri));
        assert_eq!(with(|s| s.timeout = Duration::ZERO), Err(InvalidProviderSettings::Timeout));
    }

    #[test]
    fn refusal_codes_are_taken_only_from_well_formed_error_objects() {
        assert_eq!(
            refusal_code(br#"{"error":"invalid_grant","error_description":"x"}"#).as_deref(),
            Some("invalid_grant")
        );
        for body in
            [&br#"{"error":""}"#[..], br#"{"error":"quote\"d"}"#, br#"{"detail":"x"}"#, b"<html>", br#"["error"]"#]
        {
            assert_eq!(refusal_code(body), None, "{}", String::from_utf8_lossy(body));
        }
    }

    #[test]
    fn a_token_answer_without_scope_means_the_required_scopes() {
        let tokens = decode_tokens(br#"{"access_token":"a","token_type":"Bearer"}"#, "portal").expect("decoded");
        assert_eq!((tokens.scope, tokens.session), (ScopeSet::required(), None));
        assert!(decode_tokens(br#"{"access_token":"a","token_type":"mac"}"#, "portal").is_err());
    }

    #[test]
    fn an_id_token_for_this_client_gives_its_sub_and_sid_and_one_for_another_is_refused() {
        use base64::Engine;
        let answer = |claims: serde_json::Value| {
            let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(claims.to_string());
            let id_token = format!("eyJhbGciOiJSUzI1NiJ9.{payload}.c2ln");
            serde_json::json!({"access_token": "a", "token_type": "Bearer", "id_token": id_token}).to_string()
        };
        let ours = answer(serde_json::json!({"aud": "portal", "sub": "7", "sid": "s-1"}));
        let session = decode_tokens(ours.as_bytes(), "portal").expect("decoded").session.expect("a session");
        assert_eq!((session.sub.as_str(), session.sid.as_deref()), ("7", Some("s-1")));
        let listed = answer(serde_json::json!({"aud": ["other", "portal"], "sub": "7"}));
        assert_eq!(decode_tokens(listed.as_bytes(), "portal").expect("decoded").session.expect("one").sid, None);
        let theirs = answer(serde_json::json!({"aud": "other", "sub": "7", "sid": "s-1"}));
        assert!(decode_tokens(theirs.as_bytes(), "portal").is_err(), "another client's ID token");
        assert!(decode_tokens(br#"{"access_token":"a","id_token":"not-a-jwt"}"#, "portal").is_err());
    }
}
