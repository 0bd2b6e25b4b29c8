//! The upstream registries: the user-data resource of the consume routes, the
//! tax authority, CNES and CDP, their caches, and how every outbound call
//! leaves (CA bundle, proxy).

use std::path::PathBuf;

use credencial_adapters_upstream::BaseUrl;
use secrecy::ExposeSecret;
use secrecy::SecretString;
use serde::{Deserialize, Serialize};

use super::lists::string_list;

/// The upstream registries: the user-data resource of the consume routes, the
/// tax authority, CNES and CDP, their caches, and how every outbound call
/// leaves (CA bundle, proxy).
#[derive(Clone, Deserialize, Serialize)]
#[serde(default)]
pub struct RegistrySettings {
    /// Base URL of the upstream user-data resource (required by `serve`).
    #[serde(with = "super::text::option")]
    pub upstream_base_url: Option<BaseUrl>,
    /// Time-out of a call to the user-data resource, in milliseconds.
    pub upstream_timeout_ms: u64,
    /// Paths the consume routes may request (first one is the default).
    #[serde(deserialize_with = "string_list")]
    pub upstream_endpoints: Vec<String>,
    /// Largest upstream answer accepted, in bytes.
    pub upstream_max_body_bytes: usize,
    /// PEM bundle of certificates trusted for upstream calls in addition to
    /// the operating system's store (`SERVICE_UPSTREAM_CA_FILE`).
    pub upstream_ca_file: Option<PathBuf>,
    /// Forward proxy for every upstream call, `http://host:port` or
    /// `https://host:port` (`SERVICE_UPSTREAM_PROXY`); unset: direct calls.
    /// Loopback is never proxied; `HTTP_PROXY` & co. are ignored.
    #[serde(skip_serializing)]
    pub upstream_proxy: Option<SecretString>,
    /// Hosts called directly despite `upstream_proxy`: names (and their
    /// subdomains), IP addresses or CIDR ranges, comma-separated.
    #[serde(deserialize_with = "string_list")]
    pub upstream_no_proxy: Vec<String>,
    /// Tax-authority base URL (`receita_federal`); demo: the sandbox.
    #[serde(with = "super::text::option")]
    pub receita_base_url: Option<BaseUrl>,
    /// Time-out of one tax-authority call, in milliseconds.
    pub receita_timeout_ms: u64,
    /// Bearer credential for the tax authority (never logged).
    #[serde(skip_serializing)]
    pub receita_api_key: Option<SecretString>,
    /// CNES base URL (`cnes`); demo: the sandbox.
    #[serde(with = "super::text::option")]
    pub cnes_base_url: Option<BaseUrl>,
    /// Time-out of one CNES call, in milliseconds.
    pub cnes_timeout_ms: u64,
    /// Bearer credential for CNES (never logged).
    #[serde(skip_serializing)]
    pub cnes_api_key: Option<SecretString>,
    /// CDP base URL (`cursos_cdp`); demo: the sandbox.
    #[serde(with = "super::text::option")]
    pub cdp_base_url: Option<BaseUrl>,
    /// Time-out of one CDP call, in milliseconds.
    pub cdp_timeout_ms: u64,
    /// Bearer credential for CDP (never logged).
    #[serde(skip_serializing)]
    pub cdp_api_key: Option<SecretString>,
    /// How long `receita_federal` data is cached (default 5 years).
    pub receita_cache_secs: u64,
    /// How long `cnes` data is cached (default 7 days).
    pub cnes_cache_secs: u64,
    /// How long `cursos_cdp` data is cached (default 24 hours).
    pub cdp_cache_secs: u64,
    /// Fresh scope entries kept in process in front of PostgreSQL.
    pub scope_cache_memory_entries: usize,
}

impl Default for RegistrySettings {
    fn default() -> Self {
        Self {
            upstream_base_url: None,
            upstream_timeout_ms: 5_000,
            upstream_endpoints: vec![credencial_domain::endpoint::DEFAULT_ENDPOINT.into()],
            upstream_max_body_bytes: 1024 * 1024,
            upstream_ca_file: None,
            upstream_proxy: None,
            upstream_no_proxy: Vec::new(),
            receita_base_url: None,
            receita_timeout_ms: 3_000,
            receita_api_key: None,
            cnes_base_url: None,
            cnes_timeout_ms: 3_000,
            cnes_api_key: None,
            cdp_base_url: None,
            cdp_timeout_ms: 3_000,
            cdp_api_key: None,
            receita_cache_secs: cache_default(credencial_domain::Scope::ReceitaFederal),
            cnes_cache_secs: cache_default(credencial_domain::Scope::Cnes),
            cdp_cache_secs: cache_default(credencial_domain::Scope::CursosCdp),
            scope_cache_memory_entries: 10_000,
        }
    }
}

/// The contract's cache duration of a registry's scope.
fn cache_default(scope: credencial_domain::Scope) -> u64 {
    scope.default_cache_secs().unwrap_or(0)
}

impl RegistrySettings {
    /// How upstream calls reach the outside: the CA bundle and the proxy.
    pub fn outbound(&self) -> Result<credencial_adapters_upstream::OutboundConfig, super::SettingsError> {
        Ok(credencial_adapters_upstream::OutboundConfig {
            ca_file: self.upstream_ca_file.clone(),
            proxy: self.proxy()?,
        })
    }

    /// The outbound proxy, if `upstream_proxy` is set (and not empty).
    pub(super) fn proxy(&self) -> Result<Option<credencial_adapters_upstream::ProxyConfig>, super::SettingsError> {
        match &self.upstream_proxy {
            Some(url) if !url.expose_secret().trim().is_empty() => {
                credencial_adapters_upstream::ProxyConfig::parse(url.expose_secret(), &self.upstream_no_proxy.join(","))
                    .map(Some)
                    .map_err(|e| super::SettingsError::about("upstream_proxy", e))
            }
            _ => Ok(None),
        }
    }
}
