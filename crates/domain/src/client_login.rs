//! Pure rules of the client component's browser login: the signed values
//! its cookies carry (the login in progress, the host session), the check
//! of the returned `state`, and where a login may send the browser back to
//! (`next`).
//!
//! A signed value is `base64url(JSON envelope) "." base64url(HMAC-SHA256)`;
//! the MAC covers a purpose label and the encoded envelope, so a value made
//! for one cookie never passes as another, and the envelope carries its
//! expiry (seconds since the Unix epoch; the current time is a parameter).

use crate::redacted::Redacted;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use subtle::ConstantTimeEq;

/// Where a login lands when `next` is missing or not a path of this site.
pub const DEFAULT_NEXT: &str = "/auth/me/";

/// `next` resolved as the browser will resolve it (dot segments removed,
/// `%2e` read as a dot: [`crate::local_path::resolve`]) when it is a path
/// on this site: it starts with `/` but not `//`, holds no backslash, no
/// control character and no space, and is at most 2048 bytes; anything
/// else (an absolute URL, `//host`, `/\host`, `/a/..//host`) gives
/// [`DEFAULT_NEXT`], so a login can never send the browser to another site.
pub fn safe_next(next: Option<&str>) -> String {
    next.and_then(crate::local_path::resolve).unwrap_or_else(|| DEFAULT_NEXT.to_owned())
}

/// Whether two secrets are equal, compared in constant time (the length is
/// not hidden). Empty values never match.
pub fn secrets_match(expected: &str, presented: &str) -> bool {
    !expected.is_empty()
        && expected.len() == presented.len()
        && bool::from(expected.as_bytes().ct_eq(presented.as_bytes()))
}

/// What a signed value is for; a value signed for one purpose never opens
/// as another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignedPurpose {
    /// The login in progress (state, PKCE verifier, next).
    PendingLogin,
    /// The host application's session.
    HostSession,
}

impl SignedPurpose {
    fn label(self) -> &'static [u8] {
        match self {
            SignedPurpose::PendingLogin => b"credencial/client/pending-login",
            SignedPurpose::HostSession => b"credencial/client/host-session",
        }
    }
}

/// Signs and opens the client component's cookie values with an HMAC key.
/// `Debug` never shows the key.
#[derive(Debug, Clone)]
pub struct ValueSigner {
    key: Redacted<[u8; 32]>,
}

#[derive(Serialize, Deserialize)]
struct Envelope<T> {
    exp: i64,
    v: T,
}

impl ValueSigner {
    /// A signer whose key is derived from `material` (e.g. the JWT signing
    /// key), so that every instance sharing the JWT keys shares it, and a
    /// cookie value is never a valid JWT or form token.
    pub fn derive(material: &[u8]) -> Self {
        let key = match Hmac::<Sha256>::new_from_slice(material) {
            Ok(mut mac) => {
                mac.update(b"credencial/client/cookie-key/v1");
                mac.finalize().into_bytes().into()
            }
            // HMAC takes keys of any length; unreachable.
            Err(_) => [0; 32],
        };
        Self { key: Redacted(key) }
    }

    /// `value`, valid until `exp`, as cookie-safe text.
    pub fn seal<T: Serialize>(&self, purpose: SignedPurpose, value: &T, exp: i64) -> String {
        let json = serde_json::to_vec(&Envelope { exp, v: value }).unwrap_or_default();
        let body = URL_SAFE_NO_PAD.encode(json);
        let mac = URL_SAFE_NO_PAD.encode(self.mac(purpose, body.as_bytes()));
        format!("{body}.{mac}")
    }

    /// The value [`seal`](Self::seal) signed for `purpose`, if the signature
    /// holds and `now` is before its expiry.
    pub fn open<T: DeserializeOwned>(&self, purpose: SignedPurpose, text: &str, now: i64) -> Option<T> {
        let (body, mac) = text.split_once('.')?;
        let presented = URL_SAFE_NO_PAD.decode(mac).ok()?;
        let expected = self.mac(purpose, body.as_bytes());
        if presented.len() != expected.len() || !bool::from(presented.as_slice().ct_eq(expected.as_slice())) {
            return None;
        }
        let envelope: Envelope<T> = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(body).ok()?).ok()?;
        (now < envelope.exp).then_some(envelope.v)
    }

    fn mac(&self, purpose: SignedPurpose, body: &[u8]) -> [u8; 32] {
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(self.key.expose()) else {
            return [0; 32];
        };
        mac.update(purpose.label());
        mac.update(b".");
        mac.update(body);
        mac.finalize().into_bytes().into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_stays_on_this_site() {
        for ok in ["/auth/me/", "/", "/a/b?c=d&e=%2F%2F", "/caf%C3%A9"] {
            assert_eq!(safe_next(Some(ok)), ok);
        }
        for (dotted, resolved) in [("/auth/../x/", "/x/"), ("/auth/%2E%2e/%2e/x", "/x"), ("/a/.%2e/..", "/")] {
            assert_eq!(safe_next(Some(dotted)), resolved, "{dotted:?}");
        }
        for off in [
            "https://evil.example/",
            "//evil.example/",
            "/\\evil.example",
            "\\\\evil",
            "javascript:alert(1)",
            "evil.example",
            "",
            "/a\nb",
            "/a b",
            "/\t/evil",
            "/a/..//evil.example/",
            "/a/%2e%2e//evil.example/",
        ] {
            assert_eq!(safe_next(Some(off)), DEFAULT_NEXT, "{off:?}");
        }
        assert_eq!(safe_next(None), DEFAULT_NEXT);
        assert_eq!(safe_next(Some(&format!("/{}", "a".repeat(3000)))), DEFAULT_NEXT);
    }

    #[test]
    fn secrets_match_only_when_equal_and_not_empty() {
        assert!(secrets_match("abc", "abc"));
        assert!(!secrets_match("abc", "abd"));
        assert!(!secrets_match("abc", "ab"));
        assert!(!secrets_match("", ""));
    }

    #[test]
    fn a_sealed_value_opens_for_its_purpose_until_it_expires() {
        let signer = ValueSigner::derive(b"key material");
        let sealed = signer.seal(SignedPurpose::HostSession, &("ana", 7), 100);
        assert_eq!(signer.open(SignedPurpose::HostSession, &sealed, 99), Some(("ana".to_owned(), 7)));
        assert_eq!(signer.open::<(String, i32)>(SignedPurpose::HostSession, &sealed, 100), None, "expired");
        assert_eq!(signer.open::<(String, i32)>(SignedPurpose::PendingLogin, &sealed, 0), None, "other purpose");
        let other = ValueSigner::derive(b"other material");
        assert_eq!(other.open::<(String, i32)>(SignedPurpose::HostSession, &sealed, 0), None, "other key");
        let (body, mac) = sealed.split_once('.').expect("two parts");
        let forged_body = URL_SAFE_NO_PAD.encode(br#"{"exp":999,"v":["root",7]}"#);
        assert_eq!(signer.open::<(String, i32)>(SignedPurpose::HostSession, &format!("{forged_body}.{mac}"), 0), None);
        assert_eq!(signer.open::<(String, i32)>(SignedPurpose::HostSession, body, 0), None);
        assert_eq!(format!("{signer:?}"), "ValueSigner { key: [redacted] }", "the key never shows");
    }
}
