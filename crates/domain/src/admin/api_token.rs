//! The user-management API's tokens: one secret per application, with the
//! permissions the panel grants it.
//!
//! A token reads `<lookup>.<secret>`: 16 hex digits that find the
//! application with one indexed read, and 43 base64url characters (256
//! random bits). Only the SHA-256 of the secret is stored (the secret is
//! random, so a slow hash adds nothing) and it is compared in constant
//! time. The token is shown once, when issued.

use std::fmt;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::redacted::Redacted;

/// What an application may do through the user-management API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ApiPermission {
    /// Read users (`GET /usuarios/…`).
    UsersRead,
    /// Pre-register users (`POST /usuarios/`).
    UsersCreate,
}

impl ApiPermission {
    /// Every permission, in the order the panel lists them.
    pub const ALL: [ApiPermission; 2] = [Self::UsersRead, Self::UsersCreate];

    /// The stored and typed name: `users:read` or `users:create`.
    pub fn name(self) -> &'static str {
        match self {
            Self::UsersRead => "users:read",
            Self::UsersCreate => "users:create",
        }
    }

    /// What the panel shows (Portuguese).
    pub fn label(self) -> &'static str {
        match self {
            Self::UsersRead => "Consultar usuários",
            Self::UsersCreate => "Pré-cadastrar usuários",
        }
    }

    /// The permission named `name`; `None` for an unknown name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// A set of [`ApiPermission`]s.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ApiPermissions {
    read: bool,
    create: bool,
}

/// A permission list that names an unknown permission.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown API permission {0:?} (known: users:read, users:create)")]
pub struct UnknownPermission(pub String);

impl ApiPermissions {
    /// No permission.
    pub const NONE: Self = Self { read: false, create: false };

    /// Parses a comma-separated list (`users:read,users:create`; spaces
    /// and empty items are ignored, so `""` is no permission).
    pub fn parse(list: &str) -> Result<Self, UnknownPermission> {
        list.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|name| ApiPermission::from_name(name).ok_or_else(|| UnknownPermission(name.to_owned())))
            .collect()
    }

    /// Whether `permission` is in the set.
    pub fn contains(self, permission: ApiPermission) -> bool {
        match permission {
            ApiPermission::UsersRead => self.read,
            ApiPermission::UsersCreate => self.create,
        }
    }

    /// The set with `permission` added.
    #[must_use]
    pub fn with(mut self, permission: ApiPermission) -> Self {
        match permission {
            ApiPermission::UsersRead => self.read = true,
            ApiPermission::UsersCreate => self.create = true,
        }
        self
    }

    /// The permissions in the set, in [`ApiPermission::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = ApiPermission> {
        ApiPermission::ALL.into_iter().filter(move |p| self.contains(*p))
    }

    /// The stored names, in order.
    pub fn names(self) -> Vec<&'static str> {
        self.iter().map(ApiPermission::name).collect()
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        !self.read && !self.create
    }
}

impl FromIterator<ApiPermission> for ApiPermissions {
    fn from_iter<I: IntoIterator<Item = ApiPermission>>(iter: I) -> Self {
        iter.into_iter().fold(Self::NONE, Self::with)
    }
}

/// The comma-separated names (`users:read,users:create`; `""` for none).
impl fmt::Display for ApiPermissions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.names().join(","))
    }
}

/// Hex digits of a token's lookup part.
pub const LOOKUP_CHARS: usize = 16;
/// Characters of a token's secret part (32 bytes in base64url).
pub const SECRET_CHARS: usize = 43;

/// The SHA-256 of a token's secret part: what is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiTokenDigest(pub Redacted<[u8; 32]>);

impl ApiTokenDigest {
    fn of(secret: &str) -> Self {
        Self(Redacted(Sha256::digest(secret.as_bytes()).into()))
    }
}

/// A token as a caller presented it, split into its parts (syntax only:
/// whether it is right is for [`PresentedApiToken::matches`]).
#[derive(Debug)]
pub struct PresentedApiToken {
    lookup: String,
    secret: Redacted<String>,
}

