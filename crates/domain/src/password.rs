//! Passwords in Django's PBKDF2-SHA256 text format:
//! `pbkdf2_sha256$<iterations>$<salt>$<base64 of the 32-byte derived key>`.
//!
//! Using Django's format lets an existing Django user table be imported as is.

use crate::redacted::Redacted;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use sha2::Sha256;
use subtle::ConstantTimeEq;
use thiserror::Error;

/// The algorithm tag Django writes in front of PBKDF2-SHA256 hashes.
pub const ALGORITHM: &str = "pbkdf2_sha256";

/// Iterations for new hashes unless configured otherwise (OWASP 2023 figure).
pub const DEFAULT_ITERATIONS: u32 = 600_000;

/// Upper bound on the iterations of a stored hash, so that an imported row
/// cannot make one login cost minutes of CPU.
pub const MAX_ITERATIONS: u32 = 10_000_000;

const KEY_LEN: usize = 32;

/// A stored password hash that is not in the supported format.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PasswordFormatError {
    /// Not `pbkdf2_sha256$…` (another Django hasher, or garbage).
    #[error("unsupported password hash algorithm")]
    UnsupportedAlgorithm,
    /// The four `$`-separated parts are not all there or not well-formed.
    #[error("malformed password hash")]
    Malformed,
    /// Iterations of zero or above [`MAX_ITERATIONS`].
    #[error("password hash iterations out of range")]
    IterationsOutOfRange,
    /// A salt that is empty or contains `$`.
    #[error("salt must be non-empty and must not contain '$'")]
    BadSalt,
}

/// A parsed Django PBKDF2-SHA256 hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DjangoPbkdf2 {
    iterations: u32,
    salt: Redacted<String>,
    key: Redacted<Vec<u8>>,
}

impl DjangoPbkdf2 {
    /// Parses the text form stored in the `password` column.
    pub fn parse(encoded: &str) -> Result<Self, PasswordFormatError> {
        let mut parts = encoded.split('$');
        let (Some(alg), Some(iterations), Some(salt), Some(hash), None) =
            (parts.next(), parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(PasswordFormatError::Malformed);
        };
        if alg != ALGORITHM {
            return Err(PasswordFormatError::UnsupportedAlgorithm);
        }
        let iterations: u32 = iterations.parse().map_err(|_| PasswordFormatError::Malformed)?;
        check_iterations(iterations)?;
        check_salt(salt)?;
        let key = STANDARD.decode(hash).map_err(|_| PasswordFormatError::Malformed)?;
        if key.len() != KEY_LEN {
            return Err(PasswordFormatError::Malformed);
        }
        Ok(Self { iterations, salt: Redacted(salt.to_owned()), key: Redacted(key) })
    }

    /// Derives the hash of `password` with `salt` and `iterations`.
    pub fn derive(password: &str, salt: &str, iterations: u32) -> Result<Self, PasswordFormatError> {
        check_iterations(iterations)?;
        check_salt(salt)?;
        let mut key = vec![0u8; KEY_LEN];
        pbkdf2::pbkdf2_hmac::<Sha256>(password.as_bytes(), salt.as_bytes(), iterations, &mut key);
        Ok(Self { iterations, salt: Redacted(salt.to_owned()), key: Redacted(key) })
    }

    /// The iteration count of this hash.
    pub fn iterations(&self) -> u32 {
        self.iterations
    }

    /// Whether `password` matches, compared in constant time.
    pub fn verify(&self, password: &str) -> bool {
        let mut candidate = [0u8; KEY_LEN];
        pbkdf2::pbkdf2_hmac::<Sha256>(password.as_bytes(), self.salt.as_bytes(), self.iterations, &mut candidate);
        candidate.ct_eq(self.key.as_slice()).into()
    }

    /// The text form, as Django writes it.
    pub fn encode(&self) -> String {
        format!("{ALGORITHM}${}${}${}", self.iterations, self.salt.as_str(), STANDARD.encode(self.key.as_slice()))
    }
}

fn check_iterations(iterations: u32) -> Result<(), PasswordFormatError> {
    if iterations == 0 || iterations > MAX_ITERATIONS {
        return Err(PasswordFormatError::IterationsOutOfRange);
    }
    Ok(())
}

