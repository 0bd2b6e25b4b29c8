//! The password stamp of a login session: what ties a session to the
//! password it was opened with, so that changing the password ends every
//! other session (Django's "session auth hash", made for a stateless
//! session token).
//!
//! A stamp is `base64url(SHA-256(label ‖ stored password hash))[..16 bytes]`:
//! the stored hash carries a fresh random salt each time a password is set,
//! so every new password (even the same one typed again) gives a new stamp.
//! The session token carries the stamp as a claim; a session is accepted
//! only while the account's stored hash still gives the same stamp. The
//! stamp reveals nothing usable about the password: it is a digest of a
//! salted PBKDF2 hash that only the database holds.

use crate::redacted::Redacted;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Separates this digest from any other use of SHA-256 over a hash.
const LABEL: &[u8] = b"credencial/session/password-stamp\0";

/// The stamp of one stored password hash (22 characters of base64url).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PasswordStamp(Redacted<String>);

impl PasswordStamp {
    /// The stamp of `encoded`, a stored password hash (any format).
    pub fn of(encoded: &str) -> Self {
        let digest = Sha256::new().chain_update(LABEL).chain_update(encoded.as_bytes()).finalize();
        Self(Redacted(URL_SAFE_NO_PAD.encode(&digest[..16])))
    }

    /// The stamp as carried in a session token.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `presented` (a session token's claim) is this stamp,
    /// compared in constant time.
    pub fn matches(&self, presented: &str) -> bool {
        self.0.len() == presented.len() && bool::from(self.0.as_bytes().ct_eq(presented.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_follows_the_stored_hash_and_nothing_else() {
        let a = PasswordStamp::of("pbkdf2_sha256$1000$saltA$hashA");
        assert_eq!(a.as_str().len(), 22);
        assert_eq!(a, PasswordStamp::of("pbkdf2_sha256$1000$saltA$hashA"), "deterministic");
        assert!(a.matches(a.as_str()));
        assert!(!a.matches(PasswordStamp::of("pbkdf2_sha256$1000$saltB$hashA").as_str()), "a new salt, a new stamp");
        assert!(!a.matches(""));
        assert!(!a.matches(&a.as_str()[..21]));
        assert!(!format!("{a:?}").contains(a.as_str()));
    }
}
