//! The upstream registries over HTTP: [`HttpTaxAuthority`] (`receita_federal`),
//! [`HttpCnesRegistry`] (`cnes`) and [`HttpCdpDirectory`] (`cursos_cdp`).
//!
//! Each registry is one `GET` with the CPF in the path, below its own
//! configured base URL (`docs/upstreams.md` has the wire contracts):
//!
//! | adapter | request |
//! |---|---|
//! | [`HttpTaxAuthority`] | `GET {base}/cpf/{cpf}` |
//! | [`HttpCnesRegistry`] | `GET {base}/profissionais/{cpf}/vinculos` |
//! | [`HttpCdpDirectory`] | `GET {base}/usuarios/{cpf}/cursos` |
//!
//! with `Accept: application/json` and, if an [`ApiKey`] is configured,
//! `Authorization: Bearer <key>`. The key is marked sensitive and never
//! printed; the CPF is never logged.

use std::time::Duration;

use async_trait::async_trait;
use credencial_domain::{Cnes, Cpf, CursosCdp, ReceitaFederal, Redacted, UpstreamPath};
use credencial_ports::{CdpDirectory, CnesRegistry, TaxAuthority, UpstreamError};
use reqwest::header::{HeaderValue, ACCEPT, AUTHORIZATION};
use thiserror::Error;

use crate::client::BaseUrl;
use crate::response::{contract_error, read_registry_body, transport_error};

/// A registry call gives up after this long unless configured otherwise.
pub const DEFAULT_REGISTRY_TIMEOUT: Duration = Duration::from_secs(3);

/// Largest registry body accepted by default (256 KiB; a course list of a
/// very active user is a few KiB).
pub const DEFAULT_REGISTRY_MAX_BODY_BYTES: usize = 256 * 1024;

/// A configured API key is not usable in an HTTP header.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("the API key must be non-empty visible ASCII without spaces")]
pub struct InvalidApiKey;

/// The credential credencial presents to a registry, sent as
/// `Authorization: Bearer <key>`. Its `Debug` never shows the key.
#[derive(Debug, Clone)]
pub struct ApiKey(Redacted<HeaderValue>);

impl ApiKey {
    /// Validates a configured key: visible ASCII without spaces, once the
    /// surrounding whitespace (a trailing newline from a file) is trimmed.
    pub fn new(key: &str) -> Result<Self, InvalidApiKey> {
        let key = key.trim();
        if key.is_empty() || !key.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(InvalidApiKey);
        }
        let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| InvalidApiKey)?;
        value.set_sensitive(true);
        Ok(Self(Redacted(value)))
    }
}

/// Where and how to reach one registry: the pooled client, the base URL,
/// the time-out (default [`DEFAULT_REGISTRY_TIMEOUT`]), the optional API
/// key and the body cap.
#[derive(Debug, Clone)]
pub struct RegistryEndpoint {
    client: reqwest::Client,
    base: BaseUrl,
    timeout: Duration,
    api_key: Option<ApiKey>,
    max_body_bytes: usize,
}

impl RegistryEndpoint {
    /// A registry at `base`, reached through the shared `client`, with the
    /// default time-out and body cap and no API key.
    pub fn new(client: reqwest::Client, base: BaseUrl) -> Self {
        Self {
            client,
            base,
            timeout: DEFAULT_REGISTRY_TIMEOUT,
            api_key: None,
            max_body_bytes: DEFAULT_REGISTRY_MAX_BODY_BYTES,
        }
    }

    /// Sets the time-out of a whole call (connecting, waiting and reading
    /// the body included).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sends `key` with every call.
    pub fn with_api_key(mut self, key: ApiKey) -> Self {
        self.api_key = Some(key);
        self
    }

    /// Caps the accepted body size.
    pub fn with_max_body_bytes(mut self, max: usize) -> Self {
        self.max_body_bytes = max;
        self
    }

