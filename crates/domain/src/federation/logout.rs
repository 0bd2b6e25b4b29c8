//! Logout through the upstream a session came from (OpenID Connect
//! RP-Initiated Logout 1.0 §2): when a session opened by an upstream's
//! login ends here, the browser goes through that upstream's
//! `end_session_endpoint`, with the ID token of that login as
//! `id_token_hint`, so that the upstream session ends too (on a shared
//! computer, the next "Entrar com …" would otherwise sign the previous
//! person in without a question).
//!
//! Which upstream, and its ID token, are kept server-side for the
//! session's life under [`upstream_session_key`], beside the logins in
//! progress (no column of the session record, no cookie).

/// The key under which the upstream login of the session with `sid` (its
/// [`sid_of`](crate::session::sid_of)) is kept: derived from the `sid`
/// under a label of its own, so that it names nothing else and reveals
/// neither the `sid` nor the cookie.
pub fn upstream_session_key(sid: &str) -> [u8; 32] {
    super::browser_binding::labelled_key(b"credencial upstream session of", &[sid])
}

#[cfg(test)]
mod tests {
    use sha2::{Digest, Sha256};

    use super::*;

    #[test]
    fn each_session_has_its_own_key_which_is_not_its_sid_s_hash() {
        let a = upstream_session_key("sid-a");
        assert_eq!(a, upstream_session_key("sid-a"), "stable for the session's life");
        assert_ne!(a, upstream_session_key("sid-b"));
        let plain: [u8; 32] = Sha256::digest(b"sid-a").into();
        assert_ne!(a, plain, "labelled: no other hash of the sid collides with it");
    }
}
