//! Rules of the account administration: what a search looks for, how a
//! login is recorded, and how a temporary password is made.

use crate::cpf::Cpf;

/// Accounts on a page of the panel's search (and of `user search`).
pub const ACCOUNT_PAGE_SIZE: u32 = 20;

/// How many recent logins an account's page shows (and the history keeps
/// per account, at least).
pub const RECENT_LOGINS: u32 = 10;

/// Days a login stays in the history.
pub const LOGIN_HISTORY_DAYS: i64 = 180;

/// Logins of one account the history keeps at most (the newest).
pub const LOGIN_HISTORY_KEEP: u32 = 20;

/// Longest search text kept (longer text cannot match a stored value).
const MAX_QUERY_CHARS: usize = 200;

/// Where a successful login happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LoginVia {
    /// `POST /api/token/pair/`.
    Pair,
    /// The account's login form, `/conta/entrar/`.
    Account,
    /// The login step of `/oauth/authorize/`.
    OAuth,
}

impl LoginVia {
    /// The stored code: `pair`, `account` or `oauth`.
    pub fn code(self) -> &'static str {
        match self {
            Self::Pair => "pair",
            Self::Account => "account",
            Self::OAuth => "oauth",
        }
    }

    /// The kind stored as `code`; `None` for a code this release does not
    /// know.
    pub fn from_code(code: &str) -> Option<Self> {
        match code {
            "pair" => Some(Self::Pair),
            "account" => Some(Self::Account),
            "oauth" => Some(Self::OAuth),
            _ => None,
        }
    }

    /// What the panel shows (Portuguese).
    pub fn label(self) -> &'static str {
        match self {
            Self::Pair => "API de tokens (/api/token/pair/)",
            Self::Account => "Minha conta (/conta/entrar/)",
            Self::OAuth => "Login de aplicativo (/oauth/authorize/)",
        }
    }
}

/// One recorded login.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginRecord {
    /// When (Unix seconds).
    pub at: i64,
    /// Where.
    pub via: LoginVia,
}

/// What an account search looks for: the text (trimmed, at most 200
/// characters) as a part of the name, username or e-mail address (ignoring
/// case), and, when the text is a CPF (digits or formatted, right check
/// digits), the account with that CPF. An empty search lists every account.
/// A whole CPF or a whole e-mail address finds exactly that account (by its
/// index, not by reading every row).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AccountQuery {
    text: String,
    cpf: Option<Cpf>,
}

impl AccountQuery {
    /// The query for the text typed in the search field.
    pub fn parse(typed: &str) -> Self {
        let text: String = typed.trim().chars().take(MAX_QUERY_CHARS).collect();
        let cpf = Cpf::parse(&text).ok();
        Self { text, cpf }
    }

    /// The text, trimmed (`""`: every account).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// How the search finds its accounts: everyone for an empty text; a
    /// whole CPF or a whole e-mail address exactly (by its index); any
    /// other text as a substring.
    pub fn filter(&self) -> AccountFilter {
        if self.text.is_empty() {
            return AccountFilter::Everyone;
        }
        if let Some(cpf) = &self.cpf {
            return AccountFilter::Cpf(cpf.as_str().to_owned());
        }
        match crate::account::EmailAddress::parse(&self.text) {
            Some(address) => AccountFilter::EmailKey(address.key().as_str().to_owned()),
            None => AccountFilter::Substring { text: self.text.clone(), like: self.like_pattern() },
        }
    }

    /// The text as a `LIKE … ESCAPE '\'` pattern matching it anywhere
    /// (`%`, `_` and `\` taken literally).
    pub fn like_pattern(&self) -> String {
        let mut pattern = String::with_capacity(self.text.len() + 2);
        pattern.push('%');
        for c in self.text.chars() {
            if matches!(c, '%' | '_' | '\\') {
                pattern.push('\\');
            }
            pattern.push(c);
        }
        pattern.push('%');
        pattern
    }
}

/// How an [`AccountQuery`] finds its accounts ([`AccountQuery::filter`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccountFilter {
    /// Every account (an empty search).
    Everyone,
    /// The account with this CPF (11 digits).
    Cpf(String),
    /// The account whose address has this key.
    EmailKey(String),
    /// Accounts whose username, name or address contains `text` (ignoring
    /// case); each engine finds them through a trigram index when the text
    /// has three characters or more.
    Substring {
        /// The text, trimmed.
        text: String,
        /// The text as a `LIKE … ESCAPE '\'` pattern matching it anywhere.
        like: String,
    },
}

