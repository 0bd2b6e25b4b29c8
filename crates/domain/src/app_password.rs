//! Application passwords: long random passwords a person makes at
//! `/conta/seguranca/` for a script or a SUAP client that cannot ask for a
//! second factor's code. Each is named, shown once, stored as a hash, and
//! accepted at `POST /api/token/pair/` only, for its own account only.
//!
//! Their shape tells them from a password without a lookup:
//! [`PREFIX`] then six groups of five letters of an alphabet without the
//! letters people confuse (`i`, `l`, `o`), for example
//! `credapp-kqtzm-hwrab-pfxcu-nejds-gvyak-mtbwr` (30 letters of 23, about
//! 135 bits). A text of that shape sent to `pair` is checked against the
//! account's application passwords, never against its password.
//!
//! What is stored is the SHA-256 of the password ([`hash`]): with 135 bits
//! drawn at random, a slow password hash would add nothing (there is no
//! dictionary to try), and one fast hash lets the one lookup by
//! `(account, hash)` find and touch the row in one statement.

use rand::RngCore;
use sha2::{Digest, Sha256};

use crate::Redacted;

/// What every application password starts with.
pub const PREFIX: &str = "credapp-";

/// The letters an application password is made of: the alphabet without
/// `i`, `l` and `o`.
const ALPHABET: &[u8] = b"abcdefghjkmnpqrstuvwxyz";

/// How many groups of letters follow the prefix.
const GROUPS: usize = 6;

/// How many letters each group has.
const GROUP_LETTERS: usize = 5;

/// How many application passwords an account may have at once.
pub const MAX_PER_ACCOUNT: u32 = 10;

/// The longest name, in characters.
pub const MAX_NAME_CHARS: usize = 60;

/// A new application password, as shown once (see the module's
/// documentation for its shape).
pub fn generate() -> Redacted<String> {
    let mut rng = rand::thread_rng();
    let mut text = String::with_capacity(PREFIX.len() + GROUPS * (GROUP_LETTERS + 1));
    text.push_str(PREFIX);
    for group in 0..GROUPS {
        if group > 0 {
            text.push('-');
        }
        for _ in 0..GROUP_LETTERS {
            // Rejection sampling keeps every letter equally likely
            // (230 = 10 × 23).
            let letter = loop {
                let byte = (rng.next_u32() & 0xff) as usize;
                if byte < 230 {
                    break ALPHABET[byte % ALPHABET.len()];
                }
            };
            text.push(char::from(letter));
        }
    }
    Redacted(text)
}

/// The password as compared: without surrounding spaces, in lower case.
fn normalised(typed: &str) -> String {
    typed.trim().to_ascii_lowercase()
}

/// Whether `typed` has an application password's shape (spaces around it
/// and upper case are forgiven). Such a text is never checked as a
/// password.
pub fn has_shape(typed: &str) -> bool {
    let text = normalised(typed);
    let Some(rest) = text.strip_prefix(PREFIX) else {
        return false;
    };
    let groups: Vec<&str> = rest.split('-').collect();
    groups.len() == GROUPS
        && groups.iter().all(|g| g.len() == GROUP_LETTERS && g.bytes().all(|b| ALPHABET.contains(&b)))
}

/// What is stored of an application password, and looked up when one is
/// sent: the SHA-256 of the normalised text under a fixed label. `None`
/// for a text without the shape ([`has_shape`]).
pub fn hash(typed: &str) -> Option<[u8; 32]> {
    has_shape(typed).then(|| {
        let mut digest = Sha256::new();
        digest.update(b"credencial application password\0");
        digest.update(normalised(typed).as_bytes());
        digest.finalize().into()
    })
}

/// Why a name is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameError {
    /// Empty once spaces are trimmed.
    Empty,
    /// Longer than [`MAX_NAME_CHARS`].
    TooLong,
    /// Holds a control character (a line break, a tab).
    Control,
}

impl NameError {
    /// What the page says (Portuguese).
    pub fn message(self) -> &'static str {
        match self {
            Self::Empty => "Dê um nome à senha de aplicativo, por exemplo «Cliente SUAP do notebook».",
            Self::TooLong => "O nome pode ter no máximo 60 caracteres.",
            Self::Control => "O nome não pode ter quebras de linha nem tabulações.",
        }
    }
}

