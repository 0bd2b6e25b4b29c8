//! The concurrent-refresh grace window: a rotated refresh token presented
//! again shortly after its rotation (two browser tabs refreshing at once)
//! answers the pair its rotation already issued instead of revoking its
//! family, and that pair is kept meanwhile only sealed with a key that the
//! holder of the old token alone can derive.
//!
//! The rule: a replay of a token rotated at `rotated_at` is forgiven at
//! `now` when the window is enabled and `now - rotated_at` is at most the
//! window (whole seconds), and only while the successor the rotation issued
//! is still current (the store checks that). Outside the window, or once
//! the successor was itself rotated or revoked, a replay revokes the family
//! as before.
//!
//! The pair is sealed with ChaCha20-Poly1305 under a key derived from the
//! whole old token (HMAC-SHA256 keyed by the token's text, over a fixed
//! label): the database holds only the old token's `jti`, never its text, so
//! what it stores cannot be opened without the token itself. The old `jti`
//! is the associated data, so a sealed pair moved to another row does not
//! open.

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// The grace window unless configured otherwise (`refresh_grace_secs`).
pub const DEFAULT_REFRESH_GRACE_SECS: i64 = 10;

/// Bytes of the random nonce in front of every sealed pair.
pub const SEAL_NONCE_BYTES: usize = 12;

/// Separates the key this module derives from any other use of a token.
const KEY_LABEL: &[u8] = b"credencial/refresh-grace/v1";

/// How long a rotated refresh token may be presented again and answer the
/// same pair (0 disables the window).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefreshGrace {
    secs: i64,
}

impl Default for RefreshGrace {
    fn default() -> Self {
        Self::new(DEFAULT_REFRESH_GRACE_SECS)
    }
}

impl RefreshGrace {
    /// A window of `secs` seconds; 0 (or less) disables it.
    pub fn new(secs: i64) -> Self {
        Self { secs: secs.max(0) }
    }

    /// No window: every replay revokes its family.
    pub fn disabled() -> Self {
        Self { secs: 0 }
    }

    /// The window in seconds (0 when disabled).
    pub fn secs(&self) -> i64 {
        self.secs
    }

    /// Whether replays are ever forgiven.
    pub fn is_enabled(&self) -> bool {
        self.secs > 0
    }

    /// Whether a token rotated at `rotated_at` and presented again at `now`
    /// (Unix seconds) is inside the window. A rotation time slightly in the
    /// future (another instance's clock) counts as inside.
    pub fn covers(&self, rotated_at: i64, now: i64) -> bool {
        self.is_enabled() && now.saturating_sub(rotated_at) <= self.secs
    }

    /// The earliest rotation time the window still covers at `now`: what
    /// the store compares a rotation time with. `None` when disabled.
    pub fn covered_since(&self, now: i64) -> Option<i64> {
        self.is_enabled().then(|| now.saturating_sub(self.secs))
    }
}

/// The pair a rotation issued, as answered (the exact signed texts).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssuedTexts {
    /// The access token.
    pub access: String,
    /// The refresh token.
    pub refresh: String,
}

impl std::fmt::Debug for IssuedTexts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IssuedTexts([redacted])")
    }
}

/// Seals `pair` for the holder of `old_token` (whose `jti` is `old_jti`),
/// with `nonce` (random, from the caller): the bytes to keep beside the old
/// token's record. (`None` only if the cipher refused, which it does not for
/// a pair of tokens: the caller then keeps nothing, and a replay revokes.)
pub fn seal_successor(
    old_token: &str,
    old_jti: &str,
    pair: &IssuedTexts,
    nonce: [u8; SEAL_NONCE_BYTES],
) -> Option<Vec<u8>> {
    let plaintext = serde_json::to_vec(pair).ok()?;
    let cipher = ChaCha20Poly1305::new(&key_for(old_token)?);
    let sealed = cipher.encrypt(&Nonce::from(nonce), Payload { msg: &plaintext, aad: old_jti.as_bytes() }).ok()?;
    let mut out = Vec::with_capacity(SEAL_NONCE_BYTES + sealed.len());
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&sealed);
    Some(out)
}

