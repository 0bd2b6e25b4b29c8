//! [`IdentityProvider`] over HTTP: logins brokered through gov.br or any
//! OpenID provider, by the authorization-code flow with PKCE S256, `state`
//! and `nonce`.
//!
//! | call | request |
//! |---|---|
//! | discovery (cached [`DISCOVERY_TTL`]) | `GET {issuer}/.well-known/openid-configuration` |
//! | keys (cached [`KEYS_TTL`]; an unknown key id refreshes them once) | `GET {jwks_uri}` |
//! | [`IdentityProvider::finish`] | `POST {token_endpoint}`, form-encoded, `client_secret_basic` |
//! | [`IdentityProvider::logout_url`] | none: `{end_session_endpoint}?post_logout_redirect_uri&client_id&id_token_hint` for the browser |
//!
//! Every endpoint the discovery document names must be on the issuer's
//! origin, so a document (or a key-set URL) pointing elsewhere sends
//! nothing there; redirects are never followed. Hand-written on the shared
//! client rather than with the `openidconnect` crate: `docs/decisions.md`
//! says why. Codes, verifiers, nonces, tokens and the client secret are
//! never logged.

use std::time::Duration;

use async_trait::async_trait;
use credencial_domain::federation::id_token::{self, Expected};
use credencial_domain::oauth::{is_loopback_host, GRANT_TYPE_AUTHORIZATION_CODE, PKCE_METHOD_S256, RESPONSE_TYPE_CODE};
use credencial_domain::Redacted;
use credencial_ports::{FederationError, IdentityProvider, UpstreamError, UpstreamIdToken, UpstreamLoginStart};
use jsonwebtoken::Algorithm;
use secrecy::SecretString;
use serde_json::{Map, Value};
use thiserror::Error;
use tokio::sync::Mutex;
use url::Url;

use crate::oauth_call::{call, json_object, random_text, refusal_code, s256, with_client_credentials};
use crate::published_keys::{unavailable, Fetched, PublishedKeys, Unverified};
pub use crate::published_keys::{KEYS_TTL, STALE_LIMIT};

/// How long a discovery document is used before it is fetched again.
pub const DISCOVERY_TTL: Duration = Duration::from_secs(60 * 60);

/// The default least time between two fetches of the key set for a key
/// id it did not know: tokens naming made-up key ids cannot make this
/// service hammer the provider.
pub const MIN_KEYS_REFRESH: Duration = Duration::from_secs(10);

/// The least `keys_refresh` accepted: a second.
pub const MIN_KEYS_REFRESH_SETTING: Duration = Duration::from_secs(1);

/// A call to the provider gives up after this long unless configured
/// otherwise.
pub const DEFAULT_IDENTITY_PROVIDER_TIMEOUT: Duration = Duration::from_secs(5);

/// Largest answer read from the provider (discovery, keys, tokens).
const MAX_BODY_BYTES: usize = 256 * 1024;

/// How this service reaches one upstream provider. `Debug` never shows
/// the secret.
#[derive(Debug, Clone)]
pub struct IdentityProviderSettings {
    /// The provider's issuer identifier, exactly as its ID tokens' `iss`
    /// (`https://sso.acesso.gov.br/`): the discovery document is below it
    /// and every endpoint must be on its origin.
    pub issuer: String,
    /// This service's client id at the provider.
    pub client_id: String,
    /// This service's client secret (sent with HTTP Basic).
    pub client_secret: SecretString,
    /// The scopes asked for (`openid` first).
    pub scopes: Vec<String>,
    /// The algorithms an ID token may be signed with (pinned: RS256 by
    /// default; among RS256, PS256 and ES256 — never `none` nor an HMAC).
    pub algorithms: Vec<Algorithm>,
    /// The logout URL when the discovery document names none (gov.br's
    /// `{issuer}logout`).
    pub logout_url: Option<String>,
    /// Time-out of one whole call.
    pub timeout: Duration,
    /// The least time between two fetches of the key set for an unknown
    /// key id ([`MIN_KEYS_REFRESH`]).
    pub keys_refresh: Duration,
}

