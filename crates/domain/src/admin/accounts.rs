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

/// What an account search looks for: the start of the name or of any of
/// its words onwards, of the username or of the e-mail address (ignoring
/// the case of ASCII letters and of Portuguese's accented ones; see
/// [`search_key`]), and, when the text is a CPF (digits or formatted, right
/// check digits), the account with that CPF. An empty search lists every
/// account. A whole CPF or a whole e-mail address finds exactly that
/// account. Every search is one range of one index, read in order and
/// stopped when the page is full: its cost does not grow with the number
/// of accounts or of matches.
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
    /// other text as the start of a search term.
    pub fn filter(&self) -> AccountFilter {
        if self.text.is_empty() {
            return AccountFilter::Everyone;
        }
        if let Some(cpf) = &self.cpf {
            return AccountFilter::Cpf(cpf.as_str().to_owned());
        }
        match crate::account::EmailAddress::parse(&self.text) {
            Some(address) => AccountFilter::EmailKey(address.key().as_str().to_owned()),
            None => AccountFilter::Words(WordsPrefix(search_key(&self.text))),
        }
    }
}

/// How an [`AccountQuery`] finds its accounts ([`AccountQuery::filter`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccountFilter {
    /// Every account (an empty search), by username.
    Everyone,
    /// The account with this CPF (11 digits).
    Cpf(String),
    /// The account whose address has this key.
    EmailKey(String),
    /// The accounts with a search term (a word of the name onwards, the
    /// username, the address; see [`search_key`]) that starts with this
    /// text, by term.
    Words(WordsPrefix),
}

/// The folded text a search term must start with ([`search_key`] of
/// what was typed; never empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WordsPrefix(String);

impl WordsPrefix {
    /// The first possible term: the folded text itself.
    pub fn start(&self) -> &str {
        &self.0
    }

    /// A value above every term that starts with the text (and below the
    /// next that does not): the text followed by the last character. The
    /// stores compare terms byte by byte, which in UTF-8 is the order of
    /// the characters.
    pub fn end(&self) -> String {
        let mut end = self.0.clone();
        end.push(char::MAX);
        end
    }
}

/// Rows of `user_search_terms` a search by words reads at most to count
/// its accounts: four times the count's bound, since an account can match
/// by several terms (typically its name, username and address).
pub const WORDS_COUNT_WINDOW: u64 = 4 * (super::page::COUNT_LIMIT + 1);

/// The count of a search by words, capped as the other searches' counts
/// are (see [`Tally::from_capped`](super::page::Tally::from_capped)):
/// `accounts` the distinct accounts of the `terms` matching terms read (at
/// most [`WORDS_COUNT_WINDOW`]). When the window was not full, every match
/// was read and the count is exact. When it was, more than
/// [`COUNT_LIMIT`](super::page::COUNT_LIMIT) accounts are reported without
/// counting them (counting distinct accounts over the window cost three
/// times the page): fewer would have to match by more than four terms
/// each, which takes a very short text against names, usernames and
/// addresses that all start alike ("m" against many "Maria Moura Mendes"
/// with username `mmendes…` and address `maria.mendes@…`), and then the
/// caption overstates.
pub fn words_count(terms: u64, accounts: u64) -> u64 {
    let capped = super::page::COUNT_LIMIT + 1;
    if terms >= WORDS_COUNT_WINDOW {
        capped
    } else {
        accounts.min(capped)
    }
}

/// Where a page of a search by words ends: the term and the account's id
/// of its last row, written `term~id` in a link (a `~` inside the term is
/// kept: the id is after the last). Text that is not a place (a link
/// edited by hand) is read as a place before the first row of that text.
pub fn term_place(after: &str) -> (String, i64) {
    match after.rsplit_once('~').and_then(|(term, id)| Some((term, id.parse::<i64>().ok()?))) {
        Some((term, id)) => (term.to_owned(), id),
        None => (after.to_owned(), i64::MIN),
    }
}

/// The `after` of [`term_place`] for a row found by `term` for account `id`.
pub fn write_term_place(term: &str, id: i64) -> String {
    format!("{term}~{id}")
}

/// The folded form in which search terms are stored and searched, the same
/// in the service and in both stores' triggers (migrations
/// `*_account_search_terms.sql`): ASCII capitals and the accented capitals
/// of Portuguese (and Ä, È, Ë, Ì, Î, Ï, Ò, Ö, Ù, Û, Ñ) to lower case,
/// every other character kept; words separated by one space; at most
/// [`MAX_TERM_CHARS`] characters.
pub fn search_key(text: &str) -> String {
    let folded =
        text.split(' ').filter(|w| !w.is_empty()).flat_map(|w| std::iter::once(' ').chain(w.chars().map(fold)));
    folded.skip(1).take(MAX_TERM_CHARS).collect()
}