/// Characters of a temporary password: letters and digits that cannot be
/// mistaken for one another when read aloud or copied by hand (no `0`/`O`,
/// `1`/`l`/`I`).
const TEMPORARY_ALPHABET: &[u8] = b"abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/// Characters of a temporary password (about 94 bits with this alphabet).
pub const TEMPORARY_PASSWORD_CHARS: usize = 16;

/// A temporary password drawn from `random` (one byte per character,
/// rejection-sampled so that every character is equally likely): four
/// groups of four characters joined by `-`. `random` must yield bytes
/// until the password is complete.
pub fn temporary_password(mut random: impl FnMut() -> u8) -> String {
    // The largest multiple of the alphabet's size that fits in a byte.
    let len = TEMPORARY_ALPHABET.len();
    let limit = (256 / len) * len;
    let mut out = String::with_capacity(TEMPORARY_PASSWORD_CHARS + 3);
    let mut taken = 0;
    while taken < TEMPORARY_PASSWORD_CHARS {
        let b = usize::from(random());
        if b >= limit {
            continue;
        }
        if taken > 0 && taken % 4 == 0 {
            out.push('-');
        }
        out.push(char::from(TEMPORARY_ALPHABET[b % len]));
        taken += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cpf_is_searched_by_its_digits_however_typed() {
        for typed in ["529.982.247-25", " 52998224725 ", "529982247-25"] {
            assert_eq!(AccountQuery::parse(typed).filter(), AccountFilter::Cpf("52998224725".into()), "{typed}");
        }
        let text = |typed: &str| AccountFilter::Substring { text: typed.into(), like: format!("%{typed}%") };
        assert_eq!(AccountQuery::parse("12345678901").filter(), text("12345678901"), "bad check digits: text only");
        assert_eq!(AccountQuery::parse("ana").filter(), text("ana"));
    }

    #[test]
    fn like_wildcards_are_taken_literally() {
        assert_eq!(AccountQuery::parse(" a%b_c\\ ").like_pattern(), "%a\\%b\\_c\\\\%");
        assert_eq!(AccountQuery::parse("").like_pattern(), "%%");
    }

    #[test]
    fn a_whole_cpf_or_address_is_exact_and_other_text_a_substring() {
        assert_eq!(AccountQuery::parse("  ").filter(), AccountFilter::Everyone);
        assert_eq!(AccountQuery::parse("529.982.247-25").filter(), AccountFilter::Cpf("52998224725".into()));
        assert_eq!(
            AccountQuery::parse("Bruno@Example.gov.br").filter(),
            AccountFilter::EmailKey("bruno@example.gov.br".into())
        );
        assert_eq!(
            AccountQuery::parse("bruno@example").filter(),
            AccountFilter::Substring { text: "bruno@example".into(), like: "%bruno@example%".into() }
        );
        assert_eq!(
            AccountQuery::parse(" 50%").filter(),
            AccountFilter::Substring { text: "50%".into(), like: "%50\\%%".into() }
        );
    }

    #[test]
    fn long_text_is_cut() {
        assert_eq!(AccountQuery::parse(&"x".repeat(500)).text().len(), 200);
    }

    #[test]
    fn login_codes_round_trip() {
        for via in [LoginVia::Pair, LoginVia::Account, LoginVia::OAuth] {
            assert_eq!(LoginVia::from_code(via.code()), Some(via));
        }
        assert_eq!(LoginVia::from_code("fax"), None);
    }

    #[test]
    fn temporary_passwords_use_the_unambiguous_alphabet_in_groups() {
        let mut n = 0u8;
        let password = temporary_password(|| {
            n = n.wrapping_add(37);
            n
        });
        assert_eq!(password.len(), TEMPORARY_PASSWORD_CHARS + 3);
        let groups: Vec<&str> = password.split('-').collect();
        assert_eq!(groups.len(), 4);
        assert!(groups.iter().all(|g| g.len() == 4));
        assert!(password.bytes().all(|b| b == b'-' || TEMPORARY_ALPHABET.contains(&b)));
    }

    #[test]
    fn bytes_past_the_last_whole_alphabet_are_skipped() {
        let mut bytes = [255u8, 254, 0].into_iter().cycle();
        let password = temporary_password(|| bytes.next().unwrap_or(0));
        assert!(password.replace('-', "").chars().all(|c| c == 'a'));
    }
}
