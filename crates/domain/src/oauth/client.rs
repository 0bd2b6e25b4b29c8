//! Client identifiers, what a client's registration asks of a request, and
//! the random text of codes and secrets.

use super::*;
use crate::scope::ScopeSet;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use std::fmt;
use thiserror::Error;

/// A client identifier as we register it: 1 to [`MAX_CLIENT_ID_LEN`]
/// characters of `A-Z a-z 0-9 - . _ ~` (nothing that needs encoding in a
/// URL, a form or a Basic credential).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientId(String);

/// Why a client identifier was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ClientIdError {
    /// Empty or longer than [`MAX_CLIENT_ID_LEN`].
    #[error("client id must have 1 to {MAX_CLIENT_ID_LEN} characters")]
    BadLength,
    /// Contains a character outside `A-Z a-z 0-9 - . _ ~`.
    #[error("client id may only contain A-Z, a-z, 0-9, '-', '.', '_' and '~'")]
    BadCharacter,
}

impl ClientId {
    /// Validates `raw` as a client identifier.
    pub fn parse(raw: &str) -> Result<Self, ClientIdError> {
        if raw.is_empty() || raw.len() > MAX_CLIENT_ID_LEN {
            return Err(ClientIdError::BadLength);
        }
        if !raw.bytes().all(is_unreserved) {
            return Err(ClientIdError::BadCharacter);
        }
        Ok(Self(raw.to_owned()))
    }

    /// The identifier text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// RFC 3986 unreserved characters: `A-Z a-z 0-9 - . _ ~`.
pub(super) fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// What the grant rules need to know about a registered client (the storage
/// record adds its name and secret hash).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientPolicy<'a> {
    /// The client's identifier.
    pub client_id: &'a ClientId,
    /// Its registered redirect URIs, matched exactly.
    pub redirect_uris: &'a [String],
    /// Confidential clients authenticate with a secret; public ones cannot.
    pub confidential: bool,
    /// Whether a confidential client must use PKCE too.
    pub require_pkce: bool,
    /// The optional scopes enabled for the client (required ones are always
    /// granted).
    pub enabled_scopes: ScopeSet,
}

impl ClientPolicy<'_> {
    /// Whether authorization requests of this client must carry a PKCE
    /// challenge: always for public clients, for confidential ones when
    /// registered so.
    pub fn pkce_required(&self) -> bool {
        !self.confidential || self.require_pkce
    }
}

/// Encodes 32 random bytes (from a CSPRNG, chosen by the caller) as the text
/// of a client secret or an authorization code: base64url without padding,
/// 43 characters, 256 bits of entropy.
pub fn random_token_text(bytes: &[u8; 32]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::test_support::*;

    #[test]
    fn client_ids_are_url_safe_and_bounded() {
        assert_eq!(id("portal-saude_2.0~x").as_str(), "portal-saude_2.0~x");
        assert_eq!(ClientId::parse(""), Err(ClientIdError::BadLength));
        assert_eq!(ClientId::parse(&"a".repeat(101)), Err(ClientIdError::BadLength));
        assert!(ClientId::parse(&"a".repeat(100)).is_ok());
        for bad in ["a b", "a:b", "a/b", "a%20", "ação", "a+b"] {
            assert_eq!(ClientId::parse(bad), Err(ClientIdError::BadCharacter), "{bad}");
        }
    }

    #[test]
    fn random_token_text_is_43_base64url_characters() {
        let text = random_token_text(&[0xfb; 32]);
        assert_eq!(text.len(), 43);
        assert!(text.bytes().all(is_unreserved), "{text}");
        assert_ne!(random_token_text(&[0; 32]), random_token_text(&[1; 32]));
    }

    #[test]
    fn public_clients_always_need_pkce_confidential_ones_when_registered_so() {
        let cid = id("app");
        let list = uris(&["https://a.example/cb"]);
        let mut p = policy(&cid, &list, false);
        assert!(p.pkce_required());
        p.confidential = true;
        assert!(!p.pkce_required());
        p.require_pkce = true;
        assert!(p.pkce_required());
    }
}
