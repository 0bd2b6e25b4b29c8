//! The OAuth2 errors with their RFC 6749 codes.

use thiserror::Error;

/// An OAuth2 error with its RFC 6749 code (§4.1.2.1 for the authorization
/// endpoint, §5.2 for the token endpoint). The text is the
/// `error_description`; it never says whether a client exists or which part
/// of its credentials was wrong.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum OAuthError {
    /// A required parameter is missing, repeated, malformed or has an
    /// unsupported value.
    #[error("{0}")]
    InvalidRequest(String),
    /// Client authentication failed (unknown client, missing or wrong
    /// secret, unsupported authentication method). HTTP 401 at the token
    /// endpoint.
    #[error("{0}")]
    InvalidClient(&'static str),
    /// The authorization code is invalid, expired, already used, issued to
    /// another client or for another redirect URI, or its PKCE proof fails.
    #[error("{0}")]
    InvalidGrant(String),
    /// The authenticated client may not use this grant or response type.
    #[error("{0}")]
    UnauthorizedClient(String),
    /// The `grant_type` is not one we support.
    #[error("unsupported grant_type")]
    UnsupportedGrantType,
    /// The requested scope is unknown or malformed.
    #[error("{0}")]
    InvalidScope(String),
    /// The `response_type` is not `code`.
    #[error("unsupported response_type; only \"code\" is supported")]
    UnsupportedResponseType,
    /// The resource owner refused consent.
    #[error("the resource owner denied the request")]
    AccessDenied,
    /// `prompt=none` and nobody is logged in (OpenID Connect Core §3.1.2.6).
    #[error("the user is not logged in and prompt=none forbids showing the login form")]
    LoginRequired,
    /// `prompt=none` and the stored consent does not cover the request
    /// (OpenID Connect Core §3.1.2.6).
    #[error("the request needs the user's consent and prompt=none forbids asking for it")]
    ConsentRequired,
    /// The request has a `request` parameter: request objects are not
    /// supported (OpenID Connect Core §6.1).
    #[error("request objects (the request parameter) are not supported")]
    RequestNotSupported,
    /// The request has a `request_uri` parameter: request objects by
    /// reference are not supported (OpenID Connect Core §6.2).
    #[error("request objects by reference (the request_uri parameter) are not supported")]
    RequestUriNotSupported,
    /// The request has a `registration` parameter: clients are registered
    /// by an administrator, never by the request (OpenID Connect Core
    /// §7.2.1).
    #[error("the registration parameter is not supported; clients are registered by an administrator")]
    RegistrationNotSupported,
}

impl OAuthError {
    /// The RFC 6749 `error` value.
    pub fn error_code(&self) -> &'static str {
        match self {
            OAuthError::InvalidRequest(_) => "invalid_request",
            OAuthError::InvalidClient(_) => "invalid_client",
            OAuthError::InvalidGrant(_) => "invalid_grant",
            OAuthError::UnauthorizedClient(_) => "unauthorized_client",
            OAuthError::UnsupportedGrantType => "unsupported_grant_type",
            OAuthError::InvalidScope(_) => "invalid_scope",
            OAuthError::UnsupportedResponseType => "unsupported_response_type",
            OAuthError::AccessDenied => "access_denied",
            OAuthError::LoginRequired => "login_required",
            OAuthError::ConsentRequired => "consent_required",
            OAuthError::RequestNotSupported => "request_not_supported",
            OAuthError::RequestUriNotSupported => "request_uri_not_supported",
            OAuthError::RegistrationNotSupported => "registration_not_supported",
        }
    }

    /// The `error_description`, restricted to the characters RFC 6749
    /// §4.1.2.1 allows (%x20-21 / %x23-5B / %x5D-7E); others become `?`.
    pub fn description(&self) -> String {
        self.to_string()
            .chars()
            .map(|c| match c {
                ' ' | '!' | '#'..='[' | ']'..='~' => c,
                _ => '?',
            })
            .collect()
    }
}

pub(super) fn invalid_request(text: impl Into<String>) -> OAuthError {
    OAuthError::InvalidRequest(text.into())
}

pub(super) fn invalid_grant(text: impl Into<String>) -> OAuthError {
    OAuthError::InvalidGrant(text.into())
}

/// Treats a parameter sent without a value as omitted (RFC 6749 §3.1).
pub(super) fn present(value: Option<&str>) -> Option<&str> {
    value.filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::BAD_CLIENT;

    #[test]
    fn errors_carry_the_rfc_6749_codes() {
        let cases = [
            (invalid_request("x"), "invalid_request"),
            (OAuthError::InvalidClient(BAD_CLIENT), "invalid_client"),
            (invalid_grant("x"), "invalid_grant"),
            (OAuthError::UnauthorizedClient("x".into()), "unauthorized_client"),
            (OAuthError::UnsupportedGrantType, "unsupported_grant_type"),
            (OAuthError::InvalidScope("x".into()), "invalid_scope"),
            (OAuthError::UnsupportedResponseType, "unsupported_response_type"),
            (OAuthError::AccessDenied, "access_denied"),
            (OAuthError::LoginRequired, "login_required"),
            (OAuthError::ConsentRequired, "consent_required"),
            (OAuthError::RequestNotSupported, "request_not_supported"),
            (OAuthError::RequestUriNotSupported, "request_uri_not_supported"),
            (OAuthError::RegistrationNotSupported, "registration_not_supported"),
        ];
        for (error, code) in cases {
            assert_eq!(error.error_code(), code);
        }
    }

    #[test]
    fn error_descriptions_keep_to_the_rfc_character_set() {
        let e = invalid_request("bad \"value\" \\ ção\n");
        assert_eq!(e.description(), "bad ?value? ? ??o?");
    }
}
