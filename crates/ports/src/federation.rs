//! An upstream identity provider (gov.br, or any OpenID provider) that
//! people log in through: where to send the browser, and what the provider
//! says about who came back.

use async_trait::async_trait;
use credencial_domain::federation::id_token::IdTokenRejection;
use credencial_domain::Redacted;
use serde_json::{Map, Value};
use thiserror::Error;

use crate::user_data::UpstreamError;

/// A login started at an upstream: the URL to send the browser to, and
/// what to keep on the server until it comes back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamLoginStart {
    /// The provider's authorization URL (code flow, PKCE S256, `state`,
    /// `nonce`, the provider's scopes, this service's redirect URI).
    pub url: String,
    /// The `state` sent: the callback must bring it back.
    pub state: Redacted<String>,
    /// The `nonce` sent: the ID token must carry it.
    pub nonce: Redacted<String>,
    /// The PKCE verifier, for the code's redemption.
    pub pkce_verifier: Redacted<String>,
}

/// Why an upstream login failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FederationError {
    /// The provider answered the token request with an OAuth2 error
    /// (`invalid_grant` for an expired or replayed code, …).
    #[error("the provider refused: {0}")]
    Refused(String),
    /// The ID token's signature does not verify with the provider's keys
    /// (after one refresh of the key set for a key id it did not know), or
    /// it is signed with an algorithm the settings do not allow.
    #[error("the ID token's signature does not verify")]
    Signature,
    /// The ID token verified but is not for this login.
    #[error(transparent)]
    Rejected(#[from] IdTokenRejection),
    /// The provider is down, slow, or answered something unusable
    /// (discovery, keys, or token answer).
    #[error(transparent)]
    Upstream(#[from] UpstreamError),
}

/// One upstream identity provider.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait IdentityProvider: Send + Sync + 'static {
    /// Starts a login: fresh `state`, `nonce` and PKCE verifier, and the
    /// provider's authorization URL (from its discovery document, fetched
    /// and cached) for the browser to go to, coming back to
    /// `redirect_uri`.
    async fn start(&self, redirect_uri: &str) -> Result<UpstreamLoginStart, FederationError>;

    /// Redeems the callback's `code` with the kept PKCE verifier and
    /// answers the claims of the ID token, verified for this login
    /// (signature with the provider's keys, issuer, audience, lifetime,
    /// `nonce`, `at_hash`) at `now`.
    async fn finish(
        &self,
        code: &str,
        pkce_verifier: &str,
        nonce: &str,
        redirect_uri: &str,
        now: i64,
    ) -> Result<Map<String, Value>, FederationError>;

    /// The provider's logout URL that sends the browser back to
    /// `post_logout_redirect_uri`, when the provider has one.
    async fn logout_url(&self, post_logout_redirect_uri: &str) -> Result<Option<String>, FederationError>;
}
