//! The OAuth2 provider's use cases: the consent form's token (here), the
//! authorization endpoint (validate the request, log the
//! user in, ask for consent or remember it, issue a code; in [`authorize`]),
//! the token endpoint (`authorization_code` and `refresh_token` grants in
//! [`token`], one file per further grant: `client_credentials` in
//! [`client_credentials`]), revocation and introspection ([`revocation`])
//! and OpenID Connect ([`oidc`]).
//!
//! The grant rules are the domain's ([`credencial_domain::oauth`]); this
//! module drives them through the ports: the client registry, the code
//! store, the refresh-token store, the stored grants (remembered consent),
//! the hashing threads (client secrets are PBKDF2 hashes, verified off the
//! async workers) and the token codec.

mod authorize;
mod client_credentials;
mod oidc;
mod revocation;
mod token;

pub use authorize::{AuthorizationStep, ConsentPrompt};
pub use oidc::LogoutStep;
pub use token::{OAuthTokens, TokenRequest};

use std::fmt;
use std::sync::Arc;

use credencial_domain::form_token::{form_token, form_token_matches, FormPurpose};
use credencial_domain::oauth::discovery::IssuerUrl;
use credencial_domain::oauth::{AuthorizationParams, ClientId};
use credencial_ports::account::GrantRepository;
use credencial_ports::{AuthorizationCodeStore, Clock, OAuthClient, OAuthClientRepository, UserDirectory};

use crate::error::ServiceError;
use crate::profile::ProfileService;
pub use crate::session::LoginSession;
use crate::tokens::TokenService;

/// The `token_type` of every OAuth2 token response.
pub const BEARER: &str = "Bearer";

/// The authorization endpoint's and token endpoint's use cases.
pub struct OAuthService {
    tokens: Arc<TokenService>,
    clients: Arc<dyn OAuthClientRepository>,
    codes: Arc<dyn AuthorizationCodeStore>,
    grants: Arc<dyn GrantRepository>,
    profiles: Arc<ProfileService>,
    clock: Arc<dyn Clock>,
    issuer: Option<IssuerUrl>,
    /// The applications' API access (their permissions and whether they
    /// may get tokens for themselves); without it `client_credentials` is
    /// refused to every client.
    directory: Option<Arc<dyn UserDirectory>>,
}

impl fmt::Debug for OAuthService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthService").field("tokens", &self.tokens).finish_non_exhaustive()
    }
}

impl OAuthService {
    /// A service over the token service (its credential check and its
    /// token issuer, which records refresh tokens), the client registry,
    /// the code store, the stored grants, the
    /// profile service (CNES supplementation on authorization) and the
    /// clock. Client secrets are checked through the token service, on its
    /// hashing threads.
    pub fn new(
        tokens: Arc<TokenService>,
        clients: Arc<dyn OAuthClientRepository>,
        codes: Arc<dyn AuthorizationCodeStore>,
        grants: Arc<dyn GrantRepository>,
        profiles: Arc<ProfileService>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self { tokens, clients, codes, grants, profiles, clock, issuer: None, directory: None }
    }

    /// The service with the applications' API access, which the
    /// `client_credentials` grant and the introspection of its tokens read.
    pub fn with_machine_access(mut self, directory: Arc<dyn UserDirectory>) -> Self {
        self.directory = Some(directory);
        self
    }

    /// The consent form's anti-forgery token: keyed by the session, bound
    /// to the authorization request the form was rendered for.
    pub fn consent_form_token(&self, session: &LoginSession, params: &AuthorizationParams) -> String {
        form_token(&session.key, FormPurpose::Consent, &bound_values(params))
    }

    /// Whether `presented` is the consent form's token for this session and
    /// request.
    pub fn consent_form_token_matches(
        &self,
        session: &LoginSession,
        params: &AuthorizationParams,
        presented: &str,
    ) -> bool {
        form_token_matches(&session.key, FormPurpose::Consent, &bound_values(params), presented)
    }

    /// Deletes authorization codes that expired more than a minute ago
    /// (used or not), at most `limit` rows (one batch of the
    /// [`crate::purge`] loop), and returns how many; the binary's purge
    /// calls it. Errors: `Storage`.
    pub async fn purge_expired_codes(&self, limit: u32) -> Result<u64, ServiceError> {
        Ok(self.codes.purge_expired(self.clock.now().saturating_sub(60), limit).await?)
    }
}

/// The client `id` when the protocol may serve it: registered and active.
/// A deactivated client is answered everywhere as an unknown one: the
/// authorization error page (never a redirect), `invalid_client` at the
/// token endpoint, a refused token at the profile read. Errors: `Storage`.
pub(crate) async fn serving_client(
    clients: &dyn OAuthClientRepository,
    id: &ClientId,
) -> Result<Option<OAuthClient>, ServiceError> {
    Ok(clients.find(id).await?.filter(|c| c.is_active))
}

/// The request values a consent token is bound to, in a fixed order: all
/// that the approval decides on (the OpenID Connect `nonce` goes into the
/// ID token; `prompt` and `max_age` decide what is shown; `response_mode`
/// how the code travels, added only when sent, so that the tokens of
/// requests without it are those of earlier releases).
fn bound_values(params: &AuthorizationParams) -> Vec<&str> {
    fn v(o: &Option<String>) -> &str {
        o.as_deref().unwrap_or("")
    }
    let mut values = vec![
        v(&params.response_type),
        v(&params.client_id),
        v(&params.redirect_uri),
        v(&params.scope),
        v(&params.state),
        v(&params.code_challenge),
        v(&params.code_challenge_method),
        v(&params.prompt),
        v(&params.nonce),
        v(&params.max_age),
    ];
    values.extend(params.response_mode.as_deref().filter(|m| !m.is_empty()));
    if let Some(acr) = params.acr_values.as_deref().filter(|a| !a.is_empty()) {
        values.extend(["acr_values", acr]);
    }
    values
}