/// The settings of a provider cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum InvalidIdentityProvider {
    /// The issuer is not an `https://` URL (or `http://` on a loopback
    /// host) without query or fragment.
    #[error("issuer must be an https:// URL (http:// only on a loopback host) without query or fragment")]
    Issuer,
    /// The client id is empty or has control characters.
    #[error("client_id must be non-empty text without control characters")]
    ClientId,
    /// The scopes do not include `openid`.
    #[error("scopes must include openid")]
    Scopes,
    /// No algorithm, or one other than RS256, PS256 and ES256 (asymmetric,
    /// and hashed with SHA-256, as `at_hash` is checked).
    #[error("algorithms must be among RS256, PS256 and ES256")]
    Algorithms,
    /// The logout URL is not on the issuer's origin.
    #[error("logout_url must be on the issuer's origin")]
    LogoutUrl,
    /// The time-out is zero.
    #[error("timeout must be greater than zero")]
    Timeout,
    /// The least time between key-set fetches is under a second.
    #[error("keys_refresh must be at least a second")]
    KeysRefresh,
}

/// The endpoints a discovery document names, each on the issuer's origin.
#[derive(Debug, Clone)]
struct Endpoints {
    authorization: Url,
    token: Url,
    jwks: Url,
    end_session: Option<Url>,
}

/// [`IdentityProvider`] over HTTP, on the shared pooled client.
pub struct HttpIdentityProvider {
    client: reqwest::Client,
    issuer: Url,
    settings: IdentityProviderSettings,
    logout_url: Option<Url>,
    endpoints: Mutex<Fetched<Endpoints>>,
    keys: PublishedKeys,
}

impl std::fmt::Debug for HttpIdentityProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpIdentityProvider").field("issuer", &self.settings.issuer).finish_non_exhaustive()
    }
}

/// Whether `url` may be called: https, or http on a loopback host (the
/// demo's sandbox, the tests).
fn allowed_scheme(url: &Url) -> bool {
    match url.scheme() {
        "https" => true,
        "http" => url.host().is_some_and(|host| is_loopback_host(&host)),
        _ => false,
    }
}

impl IdentityProviderSettings {
    /// Whether a provider can be made from these settings (what
    /// [`HttpIdentityProvider::new`] refuses, without a client): errors
    /// name the unusable setting.
    pub fn check(&self) -> Result<(), InvalidIdentityProvider> {
        self.parsed().map(|_| ())
    }

    /// The issuer and the logout URL, parsed, once every setting is
    /// checked.
    fn parsed(&self) -> Result<(Url, Option<Url>), InvalidIdentityProvider> {
        let issuer = Url::parse(self.issuer.trim()).map_err(|_| InvalidIdentityProvider::Issuer)?;
        if !allowed_scheme(&issuer)
            || issuer.query().is_some()
            || issuer.fragment().is_some()
            || !issuer.username().is_empty()
        {
            return Err(InvalidIdentityProvider::Issuer);
        }
        if self.client_id.trim().is_empty() || self.client_id.chars().any(char::is_control) {
            return Err(InvalidIdentityProvider::ClientId);
        }
        if !self.scopes.iter().any(|scope| scope == "openid") {
            return Err(InvalidIdentityProvider::Scopes);
        }
        let supported = |alg: &Algorithm| matches!(alg, Algorithm::RS256 | Algorithm::PS256 | Algorithm::ES256);
        if self.algorithms.is_empty() || !self.algorithms.iter().all(supported) {
            return Err(InvalidIdentityProvider::Algorithms);
        }
        let logout_url = match self.logout_url.as_deref() {
            Some(raw) => Some(
                Url::parse(raw)
                    .ok()
                    .filter(|url| url.origin() == issuer.origin())
                    .ok_or(InvalidIdentityProvider::LogoutUrl)?,
            ),
            None => None,
        };
        if self.timeout.is_zero() {
            return Err(InvalidIdentityProvider::Timeout);
        }
        if self.keys_refresh < MIN_KEYS_REFRESH_SETTING {
            return Err(InvalidIdentityProvider::KeysRefresh);
        }
        Ok((issuer, logout_url))
    }
}