/// Longest search term stored (and compared).
pub const MAX_TERM_CHARS: usize = 200;

/// One character of [`search_key`].
fn fold(c: char) -> char {
    const UPPER: &str = "ÁÀÂÃÄÉÈÊËÍÌÎÏÓÒÔÕÖÚÙÛÜÇÑ";
    const LOWER: &str = "áàâãäéèêëíìîïóòôõöúùûüçñ";
    if c.is_ascii_uppercase() {
        return c.to_ascii_lowercase();
    }
    match UPPER.chars().position(|u| u == c) {
        Some(i) => LOWER.chars().nth(i).unwrap_or(c),
        None => c,
    }
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

    fn words(key: &str) -> AccountFilter {
        AccountFilter::Words(WordsPrefix(key.into()))
    }

    #[test]
    fn a_cpf_is_searched_by_its_digits_however_typed() {
        for typed in ["529.982.247-25", " 52998224725 ", "529982247-25"] {
            assert_eq!(AccountQuery::parse(typed).filter(), AccountFilter::Cpf("52998224725".into()), "{typed}");
        }
        assert_eq!(AccountQuery::parse("12345678901").filter(), words("12345678901"), "bad check digits: text only");
        assert_eq!(AccountQuery::parse("Ana").filter(), words("ana"));
    }

    #[test]
    fn a_whole_cpf_or_address_is_exact_and_other_text_the_start_of_a_term() {
        assert_eq!(AccountQuery::parse("  ").filter(), AccountFilter::Everyone);
        assert_eq!(AccountQuery::parse("529.982.247-25").filter(), AccountFilter::Cpf("52998224725".into()));
        assert_eq!(
            AccountQuery::parse("Bruno@Example.gov.br").filter(),
            AccountFilter::EmailKey("bruno@example.gov.br".into())
        );
        assert_eq!(AccountQuery::parse("bruno@Example").filter(), words("bruno@example"));
        assert_eq!(AccountQuery::parse(" 50%_").filter(), words("50%_"), "no wildcard: a range of terms");
    }

    #[test]
    fn the_key_folds_case_and_spaces_as_the_stores_do() {
        assert_eq!(search_key("  MARIA   Souza "), "maria souza");
        assert_eq!(search_key("ÉRICA ÂNGELA ÇÃO Ñ Ü"), "érica ângela ção ñ ü");
        assert_eq!(search_key("Łukasz ΣΩ"), "Łukasz ΣΩ", "other letters are kept as typed, as the stores keep them");
        assert_eq!(search_key("a\tb"), "a\tb", "only spaces separate words");
        assert_eq!(search_key(&"x ".repeat(300)).chars().count(), MAX_TERM_CHARS);
        assert_eq!(search_key("   "), "");
    }

    #[test]
    fn a_prefix_range_holds_exactly_the_terms_that_start_with_it() {
        let prefix = WordsPrefix("maria sou".into());
        let within = |term: &str| term >= prefix.start() && term < prefix.end().as_str();
        for term in ["maria sou", "maria souza", "maria sou\u{10fff}x", "maria souárez"] {
            assert!(within(term), "{term}");
        }
        for term in ["maria so", "maria sov", "maria", "mariana", "maria soU"] {
            assert!(!within(term), "{term}");
        }
    }

    #[test]
    fn a_words_count_is_exact_below_its_window_and_more_than_the_limit_at_it() {
        assert_eq!(words_count(9, 3), 3);
        assert_eq!(words_count(WORDS_COUNT_WINDOW - 1, 1_000), 1_000);
        assert_eq!(words_count(WORDS_COUNT_WINDOW - 1, 1_200), 1_001, "capped as every count is");
        assert_eq!(words_count(WORDS_COUNT_WINDOW, 1_500), 1_001);
        assert_eq!(words_count(WORDS_COUNT_WINDOW, 900), 1_001, "a full window: more than the limit");
    }

    #[test]
    fn a_term_place_reads_back_and_junk_is_a_place_too() {
        assert_eq!(term_place(&write_term_place("a~b souza", 42)), ("a~b souza".into(), 42));
        assert_eq!(term_place("souza"), ("souza".into(), i64::MIN));
        assert_eq!(term_place("souza~x"), ("souza~x".into(), i64::MIN));
        assert_eq!(term_place(""), (String::new(), i64::MIN));
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
