//! Authorization codes: their grant, hash, lifetime and redemption, and the
//! checks of a code exchange (RFC 6749 §4.1.3, RFC 7636 §4.6).

use super::*;
use crate::scope::ScopeSet;
use crate::user::UserId;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use sha2::{Digest, Sha256};
use std::fmt;

/// What an authorization code stands for, as stored (keyed by the code's
/// hash) and as returned when it is redeemed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeGrant {
    /// The client the code was issued to.
    pub client_id: ClientId,
    /// The user who consented.
    pub user_id: UserId,
    /// The redirect URI the code was sent to.
    pub redirect_uri: String,
    /// Whether the authorization request named `redirect_uri`.
    pub redirect_uri_explicit: bool,
    /// The granted scopes.
    pub scopes: ScopeSet,
    /// The PKCE challenge the code is bound to, if any.
    pub code_challenge: Option<CodeChallenge>,
    /// When the code stops being redeemable (Unix seconds).
    pub expires_at: i64,
    /// The authorization request's `nonce`, for the ID token.
    pub nonce: Option<String>,
    /// When the person logged in (Unix seconds: the login session's
    /// start), for the ID token's `auth_time`.
    pub auth_time: Option<i64>,
    /// The login's authentication context class (`acr`), when known.
    pub acr: Option<String>,
    /// The login's methods as the session stores them (`pwd otp`).
    pub amr: Option<String>,
    /// The login session's id for the client (the ID token's `sid`,
    /// OpenID Connect Back-Channel Logout §2.1), when it has one.
    pub sid: Option<String>,
}

/// The SHA-256 digest of an authorization code: the only form in which a
/// code is stored, so a read of the table yields nothing redeemable.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CodeHash([u8; 32]);

impl fmt::Debug for CodeHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CodeHash({})", URL_SAFE_NO_PAD.encode(self.0))
    }
}

impl CodeHash {
    /// The hash of the code text a client presents.
    pub fn of(code: &str) -> Self {
        Self(Sha256::digest(code.as_bytes()).into())
    }

