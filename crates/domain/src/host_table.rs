//! The host user table as the client component sees it: the shape of the
//! table (columns, type classes, unique columns), the values the attribute
//! map writes into it, and the rules that say whether a value fits a column.
//!
//! Everything here is pure: the PostgreSQL adapter reads the shape from the
//! catalogue and uses these rules before it writes, and the start-up check
//! ([`check_columns`]) uses them to stop a misconfigured service with a
//! message that names the column.
//!
//! Which value fits which column:
//!
//! | value | column type class |
//! |---|---|
//! | [`HostValue::Text`] | [`ColumnType::Text`] (within its declared length) |
//! | [`HostValue::Date`] (`YYYY-MM-DD`) | [`ColumnType::Date`], or [`ColumnType::Text`] as written |
//! | [`HostValue::Timestamp`] (Unix seconds, years 1–9999) | [`ColumnType::Timestamp`] |
//! | [`HostValue::Bool`] | [`ColumnType::Boolean`] |
//! | [`HostValue::Json`] | [`ColumnType::Json`] |
//!
//! Messages and [`ValueProblem`]s name columns and kinds, never a value: the
//! values are personal data and the messages end up in the log.

use std::fmt;

use crate::registries::is_iso_date;

/// Longest identifier PostgreSQL keeps (`NAMEDATALEN - 1` bytes).
pub const MAX_IDENTIFIER_LEN: usize = 63;

/// The column the inactive rule reads: a host user whose `is_active` is false
/// is refused at login and never reactivated.
pub const IS_ACTIVE_COLUMN: &str = "is_active";

/// The column that identifies a host user row (returned by the upsert).
pub const ID_COLUMN: &str = "id";

/// First and last instant a [`HostValue::Timestamp`] may hold (Unix seconds
/// of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z).
pub const TIMESTAMP_RANGE: std::ops::RangeInclusive<i64> = -62_135_596_800..=253_402_300_799;

/// Whether `name` is a table or column name the client component accepts:
/// `[a-z_][a-z0-9_]*`, at most 63 bytes. Such a name means the same quoted
/// and unquoted, so the adapter can both validate and quote it.
pub fn is_sql_identifier(name: &str) -> bool {
    let mut bytes = name.bytes();
    let Some(first) = bytes.next() else {
        return false;
    };
    name.len() <= MAX_IDENTIFIER_LEN
        && (first.is_ascii_lowercase() || first == b'_')
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The class of a column's type, as far as the mapping cares.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ColumnType {
    /// `text`, `varchar(n)`, `char(n)`, `citext`.
    Text,
    /// `date`.
    Date,
    /// `timestamp` or `timestamptz`.
    Timestamp,
    /// `boolean`.
    Boolean,
    /// `jsonb` or `json`.
    Json,
    /// `smallint`, `integer` or `bigint` (the row id; not a mapping target).
    Integer,
    /// Anything else, with PostgreSQL's type name (e.g. `uuid`, `numeric`);
    /// not a mapping target.
    Other(String),
}

impl ColumnType {
    /// The class of PostgreSQL's internal type name (`pg_type.typname`, of
    /// the base type for a domain).
    pub fn from_pg_type_name(name: &str) -> Self {
        match name {
            "text" | "varchar" | "bpchar" | "citext" => Self::Text,
            "date" => Self::Date,
            "timestamp" | "timestamptz" => Self::Timestamp,
            "bool" => Self::Boolean,
            "json" | "jsonb" => Self::Json,
            "int2" | "int4" | "int8" => Self::Integer,
            other => Self::Other(other.to_owned()),
        }
    }
}

impl fmt::Display for ColumnType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Text => f.write_str("text"),
            Self::Date => f.write_str("date"),
            Self::Timestamp => f.write_str("timestamp"),
            Self::Boolean => f.write_str("boolean"),
            Self::Json => f.write_str("json"),
            Self::Integer => f.write_str("integer"),
            Self::Other(name) => f.write_str(name),
        }
    }
}

