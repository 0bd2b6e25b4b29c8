//! reqwest implementations of credencial's network ports.
//!
//! One pooled [`reqwest::Client`] (see [`http_client_with`]) is built by the
//! binary and cloned into every adapter; each adapter has its own base URL and
//! time-out. Redirects are never followed, so a token can only ever reach the
//! configured host. It trusts the operating system's certificate store plus
//! an optional CA bundle, and goes through a proxy only when configured
//! ([`OutboundConfig`]).

mod client;
mod identity_provider;
mod logout_poster;
mod mail;
mod oauth_call;
mod provider;
mod published_keys;
mod registries;
mod response;
#[cfg(feature = "test-support")]
pub mod testing;
mod unconfigured;
mod user_data;

pub use client::{
    http_client, http_client_with, BaseUrl, BaseUrlError, OutboundConfig, OutboundError, ProxyConfig, LOOPBACK_NO_PROXY,
};
pub use identity_provider::{
    HttpIdentityProvider, IdentityProviderSettings, InvalidIdentityProvider, DEFAULT_IDENTITY_PROVIDER_TIMEOUT,
    DISCOVERY_TTL, KEYS_TTL, MIN_KEYS_REFRESH, MIN_KEYS_REFRESH_SETTING, STALE_LIMIT,
};
pub use logout_poster::{HttpLogoutPoster, LOGOUT_POST_TIMEOUT};
pub use mail::{InvalidSmtpSettings, SmtpMailer, SmtpSecurity, SmtpSettings, DEFAULT_SMTP_TIMEOUT};
pub use provider::{
    check_client_id, check_redirect_uri, HttpProviderClient, InvalidProviderSettings, ProviderSettings,
    DEFAULT_PROVIDER_MAX_BODY_BYTES, DEFAULT_PROVIDER_TIMEOUT,
};
pub use registries::{
    ApiKey, HttpCdpDirectory, HttpCnesRegistry, HttpTaxAuthority, InvalidApiKey, RegistryEndpoint,
    DEFAULT_REGISTRY_MAX_BODY_BYTES, DEFAULT_REGISTRY_TIMEOUT,
};
pub use unconfigured::UnconfiguredRegistry;
pub use user_data::HttpUserDataSource;
