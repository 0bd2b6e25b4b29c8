//! The OAuth2 provider's use cases: the login session and the forms'
//! tokens (here), the authorization endpoint (validate the request, log the
//! user in, ask for consent or remember it, issue a code; in [`authorize`]),
//! the token endpoint (`authorization_code` and `refresh_token` grants; in
//! [`token`]), revocation and introspection ([`revocation`]) and OpenID
//! Connect ([`oidc`]).
//!
//! The grant rules are the domain's ([`credencial_domain::oauth`]); this
//! module drives them through the ports: the client registry, the code
//! store, the refresh-token store, the stored grants (remembered consent),
//! the hashing threads (client secrets are PBKDF2 hashes, verified off the
//! async workers) and the token codec.

mod authorize;
mod oidc;
mod revocation;
mod token;

pub use authorize::{AuthorizationStep, ConsentPrompt};
pub use oidc::LogoutStep;
pub use token::{OAuthTokens, TokenRequest};

use std::fmt;
use std::sync::Arc;

use credencial_domain::admin::LoginVia;
use credencial_domain::form_token::{form_token, form_token_matches, FormPurpose};
use credencial_domain::oauth::discovery::IssuerUrl;
use credencial_domain::oauth::{random_token_text, AuthorizationParams, ClientId};
use credencial_domain::throttle::ClientAddress;
use credencial_domain::{PasswordStamp, Redacted, UserId};
use credencial_ports::account::GrantRepository;
use credencial_ports::{AuthorizationCodeStore, Clock, LoginHistory, OAuthClient, OAuthClientRepository};
use rand::RngCore;
use secrecy::SecretString;

use crate::error::ServiceError;
use crate::metrics::LoginForm;
use crate::profile::ProfileService;
use crate::tokens::TokenService;

/// The `token_type` of every OAuth2 token response.
pub const BEARER: &str = "Bearer";

/// A user's login session at the authorization endpoint (read from the
/// session cookie). `Debug` does not show the session id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginSession {
    /// The logged-in user.
    pub user_id: UserId,
    /// The session token's `jti`: the key of the consent form's token.
    jti: Redacted<String>,
    /// The account's password was set by an administrator: until it is
    /// changed, the pages send the person to `/conta/senha/`.
    pub must_change_password: bool,
    /// When the person logged in (Unix seconds): the session token's
    /// `iat`, the ID token's `auth_time`, what `max_age` is measured from.
    pub auth_time: i64,
}

impl LoginSession {
    /// The anti-forgery token of the account pages' forms (`/conta/`),
    /// keyed by this session: a form rendered for one session never passes
    /// in another, and a page of another site cannot read it.
    pub fn account_form_token(&self) -> String {
        form_token(&self.jti, FormPurpose::Account, &[])
    }

    /// Whether `presented` is this session's account form token (compared
    /// in constant time).
    pub fn account_form_token_matches(&self, presented: &str) -> bool {
        form_token_matches(&self.jti, FormPurpose::Account, &[], presented)
    }
}

/// A session just opened by the login form: the session and the signed
/// token to keep in the cookie. `Debug` does not show the token.
#[derive(Debug, Clone)]
pub struct SignedSession {
    /// The session.
    pub session: LoginSession,
    /// The session JWT (`token_type` `session`).
    pub token: Redacted<String>,
    /// How long the token lives, in seconds (the cookie's `Max-Age`).
    pub max_age_secs: i64,
}

