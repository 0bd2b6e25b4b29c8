//! The browser binding of a login through an upstream (RFC 9700 §4.5):
//! the browser that starts the login holds 256 random bits of its own in
//! an `HttpOnly` cookie, which are not the `state` that the callback URL
//! carries. The login in progress is kept under [`login_key`] of both, so
//! only a request that brings the `state` *and* that browser's binding
//! finds it: a callback URL seen by someone else (a log, a shared screen,
//! a referrer) signs nobody in elsewhere, and does not use the login up
//! for the browser that started it.

use sha2::{Digest, Sha256};

/// The key a login in progress is kept under: the SHA-256, under a label
/// of its own, of its `state` and its browser binding, each
/// length-prefixed (no two pairs share a key).
pub fn login_key(state: &str, binding: &str) -> [u8; 32] {
    labelled_key(b"credencial upstream login", &[state, binding])
}

/// A key of the ceremonies' table derived from `parts` under `label`: the
/// SHA-256 of the label, a NUL, and each part length-prefixed, so that keys
/// of different labels never meet and no two lists of parts share one.
pub(crate) fn labelled_key(label: &[u8], parts: &[&str]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(label);
    hasher.update([0u8]);
    for part in parts {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part.as_bytes());
    }
    hasher.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_alone_or_another_binding_finds_no_login() {
        let key = login_key("state-1", "binding-1");
        assert_eq!(key, login_key("state-1", "binding-1"));
        assert_ne!(key, login_key("state-1", "binding-2"), "another browser's binding");
        assert_ne!(
            key,
            login_key("state-1", "state-1"),
            "the state as its own binding (a cookie planted from the URL)"
        );
        assert_ne!(key, login_key("state-1", ""), "no binding");
        assert_ne!(login_key("ab", "c"), login_key("a", "bc"), "the parts do not run into each other");
    }
}
