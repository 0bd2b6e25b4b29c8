//! Errors of the domain rules.

use thiserror::Error;

/// Why a token was refused. Every variant means "not valid" to a client; the
/// variants exist so that logs and tests can tell the reasons apart.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TokenError {
    /// The signature, header, encoding or claims could not be verified.
    #[error("token is malformed or its signature does not verify")]
    Invalid,
    /// `exp` is in the past.
    #[error("token has expired")]
    Expired,
    /// `nbf` or `iat` lies in the future.
    #[error("token is not valid yet")]
    NotYetValid,
    /// The token is valid but of the other type (access vs refresh).
    #[error("token has wrong type")]
    WrongType,
    /// A refresh token that was already rotated (or never issued by us).
    #[error("token is blacklisted")]
    Revoked,
}

/// Why an `endpoint` value of a consume request was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EndpointError {
    /// Not a plain absolute path (scheme, `//host`, backslash, dot segments,
    /// percent-encoding, query or fragment, control characters).
    #[error("endpoint must be a plain path starting with '/'")]
    NotAPlainPath,
    /// A plain path that is not on the configured allow-list.
    #[error("endpoint is not on the allow-list")]
    NotAllowed,
}
