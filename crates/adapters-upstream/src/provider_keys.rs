//! The provider's published keys (`/.well-known/jwks.json`), for the
//! client component's back-channel logout receiver: fetched on first use,
//! kept an hour, fetched again (at most once a minute) when a token names
//! a key id they lack — the provider rotated its key.

use std::time::{Duration, Instant};

use credencial_ports::{ProviderError, UpstreamError};
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use tokio::sync::RwLock;
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
}

fn refused() -> ProviderError {
    ProviderError::Refused("invalid_token".into())
}

impl ProviderKeys {
    /// Keys published at `url`, fetched through `client`.
    pub(crate) fn new(client: reqwest::Client, url: Url, timeout: Duration) -> Self {
        Self { client, url, timeout, cache: RwLock::new(None) }
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
    /// or lacks `kid` and was fetched over a minute ago.
    async fn key(&self, kid: &str) -> Result<Option<jsonwebtoken::jwk::Jwk>, ProviderError> {
        if let Some((at, keys)) = &*self.cache.read().await {
            let found = keys.find(kid).cloned();
            let age = at.elapsed();
            if age < KEYS_MAX_AGE && (found.is_some() || age < UNKNOWN_KID_REFETCH) {
                return Ok(found);
            }
        }
        let keys = self.fetch().await?;
        let found = keys.find(kid).cloned();
        *self.cache.write().await = Some((Instant::now(), keys));
        Ok(found)
    }

    async fn fetch(&self) -> Result<JwkSet, ProviderError> {
        let (status, body) = call(self.client.get(self.url.clone()), self.timeout, MAX_KEYS_BYTES).await?;
        if !status.is_success() {
            return Err(UpstreamError::BadResponse(format!("keys: status {}", status.as_u16())).into());
        }
        serde_json::from_slice(&body).map_err(|_| UpstreamError::BadResponse("keys: not a JWK set".into()).into())
    }
}
