//! The host user table as the client component sees it: the shape of the
//! table (columns, type classes, unique columns), the values the attribute
//! map writes into it, and the rules that say whether a value fits a column.
//!
//! Everything here is pure: each storage adapter (PostgreSQL, SQLite) reads
//! the shape from its engine's catalogue, maps the engine's type names to a
//! [`ColumnType`] ([`ColumnType::from_pg_type_name`],
//! [`ColumnType::from_sqlite_type_name`]), plans the get-or-create of a login
//! with [`UpsertPlan`] and only renders the plan as SQL; the start-up check
//! ([`check_columns`]) uses the same rules to stop a misconfigured service
//! with a message that names the column, in the same words on both engines.
//! Names are checked where they come from ([`TableName`], [`ColumnName`]).
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

mod names;
mod plan;
mod writes;

pub use names::{is_sql_identifier, ColumnName, IdentifierError, TableName, TableNameError, MAX_IDENTIFIER_LEN};
pub use plan::{Attempt, HostParam, PlanError, PlannedValue, Refusal, SkippedValue, UpsertPlan, LOOKUP_PARAMETER};
pub use writes::{HostWrite, LoginWrites, WriteOn};

/// The column the inactive rule reads: a host user whose `is_active` is false
/// is refused at login and never reactivated.
pub const IS_ACTIVE_COLUMN: &str = "is_active";

/// The column that identifies a host user row (returned by the upsert).
pub const ID_COLUMN: &str = "id";

/// First and last instant a [`HostValue::Timestamp`] may hold (Unix seconds
/// of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z).
pub const TIMESTAMP_RANGE: std::ops::RangeInclusive<i64> = -62_135_596_800..=253_402_300_799;

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
    /// Anything else, with the engine's type name (e.g. `uuid`, `numeric`);
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

    /// The class of a SQLite column's declared type (as `CREATE TABLE`
    /// wrote it, any case, with or without a length): SQLite keeps any
    /// declared name, so the class comes from the name the way the
    /// embedded schema uses it — `TEXT`, `VARCHAR(n)`, `CHAR(n)` and their
    /// kin hold text; `DATE` a `YYYY-MM-DD` text; `BOOLEAN`/`BOOL` the
    /// integers 0 and 1; `JSON`/`JSONB` a JSON text (checked with
    /// `json_valid` where the table says so); `TIMESTAMP`, `TIMESTAMPTZ`
    /// and `DATETIME` Unix seconds as an integer; the integer types an
    /// integer. Anything else (`REAL`, `NUMERIC`, `BLOB`, no type at all)
    /// is [`ColumnType::Other`] with the lowercased name.
    pub fn from_sqlite_type_name(declared: &str) -> Self {
        let name = sqlite_type_base(declared);
        match name.as_str() {
            "text" | "varchar" | "char" | "character" | "character varying" | "varying character" | "nchar"
            | "native character" | "nvarchar" | "clob" | "citext" => Self::Text,
            "date" => Self::Date,
            "timestamp" | "timestamptz" | "datetime" | "timestamp with time zone" | "timestamp without time zone" => {
                Self::Timestamp
            }
            "boolean" | "bool" => Self::Boolean,
            "json" | "jsonb" => Self::Json,
            "int" | "integer" | "tinyint" | "smallint" | "mediumint" | "bigint" | "unsigned big int" | "int2"
            | "int8" => Self::Integer,
            _ => Self::Other(name),
        }
    }
}

/// A SQLite declared type's name without its length, lowercased, blanks
/// collapsed: `VARCHAR (150)` is `varchar`, `Unsigned  Big Int` is
/// `unsigned big int`.
pub fn sqlite_type_base(declared: &str) -> String {
    let name = declared.split('(').next().unwrap_or_default();
    name.split_whitespace().map(str::to_ascii_lowercase).collect::<Vec<_>>().join(" ")
}

/// The length a SQLite declared text type names (`VARCHAR(150)` is 150),
/// which the adapter enforces before writing as PostgreSQL would (SQLite
/// itself does not); `None` for other classes or without a length.
pub fn sqlite_declared_length(declared: &str) -> Option<usize> {
    if ColumnType::from_sqlite_type_name(declared) != ColumnType::Text {
        return None;
    }
    let (_, rest) = declared.split_once('(')?;
    let (inside, _) = rest.split_once(')')?;
    // `VARCHAR(10, 2)` is no length SQLite or PostgreSQL would keep.
    inside.trim().parse().ok().filter(|n| *n > 0)
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
    /// The engine's name of its type: PostgreSQL's name of the (base)
    /// type, e.g. `varchar`, `timestamptz`; SQLite's declared type without
    /// its length, lowercased, e.g. `varchar`, `jsonb` (empty when none).
    pub type_name: String,
    /// Declared length of a `varchar(n)`/`char(n)` column, in characters
    /// (enforced by the adapter on SQLite, which does not).
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

impl HostColumn {
    /// Whether a login may write the column: not generated, not the row's
    /// `id`, not `is_active` (the host's switch, never the mapping's).
    pub fn is_writable_by_logins(&self) -> bool {
        !self.generated && self.name != ID_COLUMN && self.name != IS_ACTIVE_COLUMN
    }
}

/// The host table: its name and its columns in table order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableShape {
    /// Table name.
    pub table: TableName,
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

    /// Whether the table has an integer `id` column (what the upsert
    /// returns).
    pub fn has_integer_id(&self) -> bool {
        self.column(ID_COLUMN).is_some_and(|c| c.column_type == ColumnType::Integer)
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
/// column's type the adapter adds). `Ok` means the engine will accept it,
/// save for table or domain `CHECK` constraints and unique values, which
/// only the database can evaluate.
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
    check_columns_for(shape, needs, lookup, true)
}

/// [`check_columns`], where `creates` says whether logins create rows: if
/// not, a `NOT NULL` column without a value is no problem (no row is ever
/// inserted).
pub fn check_columns_for(
    shape: &TableShape,
    needs: &[(&str, ValueKind)],
    lookup: &str,
    creates: bool,
) -> Result<(), String> {
    let table = &shape.table;
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
    if !lookup_column.is_writable_by_logins() {
        return Err(format!("lookup column \"{lookup}\" of table \"{table}\" cannot be written by logins"));
    }
    if !lookup_column.unique {
        return Err(format!(
            "lookup column \"{lookup}\" of table \"{table}\" has no unique constraint or unique index of its own"
        ));
    }
    for (name, kind) in needs {
        let column = column_of(shape, name, "column")?;
        if !column.is_writable_by_logins() {
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
    if let Some(c) = shape.columns.iter().find(|c| creates && c.required && !c.generated && !mapped(c)) {
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
mod tests;
