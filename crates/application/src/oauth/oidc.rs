//! OpenID Connect on the OAuth2 provider: the issuer and whether the
//! provider speaks OpenID Connect at all, the discovery document, the ID
//! token of a code exchange or a refresh, and RP-initiated logout.
//!
//! The provider speaks OpenID Connect when it has an issuer (the
//! `issuer_url` setting) and a key to sign ID tokens with; without either,
//! an authorization request for `openid` is refused with `invalid_scope`
//! and there is no discovery document.

use credencial_domain::form_token::{form_token, form_token_matches, FormPurpose};
use credencial_domain::oauth::discovery::{EndpointPaths, IssuerUrl, ProviderMetadata};
use credencial_domain::oauth::id_token::{logout_hint, HintClaims, IdTokenClaims, IdTokenFacts, LogoutHint};
use credencial_domain::oauth::logout::{logout_client, post_logout_location, LogoutParams};
use credencial_domain::oauth::{ClientId, OAuthError};
use credencial_domain::{TokenCodec, UserId};

use super::{serving_client, LoginSession, OAuthService};
use crate::error::ServiceError;

/// What an ID token is issued for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IdTokenFor<'a> {
    /// The person.
    pub user: UserId,
    /// The client.
    pub client_id: &'a ClientId,
    /// When the person logged in, when known.
    pub auth_time: Option<i64>,
    /// The authorization request's nonce (code exchange only).
    pub nonce: Option<&'a str>,
    /// The access token issued with it.
    pub access_token: &'a str,
    /// The login's authentication context class, when known.
    pub acr: Option<&'a str>,
    /// The login's methods (RFC 8176), when known.
    pub amr: Option<&'a [String]>,
    /// The account's address and whether it is confirmed (the `email`
    /// scope), read under the access log's rules.
    pub email: Option<(&'a str, bool)>,
    /// The login session's `sid`, when the grant was made in one.
    pub sid: Option<&'a str>,
}

/// Where a logout request goes next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogoutStep {
    /// Show this error on our own page (HTTP 400); nothing ends, nothing is
    /// redirected: an `id_token_hint` that is not one of our ID tokens, or
    /// a `client_id` that contradicts it.
    Refused(OAuthError),
    /// End the login session (if any) and send the browser to `location`,
    /// or show our page when there is none.
    Done {
        /// The client's registered post-logout URI with `state`, if the
        /// request named one exactly.
        location: Option<String>,
        /// The client's name, when the request names a served client.
        client_name: Option<String>,
    },
    /// Ask the person to confirm first (a session exists and no valid
    /// `id_token_hint` names its user): a page of another site must not be
    /// able to log anybody out with a bare link.
    Confirm {
        /// Where the browser goes after confirming (as in `Done`).
        location: Option<String>,
        /// The client's name, when the request names a served client.
        client_name: Option<String>,
    },
}

impl OAuthService {
    /// The same service speaking OpenID Connect as `issuer` (when it also
    /// has a key to sign ID tokens with).
    pub fn with_issuer(mut self, issuer: IssuerUrl) -> Self {
        self.issuer = Some(issuer);
        self
    }

    /// The issuer identifier, when OpenID Connect is on.
    pub fn issuer(&self) -> Option<&IssuerUrl> {
        self.issuer.as_ref().filter(|_| self.id_token_codec().is_some())
    }

    /// Whether the provider speaks OpenID Connect: an issuer and an ID-token
    /// key.
    pub fn openid_enabled(&self) -> bool {
        self.issuer().is_some()
    }

    /// The codec of ID tokens: the provider's asymmetric key (the token
    /// issuer's).
    fn id_token_codec(&self) -> Option<&TokenCodec> {
        self.tokens.issuer().id_token_codec()
    }

    /// The discovery document, with the endpoints at `paths`; `None` when
    /// OpenID Connect is off.
    pub fn discovery(&self, paths: EndpointPaths) -> Option<ProviderMetadata> {
        let issuer = self.issuer()?;
        let id_token_alg = self.id_token_codec()?.algorithm();
        Some(ProviderMetadata::new(issuer, paths, id_token_alg, self.tokens.issuer().client_codec().algorithm()))
    }

    /// The signed ID token of `to`, living as long as an access token.
    /// Errors: `Internal` when OpenID Connect is off (callers check first)
    /// or signing fails.
    pub(crate) fn id_token(&self, to: IdTokenFor<'_>) -> Result<String, ServiceError> {
        let Some(issuer) = self.issuer() else {
            return Err(ServiceError::Internal("an ID token without an issuer or a key".into()));
        };
        let claims = IdTokenClaims::new(IdTokenFacts {
            issuer: issuer.as_str(),
            user: to.user,
            client_id: to.client_id,
            now: self.clock.now(),
            lifetime_secs: self.tokens.lifetimes().access_secs,
            auth_time: to.auth_time,
            nonce: to.nonce,
            access_token: to.access_token,
            acr: to.acr,
            amr: to.amr,
            email: to.email,
            sid: to.sid,
        });
        self.tokens.issuer().sign_id_token(&claims)
    }

