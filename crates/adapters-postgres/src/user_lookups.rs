//! The conditions by which a request finds users, each in one place: the
//! stores build their statements from them, and the plan tests
//! (`tests/lookup_plans.rs`) check that PostgreSQL answers each with an
//! index, so that a change that makes one read the whole table fails CI.
//!
//! `cpf` is `CHAR(11)`: a parameter bound as text would be compared as
//! text (`cpf::text = $1`), which no index on the column serves (on a
//! million users, a login by CPF read the whole table). Every comparison
//! casts the parameter to the column's type, `bpchar` without a length (a
//! length would truncate a longer value instead of refusing the match).

/// One login name: `$1` the username.
pub const BY_USERNAME: &str = "username = $1";

/// Login by CPF: `$1` the text typed, `$2` the CPF it reads as.
pub const BY_USERNAME_OR_CPF: &str = "username = $1 OR cpf = $2::bpchar";

/// A pre-registered account a sign-up claims: `$4` the e-mail key, `$5`
/// the CPF.
pub const CLAIMABLE: &str =
    "cpf = $5::bpchar AND email_key = $4 AND email_key <> '' AND password LIKE '!%' AND is_active \
     AND NOT EXISTS (SELECT 1 FROM federated_links WHERE federated_links.user_id = users.id)";

/// Which unique values a sign-up found taken: `$1` username, `$2` CPF, `$3`
/// e-mail key.
pub const TAKEN_BY_SIGN_UP: &str = "username = $1 OR cpf = $2::bpchar OR (email_key = $3 AND email_key <> '')";

/// The account linked to an upstream provider's subject: `$1` the
/// provider's id, `$2` the subject.
pub const BY_PROVIDER_LINK: &str = "id = (SELECT user_id FROM federated_links WHERE provider = $1 AND subject = $2)";

/// The user directory by CPF: `$1`.
pub const BY_CPF: &str = "cpf = $1::bpchar";

/// The user directory by e-mail key: `$1`.
pub const BY_EMAIL_KEY: &str = "email_key = $1 AND email_key <> ''";

/// The user directory by a list of CPFs: `$1` a text array.
pub const BY_CPFS: &str = "cpf = ANY($1::bpchar[])";

/// Which unique values a pre-registration found taken: `$1` username (the
/// CPF), `$2` e-mail key.
pub const TAKEN_BY_PRE_REGISTRATION: &str = "username = $1 OR (email_key = $2 AND email_key <> '')";

/// Users whose e-mail key is one of a list: `$1` a text array.
pub const BY_EMAIL_KEYS: &str = "email_key = ANY($1) AND email_key <> ''";

/// Another account with an e-mail key (a change of address, an import):
/// `$1` the key, `$2` the account that is not counted.
pub const ANOTHER_WITH_EMAIL_KEY: &str = "email_key = $1 AND email_key <> '' AND id <> $2::bigint";

/// The statements of one page of an account search by `condition`
/// (whose `bound` parameters come first) and of its count. The page is
/// read by key in username order, never by skipping rows: the next
/// parameter is the username it follows (when `after`), then its limit;
/// each row is `columns` and then its place, the username. The count
/// stops at its limit (the parameter after the condition's), so that a
/// broad search never reads every match; it answers two columns, the
/// shape of the search by words' count (matching rows, and accounts: here
/// the same).
pub fn search_statements(columns: &str, condition: &str, bound: usize, after: bool) -> (String, String) {
    let keyset = if after { format!(" AND username > ${}", bound + 1) } else { String::new() };
    let limit = bound + 1 + usize::from(after);
    (
        format!("SELECT {columns}, username FROM users WHERE ({condition}){keyset} ORDER BY username LIMIT ${limit}"),
        format!(
            "SELECT count(*), count(*) FROM (SELECT 1 FROM users WHERE {condition} LIMIT ${}) AS matched",
            bound + 1
        ),
    )
}

/// The accounts of the terms a search by words matches, up to the count's
/// window (`$3`).
const TERMS_WITHIN: &str = "SELECT user_id FROM user_search_terms WHERE term >= $1 AND term < $2 LIMIT $3";

/// The statements of one page of the account search by words and of its
/// count: `$1` the first term and `$2` the end of the range
/// ([`WordsPrefix`](credencial_domain::admin::WordsPrefix)); when `after`,
/// `$3` and `$4` the term and the account id the page follows; then the
/// limit. Each row is `columns` and then the matching term. The count
/// answers how many terms match, up to its third parameter
/// ([`WORDS_COUNT_WINDOW`](credencial_domain::admin::WORDS_COUNT_WINDOW)),
/// and, when fewer do, their distinct accounts (else 0: the window is
/// full, and counting distinct accounts over it cost three times the
/// page).
/// Both read one range of `user_search_terms`' primary key in order and
/// stop at their limit: the cost is the page's, not the number of
/// matches'.
pub fn term_search_statements(columns: &str, after: bool) -> (String, String) {
    let (keyset, limit) = if after { (" AND (t.term, t.user_id) > ($3, $4::bigint)", 5) } else { ("", 3) };
    (
        format!(
            "SELECT {columns}, t.term FROM user_search_terms AS t JOIN users ON users.id = t.user_id \
             WHERE t.term >= $1 AND t.term < $2{keyset} ORDER BY t.term, t.user_id LIMIT ${limit}"
        ),
        format!(
            "SELECT matched.n, CASE WHEN matched.n < $3 \
               THEN (SELECT count(DISTINCT user_id) FROM ({TERMS_WITHIN}) AS capped) ELSE 0 END \
             FROM (SELECT count(*) AS n FROM ({TERMS_WITHIN}) AS capped) AS matched"
        ),
    )
}

/// The lookups above with the kind of each parameter, `$1` first (for the
/// plan tests).
pub const ALL: &[(&str, &[Parameter])] = &[
    (BY_USERNAME, &[Parameter::Text]),
    (BY_USERNAME_OR_CPF, &[Parameter::Text, Parameter::Text]),
    (CLAIMABLE, &[Parameter::Text, Parameter::Text, Parameter::Text, Parameter::Text, Parameter::Text]),
    (TAKEN_BY_SIGN_UP, &[Parameter::Text, Parameter::Text, Parameter::Text]),
    (BY_CPF, &[Parameter::Text]),
    (BY_EMAIL_KEY, &[Parameter::Text]),
    (BY_CPFS, &[Parameter::TextArray]),
    (TAKEN_BY_PRE_REGISTRATION, &[Parameter::Text, Parameter::Text]),
    (BY_EMAIL_KEYS, &[Parameter::TextArray]),
    (ANOTHER_WITH_EMAIL_KEY, &[Parameter::Text, Parameter::Text]),
    (BY_PROVIDER_LINK, &[Parameter::Text, Parameter::Text]),
];

/// How a lookup's parameter is bound (as the store binds it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parameter {
    /// A `&str` (sqlx binds it as `text`).
    Text,
    /// A list of `&str` (`text[]`).
    TextArray,
}
