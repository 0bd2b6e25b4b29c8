//! The one comparison of e-mail addresses: two addresses are the same
//! account's when their [`EmailKey`]s are equal. The key is computed here,
//! in Rust, and stored beside the address as typed (`users.email_key`), so
//! that both storage engines enforce uniqueness and look accounts up with
//! the same rule; neither engine's `lower()` is used (SQLite's folds ASCII
//! only, PostgreSQL's depends on the database's locale).
//!
//! The key is the canonical caseless form of Unicode §3.13 (D145): the
//! address trimmed, decomposed (NFD), fully case folded (`CaseFolding.txt`,
//! statuses C and F: `ß` folds to `ss`, `ﬁ` to `fi`, the final sigma `ς`
//! to `σ`), then composed again (NFC) to be stored. So `Élodie@example.org`,
//! `élodie@example.org` and `e\u{301}lodie@EXAMPLE.org` have one key.
//! Compatibility forms (full-width letters, `ｅ`) keep keys of their own:
//! they are different characters, not another spelling of the same one.

use caseless::Caseless;
use unicode_normalization::UnicodeNormalization;

/// The key an e-mail address is unique and looked up under (see the
/// module's documentation). Empty for an account without an address.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EmailKey(String);

impl EmailKey {
    /// The key of `address`, whatever its text (an operator's account may
    /// hold one no form would accept).
    pub fn of(address: &str) -> Self {
        Self(address.trim().chars().nfd().default_case_fold().nfc().collect())
    }

    /// The key as stored.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether the key is of no address (an account without one): such
    /// keys are never unique.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Display for EmailKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(text: &str) -> String {
        EmailKey::of(text).as_str().to_owned()
    }

    #[test]
    fn case_and_canonical_form_do_not_count() {
        let precomposed = "\u{c9}lodie@example.org"; // É as one code point
        let decomposed = "e\u{301}lodie@EXAMPLE.org"; // e + combining acute
        assert_eq!(key(precomposed), "\u{e9}lodie@example.org", "stored composed (NFC)");
        assert_eq!(key("\u{e9}lodie@example.org"), key(precomposed));
        assert_eq!(key(decomposed), key(precomposed));
        assert_eq!(key(" Ana@Example.GOV.br "), "ana@example.gov.br", "trimmed, ASCII folded");
    }

    #[test]
    fn full_case_folding_is_more_than_lower_case() {
        assert_eq!(key("STRASSE@example.de"), key("straße@example.de"), "ß folds to ss");
        assert_eq!(key("ὈΔΥΣΣΕΎΣ@example.gr"), key("ὀδυσσεύς@example.gr"), "final sigma");
        assert_eq!(key("\u{212a}elvin@example.org"), key("kelvin@example.org"), "the Kelvin sign is a K");
        assert_eq!(key("\u{fb01}le@example.org"), key("file@example.org"), "the fi ligature folds to fi");
    }

    #[test]
    fn different_letters_keep_different_keys() {
        assert_ne!(key("elodie@example.org"), key("\u{e9}lodie@example.org"), "an accent is a letter");
        assert_ne!(key("\u{ff41}na@example.org"), key("ana@example.org"), "full-width is not folded");
        assert_ne!(key("ana@example.org"), key("ana@example.com"));
    }

    #[test]
    fn no_address_has_the_empty_key() {
        assert!(EmailKey::of("").is_empty());
        assert!(EmailKey::of("   ").is_empty());
        assert!(!EmailKey::of("a@b.co").is_empty());
    }
}