/// One column of the host table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostColumn {
    /// Column name.
    pub name: String,
    /// Class of its type.
    pub column_type: ColumnType,
    /// PostgreSQL's name of its (base) type, e.g. `varchar`, `timestamptz`.
    pub type_name: String,
    /// Declared length of a `varchar(n)`/`char(n)` column, in characters.
    pub max_length: Option<usize>,
    /// `NOT NULL` without a default: an insert must give it a value.
    pub required: bool,
    /// Generated or `GENERATED ALWAYS AS IDENTITY`: it cannot be written.
    pub generated: bool,
    /// Carries a unique constraint or a unique index on exactly this column
    /// (not partial, not on an expression, not deferrable), so it can be
    /// the get-or-create lookup.
    pub unique: bool,
}

/// The host table: its name and its columns in table order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableShape {
    /// Table name.
    pub table: String,
    /// Its columns.
    pub columns: Vec<HostColumn>,
}

impl TableShape {
    /// The column called `name`, if any.
    pub fn column(&self, name: &str) -> Option<&HostColumn> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// Whether `name` is a column with a unique constraint of its own.
    pub fn is_unique(&self, name: &str) -> bool {
        self.column(name).is_some_and(|c| c.unique)
    }

    /// Whether the table has a boolean `is_active` column (the inactive rule
    /// applies).
    pub fn has_is_active(&self) -> bool {
        self.column(IS_ACTIVE_COLUMN).is_some_and(|c| c.column_type == ColumnType::Boolean)
    }
}

/// A value the attribute map writes into a host user column.
///
/// `Debug` never shows the value (it is personal data).
#[derive(Clone, PartialEq)]
pub enum HostValue {
    /// A string.
    Text(String),
    /// A calendar date written `YYYY-MM-DD` (e.g. `receita_federal.dtNascimento`).
    Date(String),
    /// An instant, in seconds since the Unix epoch.
    Timestamp(i64),
    /// A boolean.
    Bool(bool),
    /// A JSON document (e.g. the whole profile payload, `fulljson`).
    Json(serde_json::Value),
}

impl HostValue {
    /// The kind of the value.
    pub fn kind(&self) -> ValueKind {
        match self {
            Self::Text(_) => ValueKind::Text,
            Self::Date(_) => ValueKind::Date,
            Self::Timestamp(_) => ValueKind::Timestamp,
            Self::Bool(_) => ValueKind::Boolean,
            Self::Json(_) => ValueKind::Json,
        }
    }

    /// Whether the value is "nothing" (JSON `null`): nothing is never
    /// written, so it never overwrites a stored value. An empty string is a
    /// value (the tuple split gives the second column `""` when the name
    /// has no space); what is unavailable the attribute map skips before a
    /// value is ever made.
    pub fn is_nothing(&self) -> bool {
        matches!(self, Self::Json(serde_json::Value::Null))
    }
}

impl fmt::Debug for HostValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HostValue::{:?}([redacted])", self.kind())
    }
}

/// What kind of value a mapped column receives; the start-up check asks
/// whether a column can hold it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueKind {
    /// A string ([`HostValue::Text`]).
    Text,
    /// A `YYYY-MM-DD` date ([`HostValue::Date`]).
    Date,
    /// An instant ([`HostValue::Timestamp`]).
    Timestamp,
    /// A boolean ([`HostValue::Bool`]).
    Boolean,
    /// A JSON document ([`HostValue::Json`]).
    Json,
}

impl ValueKind {
    /// Whether a column of class `column` can hold values of this kind.
    pub fn fits(self, column: &ColumnType) -> bool {
        matches!(
            (self, column),
            (Self::Text, ColumnType::Text)
                | (Self::Date, ColumnType::Date | ColumnType::Text)
                | (Self::Timestamp, ColumnType::Timestamp)
                | (Self::Boolean, ColumnType::Boolean)
                | (Self::Json, ColumnType::Json)
        )
    }

    /// What a column needs to be for this kind, for messages.
    fn needs(self) -> &'static str {
        match self {
            Self::Text => "a text column (text, varchar, char)",
            Self::Date => "a date or text column",
            Self::Timestamp => "a timestamp column",
            Self::Boolean => "a boolean column",
            Self::Json => "a jsonb or json column",
        }
    }
}

