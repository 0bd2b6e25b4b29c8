//! The one rule for every text a client sends (a query string, a form, a
//! JSON body, a path): it may not hold a NUL (U+0000), as Django's and
//! DRF's text fields refuse it (docs/decisions.md, "Control characters in
//! client text").
//!
//! PostgreSQL refuses a NUL in text outright, so the HTTP layer refuses it
//! before any use case sees it, and storage never does, on either engine.
//! The other control characters are text to storage; where a value is kept
//! or must be plain (a name, an entry, a username, an e-mail address, a
//! client name, a nonce) its own rule refuses them with a message of its
//! own, and a look-up with one simply finds nothing.

/// Whether `text` holds a NUL, which no text a client sends may hold.
pub fn holds_nul(text: &str) -> bool {
    text.as_bytes().contains(&0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn only_the_nul_character_is_refused() {
        for text in ["\0", "ana\0", "\0ana", "a\0b\0"] {
            assert!(holds_nul(text), "{text:?}");
        }
        for text in ["", "ana", "Ana\tMaria\r\n", "a\u{1}b", "\u{7f}", "é", "\u{202e}", "0", "\\0", "%00"] {
            assert!(!holds_nul(text), "{text:?}");
        }
    }

    proptest! {
        #[test]
        fn the_byte_scan_agrees_with_the_characters(text in "\\PC{0,20}|[\\x00-\\x1f a-zé]{0,20}") {
            prop_assert_eq!(holds_nul(&text), text.chars().any(|c| c == '\0'));
        }
    }
}
