//! reqwest implementations of credencial's network ports.
//!
//! One pooled [`reqwest::Client`] (see [`http_client`]) is built by the
//! binary and cloned into every adapter; each adapter has its own base URL and
//! time-out. Redirects are never followed, so a token can only ever reach the
//! configured host.

mod client;
mod provider;
mod registries;
mod response;
mod unconfigured;
mod user_data;

pub use client::{http_client, BaseUrl, BaseUrlError};
pub use provider::{
    HttpProviderClient, InvalidProviderSettings, ProviderSettings, DEFAULT_PROVIDER_MAX_BODY_BYTES,
    DEFAULT_PROVIDER_TIMEOUT,
};
pub use registries::{
    ApiKey, HttpCdpDirectory, HttpCnesRegistry, HttpTaxAuthority, InvalidApiKey, RegistryEndpoint,
    DEFAULT_REGISTRY_MAX_BODY_BYTES, DEFAULT_REGISTRY_TIMEOUT,
};
pub use unconfigured::UnconfiguredRegistry;
pub use user_data::HttpUserDataSource;