impl fmt::Display for ValueKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Text => "text",
            Self::Date => "date",
            Self::Timestamp => "timestamp",
            Self::Boolean => "boolean",
            Self::Json => "json",
        })
    }
}

/// Why one value is not written into its column. The texts never contain
/// the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueProblem {
    /// JSON `null`: nothing to write.
    Nothing,
    /// The column cannot hold a value of this kind.
    WrongKind {
        /// Kind of the value.
        kind: ValueKind,
        /// Class of the column.
        column_type: ColumnType,
    },
    /// A [`HostValue::Date`] that is not a real `YYYY-MM-DD` date.
    NotADate,
    /// A [`HostValue::Timestamp`] outside the years 1–9999.
    OutOfRange,
    /// Longer than the column's declared length.
    TooLong {
        /// The declared length, in characters.
        max_length: usize,
    },
    /// A NUL character, which PostgreSQL text and `jsonb` cannot store.
    NulCharacter,
}

impl fmt::Display for ValueProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Nothing => f.write_str("no value (null)"),
            Self::WrongKind { kind, column_type } => {
                write!(f, "a {kind} value does not fit a {column_type} column")
            }
            Self::NotADate => f.write_str("not a YYYY-MM-DD calendar date"),
            Self::OutOfRange => f.write_str("timestamp outside the years 1-9999"),
            Self::TooLong { max_length } => write!(f, "longer than the column's {max_length} characters"),
            Self::NulCharacter => f.write_str("contains a NUL character"),
        }
    }
}

/// Whether `value` can be written into `column` as is (after the cast to the
/// column's type the adapter adds). `Ok` means PostgreSQL will accept it,
/// save for table or domain `CHECK` constraints, which only the database
/// can evaluate.
pub fn check_value(column: &HostColumn, value: &HostValue) -> Result<(), ValueProblem> {
    if value.is_nothing() {
        return Err(ValueProblem::Nothing);
    }
    let kind = value.kind();
    if !kind.fits(&column.column_type) {
        return Err(ValueProblem::WrongKind { kind, column_type: column.column_type.clone() });
    }
    match value {
        HostValue::Text(s) => check_text(column, s),
        HostValue::Date(s) => {
            if !is_iso_date(s) {
                return Err(ValueProblem::NotADate);
            }
            check_text(column, s)
        }
        HostValue::Timestamp(t) => {
            if TIMESTAMP_RANGE.contains(t) {
                Ok(())
            } else {
                Err(ValueProblem::OutOfRange)
            }
        }
        HostValue::Bool(_) => Ok(()),
        HostValue::Json(v) => {
            if json_has_nul(v) {
                Err(ValueProblem::NulCharacter)
            } else {
                Ok(())
            }
        }
    }
}

fn check_text(column: &HostColumn, s: &str) -> Result<(), ValueProblem> {
    if s.contains('\0') {
        return Err(ValueProblem::NulCharacter);
    }
    match column.max_length {
        Some(max_length) if s.chars().count() > max_length => Err(ValueProblem::TooLong { max_length }),
        _ => Ok(()),
    }
}

/// Whether a string or key anywhere in `v` holds a NUL (`\u0000`), which
/// `jsonb` refuses.
fn json_has_nul(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::String(s) => s.contains('\0'),
        serde_json::Value::Array(items) => items.iter().any(json_has_nul),
        serde_json::Value::Object(map) => map.iter().any(|(k, v)| k.contains('\0') || json_has_nul(v)),
        serde_json::Value::Null | serde_json::Value::Bool(_) | serde_json::Value::Number(_) => false,
    }
}

