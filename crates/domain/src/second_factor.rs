//! Second factors: TOTP (RFC 6238, what authenticator apps support: SHA-1,
//! 6 digits, 30-second steps, ±1 step of drift, each step usable once per
//! account), recovery codes (10 single-use codes, only their hashes kept),
//! and the sealing of TOTP secrets at rest (ChaCha20-Poly1305 under a key
//! from the settings, bound to the account).

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use totp_rs::{Algorithm, TOTP};

use crate::redacted::Redacted;
use crate::UserId;

/// Seconds per TOTP step.
pub const STEP_SECS: i64 = 30;
/// Digits of a code.
pub const DIGITS: usize = 6;
/// Steps accepted on either side of the current one (clock drift).
pub const DRIFT_STEPS: i64 = 1;
/// Bytes of a TOTP secret (160 bits, RFC 4226's recommendation).
pub const SECRET_BYTES: usize = 20;
/// How many recovery codes a set holds.
pub const RECOVERY_CODES: usize = 10;

/// The TOTP step `now` (Unix seconds) falls in.
pub fn step_of(now: i64) -> i64 {
    now.div_euclid(STEP_SECS)
}

/// A TOTP secret. `Debug` does not show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TotpSecret(Redacted<Vec<u8>>);

impl TotpSecret {
    /// A fresh random secret.
    pub fn generate() -> Self {
        let mut bytes = vec![0u8; SECRET_BYTES];
        rand::thread_rng().fill_bytes(&mut bytes);
        Self(Redacted(bytes))
    }

    /// A secret of `bytes` (a stored one, opened); `None` unless it has
    /// [`SECRET_BYTES`] bytes.
    pub fn from_bytes(bytes: Vec<u8>) -> Option<Self> {
        (bytes.len() == SECRET_BYTES).then_some(Self(Redacted(bytes)))
    }

    /// The secret an app was given as `text` (base32, spaces ignored, as
    /// [`base32`](Self::base32) shows it). `None` for anything else.
    pub fn from_base32(text: &str) -> Option<Self> {
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let bytes = totp_rs::Secret::Encoded(compact.to_uppercase()).to_bytes().ok()?;
        Self::from_bytes(bytes)
    }

    /// The raw bytes (to seal).
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// The secret as authenticator apps take it typed: base32 without
    /// padding, in groups of four.
    pub fn base32(&self) -> String {
        let text = self.totp().get_secret_base32();
        text.as_bytes().chunks(4).map(|c| String::from_utf8_lossy(c).into_owned()).collect::<Vec<_>>().join(" ")
    }

    /// The `otpauth://totp/` URI of the QR code: `issuer:account`, the
    /// secret, the algorithm, digits and period.
    pub fn otpauth_uri(&self, issuer: &str, account: &str) -> String {
        let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>().replace('+', "%20");
        let secret = self.totp().get_secret_base32();
        format!(
            "otpauth://totp/{}:{}?secret={secret}&issuer={}&algorithm=SHA1&digits={DIGITS}&period={STEP_SECS}",
            enc(issuer),
            enc(account),
            enc(issuer)
        )
    }

    fn totp(&self) -> TOTP {
        // The parameters are the module's constants and the secret is 20
        // bytes: `new_unchecked` cannot meet anything its checks refuse.
        TOTP::new_unchecked(Algorithm::SHA1, DIGITS, 0, STEP_SECS as u64, self.0 .0.clone())
    }

    /// The code of `step`.
    pub fn code_at(&self, step: i64) -> String {
        self.totp().generate(u64::try_from(step).unwrap_or(0) * STEP_SECS as u64)
    }

    /// The step `code` belongs to at `now`, within the drift, and later
    /// than `last_used` (a step already used is never accepted again);
    /// compared in constant time. `None` when it matches none.
    pub fn matching_step(&self, code: &str, now: i64, last_used: Option<i64>) -> Option<i64> {
        let code = normalised_code(code)?;
        let current = step_of(now);
        let mut found = None;
        for step in (current - DRIFT_STEPS)..=(current + DRIFT_STEPS) {
            let fresh = last_used.is_none_or(|used| step > used);
            let same: bool = self.code_at(step).as_bytes().ct_eq(code.as_bytes()).into();
            if same && fresh && found.is_none() {
                found = Some(step);
            }
        }
        found
    }
}