/// Opens what [`seal_successor`] sealed for `old_token` (`old_jti`); `None`
/// when the bytes were not sealed for this token (another token, another
/// row, or altered bytes).
pub fn open_successor(old_token: &str, old_jti: &str, sealed: &[u8]) -> Option<IssuedTexts> {
    if sealed.len() <= SEAL_NONCE_BYTES {
        return None;
    }
    let (nonce, ciphertext) = sealed.split_at(SEAL_NONCE_BYTES);
    let nonce: [u8; SEAL_NONCE_BYTES] = nonce.try_into().ok()?;
    let cipher = ChaCha20Poly1305::new(&key_for(old_token)?);
    let plaintext = cipher.decrypt(&Nonce::from(nonce), Payload { msg: ciphertext, aad: old_jti.as_bytes() }).ok()?;
    serde_json::from_slice(&plaintext).ok()
}

/// HMAC-SHA256 keyed by the whole token text, over [`KEY_LABEL`] (HMAC
/// takes keys of any length: `None` does not happen).
fn key_for(old_token: &str) -> Option<Key> {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(old_token.as_bytes()).ok()?;
    mac.update(KEY_LABEL);
    Some(mac.finalize().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> IssuedTexts {
        IssuedTexts { access: "a.b.c".into(), refresh: "d.e.f".into() }
    }

    #[test]
    fn the_window_covers_a_replay_up_to_its_length_and_not_after() {
        let grace = RefreshGrace::new(10);
        assert!(grace.covers(1_000, 1_000), "at once");
        assert!(grace.covers(1_000, 1_010), "at the last second of the window");
        assert!(!grace.covers(1_000, 1_011), "one second after");
        assert!(grace.covers(1_005, 1_000), "a rotation another instance dated a little ahead");
        assert_eq!(grace.covered_since(1_010), Some(1_000));
    }

    #[test]
    fn a_window_of_zero_or_less_forgives_nothing() {
        for secs in [0, -5] {
            let grace = RefreshGrace::new(secs);
            assert!(!grace.is_enabled());
            assert!(!grace.covers(1_000, 1_000));
            assert_eq!(grace.covered_since(1_000), None);
        }
        assert_eq!(RefreshGrace::disabled(), RefreshGrace::new(0));
    }

    #[test]
    fn the_default_window_is_ten_seconds() {
        assert_eq!(RefreshGrace::default().secs(), 10);
    }

    #[test]
    fn a_sealed_pair_opens_with_the_old_token_only() {
        let sealed = seal_successor("old.token.text", "jti-1", &pair(), [7; SEAL_NONCE_BYTES]).expect("sealed");
        assert_eq!(open_successor("old.token.text", "jti-1", &sealed), Some(pair()));
        assert_eq!(open_successor("other.token.text", "jti-1", &sealed), None, "another token");
        assert_eq!(open_successor("old.token.text", "jti-2", &sealed), None, "another row");
        let text = String::from_utf8_lossy(&sealed);
        assert!(!text.contains("a.b.c") && !text.contains("d.e.f"), "no token in the clear");
    }

    #[test]
    fn altered_or_truncated_bytes_do_not_open() {
        let sealed = seal_successor("old", "jti", &pair(), [1; SEAL_NONCE_BYTES]).expect("sealed");
        let mut altered = sealed.clone();
        let last = altered.len() - 1;
        altered[last] ^= 1;
        assert_eq!(open_successor("old", "jti", &altered), None);
        assert_eq!(open_successor("old", "jti", &sealed[..SEAL_NONCE_BYTES]), None);
        assert_eq!(open_successor("old", "jti", &[]), None);
    }

    #[test]
    fn two_seals_with_different_nonces_differ_and_both_open() {
        let a = seal_successor("old", "jti", &pair(), [1; SEAL_NONCE_BYTES]).expect("sealed");
        let b = seal_successor("old", "jti", &pair(), [2; SEAL_NONCE_BYTES]).expect("sealed");
        assert_ne!(a, b);
        assert_eq!(open_successor("old", "jti", &a), open_successor("old", "jti", &b));
    }

    #[test]
    fn the_pair_debug_hides_the_tokens() {
        assert!(!format!("{:?}", pair()).contains("a.b.c"));
    }
}
