//! The provider's published keys (`/.well-known/jwks.json`), for the
//! client component's back-channel logout receiver: fetched on first use,
//! kept an hour, fetched again when a token names a key id they lack (the
//! provider rotated its key). Whatever anyone posts, the keys are fetched
//! by one request at a time and at most once a minute, failures included:
//! forged tokens cannot make the receiver flood the provider.

use std::time::{Duration, Instant};

use credencial_ports::{ProviderError, UpstreamError};
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use tokio::sync::{Mutex, RwLock};
use url::Url;

use crate::oauth_call::call;

/// How long fetched keys are used before they are fetched again.
const KEYS_MAX_AGE: Duration = Duration::from_secs(60 * 60);
/// How soon an unknown key id may cause another fetch.
const UNKNOWN_KID_REFETCH: Duration = Duration::from_secs(60);
/// The largest key set accepted.
const MAX_KEYS_BYTES: usize = 64 * 1024;

/// The provider's keys and where they are published.
#[derive(Debug)]
pub(crate) struct ProviderKeys {
    client: reqwest::Client,
    url: Url,
    timeout: Duration,
    cache: RwLock<Option<(Instant, JwkSet)>>,
    /// When the keys were last asked for (held while asking).
    last_fetch: Mutex<Option<Instant>>,
}

fn refused() -> ProviderError {
    ProviderError::Refused("invalid_token".into())
}

impl ProviderKeys {
    /// Keys published at `url`, fetched through `client`.
    pub(crate) fn new(client: reqwest::Client, url: Url, timeout: Duration) -> Self {
        Self { client, url, timeout, cache: RwLock::new(None), last_fetch: Mutex::new(None) }
    }

    /// The payload of `token` once its signature verifies with the
    /// published key its `kid` names, with that key's asymmetric
    /// algorithm; no claim is checked here.
    pub(crate) async fn verified_payload(&self, token: &str) -> Result<serde_json::Value, ProviderError> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| refused())?;
        let asymmetric = matches!(
            header.alg,
            Algorithm::RS256
                | Algorithm::RS384
                | Algorithm::RS512
                | Algorithm::PS256
                | Algorithm::PS384
                | Algorithm::PS512
                | Algorithm::ES256
                | Algorithm::ES384
                | Algorithm::EdDSA
        );
        let kid = header.kid.filter(|_| asymmetric).ok_or_else(refused)?;
        let jwk = self.key(&kid).await?.ok_or_else(refused)?;
        // A key of another type (an EC key for RS256) fails to verify.
        let key = DecodingKey::from_jwk(&jwk).map_err(|_| refused())?;
        let mut validation = Validation::new(header.alg);
        validation.validate_exp = false;
        validation.validate_aud = false;
        validation.required_spec_claims.clear();
        jsonwebtoken::decode::<serde_json::Value>(token, &key, &validation).map(|t| t.claims).map_err(|_| refused())
    }

    /// The published key `kid`, fetching the set when it is missing, old,
    /// or lacks `kid` — unless the keys were asked for less than a minute
    /// ago (then what is cached answers, or the failure does).
    async fn key(&self, kid: &str) -> Result<Option<jsonwebtoken::jwk::Jwk>, ProviderError> {
        if let Some(found) = self.cached(kid, false).await {
            return Ok(found);
        }
        let mut last_fetch = self.last_fetch.lock().await;
        // Another request may have fetched while this one waited.
        if let Some(found) = self.cached(kid, false).await {
            return Ok(found);
        }
        if last_fetch.is_some_and(|at| at.elapsed() < UNKNOWN_KID_REFETCH) {
            return self.cached(kid, true).await.ok_or_else(|| {
                UpstreamError::BadResponse("keys: unavailable (asked less than a minute ago)".into()).into()
            });
        }
        *last_fetch = Some(Instant::now());
        let keys = self.fetch().await?;
        let found = keys.find(kid).cloned();
        *self.cache.write().await = Some((Instant::now(), keys));
        Ok(found)
    }

    /// What the cached keys say of `kid`: `Some(Some(key))` when they hold
    /// it and are under an hour old, `Some(None)` when `stale_is_fine` and
    /// they lack it; `None` when they must be fetched (or there are none).
    async fn cached(&self, kid: &str, stale_is_fine: bool) -> Option<Option<jsonwebtoken::jwk::Jwk>> {
        let cache = self.cache.read().await;
        let (at, keys) = cache.as_ref()?;
        let found = keys.find(kid).cloned();
        match found {
            Some(key) if stale_is_fine || at.elapsed() < KEYS_MAX_AGE => Some(Some(key)),
            None if stale_is_fine => Some(None),
            _ => None,
        }
    }

    async fn fetch(&self) -> Result<JwkSet, ProviderError> {
        let (status, body) = call(self.client.get(self.url.clone()), self.timeout, MAX_KEYS_BYTES).await?;
        if !status.is_success() {
            return Err(UpstreamError::BadResponse(format!("keys: status {}", status.as_u16())).into());
        }
        serde_json::from_slice(&body).map_err(|_| UpstreamError::BadResponse("keys: not a JWK set".into()).into())
    }
}
