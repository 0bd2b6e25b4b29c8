//! The client component's view of an OAuth2 provider (a credencial
//! instance, or any provider with the same contract): where to send the
//! user, how to exchange the code, and how to read the profile.

use async_trait::async_trait;
use credencial_domain::{Redacted, ScopeSet};
use thiserror::Error;

use crate::user_data::UpstreamError;

/// What the client sends the user to the provider with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorizationStart {
    /// The full authorize URL (response_type=code, client_id, redirect_uri,
    /// scope, state, code_challenge, code_challenge_method=S256).
    pub url: String,
    /// The `state` sent; the callback must present it back.
    pub state: String,
    /// The PKCE verifier to keep (server side) until the callback.
    pub pkce_verifier: String,
}

/// Tokens the provider's token endpoint answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderTokens {
    /// The access token for the profile endpoint.
    pub access_token: Redacted<String>,
    /// The scopes the provider granted (space-separated in the answer).
    pub scope: ScopeSet,
    /// The login session the ID token names, when one came (the client
    /// asked for `openid`).
    pub session: Option<ProviderSession>,
}

/// What an ID token says of the login it came from: whom a logout token
/// may name later. Read from the token answer, which came straight from
/// the configured provider (OpenID Connect Core §3.1.3.7: its channel
/// stands for the signature), and only after its audience is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderSession {
    /// The person (`sub`).
    pub sub: String,
    /// The provider's session (`sid`), when named.
    pub sid: Option<String>,
}

/// Why a provider call failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProviderError {
    /// The provider refused the exchange with an RFC 6749 error (e.g.
    /// `invalid_grant` for an expired or replayed code).
    #[error("the provider refused: {0}")]
    Refused(String),
    /// The provider is down, slow, or answered something unexpected.
    #[error(transparent)]
    Upstream(#[from] UpstreamError),
}

/// An OAuth2 provider, from the client component's side. Only the configured
/// provider's token and profile endpoints are ever contacted.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait ProviderClient: Send + Sync + 'static {
    /// A fresh authorization request for `scopes` (random state and PKCE
    /// verifier, S256 challenge). Pure: contacts nothing.
    fn start(&self, scopes: ScopeSet) -> AuthorizationStart;

    /// Exchanges `code` at the provider's `/oauth/token/` with the client's
    /// credentials and the PKCE verifier. Errors: `Refused` for an RFC 6749
    /// error answer, `Upstream` otherwise.
    async fn exchange_code(&self, code: &str, pkce_verifier: &str) -> Result<ProviderTokens, ProviderError>;

    /// The payload of `logout_token` once its signature verifies with one
    /// of the provider's published keys (fetched from its `jwks_uri`,
    /// cached, fetched again for an unknown key id); an asymmetric
    /// algorithm only. The claims are the caller's to check. Errors:
    /// `Refused` for a token that does not verify, `Upstream` when the keys
    /// cannot be read.
    async fn logout_token_payload(&self, logout_token: &str) -> Result<serde_json::Value, ProviderError>;

    /// `POST /api/perfil/dados/` with the access token: the profile payload.
    /// Errors: `Refused` for a 401, `Upstream` otherwise.
    async fn fetch_profile(
        &self,
        access_token: &str,
    ) -> Result<serde_json::Map<String, serde_json::Value>, ProviderError>;
}
