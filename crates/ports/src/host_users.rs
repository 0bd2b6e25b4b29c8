//! The host application's user record, written by the client component
//! after an OAuth2 login (get-or-create by a lookup column, then the mapped
//! columns).
//!
//! The table's shape and the value rules are pure and live in
//! [`credencial_domain::host_table`]; this port is what needs the database.

use async_trait::async_trait;
use credencial_domain::host_table::{HostValue, TableShape};
use thiserror::Error;

/// The row a get-or-create landed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpsertOutcome {
    /// The row's `id`.
    pub id: i64,
    /// Whether this call created the row (`false`: it existed and was
    /// updated).
    pub created: bool,
}

/// What can go wrong with the host user record. Texts name tables and
/// columns, never a value (values are personal data).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum HostUserError {
    /// The table name is not a valid name, the table does not exist (or is
    /// not a table), or it cannot serve the get-or-create (no unique
    /// constraint on the lookup column, no integer `id`). A configuration
    /// problem.
    #[error("host user table: {0}")]
    InvalidTable(String),
    /// A column name is not a valid name, does not exist in the table, or
    /// cannot be written by a login (`id`, `is_active`, generated columns).
    /// A configuration problem; the text names the column.
    #[error("host user column \"{0}\" does not exist or cannot be written")]
    UnknownColumn(String),
    /// The host user exists and its `is_active` is false: the login is
    /// refused, and the row was not changed.
    #[error("host user is inactive")]
    Inactive,
    /// The lookup value cannot identify a row: it is empty or does not fit
    /// the lookup column (wrong kind, too long, a check constraint). The
    /// text names the column.
    #[error("the lookup value does not fit column \"{0}\"")]
    UnusableLookup(String),
    /// A new row could not be created because a `NOT NULL` column without a
    /// default got no value (e.g. its value was skipped). The text names the
    /// column.
    #[error("host user column \"{0}\" needs a value to create the user")]
    MissingRequired(String),
    /// The storage could not be reached or answered unexpectedly; the text
    /// is for the log, never for a client.
    #[error("storage error: {0}")]
    Unexpected(String),
}

/// The host user table in the host's database.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait HostUserStore: Send + Sync + 'static {
    /// The shape of `table` (as the session's search path resolves it): its
    /// columns with their type classes, declared lengths, whether each is
    /// required, generated, and carries a single-column unique constraint or
    /// unique index. Errors: `InvalidTable` when the name is not
    /// `[a-z_][a-z0-9_]*` (checked before any SQL runs) or no such table
    /// exists; `Unexpected` when storage fails.
    async fn describe(&self, table: &str) -> Result<TableShape, HostUserError>;

    /// Get-or-create in one atomic statement: the row of `table` whose
    /// `lookup_column` equals `lookup_value` is created with `values`, or,
    /// if it exists, updated with `values`; any number of concurrent calls
    /// for one lookup value leave exactly one row, and exactly one of them
    /// reports `created`.
    ///
    /// Columns not in `values` (those the attribute map skipped) are left
    /// untouched on update, and JSON `null` is never written. An empty
    /// string is written as given. A
    /// value that does not fit its column (wrong kind, a date that is not
    /// `YYYY-MM-DD`, too long, a NUL character, a single-column or domain
    /// `CHECK` constraint, a unique value another row holds) is skipped with
    /// a warning naming the column (never the value), and the rest is
    /// written. An entry for `lookup_column` in `values` is ignored
    /// (`lookup_value` is written); of two entries for one column the later
    /// wins.
    ///
    /// Errors: `Inactive` when the row exists and its `is_active` column (if
    /// the table has one) is false — the row is left unchanged;
    /// `InvalidTable`/`UnknownColumn` for names that are invalid (checked
    /// before any SQL runs) or not in the table, or a lookup column without
    /// a unique constraint; `UnusableLookup` when `lookup_value` is empty or
    /// does not fit its column; `MissingRequired` when a new row lacks a
    /// value for a `NOT NULL` column without a default; `Unexpected` when
    /// storage fails. On any error nothing is written.
    async fn upsert(
        &self,
        table: &str,
        lookup_column: &str,
        lookup_value: HostValue,
        values: Vec<(String, HostValue)>,
    ) -> Result<UpsertOutcome, HostUserError>;
}