    /// What an `id_token_hint` names: one of our ID tokens (its signature
    /// verifies with the provider's key, it names our issuer, one client
    /// and a user), expired or not. `None` for anything else.
    fn verified_hint(&self, token: &str) -> Option<LogoutHint> {
        let claims: HintClaims = self.id_token_codec()?.verified_payload(token)?;
        logout_hint(&claims, self.issuer()?.as_str())
    }

    // ------------------------------------------------------------ logout

    /// A logout request (`/oauth/logout/`) from the browser of `session`
    /// (if any): which client it speaks for and where the browser goes
    /// afterwards (see [`LogoutStep`]). The session ends at once when a
    /// valid `id_token_hint` names its user, or when there is no session;
    /// otherwise the person confirms first ([`confirm_logout`](Self::confirm_logout)).
    /// Errors: `Storage`.
    pub async fn logout(
        &self,
        session: Option<&LoginSession>,
        params: &LogoutParams,
    ) -> Result<LogoutStep, ServiceError> {
        let (hint, location, client_name) = match self.logout_target(params).await? {
            Ok(target) => target,
            Err(refused) => return Ok(refused),
        };
        let named_by_hint = |s: &LoginSession| hint.as_ref().is_some_and(|h| h.user == s.user_id);
        Ok(match session {
            Some(s) if !named_by_hint(s) => LogoutStep::Confirm { location, client_name },
            _ => LogoutStep::Done { location, client_name },
        })
    }

    /// The person confirmed the logout request `params` on our page: after
    /// validating it again, the session ends and the browser goes where
    /// the request said. Errors: `Storage`.
    pub async fn confirm_logout(&self, params: &LogoutParams) -> Result<LogoutStep, ServiceError> {
        Ok(match self.logout_target(params).await? {
            Ok((_, location, client_name)) => LogoutStep::Done { location, client_name },
            Err(refused) => refused,
        })
    }

    /// The confirmation form's anti-forgery token: keyed by the session,
    /// bound to the logout request.
    pub fn logout_form_token(&self, session: &LoginSession, params: &LogoutParams) -> String {
        form_token(&session.key, FormPurpose::EndSession, &logout_values(params))
    }

    /// Whether `presented` is the confirmation form's token for this
    /// session and request.
    pub fn logout_form_token_matches(&self, session: &LoginSession, params: &LogoutParams, presented: &str) -> bool {
        form_token_matches(&session.key, FormPurpose::EndSession, &logout_values(params), presented)
    }

    /// The hint, the location after the logout and the client's name; or
    /// the refusal step.
    #[allow(clippy::type_complexity)]
    async fn logout_target(
        &self,
        params: &LogoutParams,
    ) -> Result<Result<(Option<LogoutHint>, Option<String>, Option<String>), LogoutStep>, ServiceError> {
        let hint = match params.id_token_hint.as_deref().filter(|h| !h.is_empty()) {
            None => None,
            Some(token) => match self.verified_hint(token) {
                Some(hint) => Some(hint),
                None => {
                    tracing::info!("a logout request's id_token_hint is not an ID token of this provider");
                    let error = OAuthError::InvalidRequest("id_token_hint is not an ID token of this provider".into());
                    return Ok(Err(LogoutStep::Refused(error)));
                }
            },
        };
        let client_id = match logout_client(hint.as_ref(), params.client_id.as_deref()) {
            Ok(client_id) => client_id,
            Err(e) => return Ok(Err(LogoutStep::Refused(e))),
        };
        let client = match &client_id {
            Some(id) => serving_client(self.clients.as_ref(), id).await?,
            None => None,
        };
        let location = client.as_ref().and_then(|c| {
            post_logout_location(
                params.post_logout_redirect_uri.as_deref(),
                &c.post_logout_redirect_uris,
                params.state.as_deref(),
            )
        });
        Ok(Ok((hint, location, client.map(|c| c.name))))
    }
}

/// The logout request values a confirmation token is bound to.
fn logout_values(params: &LogoutParams) -> [&str; 4] {
    fn v(o: &Option<String>) -> &str {
        o.as_deref().unwrap_or("")
    }
    [v(&params.id_token_hint), v(&params.post_logout_redirect_uri), v(&params.state), v(&params.client_id)]
}