/// The authorization endpoint's and token endpoint's use cases.
pub struct OAuthService {
    tokens: Arc<TokenService>,
    clients: Arc<dyn OAuthClientRepository>,
    codes: Arc<dyn AuthorizationCodeStore>,
    grants: Arc<dyn GrantRepository>,
    profiles: Arc<ProfileService>,
    clock: Arc<dyn Clock>,
    logins: Option<Arc<dyn LoginHistory>>,
    issuer: Option<IssuerUrl>,
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
        Self { tokens, clients, codes, grants, profiles, clock, logins: None, issuer: None }
    }

    /// The same service, recording every login of its login forms in
    /// `logins`.
    pub fn with_login_history(mut self, logins: Arc<dyn LoginHistory>) -> Self {
        self.logins = Some(logins);
        self
    }

    // ------------------------------------------------------------ login

    /// Checks the login form's username (or CPF) and password sent from
    /// `from` (the token service's rule: unknown user, wrong password and
    /// inactive account cost the same and answer `InvalidCredentials`; the
    /// same brute-force limits as `pair`, `Throttled`) and opens a session.
    pub async fn log_in(
        &self,
        username: &str,
        password: SecretString,
        from: Option<ClientAddress>,
    ) -> Result<SignedSession, ServiceError> {
        self.log_in_via(LoginVia::OAuth, username, password, from).await
    }

    /// [`log_in`](Self::log_in) at the login form `via` (recorded in the
    /// login history, when the service has one: a failure to record it is
    /// logged and does not fail the login). The session says whether the
    /// password must be changed first.
    pub async fn log_in_via(
        &self,
        via: LoginVia,
        username: &str,
        password: SecretString,
        from: Option<ClientAddress>,
    ) -> Result<SignedSession, ServiceError> {
        let checked = self.tokens.credentials().check_login(username, password, from).await;
        self.tokens.metrics().login(LoginForm::from(via), &checked);
        let (user, stamp) = checked?;
        let mut signed = self.open_session(user.id, &stamp)?;
        signed.session.must_change_password = user.must_change_password;
        if let Some(logins) = &self.logins {
            if let Err(e) = logins.record(user.id, via).await {
                tracing::warn!(error = %e, user = user.id.0, "recording a login in the history failed");
            }
        }
        tracing::info!(user = user.id.0, via = via.code(), "login session opened");
        Ok(signed)
    }

    /// A new login session of `user`, tied to the password whose stamp is
    /// `stamp` (after a login, a sign-up or a password change). Errors:
    /// `Internal` when signing fails.
    pub(crate) fn open_session(&self, user: UserId, stamp: &PasswordStamp) -> Result<SignedSession, ServiceError> {
        let (token, claims) = self.tokens.issuer().session(user, stamp)?;
        let session = LoginSession {
            user_id: user,
            jti: Redacted(claims.jti),
            must_change_password: false,
            auth_time: claims.iat,
        };
        Ok(SignedSession { session, token, max_age_secs: self.tokens.lifetimes().session_secs })
    }

    /// The session a session cookie holds: a valid, unexpired session
    /// token (an access or refresh token is not a session) of an active
    /// account whose password is still the one the session was opened
    /// with (a password change ends every other session; a session token
    /// without a password stamp, from before stamps existed, is over).
    /// `Ok(None)` for no session. Errors: `Storage`.
    pub async fn session(&self, token: &str) -> Result<Option<LoginSession>, ServiceError> {
        let Ok(claims) = self.tokens.issuer().decode_session(token) else {
            return Ok(None);
        };
        let Some(stamp) = claims.password_stamp.as_deref() else {
            return Ok(None);
        };
        let user = UserId(claims.user_id);
        let Some(must_change_password) = self.tokens.credentials().session_is_current(user, stamp).await? else {
            return Ok(None);
        };
        Ok(Some(LoginSession { user_id: user, jti: Redacted(claims.jti), must_change_password, auth_time: claims.iat }))
    }

    /// A fresh random key for the login form's anti-forgery token (kept by
    /// the browser in an HttpOnly cookie).
    pub fn new_form_key(&self) -> String {
        let mut bytes = [0u8; 32];
        rand::thread_rng().fill_bytes(&mut bytes);
        random_token_text(&bytes)
    }

    /// The login form's anti-forgery token for the cookie key `key`.
    pub fn login_form_token(&self, key: &str) -> String {
        form_token(key, FormPurpose::Login, &[])
    }

    /// Whether `presented` is the login form's token for `key`.
    pub fn login_form_token_matches(&self, key: &str, presented: &str) -> bool {
        form_token_matches(key, FormPurpose::Login, &[], presented)
    }

    /// The consent form's anti-forgery token: keyed by the session, bound
    /// to the authorization request the form was rendered for.
    pub fn consent_form_token(&self, session: &LoginSession, params: &AuthorizationParams) -> String {
        form_token(&session.jti, FormPurpose::Consent, &bound_values(params))
    }

    /// Whether `presented` is the consent form's token for this session and
    /// request.
    pub fn consent_form_token_matches(
        &self,
        session: &LoginSession,
        params: &AuthorizationParams,
        presented: &str,
    ) -> bool {
        form_token_matches(&session.jti, FormPurpose::Consent, &bound_values(params), presented)
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
    values
}
