//! A provider's published signing keys (a JWK set at its `jwks_uri`) and
//! the verification of the tokens it signs with them: shared by the
//! logins through an upstream identity provider (its ID tokens) and by the
//! client component's back-channel logout receiver (its provider's logout
//! tokens).
//!
//! The set is fetched on first use and kept [`KEYS_TTL`]; a token naming a
//! key id the set lacks fetches it again, at most once per `refresh`; a
//! failed fetch is remembered as long, and answered with the last set while
//! it is under [`STALE_LIMIT`]. One fetch at a time: tokens naming made-up
//! key ids cannot make this service hammer the provider.

use std::time::{Duration, Instant};

use credencial_ports::UpstreamError;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};
use tokio::sync::Mutex;
use url::Url;

use crate::oauth_call::{call, json_object};

/// How long a key set is used before it is fetched again.
pub const KEYS_TTL: Duration = Duration::from_secs(60 * 60);

/// How long endpoints and keys that could not be fetched again are still
/// used (a provider's short outage does not stop logins whose tokens its
/// old keys verify).
pub const STALE_LIMIT: Duration = Duration::from_secs(24 * 60 * 60);

/// A value fetched from a provider: when, and when fetching it last
/// failed (a failure is remembered for a while, so that requests arriving
/// while the provider is down do not each wait out a time-out).
pub(crate) struct Fetched<T> {
    value: Option<(T, Instant)>,
    failed_at: Option<Instant>,
}

impl<T> Default for Fetched<T> {
    fn default() -> Self {
        Self { value: None, failed_at: None }
    }
}

impl<T: Clone> Fetched<T> {
    /// The value if it was fetched within `ttl`.
    pub(crate) fn fresh(&self, ttl: Duration) -> Option<&T> {
        self.value.as_ref().filter(|(_, at)| at.elapsed() < ttl).map(|(value, _)| value)
    }

    /// Whether a fetch failed within `within`.
    pub(crate) fn failed_recently(&self, within: Duration) -> bool {
        self.failed_at.is_some_and(|at| at.elapsed() < within)
    }

    /// The last value, if within [`STALE_LIMIT`].
    pub(crate) fn stale(&self) -> Option<T> {
        self.value.as_ref().filter(|(_, at)| at.elapsed() < STALE_LIMIT).map(|(value, _)| value.clone())
    }

    /// Keeps the outcome of a fetch: a value, or a failure (answered with
    /// the stale value when there is one).
    pub(crate) fn keep(&mut self, fetched: Result<T, UpstreamError>) -> Result<T, UpstreamError> {
        match fetched {
            Ok(value) => {
                self.value = Some((value.clone(), Instant::now()));
                self.failed_at = None;
                Ok(value)
            }
            Err(e) => {
                self.failed_at = Some(Instant::now());
                self.stale().ok_or(e)
            }
        }
    }
}

/// The answer while a provider that just failed is not asked again.
pub(crate) fn unavailable() -> UpstreamError {
    UpstreamError::BadResponse("the provider failed moments ago; not asked again yet".into())
}

/// Why a token's signature was not accepted.
#[derive(Debug)]
pub(crate) enum Unverified {
    /// It does not verify with a published key and an allowed algorithm
    /// (or is not a JWT).
    Signature,
    /// The keys could not be read.
    Upstream(UpstreamError),
}

impl From<UpstreamError> for Unverified {
    fn from(e: UpstreamError) -> Self {
        Self::Upstream(e)
    }
}

/// One provider's published keys, fetched through the shared client.
pub(crate) struct PublishedKeys {
    client: reqwest::Client,
    timeout: Duration,
    refresh: Duration,
    max_body_bytes: usize,
    cache: Mutex<Fetched<Vec<Jwk>>>,
}

impl std::fmt::Debug for PublishedKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PublishedKeys").field("refresh", &self.refresh).finish_non_exhaustive()
    }
}

impl PublishedKeys {
    /// Keys fetched through `client` (each fetch within `timeout`, its body
    /// at most `max_body_bytes`), fetched again for an unknown key id at
    /// most once per `refresh`.
    pub(crate) fn new(client: reqwest::Client, timeout: Duration, refresh: Duration, max_body_bytes: usize) -> Self {
        Self { client, timeout, refresh, max_body_bytes, cache: Mutex::new(Fetched::default()) }
    }

    /// Fetches the key set at `url`: the keys this service can use (others,
    /// of kinds it does not know, are skipped).
    async fn fetch(&self, url: &Url) -> Result<Vec<Jwk>, UpstreamError> {
        let (status, body) = call(self.client.get(url.clone()), self.timeout, self.max_body_bytes).await?;
        let keys = json_object(&body)
            .filter(|_| status.is_success())
            .and_then(|set| set.get("keys").and_then(Value::as_array).cloned())
            .ok_or_else(|| UpstreamError::BadResponse("keys: not a JWK set".into()))?;
        Ok(keys.into_iter().filter_map(|key| serde_json::from_value(key).ok()).collect())
    }

    /// The key of the set at `url` for a token's `kid` (or the only key,
    /// for a token without one): from the cache while fresh; a key id the
    /// cache does not know refreshes it once, at most every `refresh`.
    async fn key(&self, url: &Url, kid: Option<&str>) -> Result<Option<Jwk>, UpstreamError> {
        let pick = |keys: &[Jwk]| match kid {
            Some(kid) => keys.iter().find(|key| key.common.key_id.as_deref() == Some(kid)).cloned(),
            None if keys.len() == 1 => keys.first().cloned(),
            None => None,
        };
        let mut cache = self.cache.lock().await;
        if let Some(keys) = cache.fresh(KEYS_TTL) {
            let found = pick(keys);
            if found.is_some() || cache.fresh(self.refresh).is_some() {
                return Ok(found);
            }
        }
        if cache.failed_recently(self.refresh) {
            return cache.stale().map(|keys| pick(&keys)).ok_or_else(unavailable);
        }
        let fetched = self.fetch(url).await.inspect_err(|e| {
            tracing::warn!(%url, error = %e, "a provider's keys could not be fetched");
        });
        Ok(pick(&cache.keep(fetched)?))
    }

    /// The claims of `token` if its signature verifies with the key of the
    /// set at `url` its header names, by one of `algorithms` (and that key
    /// is published for signatures, by that algorithm). No claim is
    /// checked here: the domain's rules do that, each refusal named.
    pub(crate) async fn verified_claims(
        &self,
        url: &Url,
        token: &str,
        algorithms: &[Algorithm],
    ) -> Result<Map<String, Value>, Unverified> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| Unverified::Signature)?;
        if !algorithms.contains(&header.alg) {
            return Err(Unverified::Signature);
        }
        let jwk = self.key(url, header.kid.as_deref()).await?.ok_or(Unverified::Signature)?;
        // A key published for encryption, or for another algorithm, does
        // not verify signatures of this one.
        let for_encryption = matches!(jwk.common.public_key_use, Some(jsonwebtoken::jwk::PublicKeyUse::Encryption));
        let other_algorithm =
            jwk.common.key_algorithm.is_some_and(|alg| format!("{alg:?}") != format!("{:?}", header.alg));
        if for_encryption || other_algorithm {
            return Err(Unverified::Signature);
        }
        let key = DecodingKey::from_jwk(&jwk).map_err(|_| Unverified::Signature)?;
        let mut validation = Validation::new(header.alg);
        validation.validate_exp = false;
        validation.validate_nbf = false;
        validation.validate_aud = false;
        validation.required_spec_claims.clear();
        jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation)
            .map(|data| data.claims)
            .map_err(|_| Unverified::Signature)
    }
}
