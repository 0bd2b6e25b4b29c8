//! The one rule for text a client sends (a query string, a form, a JSON
//! body, a path): it may not hold a C0 control character other than tab,
//! line feed and carriage return (docs/decisions.md, "Control characters in
//! client text").
//!
//! Such a character is never part of a name, an address, a password anyone
//! types or an identifier this service issues, and PostgreSQL refuses the
//! NUL character in text outright; the HTTP layer refuses it before any use
//! case sees it, so that storage never does, on either engine.

/// Whether `c` is refused in client text: U+0000 to U+001F except tab
/// (U+0009), line feed (U+000A) and carriage return (U+000D).
pub fn is_refused_control(c: char) -> bool {
    c < ' ' && !matches!(c, '\t' | '\n' | '\r')
}

/// The first refused control character of `text`, if it holds one.
pub fn refused_control(text: &str) -> Option<char> {
    // Every refused character is one byte in UTF-8: a byte scan finds it.
    text.bytes().find(|&b| is_refused_control(char::from(b))).map(char::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn nul_and_the_other_c0_controls_are_refused_but_tab_and_line_breaks_are_text() {
        for c in ['\0', '\u{1}', '\u{8}', '\u{b}', '\u{c}', '\u{1b}', '\u{1f}'] {
            assert!(is_refused_control(c), "{c:?}");
            assert_eq!(refused_control(&format!("ana{c}")), Some(c));
        }
        for c in ['\t', '\n', '\r', ' ', 'a', '\u{7f}', '\u{85}', 'é', '\u{202e}'] {
            assert!(!is_refused_control(c), "{c:?}");
        }
        assert_eq!(refused_control("Ana Maria\tSilva\r\n"), None);
        assert_eq!(refused_control("a\0b\u{1}"), Some('\0'), "the first one");
        assert_eq!(refused_control(""), None);
    }

    proptest! {
        #[test]
        fn the_byte_scan_agrees_with_the_character_rule(text in "\\PC{0,20}|[\\x00-\\x1f a-zé]{0,20}") {
            prop_assert_eq!(refused_control(&text), text.chars().find(|&c| is_refused_control(c)));
        }
    }
}
