//! Tokens and signing keys: the first-party JWT algorithm and keys, the ID-
//! token key, lifetimes and the OpenID Connect issuer.

use std::path::PathBuf;

use credencial_domain::oauth::discovery::IssuerUrl;
use credencial_domain::JwtAlgorithm;
use secrecy::SecretString;
use serde::{Deserialize, Serialize};

use super::lists::string_list;

/// Tokens and signing keys: the first-party JWT algorithm and keys, the ID-
/// token key, lifetimes and the OpenID Connect issuer.
#[derive(Clone, Deserialize, Serialize)]
#[serde(default)]
pub struct TokenSettings {
    /// Signing algorithm: HS256, RS256 or ES256 (`SERVICE_JWT_ALGORITHM`).
    #[serde(with = "super::text")]
    pub jwt_algorithm: JwtAlgorithm,
    /// HS256 secret, at least 32 bytes (`SERVICE_JWT_SECRET`).
    #[serde(skip_serializing)]
    pub jwt_secret: Option<SecretString>,
    /// PEM private key for RS256/ES256 (`SERVICE_JWT_PRIVATE_KEY_FILE`).
    pub jwt_private_key_file: Option<PathBuf>,
    /// PEM public key for RS256/ES256 (`SERVICE_JWT_PUBLIC_KEY_FILE`).
    pub jwt_public_key_file: Option<PathBuf>,
    /// Seconds a token is still accepted after `exp`.
    pub jwt_leeway_secs: i64,
    /// PEM public keys of the RS256/ES256 keys the current one replaced
    /// (`SERVICE_JWT_PREVIOUS_PUBLIC_KEY_FILES`, comma-separated): tokens
    /// they signed verify until they expire, and they are published.
    #[serde(deserialize_with = "string_list")]
    pub jwt_previous_public_key_files: Vec<String>,
    /// Algorithm of the key that signs ID tokens: RS256 (default) or ES256.
    #[serde(with = "super::text")]
    pub oidc_signing_algorithm: JwtAlgorithm,
    /// PEM private key that signs ID tokens (`SERVICE_OIDC_SIGNING_KEY_FILE`;
    /// `credencial keys generate` writes one). Unset: the demo makes one
    /// per run; `serve` uses the RS256/ES256 JWT key, or has no OpenID
    /// Connect with HS256.
    pub oidc_signing_key_file: Option<PathBuf>,
    /// PEM public keys of previous ID-token keys (comma-separated).
    #[serde(deserialize_with = "string_list")]
    pub oidc_previous_public_key_files: Vec<String>,
    /// Access-token lifetime in seconds.
    pub access_token_lifetime_secs: i64,
    /// Refresh-token lifetime in seconds.
    pub refresh_token_lifetime_secs: i64,
    /// The absolute lifetime of a refresh-token family in seconds: no
    /// rotation past the login's time plus this (default 30 days).
    pub refresh_family_lifetime_secs: i64,
    /// How long after a rotation the rotated refresh token may be presented
    /// again and answer the same new pair instead of revoking its family
    /// (two tabs refreshing at once); 0 disables the window.
    pub refresh_grace_secs: i64,
    /// OpenID Connect: the issuer identifier, the service's public base URL
    /// (`https://…`, or `http://` on a loopback host; no query or
    /// fragment). ID tokens carry it as `iss`, the discovery document is
    /// below it. Unset: OpenID Connect is off in `serve`; the demo uses its
    /// own address.
    #[serde(with = "super::text::option")]
    pub issuer_url: Option<IssuerUrl>,
}

impl Default for TokenSettings {
    fn default() -> Self {
        Self {
            jwt_algorithm: JwtAlgorithm::HS256,
            jwt_secret: None,
            jwt_private_key_file: None,
            jwt_public_key_file: None,
            jwt_leeway_secs: 0,
            jwt_previous_public_key_files: Vec::new(),
            oidc_signing_algorithm: JwtAlgorithm::RS256,
            oidc_signing_key_file: None,
            oidc_previous_public_key_files: Vec::new(),
            access_token_lifetime_secs: 5 * 60,
            refresh_token_lifetime_secs: 24 * 60 * 60,
            refresh_family_lifetime_secs: credencial_domain::token::DEFAULT_REFRESH_FAMILY_SECS,
            refresh_grace_secs: credencial_domain::refresh_grace::DEFAULT_REFRESH_GRACE_SECS,
            issuer_url: None,
        }
    }
}
