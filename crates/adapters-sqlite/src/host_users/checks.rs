//! Which column a failed `CHECK` constraint stands for.
//!
//! SQLite keeps no catalogue of constraints. Its error names the failed
//! check — by the constraint's name when it has one (`CONSTRAINT n CHECK
//! (…)`), else by the text of its expression — and the table's own
//! `CREATE TABLE` statement (`sqlite_schema.sql`) holds every expression.
//! The columns a check refers to are the identifiers of its expression that
//! name a column of the table (a name followed by `(` is a function).
//!
//! This reads SQL only as far as that needs: tokens (words, quoted names,
//! strings, numbers, comments, parentheses), never a full parse.

/// One token of SQL text, as far as finding names needs.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// A bare word: a keyword or an unquoted name.
    Word(String),
    /// A quoted name (`"x"`, `` `x` ``, `[x]`), unquoted.
    Quoted(String),
    /// `(`.
    Open,
    /// `)`.
    Close,
    /// Anything else: a string literal, a number, an operator.
    Other,
}

impl Token {
    /// The name the token stands for, if it can be one.
    fn name(&self) -> Option<&str> {
        match self {
            Self::Word(w) | Self::Quoted(w) => Some(w),
            _ => None,
        }
    }

    fn is_keyword(&self, keyword: &str) -> bool {
        matches!(self, Self::Word(w) if w.eq_ignore_ascii_case(keyword))
    }
}

/// The text up to the closing `close` (a doubled `close` stands for
/// itself), and what follows it.
fn quoted_until(rest: &str, close: char) -> (String, &str) {
    let mut text = String::new();
    let mut chars = rest.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == close {
            if close != ']' && chars.peek().is_some_and(|(_, next)| *next == close) {
                text.push(c);
                chars.next();
                continue;
            }
            return (text, &rest[i + c.len_utf8()..]);
        }
        text.push(c);
    }
    (text, "")
}

fn tokens(sql: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut rest = sql;
    while let Some(c) = rest.chars().next() {
        let after = &rest[c.len_utf8()..];
        rest = match c {
            _ if c.is_whitespace() => after,
            '-' if after.starts_with('-') => after.find('\n').map_or("", |i| &after[i..]),
            '/' if after.starts_with('*') => after.find("*/").map_or("", |i| &after[i + 2..]),
            '(' => {
                out.push(Token::Open);
                after
            }
            ')' => {
                out.push(Token::Close);
                after
            }
            '\'' => {
                out.push(Token::Other);
                quoted_until(after, '\'').1
            }
            '"' | '`' | '[' => {
                let close = if c == '[' { ']' } else { c };
                let (name, next) = quoted_until(after, close);
                out.push(Token::Quoted(name));
                next
            }
            _ if c.is_alphanumeric() || c == '_' || c == '$' => {
                let end = rest.find(|ch: char| !(ch.is_alphanumeric() || ch == '_' || ch == '$')).unwrap_or(rest.len());
                let word = &rest[..end];
                // A number is not a name.
                out.push(if c.is_ascii_digit() { Token::Other } else { Token::Word(word.to_owned()) });
                &rest[end..]
            }
            _ => {
                out.push(Token::Other);
                after
            }
        };
    }
    out
}

/// The tokens inside the parentheses that open at `tokens[open]`.
fn inside(tokens: &[Token], open: usize) -> &[Token] {
    let mut depth = 0usize;
    for (i, token) in tokens.iter().enumerate().skip(open) {
        match token {
            Token::Open => depth += 1,
            Token::Close => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return &tokens[open + 1..i];
                }
            }
            _ => {}
        }
    }
    tokens.get(open + 1..).unwrap_or_default()
}

/// The expression of the check named `name` in `create_sql`, if any.
fn named_check(create_sql: &[Token], name: &str) -> Option<Vec<Token>> {
    create_sql.windows(4).enumerate().find_map(|(i, w)| {
        let found = w[0].is_keyword("CONSTRAINT")
            && w[1].name().is_some_and(|n| n.eq_ignore_ascii_case(name))
            && w[2].is_keyword("CHECK")
            && w[3] == Token::Open;
        found.then(|| inside(create_sql, i + 3).to_vec())
    })
}

/// The columns (of `columns`, spelled as there) that the failed check
/// `reported` refers to: `reported` is what SQLite's message names after
/// `CHECK constraint failed: `, `create_sql` the table's `CREATE TABLE`.
pub(super) fn checked_columns(create_sql: &str, columns: &[&str], reported: &str) -> Vec<String> {
    let table = tokens(create_sql);
    let expression = named_check(&table, reported.trim()).unwrap_or_else(|| tokens(reported));
    let mut found: Vec<String> = Vec::new();
    for (i, token) in expression.iter().enumerate() {
        let Some(name) = token.name() else { continue };
        let is_call = matches!(token, Token::Word(_)) && expression.get(i + 1) == Some(&Token::Open);
        if is_call {
            continue;
        }
        if let Some(column) = columns.iter().find(|c| c.eq_ignore_ascii_case(name)) {
            if !found.iter().any(|f| f == column) {
                found.push((*column).to_owned());
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = r#"CREATE TABLE people (
        id INTEGER PRIMARY KEY,
        -- a comment with cpf ( in it
        cpf CHAR(11) UNIQUE CONSTRAINT people_cpf_digits CHECK (length(cpf) = 11 AND cpf NOT GLOB '*[^0-9]*'),
        "region" TEXT CHECK ("region" GLOB '[A-Z][A-Z]'),
        length TEXT,
        a TEXT, b TEXT,
        /* pair */ CONSTRAINT pair CHECK (a IS NULL OR [b] IS NOT NULL),
        CHECK (length(`a`) < 10 AND 'b' <> '')
    )"#;
    const COLUMNS: [&str; 6] = ["id", "cpf", "region", "length", "a", "b"];

    #[test]
    fn a_named_check_is_found_by_its_name() {
        assert_eq!(checked_columns(TABLE, &COLUMNS, "people_cpf_digits"), ["cpf"]);
        assert_eq!(checked_columns(TABLE, &COLUMNS, "PAIR"), ["a", "b"], "names are case-insensitive");
    }

    #[test]
    fn an_unnamed_check_is_read_from_the_expression_sqlite_reports() {
        assert_eq!(checked_columns(TABLE, &COLUMNS, "\"region\" GLOB '[A-Z][A-Z]'"), ["region"]);
        assert_eq!(checked_columns(TABLE, &COLUMNS, "length(`a`) < 10 AND 'b' <> ''"), ["a"], "a call, a string");
        assert_eq!(checked_columns(TABLE, &COLUMNS, "length <> 'x'"), ["length"], "a column, not a call");
        assert!(checked_columns(TABLE, &COLUMNS, "1 = 1").is_empty());
    }

    #[test]
    fn tokens_know_quotes_comments_and_numbers() {
        let t = tokens(
            r#"a "b ""c""" [d e] `f` 'g''h' 12x -- i
            /* j */ k("#,
        );
        assert_eq!(
            t,
            [
                Token::Word("a".into()),
                Token::Quoted("b \"c\"".into()),
                Token::Quoted("d e".into()),
                Token::Quoted("f".into()),
                Token::Other,
                Token::Other,
                Token::Word("k".into()),
                Token::Open,
            ]
        );
        assert!(tokens("'unterminated").len() == 1);
    }
}
