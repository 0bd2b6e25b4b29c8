//! Anti-forgery tokens of the HTML forms (`/oauth/authorize/`, the client
//! component's logout).
//!
//! A form token is `base64url(HMAC-SHA256(key, purpose ‖ bound values))`,
//! each part length-prefixed so that no two different inputs give the same
//! message. The key is a secret the attacker cannot read from another
//! origin: for the login form, a random value kept in an HttpOnly cookie
//! (double submit); for the consent form and the account pages' forms, the
//! `jti` of the login session (inside the HttpOnly session cookie); for the logout form, the host
//! session's HttpOnly cookie value. Bound values tie a token to the one
//! authorization request the form was rendered for.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

/// What a form token is for; a token made for one purpose never passes as
/// another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormPurpose {
    /// The login form.
    Login,
    /// The consent form (approve or deny).
    Consent,
    /// The client component's logout form (`POST /auth/logout/`).
    Logout,
    /// Every form of the account pages (`/conta/`), keyed by the login
    /// session and bound to the form's path.
    Account,
    /// The provider's logout confirmation (`POST /oauth/logout/`), keyed
    /// by the login session and bound to the logout request.
    EndSession,
}

impl FormPurpose {
    fn label(self) -> &'static str {
        match self {
            FormPurpose::Login => "credencial/oauth/login",
            FormPurpose::Consent => "credencial/oauth/consent",
            FormPurpose::Logout => "credencial/auth/logout",
            FormPurpose::Account => "credencial/conta",
            FormPurpose::EndSession => "credencial/oauth/logout",
        }
    }
}

/// The token a form for `purpose`, keyed by `key` and bound to `bound`,
/// carries in its hidden field: 43 characters of base64url.
pub fn form_token(key: &str, purpose: FormPurpose, bound: &[&str]) -> String {
    URL_SAFE_NO_PAD.encode(digest(key, purpose, bound))
}

/// Whether `presented` is the token [`form_token`] gives for these inputs
/// (compared in constant time). An empty key never matches.
pub fn form_token_matches(key: &str, purpose: FormPurpose, bound: &[&str], presented: &str) -> bool {
    if key.is_empty() {
        return false;
    }
    let Ok(presented) = URL_SAFE_NO_PAD.decode(presented) else {
        return false;
    };
    let expected = digest(key, purpose, bound);
    presented.len() == expected.len() && bool::from(presented.as_slice().ct_eq(expected.as_slice()))
}

fn digest(key: &str, purpose: FormPurpose, bound: &[&str]) -> [u8; 32] {
    // HMAC accepts keys of any length; `new_from_slice` cannot fail for it.
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key.as_bytes()) else {
        return [0; 32];
    };
    for part in std::iter::once(purpose.label()).chain(bound.iter().copied()) {
        mac.update(&(part.len() as u64).to_be_bytes());
        mac.update(part.as_bytes());
    }
    mac.finalize().into_bytes().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_matches_only_its_key_purpose_and_bound_values() {
        let t = form_token("k1", FormPurpose::Consent, &["portal", "https://a.example/cb"]);
        assert_eq!(t.len(), 43);
        assert!(form_token_matches("k1", FormPurpose::Consent, &["portal", "https://a.example/cb"], &t));
        assert!(!form_token_matches("k2", FormPurpose::Consent, &["portal", "https://a.example/cb"], &t));
        assert!(!form_token_matches("k1", FormPurpose::Login, &["portal", "https://a.example/cb"], &t));
        assert!(!form_token_matches("k1", FormPurpose::Consent, &["portal", "https://b.example/cb"], &t));
        assert!(!form_token_matches("k1", FormPurpose::Consent, &["portal"], &t));
    }

    #[test]
    fn parts_are_length_prefixed_so_shifted_boundaries_differ() {
        assert_ne!(
            form_token("k", FormPurpose::Consent, &["ab", "c"]),
            form_token("k", FormPurpose::Consent, &["a", "bc"])
        );
        assert_ne!(
            form_token("k", FormPurpose::Consent, &["", "x"]),
            form_token("k", FormPurpose::Consent, &["x", ""])
        );
    }

    #[test]
    fn malformed_empty_or_keyless_tokens_never_match() {
        let t = form_token("k", FormPurpose::Login, &[]);
        assert!(!form_token_matches("k", FormPurpose::Login, &[], ""));
        assert!(!form_token_matches("k", FormPurpose::Login, &[], "!!not base64!!"));
        assert!(!form_token_matches("k", FormPurpose::Login, &[], &t[..42]));
        assert!(!form_token_matches("", FormPurpose::Login, &[], &form_token("", FormPurpose::Login, &[])));
    }
}
