//! PKCE (RFC 7636): S256 challenges and verifiers.

use super::*;
use crate::redacted::Redacted;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use sha2::{Digest, Sha256};
use std::fmt;
use subtle::ConstantTimeEq;

/// A PKCE code challenge made with `S256`: the base64url (unpadded)
/// SHA-256 digest of the client's code verifier, 43 characters.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct CodeChallenge {
    text: String,
    digest: [u8; 32],
}

impl fmt::Debug for CodeChallenge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CodeChallenge").field(&self.text).finish()
    }
}

impl CodeChallenge {
    /// Validates the `code_challenge` and `code_challenge_method` of an
    /// authorization request. The method must be `S256`; an absent method
    /// means `plain` (RFC 7636 §4.3) and is refused like `plain` itself.
    /// Errors: `invalid_request`.
    pub fn from_request(challenge: &str, method: Option<&str>) -> Result<Self, OAuthError> {
        match present(method) {
            Some(PKCE_METHOD_S256) => {}
            Some("plain") | None => {
                return Err(invalid_request("code_challenge_method must be S256; plain is not supported"))
            }
            Some(_) => return Err(invalid_request("unsupported code_challenge_method; use S256")),
        }
        Self::parse_s256(challenge)
            .ok_or_else(|| invalid_request("code_challenge must be 43 characters of base64url (S256)"))
    }

    /// Reads a stored S256 challenge; `None` when it is not 43 characters of
    /// canonical base64url encoding 32 bytes.
    pub fn parse_s256(text: &str) -> Option<Self> {
        if text.len() != 43 {
            return None;
        }
        let bytes = URL_SAFE_NO_PAD.decode(text).ok()?;
        let digest: [u8; 32] = bytes.try_into().ok()?;
        Some(Self { text: text.to_owned(), digest })
    }

    /// The challenge a verifier yields: BASE64URL(SHA256(ASCII(verifier))).
    pub fn s256(verifier: &CodeVerifier) -> Self {
        let digest: [u8; 32] = Sha256::digest(verifier.0.as_bytes()).into();
        Self { text: URL_SAFE_NO_PAD.encode(digest), digest }
    }

    /// Whether `verifier` proves this challenge (compared in constant time).
    pub fn is_proved_by(&self, verifier: &CodeVerifier) -> bool {
        let candidate: [u8; 32] = Sha256::digest(verifier.0.as_bytes()).into();
        candidate.ct_eq(&self.digest).into()
    }

    /// The challenge text, as the client sent it.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// A PKCE code verifier: 43 to 128 characters of `A-Z a-z 0-9 - . _ ~`
/// (RFC 7636 §4.1). `Debug` does not show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeVerifier(Redacted<String>);

impl CodeVerifier {
    /// Validates the `code_verifier` of a token request. Errors:
    /// `invalid_request` for a wrong length or character.
    pub fn parse(raw: &str) -> Result<Self, OAuthError> {
        let ok = (MIN_VERIFIER_LEN..=MAX_VERIFIER_LEN).contains(&raw.len()) && raw.bytes().all(is_unreserved);
        if ok {
            Ok(Self(Redacted(raw.to_owned())))
        } else {
            Err(invalid_request("code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9, '-', '.', '_', '~'"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::test_support::*;
    use proptest::prelude::*;

    #[test]
    fn s256_matches_the_rfc_7636_appendix_b_example() {
        let octets: [u8; 32] = [
            116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212, 37, 77, 105, 214, 191,
            240, 91, 88, 5, 88, 83, 132, 141, 121,
        ];
        assert_eq!(random_token_text(&octets), RFC_VERIFIER, "the verifier is base64url of the octets");
        let verifier = CodeVerifier::parse(RFC_VERIFIER).expect("valid verifier");
        assert_eq!(CodeChallenge::s256(&verifier).as_str(), RFC_CHALLENGE);
        let challenge = CodeChallenge::from_request(RFC_CHALLENGE, Some("S256")).expect("valid challenge");
        assert!(challenge.is_proved_by(&verifier));
        let other = CodeVerifier::parse(&RFC_VERIFIER.replace('d', "e")).expect("valid verifier");
        assert!(!challenge.is_proved_by(&other));
    }

    #[test]
    fn plain_and_missing_or_unknown_methods_are_refused() {
        for method in [Some("plain"), None, Some(""), Some("s256"), Some("S512"), Some("S256 ")] {
            let e = CodeChallenge::from_request(RFC_CHALLENGE, method).expect_err("refused");
            assert_eq!(e.error_code(), "invalid_request", "{method:?}");
        }
    }

    #[test]
    fn s256_challenges_must_be_43_canonical_base64url_characters() {
        for bad in [
            "",
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-c",
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cMM",
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw+cM",
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN",
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw=cM",
        ] {
            assert!(CodeChallenge::from_request(bad, Some("S256")).is_err(), "{bad}");
            assert!(CodeChallenge::parse_s256(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn verifiers_need_43_to_128_unreserved_characters() {
        assert!(CodeVerifier::parse(&"a".repeat(43)).is_ok());
        assert!(CodeVerifier::parse(&"Z".repeat(128)).is_ok());
        assert!(CodeVerifier::parse("aA0-._~aA0-._~aA0-._~aA0-._~aA0-._~aA0-._~a").is_ok());
        for bad in [
            "a".repeat(42),
            "a".repeat(129),
            format!("{}+", "a".repeat(42)),
            format!("{} ", "a".repeat(42)),
            format!("{}é", "a".repeat(41)),
        ] {
            assert_eq!(CodeVerifier::parse(&bad).map_err(|e| e.error_code()), Err("invalid_request"), "{bad}");
        }
        assert!(!format!("{:?}", CodeVerifier::parse(RFC_VERIFIER).expect("valid")).contains("dBj"));
    }

    proptest! {
        #[test]
        fn every_valid_verifier_proves_its_own_s256_challenge(v in "[A-Za-z0-9._~-]{43,128}") {
            let verifier = CodeVerifier::parse(&v).expect("valid by construction");
            let challenge = CodeChallenge::s256(&verifier);
            let sent = CodeChallenge::from_request(challenge.as_str(), Some("S256")).expect("round trips");
            prop_assert!(sent.is_proved_by(&verifier));
        }

        #[test]
        fn a_verifier_never_proves_the_challenge_of_another(
            a in "[A-Za-z0-9._~-]{43,128}",
            b in "[A-Za-z0-9._~-]{43,128}",
        ) {
            prop_assume!(a != b);
            let a = CodeVerifier::parse(&a).expect("valid");
            let b = CodeVerifier::parse(&b).expect("valid");
            prop_assert!(!CodeChallenge::s256(&a).is_proved_by(&b));
        }

        #[test]
        fn verifiers_outside_the_charset_are_refused(
            head in "[A-Za-z0-9._~-]{0,60}",
            bad in "[^A-Za-z0-9._~-]",
            tail in "[A-Za-z0-9._~-]{0,60}",
        ) {
            let raw = format!("{head}{bad}{tail}");
            prop_assert!(CodeVerifier::parse(&raw).is_err());
        }
    }
}
