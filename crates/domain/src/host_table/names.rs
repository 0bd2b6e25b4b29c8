//! Table and column names the client component writes into SQL: plain
//! identifiers, checked once where they come from (the settings), so that
//! the storage adapters receive names they can quote without checking
//! again.

use std::fmt;

use thiserror::Error;

/// Longest identifier PostgreSQL keeps (`NAMEDATALEN - 1` bytes); SQLite
/// has no limit, and the same rule holds on both engines.
pub const MAX_IDENTIFIER_LEN: usize = 63;

/// Whether every byte of `name` is `[a-z0-9_]` and the first is not a digit
/// (an empty name is not plain).
fn is_plain(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_lowercase() || b == b'_')
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// Whether `name` is a table or column name the client component accepts:
/// `[a-z_][a-z0-9_]*`, at most 63 bytes. Such a name means the same quoted
/// and unquoted, on PostgreSQL and on SQLite, so an adapter can quote it.
pub fn is_sql_identifier(name: &str) -> bool {
    name.len() <= MAX_IDENTIFIER_LEN && is_plain(name)
}

/// Why a column name is refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum IdentifierError {
    /// Nothing (or only spaces) where a column name belongs.
    #[error("empty column name")]
    Empty,
    /// Longer than PostgreSQL keeps.
    #[error("column name {0:?} is longer than 63 bytes")]
    TooLong(String),
    /// Anything but lowercase ASCII letters, digits and `_`, or a leading digit.
    #[error(
        "column name {0:?} is not a plain SQL identifier (lowercase letters, digits and _, not starting with a digit)"
    )]
    NotPlain(String),
}

/// A column of the host's user table: a plain SQL identifier
/// (`[a-z_][a-z0-9_]*`, at most 63 bytes), safe to interpolate as a quoted
/// identifier.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ColumnName(pub(crate) String);

impl ColumnName {
    /// Checks `text` (surrounding spaces are ignored).
    pub fn parse(text: &str) -> Result<Self, IdentifierError> {
        let name = text.trim();
        if name.is_empty() {
            return Err(IdentifierError::Empty);
        }
        if !is_plain(name) {
            return Err(IdentifierError::NotPlain(name.to_owned()));
        }
        if name.len() > MAX_IDENTIFIER_LEN {
            return Err(IdentifierError::TooLong(name.to_owned()));
        }
        Ok(Self(name.to_owned()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ColumnName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A name that is not a valid host table name; the text says which rule.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("\"{0}\" is not a valid table name ([a-z_][a-z0-9_]*, at most 63 characters)")]
pub struct TableNameError(pub String);

/// The host user table: a plain SQL identifier (`[a-z_][a-z0-9_]*`, at most
/// 63 bytes), resolved by each engine as it resolves an unqualified name
/// (PostgreSQL: the search path; SQLite: the main database).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableName(String);

impl TableName {
    /// Checks `text` (no trimming: a configured name is taken as written).
    pub fn parse(text: &str) -> Result<Self, TableNameError> {
        if is_sql_identifier(text) {
            Ok(Self(text.to_owned()))
        } else {
            Err(TableNameError(text.to_owned()))
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TableName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for TableName {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for TableName {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_lowercase_ascii_up_to_63_bytes() {
        for ok in ["host_users", "_x", "a1", "first_name", &"a".repeat(63)] {
            assert!(is_sql_identifier(ok), "{ok}");
            assert_eq!(TableName::parse(ok).map(|t| t.to_string()), Ok(ok.to_owned()));
            assert_eq!(ColumnName::parse(ok).map(|c| c.to_string()), Ok(ok.to_owned()));
        }
        for bad in [
            "",
            "1a",
            "Users",
            "Host_Users",
            "host users",
            "host-users",
            "users\"; DROP TABLE users; --",
            "host_users; DROP TABLE users",
            "public.host_users",
            "a.b",
            "\"quoted\"",
            "çedilha",
            &"a".repeat(64),
        ] {
            assert!(!is_sql_identifier(bad), "{bad}");
            let err = TableName::parse(bad).expect_err(bad);
            assert!(err.to_string().contains("not a valid table name"), "{err}");
            assert!(ColumnName::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_column_name_is_trimmed_and_a_table_name_is_taken_as_written() {
        assert_eq!(ColumnName::parse(" email ").map(|c| c.to_string()), Ok("email".to_owned()));
        assert!(TableName::parse(" host_users").is_err());
        assert_eq!(ColumnName::parse("  "), Err(IdentifierError::Empty));
        assert!(matches!(ColumnName::parse(&"a".repeat(64)), Err(IdentifierError::TooLong(_))));
        assert!(matches!(ColumnName::parse("x\" = 'y', \"is_active"), Err(IdentifierError::NotPlain(_))));
    }
}