impl HttpIdentityProvider {
    /// A provider from `settings`, calling through the shared `client`.
    /// Errors name the unusable setting; nothing is fetched yet.
    pub fn new(client: reqwest::Client, settings: IdentityProviderSettings) -> Result<Self, InvalidIdentityProvider> {
        let (issuer, logout_url) = settings.parsed()?;
        let settings = IdentityProviderSettings { issuer: settings.issuer.trim().to_owned(), ..settings };
        let keys = PublishedKeys::new(client.clone(), settings.timeout, settings.keys_refresh, MAX_BODY_BYTES);
        Ok(Self { client, issuer, settings, logout_url, endpoints: Mutex::default(), keys })
    }

    /// The discovery document's URL: `/.well-known/openid-configuration`
    /// below the issuer.
    fn discovery_url(&self) -> Url {
        let mut url = self.issuer.clone();
        let path = format!("{}/.well-known/openid-configuration", url.path().trim_end_matches('/'));
        url.set_path(&path);
        url
    }

    /// An endpoint of the discovery document, which must be on the
    /// issuer's origin.
    fn endpoint(&self, document: &Map<String, Value>, name: &str) -> Result<Option<Url>, UpstreamError> {
        let Some(raw) = document.get(name).and_then(Value::as_str) else {
            return Ok(None);
        };
        match Url::parse(raw) {
            Ok(url) if url.origin() == self.issuer.origin() && allowed_scheme(&url) => Ok(Some(url)),
            _ => Err(UpstreamError::BadResponse(format!("discovery: {name} is not on the issuer's origin"))),
        }
    }

    /// Fetches and checks the discovery document.
    async fn discover(&self) -> Result<Endpoints, UpstreamError> {
        let (status, body) = call(self.client.get(self.discovery_url()), self.settings.timeout, MAX_BODY_BYTES).await?;
        let document = json_object(&body).filter(|_| status.is_success()).ok_or_else(|| {
            UpstreamError::BadResponse(format!("discovery: status {}, or not a JSON object", status.as_u16()))
        })?;
        if document.get("issuer").and_then(Value::as_str) != Some(self.settings.issuer.as_str()) {
            return Err(UpstreamError::BadResponse("discovery: issuer is not the configured one".into()));
        }
        let required = |name| {
            self.endpoint(&document, name)
                .and_then(|url| url.ok_or_else(|| UpstreamError::BadResponse(format!("discovery: no {name}"))))
        };
        Ok(Endpoints {
            authorization: required("authorization_endpoint")?,
            token: required("token_endpoint")?,
            jwks: required("jwks_uri")?,
            end_session: self.endpoint(&document, "end_session_endpoint")?,
        })
    }

    /// The endpoints, from the cache while fresh. One fetch at a time; a
    /// failure is remembered for `keys_refresh` and answered with the last
    /// endpoints when there are some.
    async fn endpoints(&self) -> Result<Endpoints, UpstreamError> {
        let mut cache = self.endpoints.lock().await;
        if let Some(endpoints) = cache.fresh(DISCOVERY_TTL) {
            return Ok(endpoints.clone());
        }
        if cache.failed_recently(self.settings.keys_refresh) {
            return cache.stale().ok_or_else(unavailable);
        }
        let fetched = self.discover().await.inspect_err(|e| {
            tracing::warn!(issuer = %self.settings.issuer, error = %e, "identity provider discovery failed");
        });
        cache.keep(fetched)
    }
}