/// The start-up check of the host table against the attribute map: every
/// column in `needs` exists, is writable and can hold its kind of value;
/// `lookup` exists and carries a unique constraint of its own; the table has
/// an integer `id`; an `is_active` column, if any, is boolean and is not
/// mapped; and every `NOT NULL` column without a default is mapped (an
/// insert could not succeed otherwise).
///
/// The error is a sentence that names the table and the column.
pub fn check_columns(shape: &TableShape, needs: &[(&str, ValueKind)], lookup: &str) -> Result<(), String> {
    let table = &shape.table;
    if !is_sql_identifier(table) {
        return Err(format!("table name \"{table}\" is not a valid name ([a-z_][a-z0-9_]*, at most 63 characters)"));
    }
    match shape.column(ID_COLUMN) {
        Some(c) if c.column_type == ColumnType::Integer => {}
        Some(c) => {
            return Err(format!("column \"id\" of table \"{table}\" is {}; it must be an integer key", c.column_type))
        }
        None => return Err(format!("table \"{table}\" has no column \"id\" (an integer key)")),
    }
    if let Some(c) = shape.column(IS_ACTIVE_COLUMN) {
        if c.column_type != ColumnType::Boolean {
            return Err(format!(
                "column \"{IS_ACTIVE_COLUMN}\" of table \"{table}\" is {}; it must be boolean",
                c.column_type
            ));
        }
    }
    let lookup_column = column_of(shape, lookup, "lookup column")?;
    if lookup_column.generated || lookup == ID_COLUMN || lookup == IS_ACTIVE_COLUMN {
        return Err(format!("lookup column \"{lookup}\" of table \"{table}\" cannot be written by logins"));
    }
    if !lookup_column.unique {
        return Err(format!(
            "lookup column \"{lookup}\" of table \"{table}\" has no unique constraint or unique index of its own"
        ));
    }
    for (name, kind) in needs {
        let column = column_of(shape, name, "column")?;
        if column.generated || *name == ID_COLUMN || *name == IS_ACTIVE_COLUMN {
            return Err(format!(
                "column \"{name}\" of table \"{table}\" cannot be mapped: it is not written by logins"
            ));
        }
        if !kind.fits(&column.column_type) {
            return Err(format!(
                "column \"{name}\" of table \"{table}\" is {}; a {kind} value needs {}",
                column.column_type,
                kind.needs()
            ));
        }
    }
    let mapped = |c: &HostColumn| c.name == lookup || needs.iter().any(|(name, _)| *name == c.name);
    if let Some(c) = shape.columns.iter().find(|c| c.required && !c.generated && !mapped(c)) {
        return Err(format!(
            "column \"{}\" of table \"{table}\" is NOT NULL without a default and is not mapped; \
             a new host user could not be created",
            c.name
        ));
    }
    Ok(())
}

