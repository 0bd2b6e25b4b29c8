//! The one error type of the use cases.

use credencial_domain::oauth::OAuthError;
use credencial_domain::{EndpointError, TokenError};
use credencial_ports::{RepositoryError, UpstreamError};
use thiserror::Error;

/// Why a use case did not succeed.
#[derive(Debug, Error)]
pub enum ServiceError {
    /// No active account matches the username and password.
    #[error("no active account found with the given credentials")]
    InvalidCredentials,
    /// Too many failed credential checks for the username (or client) or
    /// the address: refused before any hashing, for this many seconds more.
    #[error("too many failed attempts; retry after {retry_after_secs} s")]
    Throttled {
        /// Seconds until the limit lifts (at least 1).
        retry_after_secs: u64,
    },
    /// The credentials are right, but the password was set by an
    /// administrator and must be changed first (at `/conta/senha/`).
    #[error("the password must be changed before the account is used")]
    PasswordChangeRequired,
    /// The password is right, but the account (or the application) asks a
    /// second factor too: `pair` takes it as `otp` in the same request; a
    /// refresh of a family that no longer meets the bar ends here.
    #[error("a second factor is required")]
    SecondFactorRequired,
    /// The second factor's code sent with the password is wrong (counted
    /// in the codes' budget).
    #[error("the second factor's code is wrong")]
    SecondFactorInvalid,
    /// The token is valid but its user no longer exists or is inactive.
    #[error("user not found or inactive")]
    UnknownUser,
    /// The token presented is not acceptable.
    #[error("invalid token: {0}")]
    InvalidToken(#[from] TokenError),
    /// The requested upstream endpoint is refused.
    #[error("invalid endpoint: {0}")]
    InvalidEndpoint(#[from] EndpointError),
    /// An OAuth2 request was refused (RFC 6749 error code and description).
    #[error("oauth2: {0}")]
    OAuth(#[from] OAuthError),
    /// The upstream service failed or refused.
    #[error(transparent)]
    Upstream(#[from] UpstreamError),
    /// A login at the client component did not succeed.
    #[error("client login: {0}")]
    ClientLogin(#[from] crate::client_login::ClientLoginError),
    /// The change would leave no active staff account: the account is the
    /// last one, and may be neither demoted nor deactivated until another
    /// account is made staff.
    #[error("the last active staff account can be neither demoted nor deactivated: make another account staff first")]
    LastStaff,
    /// The request breaks a rule of the domain (a weak password, a taken
    /// username or CPF); the text says which, for the person who asked.
    #[error("{0}")]
    Invalid(String),
    /// The caller is known but may not do this (e.g. an API token without
    /// the permission); the text says what is missing.
    #[error("forbidden: {0}")]
    Forbidden(String),
    /// Storage is unavailable; details are for the log only.
    #[error("storage unavailable: {0}")]
    Storage(String),
    /// A fault of ours (e.g. signing); details are for the log only.
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<RepositoryError> for ServiceError {
    fn from(e: RepositoryError) -> Self {
        Self::Storage(e.to_string())
    }
}