impl PresentedApiToken {
    /// Splits `text` into its lookup and secret parts; `None` when it
    /// cannot be a token (no stored token has that shape).
    pub fn parse(text: &str) -> Option<Self> {
        let (lookup, secret) = text.trim().split_once('.')?;
        let lookup_ok = lookup.len() == LOOKUP_CHARS && lookup.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        let secret_ok =
            secret.len() == SECRET_CHARS && secret.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        (lookup_ok && secret_ok).then(|| Self { lookup: lookup.to_owned(), secret: Redacted(secret.to_owned()) })
    }

    /// The lookup part (16 hex digits).
    pub fn lookup(&self) -> &str {
        &self.lookup
    }

    /// Whether the secret part hashes to `stored`, compared in constant
    /// time. With no stored digest (unknown lookup) a digest is still
    /// computed and compared, so both refusals cost the same.
    pub fn matches(&self, stored: Option<&ApiTokenDigest>) -> bool {
        let digest = ApiTokenDigest::of(&self.secret);
        let zero = ApiTokenDigest(Redacted([0; 32]));
        let equal: bool = digest.0.ct_eq(stored.unwrap_or(&zero).0.expose()).into();
        equal && stored.is_some()
    }
}

/// A freshly issued token: the text to show once, and what to store.
#[derive(Debug)]
pub struct IssuedApiToken {
    text: Redacted<String>,
    lookup: String,
    digest: ApiTokenDigest,
}

impl IssuedApiToken {
    /// The token made of these random bytes (the caller draws them from a
    /// cryptographic generator).
    pub fn from_random(lookup: [u8; LOOKUP_CHARS / 2], secret: [u8; 32]) -> Self {
        let lookup: String = lookup.iter().map(|b| format!("{b:02x}")).collect();
        let secret = URL_SAFE_NO_PAD.encode(secret);
        let digest = ApiTokenDigest::of(&secret);
        Self { text: Redacted(format!("{lookup}.{secret}")), lookup, digest }
    }

    /// The whole token, as the application sends it (shown once).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The lookup part, stored in clear.
    pub fn lookup(&self) -> &str {
        &self.lookup
    }

    /// The digest of the secret part, stored.
    pub fn digest(&self) -> &ApiTokenDigest {
        &self.digest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_lists_parse_and_print_in_a_fixed_order() {
        let both = ApiPermissions::parse("users:create, users:read").expect("valid");
        assert_eq!(both.to_string(), "users:read,users:create");
        assert!(both.contains(ApiPermission::UsersRead) && both.contains(ApiPermission::UsersCreate));
        let read = ApiPermissions::parse("users:read").expect("valid");
        assert!(!read.contains(ApiPermission::UsersCreate));
        assert_eq!(ApiPermissions::parse("").expect("valid"), ApiPermissions::NONE);
        assert_eq!(ApiPermissions::parse("users:write"), Err(UnknownPermission("users:write".into())));
    }

    #[test]
    fn an_issued_token_matches_itself_only() {
        let issued = IssuedApiToken::from_random([0xab; 8], [7; 32]);
        assert_eq!(issued.text().len(), LOOKUP_CHARS + 1 + SECRET_CHARS);
        let presented = PresentedApiToken::parse(issued.text()).expect("token shape");
        assert_eq!(presented.lookup(), issued.lookup());
        assert!(presented.matches(Some(issued.digest())));
        assert!(!presented.matches(None));
        let other = IssuedApiToken::from_random([0xab; 8], [8; 32]);
        assert!(!presented.matches(Some(other.digest())));
    }

    #[test]
    fn text_that_cannot_be_a_token_is_refused() {
        for text in [
            "",
            "abc",
            "abababababababab",
            "ABABABABABABABAB.xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "abababababababab.short",
        ] {
            assert!(PresentedApiToken::parse(text).is_none(), "{text:?}");
        }
    }

    #[test]
    fn debug_never_shows_the_secret() {
        let issued = IssuedApiToken::from_random([1; 8], [2; 32]);
        let secret = issued.text().split_once('.').map(|(_, s)| s.to_owned()).unwrap_or_default();
        assert!(!format!("{issued:?}").contains(&secret));
        let presented = PresentedApiToken::parse(issued.text()).expect("shape");
        assert!(!format!("{presented:?}").contains(&secret));
    }
}