fn column_of<'a>(shape: &'a TableShape, name: &str, what: &str) -> Result<&'a HostColumn, String> {
    let table = &shape.table;
    if !is_sql_identifier(name) {
        return Err(format!("{what} \"{name}\" is not a valid column name ([a-z_][a-z0-9_]*, at most 63 characters)"));
    }
    shape.column(name).ok_or_else(|| format!("{what} \"{name}\" does not exist in table \"{table}\""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn column(name: &str, column_type: ColumnType) -> HostColumn {
        HostColumn {
            name: name.to_owned(),
            type_name: column_type.to_string(),
            column_type,
            max_length: None,
            required: false,
            generated: false,
            unique: false,
        }
    }

    /// The shape of the default `host_users` table.
    fn host_users() -> TableShape {
        let mut id = column("id", ColumnType::Integer);
        id.unique = true;
        let mut username = column("username", ColumnType::Text);
        username.unique = true;
        username.required = true;
        username.max_length = Some(150);
        let mut cpf = column("cpf", ColumnType::Text);
        cpf.unique = true;
        cpf.max_length = Some(11);
        TableShape {
            table: "host_users".to_owned(),
            columns: vec![
                id,
                username,
                column("first_name", ColumnType::Text),
                column("email", ColumnType::Text),
                cpf,
                column("birth_date", ColumnType::Date),
                column("profile", ColumnType::Json),
                column("is_active", ColumnType::Boolean),
                column("last_login", ColumnType::Timestamp),
                column("uuid", ColumnType::Other("uuid".to_owned())),
            ],
        }
    }

    #[test]
    fn identifiers_are_lowercase_ascii_up_to_63_bytes() {
        for ok in ["host_users", "_x", "a1", "first_name", &"a".repeat(63)] {
            assert!(is_sql_identifier(ok), "{ok}");
        }
        for bad in [
            "",
            "1a",
            "Users",
            "host users",
            "host-users",
            "users\"; DROP TABLE users; --",
            "a.b",
            "\"quoted\"",
            "çedilha",
            &"a".repeat(64),
        ] {
            assert!(!is_sql_identifier(bad), "{bad}");
        }
    }

    #[test]
    fn pg_type_names_map_to_classes() {
        assert_eq!(ColumnType::from_pg_type_name("varchar"), ColumnType::Text);
        assert_eq!(ColumnType::from_pg_type_name("bpchar"), ColumnType::Text);
        assert_eq!(ColumnType::from_pg_type_name("timestamptz"), ColumnType::Timestamp);
        assert_eq!(ColumnType::from_pg_type_name("jsonb"), ColumnType::Json);
        assert_eq!(ColumnType::from_pg_type_name("bool"), ColumnType::Boolean);
        assert_eq!(ColumnType::from_pg_type_name("int8"), ColumnType::Integer);
        assert_eq!(ColumnType::from_pg_type_name("uuid"), ColumnType::Other("uuid".to_owned()));
    }

    #[test]
    fn a_date_fits_a_date_or_text_column_and_nothing_else_crosses_classes() {
        assert!(ValueKind::Date.fits(&ColumnType::Date));
        assert!(ValueKind::Date.fits(&ColumnType::Text));
        assert!(!ValueKind::Text.fits(&ColumnType::Date));
        assert!(!ValueKind::Json.fits(&ColumnType::Text));
        assert!(!ValueKind::Text.fits(&ColumnType::Json));
        assert!(!ValueKind::Text.fits(&ColumnType::Other("uuid".to_owned())));
        assert!(ValueKind::Boolean.fits(&ColumnType::Boolean));
        assert!(ValueKind::Timestamp.fits(&ColumnType::Timestamp));
    }

    #[test]
    fn the_default_mapping_passes_the_start_up_check() {
        let needs = [
            ("username", ValueKind::Text),
            ("first_name", ValueKind::Text),
            ("birth_date", ValueKind::Date),
            ("profile", ValueKind::Json),
            ("email", ValueKind::Text),
        ];
        assert_eq!(check_columns(&host_users(), &needs, "username"), Ok(()));
        assert_eq!(check_columns(&host_users(), &[("username", ValueKind::Text)], "cpf"), Ok(()));
    }

    /// Mapped columns, lookup column, what the message must contain.
    type Case = (&'static [(&'static str, ValueKind)], &'static str, &'static str);

    #[test]
    fn start_up_check_names_the_column_that_does_not_fit() {
        let shape = host_users();
        let cases: [Case; 9] = [
            (
                &[("username", ValueKind::Text), ("nickname", ValueKind::Text)],
                "username",
                "\"nickname\" does not exist",
            ),
            (&[("username", ValueKind::Text), ("birth_date", ValueKind::Text)], "username", "\"birth_date\""),
            (&[("username", ValueKind::Text), ("first_name", ValueKind::Json)], "username", "\"first_name\""),
            (&[("username", ValueKind::Text), ("profile", ValueKind::Text)], "username", "\"profile\""),
            (&[("username", ValueKind::Text), ("uuid", ValueKind::Text)], "username", "\"uuid\" of table"),
            (&[("username", ValueKind::Text)], "email", "lookup column \"email\""),
            (&[("username", ValueKind::Text)], "nope", "lookup column \"nope\" does not exist"),
            (&[("username", ValueKind::Text), ("is_active", ValueKind::Boolean)], "username", "\"is_active\""),
            (
                &[("username", ValueKind::Text), ("Bad Name", ValueKind::Text)],
                "username",
                "\"Bad Name\" is not a valid",
            ),
        ];
        for (needs, lookup, expected) in cases {
            let err = check_columns(&shape, needs, lookup).expect_err(expected);
            assert!(err.contains(expected), "{err} should contain {expected}");
            assert!(err.contains("host_users") || err.contains("not a valid"), "{err}");
        }
    }

    #[test]
    fn a_required_column_left_unmapped_stops_the_start() {
        let shape = host_users();
        let err = check_columns(&shape, &[("email", ValueKind::Text)], "cpf").expect_err("username is required");
        assert!(err.contains("\"username\"") && err.contains("NOT NULL"), "{err}");
    }

    #[test]
    fn a_table_without_integer_id_or_with_odd_is_active_is_refused() {
        let mut shape = host_users();
        shape.columns.retain(|c| c.name != "id");
        assert!(check_columns(&shape, &[], "username").expect_err("no id").contains("\"id\""));

        let mut shape = host_users();
        if let Some(c) = shape.columns.iter_mut().find(|c| c.name == "is_active") {
            c.column_type = ColumnType::Text;
        }
        assert!(!shape.has_is_active());
        assert!(check_columns(&shape, &[], "username").expect_err("text is_active").contains("\"is_active\""));
    }

    fn date_as_text() -> HostColumn {
        column("birth_text", ColumnType::Text)
    }

    #[test]
    fn values_are_checked_against_their_column() {
        let mut short = column("state", ColumnType::Text);
        short.max_length = Some(2);
        assert_eq!(check_value(&short, &HostValue::Text("RN".to_owned())), Ok(()));
        assert_eq!(
            check_value(&short, &HostValue::Text("São".to_owned())),
            Err(ValueProblem::TooLong { max_length: 2 })
        );
        assert_eq!(check_value(&short, &HostValue::Text("Ão".to_owned())), Ok(()), "characters, not bytes");
        assert_eq!(check_value(&short, &HostValue::Text(String::new())), Ok(()), "an empty string is a value");
        assert_eq!(check_value(&date_as_text(), &HostValue::Date(String::new())), Err(ValueProblem::NotADate));
        assert_eq!(check_value(&short, &HostValue::Text("a\0".to_owned())), Err(ValueProblem::NulCharacter));

        let date = column("birth_date", ColumnType::Date);
        assert_eq!(check_value(&date, &HostValue::Date("1988-03-14".to_owned())), Ok(()));
        assert_eq!(check_value(&date, &HostValue::Date("2026-13-45".to_owned())), Err(ValueProblem::NotADate));
        assert_eq!(check_value(&date, &HostValue::Date("2023-02-29".to_owned())), Err(ValueProblem::NotADate));
        assert!(matches!(
            check_value(&date, &HostValue::Text("1988-03-14".to_owned())),
            Err(ValueProblem::WrongKind { kind: ValueKind::Text, .. })
        ));
        let text = column("birth_text", ColumnType::Text);
        assert_eq!(check_value(&text, &HostValue::Date("1988-03-14".to_owned())), Ok(()));
        assert_eq!(check_value(&text, &HostValue::Date("14/03/1988".to_owned())), Err(ValueProblem::NotADate));

        let json = column("profile", ColumnType::Json);
        assert_eq!(check_value(&json, &HostValue::Json(json!({"a": [1, "x"]}))), Ok(()));
        assert_eq!(check_value(&json, &HostValue::Json(json!(null))), Err(ValueProblem::Nothing));
        assert_eq!(check_value(&json, &HostValue::Json(json!({"a": ["x\u{0}"]}))), Err(ValueProblem::NulCharacter));
        assert_eq!(check_value(&json, &HostValue::Json(json!({"k\u{0}": 1}))), Err(ValueProblem::NulCharacter));

        let ts = column("last_login", ColumnType::Timestamp);
        assert_eq!(check_value(&ts, &HostValue::Timestamp(1_700_000_000)), Ok(()));
        assert_eq!(check_value(&ts, &HostValue::Timestamp(i64::MAX)), Err(ValueProblem::OutOfRange));
        let flag = column("flag", ColumnType::Boolean);
        assert_eq!(check_value(&flag, &HostValue::Bool(false)), Ok(()));
    }

    #[test]
    fn debug_and_problems_never_show_the_value() {
        let value = HostValue::Text("MARIA DAS GRACAS".to_owned());
        assert!(!format!("{value:?}").contains("MARIA"));
        let mut short = column("state", ColumnType::Text);
        short.max_length = Some(2);
        let problem = check_value(&short, &value).expect_err("too long");
        assert!(!problem.to_string().contains("MARIA"));
    }
}