/// The name a person gave an application password, trimmed: 1 to
/// [`MAX_NAME_CHARS`] characters, no control characters.
pub fn parse_name(typed: &str) -> Result<String, NameError> {
    let name = typed.trim();
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(NameError::TooLong);
    }
    if name.chars().any(char::is_control) {
        return Err(NameError::Control);
    }
    Ok(name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_password_has_the_shape_and_enough_randomness() {
        let password = generate().into_inner();
        assert!(password.starts_with(PREFIX), "{password}");
        assert_eq!(password.len(), PREFIX.len() + GROUPS * GROUP_LETTERS + GROUPS - 1);
        assert!(has_shape(&password));
        let bits = (GROUPS * GROUP_LETTERS) as f64 * (ALPHABET.len() as f64).log2();
        assert!(bits >= 128.0, "{bits} bits");
        assert!(!password.contains(['i', 'l', 'o', '0', '1']), "no confusable letters: {password}");
        let others: std::collections::HashSet<String> = (0..200).map(|_| generate().into_inner()).collect();
        assert_eq!(others.len(), 200, "no two alike");
    }

    #[test]
    fn every_letter_of_the_alphabet_is_drawn() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..100 {
            seen.extend(generate().into_inner()[PREFIX.len()..].bytes().filter(|b| *b != b'-'));
        }
        assert_eq!(seen.len(), ALPHABET.len());
    }

    #[test]
    fn the_shape_is_told_from_passwords_and_recovery_codes() {
        assert!(has_shape("credapp-abcde-fghjk-mnpqr-stuvw-xyzab-cdefg"));
        assert!(has_shape("  CREDAPP-ABCDE-FGHJK-MNPQR-STUVW-XYZAB-CDEFG \n"), "case and spaces forgiven");
        for not in [
            "",
            "correct horse battery staple",
            "abcde-fghjk",
            "credapp-",
            "credapp-abcde-fghjk-mnpqr-stuvw-xyzab",
            "credapp-abcde-fghjk-mnpqr-stuvw-xyzab-cdefg-hjkmn",
            "credapp-abcde-fghjk-mnpqr-stuvw-xyzab-cdefgh",
            "credapp-abcdi-fghjk-mnpqr-stuvw-xyzab-cdefg",
            "credapp-abcd1-fghjk-mnpqr-stuvw-xyzab-cdefg",
            "credapp-abcde fghjk mnpqr stuvw xyzab cdefg",
            "xcredapp-abcde-fghjk-mnpqr-stuvw-xyzab-cdefg",
        ] {
            assert!(!has_shape(not), "{not:?}");
            assert_eq!(hash(not), None, "{not:?}");
        }
    }

    #[test]
    fn the_hash_is_of_the_normalised_text_and_tells_passwords_apart() {
        let a = hash("credapp-abcde-fghjk-mnpqr-stuvw-xyzab-cdefg").expect("shape");
        assert_eq!(hash(" CREDAPP-ABCDE-FGHJK-MNPQR-STUVW-XYZAB-CDEFG ").expect("shape"), a);
        assert_ne!(hash("credapp-abcde-fghjk-mnpqr-stuvw-xyzab-cdefh").expect("shape"), a);
        let plain: [u8; 32] = Sha256::digest(b"credapp-abcde-fghjk-mnpqr-stuvw-xyzab-cdefg").into();
        assert_ne!(a, plain, "labelled: not the bare SHA-256");
    }

    #[test]
    fn names_are_trimmed_bounded_and_single_line() {
        assert_eq!(parse_name("  Cliente SUAP  "), Ok("Cliente SUAP".to_owned()));
        assert_eq!(parse_name(&"é".repeat(60)), Ok("é".repeat(60)), "characters, not bytes");
        assert_eq!(parse_name(&"a".repeat(61)), Err(NameError::TooLong));
        assert_eq!(parse_name("   "), Err(NameError::Empty));
        assert_eq!(parse_name("a\nb"), Err(NameError::Control));
        assert_eq!(parse_name("a\tb"), Err(NameError::Control));
        for error in [NameError::Empty, NameError::TooLong, NameError::Control] {
            assert!(!error.message().is_empty());
        }
    }
}