    /// Wraps a stored digest.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The digest bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

/// When a code issued at `issued_at` expires.
pub fn code_expires_at(issued_at: i64) -> i64 {
    issued_at.saturating_add(CODE_LIFETIME_SECS)
}

/// Whether a code can still be redeemed at `now`: never used, and `now` is
/// before `expires_at` (a code is dead at its expiry second). Storage applies
/// the same rule atomically.
pub fn code_is_redeemable(expires_at: i64, now: i64, used: bool) -> bool {
    !used && now < expires_at
}

/// The checks of a code exchange, after the code was redeemed (atomically
/// marked used) for the authenticated `client`. Returns the scopes the
/// access token carries: the code's, less any scope the client lost since
/// (the required ones always stay).
///
/// Errors: `invalid_grant` when the code belongs to another client, the
/// redirect URI differs from the one the code was sent to, the verifier
/// does not prove the code's challenge, a verifier is sent for a code that
/// has no challenge (PKCE downgrade, RFC 9700 §2.1.1), or the client now
/// requires PKCE and the code has none; `invalid_request` when the request
/// lacks a `redirect_uri` it must repeat or the `code_verifier` the
/// challenge needs, or the verifier is malformed.
pub fn check_code_exchange(
    grant: &CodeGrant,
    client: &ClientPolicy<'_>,
    redirect_uri: Option<&str>,
    code_verifier: Option<&str>,
) -> Result<ScopeSet, OAuthError> {
    if &grant.client_id != client.client_id {
        return Err(invalid_grant("authorization code was issued to another client"));
    }
    match present(redirect_uri) {
        Some(uri) if uri == grant.redirect_uri => {}
        Some(_) => return Err(invalid_grant("redirect_uri does not match the authorization request")),
        None if grant.redirect_uri_explicit => return Err(invalid_request("redirect_uri is required")),
        None => {}
    }
    match (&grant.code_challenge, present(code_verifier)) {
        (Some(challenge), Some(verifier)) => {
            if !challenge.is_proved_by(&CodeVerifier::parse(verifier)?) {
                return Err(invalid_grant("code_verifier does not match the code_challenge"));
            }
        }
        (Some(_), None) => return Err(invalid_request("code_verifier is required")),
        (None, Some(_)) => {
            return Err(invalid_grant("code_verifier sent for an authorization request without code_challenge"))
        }
        (None, None) if client.pkce_required() => {
            return Err(invalid_grant("this client must use PKCE"));
        }
        (None, None) => {}
    }
    Ok(grant.scopes.intersection(grantable(client.enabled_scopes)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::test_support::*;
    use crate::scope::Scope;

    #[test]
    fn codes_live_sixty_seconds_and_only_once() {
        assert_eq!(CODE_LIFETIME_SECS, 60);
        let expires = code_expires_at(1_000);
        assert_eq!(expires, 1_060);
        assert!(code_is_redeemable(expires, 1_000, false));
        assert!(code_is_redeemable(expires, 1_059, false));
        assert!(!code_is_redeemable(expires, 1_060, false), "dead at its expiry second");
        assert!(!code_is_redeemable(expires, 5_000, false));
        assert!(!code_is_redeemable(expires, 1_000, true), "a used code is never redeemable");
        assert_eq!(code_expires_at(i64::MAX), i64::MAX);
    }

    #[test]
    fn code_hashes_are_sha256_of_the_code_text() {
        // SHA-256("abc"), FIPS 180-2 Appendix B.1.
        let want = [
            0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03,
            0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad,
        ];
        assert_eq!(CodeHash::of("abc").as_bytes(), &want);
        assert_eq!(CodeHash::from_bytes(want), CodeHash::of("abc"));
        assert_ne!(CodeHash::of("abc"), CodeHash::of("abd"));
    }

    #[test]
    fn a_code_exchange_checks_client_redirect_uri_and_pkce() {
        let cid = id("portal");
        let list = uris(&["https://app.example.gov.br/callback"]);
        let client = policy(&cid, &list, true);
        let challenge = CodeChallenge::parse_s256(RFC_CHALLENGE);
        let g = grant(&cid, challenge);
        let uri = Some("https://app.example.gov.br/callback");

        let scopes = check_code_exchange(&g, &client, uri, Some(RFC_VERIFIER)).expect("valid exchange");
        assert_eq!(scopes.to_scope_string(), "dados_publicos cpf email cnes");

        let code = |r: Result<ScopeSet, OAuthError>| r.map_err(|e| e.error_code());
        let other = id("other");
        assert_eq!(
            code(check_code_exchange(&g, &policy(&other, &list, true), uri, Some(RFC_VERIFIER))),
            Err("invalid_grant")
        );
        assert_eq!(
            code(check_code_exchange(&g, &client, Some("https://app.example.gov.br/callback/"), Some(RFC_VERIFIER))),
            Err("invalid_grant")
        );
        assert_eq!(code(check_code_exchange(&g, &client, None, Some(RFC_VERIFIER))), Err("invalid_request"));
        assert_eq!(code(check_code_exchange(&g, &client, uri, None)), Err("invalid_request"));
        assert_eq!(code(check_code_exchange(&g, &client, uri, Some("short"))), Err("invalid_request"));
        let wrong = "a".repeat(43);
        assert_eq!(code(check_code_exchange(&g, &client, uri, Some(&wrong))), Err("invalid_grant"));
    }

    #[test]
    fn a_verifier_for_a_code_without_challenge_is_a_downgrade_and_refused() {
        let cid = id("portal");
        let list = uris(&["https://app.example.gov.br/callback"]);
        let client = policy(&cid, &list, true);
        let g = grant(&cid, None);
        let uri = Some("https://app.example.gov.br/callback");
        assert!(check_code_exchange(&g, &client, uri, None).is_ok(), "confidential client without PKCE");
        assert_eq!(
            check_code_exchange(&g, &client, uri, Some(RFC_VERIFIER)).map_err(|e| e.error_code()),
            Err("invalid_grant")
        );
        let strict = ClientPolicy { require_pkce: true, ..client };
        assert_eq!(check_code_exchange(&g, &strict, uri, None).map_err(|e| e.error_code()), Err("invalid_grant"));
    }

    #[test]
    fn an_implicit_redirect_uri_need_not_be_repeated() {
        let cid = id("portal");
        let list = uris(&["https://app.example.gov.br/callback"]);
        let client = policy(&cid, &list, true);
        let mut g = grant(&cid, None);
        g.redirect_uri_explicit = false;
        assert!(check_code_exchange(&g, &client, None, None).is_ok());
        assert!(check_code_exchange(&g, &client, Some("https://app.example.gov.br/callback"), None).is_ok());
        assert!(check_code_exchange(&g, &client, Some("https://other.example/cb"), None).is_err());
    }

    #[test]
    fn scopes_removed_from_the_client_since_the_code_was_issued_are_dropped() {
        let cid = id("portal");
        let list = uris(&["https://app.example.gov.br/callback"]);
        let mut client = policy(&cid, &list, true);
        client.enabled_scopes = ScopeSet::empty();
        let scopes =
            check_code_exchange(&grant(&cid, None), &client, Some("https://app.example.gov.br/callback"), None)
                .expect("valid");
        assert_eq!(scopes, ScopeSet::required());
        assert!(!scopes.contains(Scope::Cnes));
    }
}