    /// GETs `path` (built from a CPF's digits, so always plain) and returns
    /// the body of a 2xx answer; `registry` names the registry in the log.
    async fn get(&self, registry: &'static str, path: &str) -> Result<Vec<u8>, UpstreamError> {
        let path =
            UpstreamPath::parse(path).map_err(|_| UpstreamError::BadResponse("refused: not a plain path".into()))?;
        let url = self.base.join(&path);
        if !self.base.same_origin(&url) {
            // Unreachable with a plain path; kept as a last line of defence.
            return Err(UpstreamError::BadResponse("refused: not the upstream origin".into()));
        }
        let call = async {
            let mut request = self.client.get(url).header(ACCEPT, "application/json").timeout(self.timeout);
            if let Some(ApiKey(value)) = &self.api_key {
                request = request.header(AUTHORIZATION, value.expose().clone());
            }
            // The URL holds the CPF: keep it out of the error text.
            let response = request.send().await.map_err(|e| transport_error(&e.without_url()))?;
            read_registry_body(response, self.max_body_bytes).await
        };
        let result = call.await;
        match &result {
            Err(UpstreamError::NotFound) => tracing::debug!(registry, "registry has no record"),
            Err(e) => tracing::warn!(registry, error = %e, "registry call failed"),
            Ok(_) => {}
        }
        result
    }
}

/// The error for a registry body that does not decode into the contract's
/// type, logged.
fn refused(registry: &'static str, e: &serde_json::Error) -> UpstreamError {
    let e = contract_error(e);
    tracing::warn!(registry, error = %e, "registry answer refused");
    e
}

/// [`TaxAuthority`] over HTTP: `GET {base}/cpf/{cpf}`.
#[derive(Debug, Clone)]
pub struct HttpTaxAuthority(RegistryEndpoint);

impl HttpTaxAuthority {
    /// The tax authority at `endpoint`.
    pub fn new(endpoint: RegistryEndpoint) -> Self {
        Self(endpoint)
    }
}

#[async_trait]
impl TaxAuthority for HttpTaxAuthority {
    async fn lookup(&self, cpf: &Cpf) -> Result<ReceitaFederal, UpstreamError> {
        const NAME: &str = "receita_federal";
        let body = self.0.get(NAME, &format!("/cpf/{}", cpf.as_str())).await?;
        serde_json::from_slice(&body).map_err(|e| refused(NAME, &e))
    }
}

/// [`CnesRegistry`] over HTTP: `GET {base}/profissionais/{cpf}/vinculos`.
#[derive(Debug, Clone)]
pub struct HttpCnesRegistry(RegistryEndpoint);

impl HttpCnesRegistry {
    /// The CNES registry at `endpoint`.
    pub fn new(endpoint: RegistryEndpoint) -> Self {
        Self(endpoint)
    }
}

#[async_trait]
impl CnesRegistry for HttpCnesRegistry {
    async fn bonds(&self, cpf: &Cpf) -> Result<Cnes, UpstreamError> {
        const NAME: &str = "cnes";
        let body = self.0.get(NAME, &format!("/profissionais/{}/vinculos", cpf.as_str())).await?;
        serde_json::from_slice(&body).map_err(|e| refused(NAME, &e))
    }
}

/// [`CdpDirectory`] over HTTP: `GET {base}/usuarios/{cpf}/cursos`.
#[derive(Debug, Clone)]
pub struct HttpCdpDirectory(RegistryEndpoint);

impl HttpCdpDirectory {
    /// The community-of-practice platform at `endpoint`.
    pub fn new(endpoint: RegistryEndpoint) -> Self {
        Self(endpoint)
    }
}

#[async_trait]
impl CdpDirectory for HttpCdpDirectory {
    async fn courses(&self, cpf: &Cpf) -> Result<CursosCdp, UpstreamError> {
        const NAME: &str = "cursos_cdp";
        let body = self.0.get(NAME, &format!("/usuarios/{}/cursos", cpf.as_str())).await?;
        serde_json::from_slice(&body).map_err(|e| refused(NAME, &e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_api_key_never_shows_in_debug_output() {
        let key = ApiKey::new("s3cr3t-key").expect("valid key");
        assert_eq!(format!("{key:?}"), "ApiKey([redacted])");
        let endpoint =
            RegistryEndpoint::new(reqwest::Client::new(), BaseUrl::parse("http://127.0.0.1:1/").expect("base"))
                .with_api_key(key);
        assert!(!format!("{endpoint:?}").contains("s3cr3t"));
    }

    #[test]
    fn unusable_api_keys_are_refused() {
        for raw in ["", "   ", "two words", "line\nbreak", "chave-ç"] {
            assert_eq!(ApiKey::new(raw).map(|_| ()), Err(InvalidApiKey), "{raw:?}");
        }
        assert!(ApiKey::new(" padded-key \n").is_ok(), "surrounding whitespace is trimmed");
    }
}
