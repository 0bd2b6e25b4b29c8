//! The host application's user record, written by the client component
//! after an OAuth2 login (get-or-create by a lookup column, then the mapped
//! columns).
//!
//! The table's shape, the value rules and the plan of the get-or-create are
//! pure and live in [`credencial_domain::host_table`]; this port is what
//! needs the database. Names arrive checked ([`TableName`], [`ColumnName`]),
//! so an adapter quotes them without checking again.
//!
//! Beside the port, what both adapters share that is not a rule: the port
//! itself over one engine's catalogue and statements ([`HostTableStore`]
//! over a [`HostTableEngine`]), with its cache of table shapes and the log
//! lines of values left out. An adapter writes only its engine's SQL.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use credencial_domain::host_table::{
    Attempt, ColumnName, HostValue, HostWrite, PlanError, Refusal, SkippedValue, TableName, TableShape, UpsertPlan,
    ValueProblem, WriteOn,
};
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
    /// The table does not exist (or is not a table), or it cannot serve the
    /// get-or-create (no unique constraint on the lookup column, no integer
    /// `id`). A configuration problem.
    #[error("host user table: {0}")]
    InvalidTable(String),
    /// A column does not exist in the table, or cannot be written by a
    /// login (`id`, `is_active`, generated columns).
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
    /// There is no host user with the lookup value and logins may not
    /// create one (`create_users` off); nothing was written.
    #[error("no host user has this lookup value, and logins do not create users")]
    NotRegistered,
    /// The storage could not be reached or answered unexpectedly; the text
    /// is for the log, never for a client.
    #[error("storage error: {0}")]
    Unexpected(String),
}

impl From<PlanError> for HostUserError {
    fn from(e: PlanError) -> Self {
        match e {
            PlanError::InvalidTable(m) => Self::InvalidTable(m),
            PlanError::UnknownColumn(c) => Self::UnknownColumn(c),
            PlanError::UnusableLookup(c) => Self::UnusableLookup(c),
            PlanError::MissingRequired(c) => Self::MissingRequired(c),
            PlanError::Inactive => Self::Inactive,
            PlanError::NotRegistered => Self::NotRegistered,
            PlanError::Inconsistent(m) => Self::Unexpected(m),
        }
    }
}

/// The host user table in the host's database.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait HostUserStore: Send + Sync + 'static {
    /// The shape of `table` (PostgreSQL: as the session's search path
    /// resolves it; SQLite: in the main database): its columns with their
    /// type classes, declared lengths, whether each is required, generated,
    /// and carries a single-column unique constraint or unique index.
    /// Errors: `InvalidTable` when no such table exists (a view is not a
    /// table); `Unexpected` when storage fails.
    async fn describe(&self, table: &TableName) -> Result<TableShape, HostUserError>;

    /// Get-or-create, atomically: the row of `table` whose `lookup_column`
    /// equals `lookup_value` is created with `values`, or, if it exists,
    /// updated with `values`; any number of concurrent calls for one lookup
    /// value leave exactly one row, and exactly one of them reports
    /// `created`. The columns and their order come from
    /// [`credencial_domain::host_table::UpsertPlan`].
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
    /// `InvalidTable`/`UnknownColumn` for a table or column that does not
    /// exist or cannot be written, or a lookup column without a unique
    /// constraint; `UnusableLookup` when `lookup_value` is empty or does
    /// not fit its column; `MissingRequired` when a new row lacks a value
    /// for a `NOT NULL` column without a default; `Unexpected` when storage
    /// fails. On any error nothing is written.
    async fn upsert(
        &self,
        table: &TableName,
        lookup_column: &ColumnName,
        lookup_value: HostValue,
        values: Vec<(ColumnName, HostValue)>,
    ) -> Result<UpsertOutcome, HostUserError> {
        let writes = values.into_iter().map(|(column, value)| HostWrite { column, value, on: WriteOn::EveryLogin });
        self.write_login(table, lookup_column, lookup_value, writes.collect(), true).await
    }

    /// [`upsert`](Self::upsert) with the client component's options: a
    /// value written [`WriteOn::Creation`] goes into a new row only (an
    /// existing row keeps what it has), and with `creates` false no row is
    /// created (`NotRegistered` when there is none: only existing host
    /// users log in). Errors: as `upsert`, and `NotRegistered`.
    async fn write_login(
        &self,
        table: &TableName,
        lookup_column: &ColumnName,
        lookup_value: HostValue,
        writes: Vec<HostWrite>,
        creates: bool,
    ) -> Result<UpsertOutcome, HostUserError>;
}

/// The shapes a [`HostTableStore`] has read, by table, shared by its
/// clones: read once, refreshed by [`HostUserStore::describe`], forgotten
/// when a statement says the table changed.
#[derive(Debug, Clone, Default)]
struct ShapeCache(Arc<Mutex<HashMap<TableName, Arc<TableShape>>>>);

impl ShapeCache {
    /// The shape of `table`, if read.
    fn get(&self, table: &TableName) -> Option<Arc<TableShape>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).get(table).cloned()
    }

    /// Keeps `shape` (replacing an older one of its table).
    fn remember(&self, shape: TableShape) -> Arc<TableShape> {
        let shape = Arc::new(shape);
        self.0.lock().unwrap_or_else(PoisonError::into_inner).insert(shape.table.clone(), Arc::clone(&shape));
        shape
    }

    /// Drops the shape of `table`: the next call reads it again.
    fn forget(&self, table: &TableName) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).remove(table);
    }
}