#[async_trait]
impl IdentityProvider for HttpIdentityProvider {
    async fn start(&self, redirect_uri: &str) -> Result<UpstreamLoginStart, FederationError> {
        let endpoints = self.endpoints().await?;
        let (state, nonce, pkce_verifier) = (random_text(), random_text(), random_text());
        let mut url = endpoints.authorization;
        url.query_pairs_mut()
            .append_pair("response_type", RESPONSE_TYPE_CODE)
            .append_pair("client_id", &self.settings.client_id)
            .append_pair("scope", &self.settings.scopes.join(" "))
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("state", &state)
            .append_pair("nonce", &nonce)
            .append_pair("code_challenge", &s256(&pkce_verifier))
            .append_pair("code_challenge_method", PKCE_METHOD_S256);
        Ok(UpstreamLoginStart {
            url: url.into(),
            state: state.into(),
            nonce: nonce.into(),
            pkce_verifier: pkce_verifier.into(),
        })
    }

    async fn finish(
        &self,
        code: &str,
        pkce_verifier: &str,
        nonce: &str,
        redirect_uri: &str,
        now: i64,
    ) -> Result<UpstreamIdToken, FederationError> {
        let endpoints = self.endpoints().await?;
        let form = [
            ("grant_type", GRANT_TYPE_AUTHORIZATION_CODE),
            ("code", code),
            ("redirect_uri", redirect_uri),
            ("code_verifier", pkce_verifier),
        ];
        let request = with_client_credentials(
            self.client.post(endpoints.token.clone()),
            &self.settings.client_id,
            &self.settings.client_secret,
        )
        .form(&form);
        let (status, body) = call(request, self.settings.timeout, MAX_BODY_BYTES).await?;
        if !status.is_success() {
            let refusal = refusal_code(&body).ok_or_else(|| {
                UpstreamError::BadResponse(format!("token: status {} without an OAuth2 error", status.as_u16()))
            })?;
            tracing::info!(issuer = %self.settings.issuer, error = %refusal, "identity provider refused the code");
            return Err(FederationError::Refused(refusal));
        }
        let answer = json_object(&body).ok_or_else(|| UpstreamError::BadResponse("token: not a JSON object".into()))?;
        let id_token = answer
            .get("id_token")
            .and_then(Value::as_str)
            .ok_or_else(|| UpstreamError::BadResponse("token: no id_token".into()))?;
        let claims = match self.keys.verified_claims(&endpoints.jwks, id_token, &self.settings.algorithms).await {
            Ok(claims) => claims,
            Err(Unverified::Signature) => return Err(FederationError::Signature),
            Err(Unverified::Upstream(e)) => return Err(e.into()),
        };
        let expected = Expected {
            issuer: &self.settings.issuer,
            client_id: &self.settings.client_id,
            nonce,
            access_token: answer.get("access_token").and_then(Value::as_str),
        };
        id_token::check(&claims, expected, now)?;
        Ok(UpstreamIdToken { claims, token: Redacted(id_token.to_owned()) })
    }

    async fn logout_url<'a>(
        &self,
        post_logout_redirect_uri: &str,
        id_token_hint: Option<&'a str>,
    ) -> Result<Option<String>, FederationError> {
        // A logout page the settings name (gov.br's) documents no hint: the
        // ID token, with its personal data, is put in no URL it does not
        // need to be in.
        let (end_session, hint) = match &self.logout_url {
            Some(url) => (Some(url.clone()), None),
            None => (self.endpoints().await?.end_session, id_token_hint),
        };
        Ok(end_session.map(|mut url| {
            let mut query = url.query_pairs_mut();
            query
                .append_pair("post_logout_redirect_uri", post_logout_redirect_uri)
                .append_pair("client_id", &self.settings.client_id);
            if let Some(hint) = hint {
                query.append_pair("id_token_hint", hint);
            }
            drop(query);
            url.into()
        }))
    }
}