fn check_salt(salt: &str) -> Result<(), PasswordFormatError> {
    if salt.is_empty() || salt.contains('$') {
        return Err(PasswordFormatError::BadSalt);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Written by Django 5.2.19: `make_password("correct horse battery",
    /// salt="DjAnGoSaLt2026", hasher="pbkdf2_sha256")` (its default 1,000,000 iterations).
    const DJANGO_DEFAULT_HASH: &str =
        "pbkdf2_sha256$1000000$DjAnGoSaLt2026$PhwRKjPhgTaYXyFDj/iwmHANIpo4KQPg7dtOoRw4QJA=";
    /// Written by Django 5.2.19: `PBKDF2PasswordHasher().encode("ana-demo-2026", "AnaSalt", 1000)`.
    const DJANGO_SMALL_HASH: &str = "pbkdf2_sha256$1000$AnaSalt$w+KCQAKYHGO6cU2SNqWYaNegJN8oZ9rcvIAtsH/o22I=";

    #[test]
    fn derive_then_parse_round_trips_and_verifies() {
        let h = DjangoPbkdf2::derive("correct horse", "s4ltS4lt", 1000).expect("derive");
        let text = h.encode();
        assert!(text.starts_with("pbkdf2_sha256$1000$s4ltS4lt$"));
        let parsed = DjangoPbkdf2::parse(&text).expect("parse");
        assert!(parsed.verify("correct horse"));
        assert!(!parsed.verify("correct horsE"));
        assert!(!parsed.verify(""));
    }

    #[test]
    fn verifies_hashes_written_by_django() {
        let small = DjangoPbkdf2::parse(DJANGO_SMALL_HASH).expect("parse");
        assert!(small.verify("ana-demo-2026"));
        assert!(!small.verify("ana-demo-2025"));
        assert_eq!(
            DjangoPbkdf2::derive("ana-demo-2026", "AnaSalt", 1000).expect("derive").encode(),
            DJANGO_SMALL_HASH,
            "we write byte for byte what Django writes"
        );
        let default = DjangoPbkdf2::parse(DJANGO_DEFAULT_HASH).expect("parse");
        assert_eq!(default.iterations(), 1_000_000);
        assert!(default.verify("correct horse battery"));
    }

    #[test]
    fn matches_the_rfc_7914_pbkdf2_sha256_vector() {
        // RFC 7914 §11 test vector for PBKDF2-HMAC-SHA256 (P="passwd", S="salt", c=1, dkLen=64),
        // first 32 bytes, written in Django's format.
        let key = [
            0x55, 0xac, 0x04, 0x6e, 0x56, 0xe3, 0x08, 0x9f, 0xec, 0x16, 0x91, 0xc2, 0x25, 0x44, 0xb6, 0x05, 0xf9, 0x41,
            0x85, 0x21, 0x6d, 0xde, 0x04, 0x65, 0xe6, 0x8b, 0x9d, 0x57, 0xc2, 0x0d, 0xac, 0xbc,
        ];
        let text = format!("pbkdf2_sha256$1$salt${}", STANDARD.encode(key));
        let parsed = DjangoPbkdf2::parse(&text).expect("parse");
        assert!(parsed.verify("passwd"));
        assert!(!parsed.verify("password"));
    }

    #[test]
    fn refuses_other_formats() {
        use PasswordFormatError::*;
        let cases = [
            ("argon2$argon2id$v=19$m=1,t=1,p=1$c2FsdA$aGFzaA", Malformed),
            ("bcrypt_sha256$$2b$12$abc", Malformed),
            ("md5$salt$hash", Malformed),
            ("pbkdf2_sha1$1000$salt$aGFzaA==", UnsupportedAlgorithm),
            ("pbkdf2_sha256$abc$salt$aGFzaA==", Malformed),
            ("pbkdf2_sha256$0$salt$aGFzaA==", IterationsOutOfRange),
            ("pbkdf2_sha256$99999999$salt$aGFzaA==", IterationsOutOfRange),
            ("pbkdf2_sha256$1000$$aGFzaA==", BadSalt),
            ("pbkdf2_sha256$1000$salt$not-base64!", Malformed),
            ("pbkdf2_sha256$1000$salt$aGFzaA==", Malformed),
            ("", Malformed),
            ("!unusable", Malformed),
        ];
        for (text, want) in cases {
            assert_eq!(DjangoPbkdf2::parse(text), Err(want), "{text}");
        }
    }

    #[test]
    fn debug_output_hides_salt_and_key() {
        let h = DjangoPbkdf2::derive("pw", "visible-salt", 1).expect("derive");
        let shown = format!("{h:?}");
        assert!(!shown.contains("visible-salt"));
    }
}