/// How one engine's statement failed, as its adapter read the error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatementFailure {
    /// A constraint or `NOT NULL` refused a value: the plan decides what
    /// comes next.
    Refused(Refusal),
    /// The lookup column has no unique index (any more): the conflict has
    /// no arbiter. The text is the engine's, for the log.
    NoArbiter(String),
    /// The table changed since its shape was read (a column or the table
    /// is gone). The text is for the log.
    TableChanged(String),
    /// Storage failed. The text is for the log and never quotes a value.
    Storage(String),
}

/// One engine's catalogue and statements for the host user table: what
/// [`HostTableStore`] runs, and all an adapter writes.
#[async_trait]
pub trait HostTableEngine: Send + Sync {
    /// A failed statement (nothing was written).
    type Failure: Send;

    /// The shape of `table` from the engine's catalogue (`InvalidTable`
    /// when it is no table).
    async fn read_shape(&self, table: &TableName) -> Result<TableShape, HostUserError>;

    /// The one-statement get-or-create of `plan`: the row, or a refusal the
    /// rules explain (`Ok(Err(_))`: the row is inactive), or the failed
    /// statement.
    async fn upsert(&self, plan: &UpsertPlan<'_>) -> Result<Result<UpsertOutcome, HostUserError>, Self::Failure>;

    /// The update of the existing, active row of `plan` (the values of
    /// every login, bound as [`UpsertPlan::update_parameters`] numbers
    /// them) when a new row would lack `missing` or (`None`) may not be
    /// created: the row, or why there is none
    /// ([`UpsertPlan::not_updated`]), or the failed statement.
    async fn update(
        &self,
        plan: &UpsertPlan<'_>,
        missing: Option<&str>,
    ) -> Result<Result<UpsertOutcome, HostUserError>, Self::Failure>;

    /// What `failure` means (reading the catalogue where the error alone
    /// does not say which column a constraint covers).
    async fn classify(&self, plan: &UpsertPlan<'_>, failure: Self::Failure) -> StatementFailure;
}

/// [`HostUserStore`] over one engine's [`HostTableEngine`]: the table's
/// shape is read once and kept (a later [`HostUserStore::describe`]
/// refreshes it, a statement that finds the table changed drops it), and
/// the get-or-create runs the domain's [`UpsertPlan`]: values that do not
/// fit are logged and left out, the upsert runs, and after each refusal the
/// plan drops the refused value or turns to the update of the existing
/// row, until a statement succeeds or the plan gives up (each retry drops a
/// value or changes the attempt once, so this ends).
#[derive(Debug, Clone)]
pub struct HostTableStore<E> {
    engine: E,
    shapes: ShapeCache,
}

impl<E> HostTableStore<E> {
    /// The store over `engine` (or what makes one: a pool, a database).
    pub fn new(engine: impl Into<E>) -> Self {
        Self { engine: engine.into(), shapes: ShapeCache::default() }
    }
}

#[async_trait]
impl<E: HostTableEngine + 'static> HostUserStore for HostTableStore<E> {
    async fn describe(&self, table: &TableName) -> Result<TableShape, HostUserError> {
        let shape = self.engine.read_shape(table).await?;
        self.shapes.remember(shape.clone());
        Ok(shape)
    }

    async fn write_login(
        &self,
        table: &TableName,
        lookup_column: &ColumnName,
        lookup_value: HostValue,
        writes: Vec<HostWrite>,
        creates: bool,
    ) -> Result<UpsertOutcome, HostUserError> {
        let shape = match self.shapes.get(table) {
            Some(shape) => shape,
            None => self.shapes.remember(self.engine.read_shape(table).await?),
        };
        let (mut plan, skipped) = UpsertPlan::for_writes(&shape, lookup_column, lookup_value, writes, creates)?;
        for value in &skipped {
            report_skipped(table, value);
        }
        let mut attempt = plan.first_attempt();
        loop {
            let result = match &attempt {
                Attempt::Upsert => self.engine.upsert(&plan).await,
                Attempt::Update { missing } => self.engine.update(&plan, missing.as_deref()).await,
            };
            let failure = match result {
                Ok(outcome) => return outcome,
                Err(failure) => self.engine.classify(&plan, failure).await,
            };
            let refusal = match failure {
                StatementFailure::Refused(refusal) => refusal,
                StatementFailure::NoArbiter(detail) => {
                    self.shapes.forget(table);
                    return Err(HostUserError::InvalidTable(format!(
                        "lookup column \"{lookup_column}\" of table \"{table}\" has no unique constraint of its own ({detail})"
                    )));
                }
                StatementFailure::TableChanged(detail) => {
                    self.shapes.forget(table);
                    return Err(HostUserError::Unexpected(detail));
                }
                StatementFailure::Storage(detail) => return Err(HostUserError::Unexpected(detail)),
            };
            let (next, dropped) = plan.next_attempt(&attempt, refusal)?;
            for column in &dropped {
                warn_skipped(table, column, &"a constraint on the column refuses it");
            }
            attempt = next;
        }
    }
}

/// Logs a value the plan left out: a warning naming the table, the column
/// and the reason (never the value); JSON `null` only at debug level (it is
/// nothing to write, not a problem).
fn report_skipped(table: &TableName, skipped: &SkippedValue) {
    let column = skipped.column.as_str();
    match &skipped.problem {
        ValueProblem::Nothing => {
            tracing::debug!(table = table.as_str(), column, "host user value null: column left as it is");
        }
        problem => warn_skipped(table, column, problem),
    }
}

fn warn_skipped(table: &TableName, column: &str, reason: &dyn std::fmt::Display) {
    tracing::warn!(table = table.as_str(), column, reason = %reason, "host user value skipped: it does not fit its column");
}