/// A typed code with spaces and hyphens removed, when it is six digits.
fn normalised_code(code: &str) -> Option<String> {
    let digits: String = code.chars().filter(|c| !c.is_whitespace() && *c != '-').collect();
    (digits.len() == DIGITS && digits.bytes().all(|b| b.is_ascii_digit())).then_some(digits)
}

/// The key TOTP secrets are sealed with at rest (setting
/// `second_factor_key`: 32 bytes). `Debug` does not show it.
#[derive(Clone)]
pub struct SealingKey([u8; 32]);

impl std::fmt::Debug for SealingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealingKey([redacted])")
    }
}

/// Why a stored secret cannot be opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the stored second-factor secret cannot be opened with the configured key")]
pub struct SealError;

impl SealingKey {
    /// The key of 32 `bytes`.
    pub fn new(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// A fresh random key (the demo's).
    pub fn generate() -> Self {
        let mut bytes = [0u8; 32];
        rand::thread_rng().fill_bytes(&mut bytes);
        Self(bytes)
    }

    /// `secret` sealed for `user` (the account is the associated data: a
    /// sealed secret copied to another account does not open there):
    /// 12 bytes of nonce, then the ciphertext and its tag.
    pub fn seal(&self, user: UserId, secret: &TotpSecret) -> Vec<u8> {
        let cipher = ChaCha20Poly1305::new(&Key::from(self.0));
        let mut nonce = [0u8; 12];
        rand::thread_rng().fill_bytes(&mut nonce);
        let aad = user.0.to_be_bytes();
        let sealed =
            cipher.encrypt(&Nonce::from(nonce), Payload { msg: secret.bytes(), aad: &aad }).unwrap_or_default();
        let mut out = nonce.to_vec();
        out.extend(sealed);
        out
    }

    /// The secret `sealed` holds for `user`. Errors: `SealError` (another
    /// key, another account, or damaged bytes).
    pub fn open(&self, user: UserId, sealed: &[u8]) -> Result<TotpSecret, SealError> {
        if sealed.len() < 12 {
            return Err(SealError);
        }
        let (nonce, body) = sealed.split_at(12);
        let nonce: [u8; 12] = nonce.try_into().map_err(|_| SealError)?;
        let cipher = ChaCha20Poly1305::new(&Key::from(self.0));
        let aad = user.0.to_be_bytes();
        let bytes = cipher.decrypt(&Nonce::from(nonce), Payload { msg: body, aad: &aad }).map_err(|_| SealError)?;
        TotpSecret::from_bytes(bytes).ok_or(SealError)
    }
}

/// The letters of recovery codes: lower-case letters and digits without
/// the ones people confuse (0/o, 1/l/i).
const RECOVERY_ALPHABET: &[u8] = b"abcdefghjkmnpqrstuvwxyz23456789";

/// A fresh set of recovery codes, as shown once: `xxxxx-xxxxx` (10 letters
/// of a 31-letter alphabet, about 49 bits each).
pub fn generate_recovery_codes() -> Vec<Redacted<String>> {
    let mut rng = rand::thread_rng();
    (0..RECOVERY_CODES)
        .map(|_| {
            let letters: String = (0..10)
                .map(|_| {
                    // Rejection sampling keeps every letter equally likely.
                    loop {
                        let byte = (rng.next_u32() & 0xff) as usize;
                        if byte < 248 {
                            break RECOVERY_ALPHABET[byte % RECOVERY_ALPHABET.len()] as char;
                        }
                    }
                })
                .collect();
            Redacted(format!("{}-{}", &letters[..5], &letters[5..]))
        })
        .collect()
}

/// What is stored of a recovery code, and looked up when one is typed: the
/// SHA-256 of the code without spaces or hyphens, in lower case (the codes
/// are random enough that a slow hash adds nothing). `None` for text that
/// cannot be a code.
pub fn recovery_code_hash(typed: &str) -> Option<[u8; 32]> {
    let code: String = typed.chars().filter(|c| !c.is_whitespace() && *c != '-').collect::<String>().to_lowercase();
    let shaped = code.len() == 10 && code.bytes().all(|b| RECOVERY_ALPHABET.contains(&b));
    shaped.then(|| {
        let mut digest = Sha256::new();
        digest.update(b"credencial recovery code\0");
        digest.update(code.as_bytes());
        digest.finalize().into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6238's SHA-1 test secret ("12345678901234567890").
    fn rfc_secret() -> TotpSecret {
        TotpSecret::from_bytes(b"12345678901234567890".to_vec()).expect("20 bytes")
    }

    #[test]
    fn codes_are_rfc_6238_sha1_six_digits() {
        // RFC 6238 appendix B, SHA-1, last six digits of the 8-digit values.
        for (time, code) in
            [(59, "287082"), (1_111_111_109, "081804"), (1_234_567_890, "005924"), (2_000_000_000, "279037")]
        {
            assert_eq!(rfc_secret().code_at(step_of(time)), code, "at {time}");
        }
    }

    #[test]
    fn a_code_matches_within_one_step_of_drift_and_never_a_used_step_again() {
        let secret = rfc_secret();
        let now = 1_800_000_000;
        let current = step_of(now);
        // (step of the code, last used, accepted as)
        let cases = [
            (current, None, Some(current)),
            (current - 1, None, Some(current - 1)),
            (current + 1, None, Some(current + 1)),
            (current - 2, None, None),
            (current + 2, None, None),
            (current, Some(current), None),
            (current - 1, Some(current - 1), None),
            (current, Some(current - 1), Some(current)),
            (current - 1, Some(current), None),
        ];
        for (step, last_used, expected) in cases {
            let code = secret.code_at(step);
            assert_eq!(secret.matching_step(&code, now, last_used), expected, "step {step}, last {last_used:?}");
        }
        let spaced = format!("{} {}", &secret.code_at(current)[..3], &secret.code_at(current)[3..]);
        assert_eq!(secret.matching_step(&spaced, now, None), Some(current), "typed with a space");
        for junk in ["", "12345", "1234567", "abcdef", "12345a"] {
            assert_eq!(secret.matching_step(junk, now, None), None, "{junk:?}");
        }
    }

    #[test]
    fn the_uri_and_the_typed_secret_name_the_same_secret() {
        let secret = rfc_secret();
        let uri = secret.otpauth_uri("credencial (demo)", "ana");
        assert!(uri.starts_with("otpauth://totp/credencial%20%28demo%29:ana?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&"));
        assert!(uri.contains("algorithm=SHA1&digits=6&period=30"), "{uri}");
        assert_eq!(secret.base32(), "GEZD GNBV GY3T QOJQ GEZD GNBV GY3T QOJQ");
        assert_eq!(TotpSecret::from_base32(&secret.base32()), Some(secret.clone()), "what the page shows types back");
        assert_eq!(TotpSecret::from_base32("not base32!"), None);
        assert!(!format!("{secret:?}").contains("1234"), "Debug hides it");
        assert_ne!(TotpSecret::generate(), TotpSecret::generate());
    }

    #[test]
    fn a_sealed_secret_opens_only_with_its_key_and_for_its_account() {
        let key = SealingKey::generate();
        let secret = TotpSecret::generate();
        let sealed = key.seal(UserId(7), &secret);
        assert_eq!(key.open(UserId(7), &sealed), Ok(secret.clone()));
        assert_eq!(key.open(UserId(8), &sealed), Err(SealError), "another account");
        assert_eq!(SealingKey::generate().open(UserId(7), &sealed), Err(SealError), "another key");
        let mut damaged = sealed.clone();
        damaged[20] ^= 1;
        assert_eq!(key.open(UserId(7), &damaged), Err(SealError));
        assert_eq!(key.open(UserId(7), &sealed[..5]), Err(SealError));
        assert!(!sealed.windows(SECRET_BYTES).any(|w| w == secret.bytes()), "not in the clear");
    }

    #[test]
    fn recovery_codes_are_ten_distinct_and_hash_however_typed() {
        let codes = generate_recovery_codes();
        assert_eq!(codes.len(), 10);
        let mut distinct: Vec<&str> = codes.iter().map(|c| c.as_str()).collect();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 10);
        let code = codes[0].as_str();
        assert_eq!(code.len(), 11);
        let hash = recovery_code_hash(code).expect("a code");
        assert_eq!(recovery_code_hash(&code.to_uppercase()), Some(hash));
        assert_eq!(recovery_code_hash(&code.replace('-', " ")), Some(hash));
        assert_ne!(recovery_code_hash(codes[1].as_str()), Some(hash));
        for junk in ["", "abc", "abcde-fghi0", "123456"] {
            assert_eq!(recovery_code_hash(junk), None, "{junk:?}");
        }
    }
}
