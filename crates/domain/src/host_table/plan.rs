//! The get-or-create of one login, planned against the table's shape: which
//! columns the statement names, in which order, with which values, and what
//! to do when the database refuses it. Both storage adapters render their
//! SQL from an [`UpsertPlan`] and report refusals back to it; neither
//! repeats these rules.
//!
//! The statement's parameters are numbered in [`UpsertPlan::parameters`]'s
//! order: the lookup value is parameter [`LOOKUP_PARAMETER`] (1), the values
//! follow from 2 in [`UpsertPlan::values`]'s order.
//!
//! The rules:
//! - the lookup column exists, is writable by logins and carries a unique
//!   constraint of its own, the table has an integer `id`, and the lookup
//!   value is non-blank and fits its column — else the login cannot go on;
//! - one entry per column (the later wins), the lookup column's own entry
//!   left out (the lookup value is what is written);
//! - a column not in the table, or not writable by logins, stops the login
//!   ([`PlanError::UnknownColumn`]: a configuration problem);
//! - a value that does not fit its column is left out and reported
//!   ([`SkippedValue`]), and so is JSON `null` (nothing is never written);
//! - after a refusal ([`UpsertPlan::next_attempt`]): a constraint on one
//!   column drops that column's value and the statement runs again; a
//!   `NOT NULL` column without a value turns the upsert into the update of
//!   the existing row ([`Attempt::Update`]), so an existing user still logs
//!   in and only a new one is refused.

use std::fmt;

use thiserror::Error;

use super::{check_value, ColumnName, HostColumn, HostValue, HostWrite, TableName, TableShape, ValueProblem, WriteOn};

/// The parameter number of the lookup value; the values follow.
pub const LOOKUP_PARAMETER: usize = 1;

/// A value as the statement binds it. `Debug` never shows it.
#[derive(Clone, PartialEq)]
pub enum HostParam {
    /// Text: a string, a `YYYY-MM-DD` date, or a JSON document's text.
    Text(String),
    /// An instant, in Unix seconds.
    Integer(i64),
    /// A boolean.
    Bool(bool),
}

impl From<HostValue> for HostParam {
    fn from(value: HostValue) -> Self {
        match value {
            HostValue::Text(s) | HostValue::Date(s) => Self::Text(s),
            HostValue::Timestamp(t) => Self::Integer(t),
            HostValue::Bool(b) => Self::Bool(b),
            HostValue::Json(v) => Self::Text(v.to_string()),
        }
    }
}

impl fmt::Debug for HostParam {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self {
            Self::Text(_) => "Text",
            Self::Integer(_) => "Integer",
            Self::Bool(_) => "Bool",
        };
        write!(f, "HostParam::{kind}([redacted])")
    }
}

/// One column the statement writes, with its checked value.
#[derive(Debug, Clone)]
pub struct PlannedValue<'s> {
    /// The column (of the shape the plan was made from).
    pub column: &'s HostColumn,
    /// Its value, as bound.
    pub param: HostParam,
    /// When it is written (an update of an existing row writes only the
    /// values of every login).
    pub on: WriteOn,
}

/// A value left out of the statement: the column and why (never the value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedValue {
    /// The column.
    pub column: String,
    /// Why its value is not written ([`ValueProblem::Nothing`]: it was JSON
    /// `null`, which is not a problem, only nothing to write).
    pub problem: ValueProblem,
}

/// Why a login's get-or-create stops. Texts name tables and columns, never a
/// value. The host user port has one error for each.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PlanError {
    /// The table cannot serve the get-or-create: no unique constraint of its
    /// own on the lookup column, no integer `id`.
    #[error("host user table: {0}")]
    InvalidTable(String),
    /// The column does not exist in the table or cannot be written by a
    /// login (`id`, `is_active`, generated columns).
    #[error("host user column \"{0}\" does not exist or cannot be written")]
    UnknownColumn(String),
    /// The lookup value is empty, does not fit the lookup column, or a
    /// constraint on the lookup column refuses it.
    #[error("the lookup value does not fit column \"{0}\"")]
    UnusableLookup(String),
    /// A new row lacks a value for this `NOT NULL` column without a default.
    #[error("host user column \"{0}\" needs a value to create the user")]
    MissingRequired(String),
    /// There is no row for the lookup value and the login may not create
    /// one (`create_users` is off).
    #[error("no host user has this lookup value, and logins do not create users")]
    NotRegistered,
    /// The row exists and its `is_active` is false.
    #[error("host user is inactive")]
    Inactive,
    /// The database answered something these rules do not explain (for the
    /// log).
    #[error("{0}")]
    Inconsistent(String),
}

/// Which statement an adapter runs for the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attempt {
    /// The one-statement get-or-create (insert, or update on a conflict on
    /// the lookup column, guarded by the inactive rule).
    Upsert,
    /// The update of the existing, active row: a new row cannot be built
    /// because `missing` (`NOT NULL` without a default) has no value, or
    /// (`missing` is `None`) the login may not create one.
    Update {
        /// The column a new row would lack.
        missing: Option<String>,
    },
}

/// Why the database refused an attempt, as the adapter read it from the
/// error (and, where needed, from its catalogue).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A `CHECK` or unique constraint failed.
    Constraint {
        /// The constraint's (or unique index's) name, for messages.
        constraint: String,
        /// The columns whose value alone may have failed it: the column of
        /// a single-column constraint (or every column of a PostgreSQL
        /// domain whose own check failed); none when it spans several
        /// columns.
        columns: Vec<String>,
    },
    /// This `NOT NULL` column without a default got no value.
    NotNull(String),
}

/// The checked, de-duplicated get-or-create of one login on one table shape.
#[derive(Debug, Clone)]
pub struct UpsertPlan<'s> {
    shape: &'s TableShape,
    lookup: PlannedValue<'s>,
    values: Vec<PlannedValue<'s>>,
    creates: bool,
}

impl<'s> UpsertPlan<'s> {
    /// Plans the login whose `lookup` column holds `lookup_value`, writing
    /// `values`, on the table `shape` describes. Also returns the values
    /// left out (the adapter logs them).
    pub fn new(
        shape: &'s TableShape,
        lookup: &ColumnName,
        lookup_value: HostValue,
        values: Vec<(ColumnName, HostValue)>,
    ) -> Result<(Self, Vec<SkippedValue>), PlanError> {
        let writes = values.into_iter().map(|(column, value)| HostWrite { column, value, on: WriteOn::EveryLogin });
        Self::for_writes(shape, lookup, lookup_value, writes.collect(), true)
    }

    /// [`new`](Self::new) with each value's moment ([`WriteOn`]), and
    /// whether the login may create the row (`creates`; if not, only an
    /// existing row is updated: [`UpsertPlan::first_attempt`]).
    pub fn for_writes(
        shape: &'s TableShape,
        lookup: &ColumnName,
        lookup_value: HostValue,
        values: Vec<HostWrite>,
        creates: bool,
    ) -> Result<(Self, Vec<SkippedValue>), PlanError> {
        let table = &shape.table;
        let lookup_name = lookup.as_str();
        let lookup_column =
            shape.column(lookup_name).ok_or_else(|| PlanError::UnknownColumn(lookup_name.to_owned()))?;
        if !lookup_column.is_writable_by_logins() {
            return Err(PlanError::UnknownColumn(lookup_name.to_owned()));
        }
        if !lookup_column.unique {
            return Err(PlanError::InvalidTable(format!(
                "lookup column \"{lookup_name}\" of table \"{table}\" has no unique constraint of its own"
            )));
        }
        if !shape.has_integer_id() {
            return Err(PlanError::InvalidTable(format!("table \"{table}\" has no integer \"id\" column")));
        }
        let blank = matches!(&lookup_value, HostValue::Text(s) | HostValue::Date(s) if s.trim().is_empty());
        if blank || check_value(lookup_column, &lookup_value).is_err() {
            return Err(PlanError::UnusableLookup(lookup_name.to_owned()));
        }

        // One entry per column (the later wins), the lookup column left out.
        let mut latest: Vec<HostWrite> = Vec::with_capacity(values.len());
        for write in values {
            if write.column == *lookup {
                continue;
            }
            match latest.iter_mut().find(|w| w.column == write.column) {
                Some(entry) => *entry = write,
                None => latest.push(write),
            }
        }
        let mut planned = Vec::with_capacity(latest.len());
        let mut skipped = Vec::new();
        for HostWrite { column: name, value, on } in latest {
            let column = shape
                .column(name.as_str())
                .filter(|c| c.is_writable_by_logins())
                .ok_or_else(|| PlanError::UnknownColumn(name.to_string()))?;
            match check_value(column, &value) {
                Ok(()) => planned.push(PlannedValue { column, param: value.into(), on }),
                Err(problem) => skipped.push(SkippedValue { column: name.to_string(), problem }),
            }
        }
        let lookup = PlannedValue { column: lookup_column, param: lookup_value.into(), on: WriteOn::EveryLogin };
        Ok((Self { shape, lookup, values: planned, creates }, skipped))
    }

    /// The statement to run first: the get-or-create, or, when the login
    /// may not create the row, the update of the existing one.
    pub fn first_attempt(&self) -> Attempt {
        match self.creates {
            true => Attempt::Upsert,
            false => Attempt::Update { missing: None },
        }
    }

    /// The table.
    pub fn table(&self) -> &'s TableName {
        &self.shape.table
    }

    /// The shape the plan was made from.
    pub fn shape(&self) -> &'s TableShape {
        self.shape
    }

    /// The lookup column and value (parameter [`LOOKUP_PARAMETER`]).
    pub fn lookup(&self) -> &PlannedValue<'s> {
        &self.lookup
    }

    /// The values to write, in statement order (parameters 2, 3, …).
    pub fn values(&self) -> &[PlannedValue<'s>] {
        &self.values
    }

    /// Every parameter in order, with its number: the lookup value, then
    /// the values.
    pub fn parameters(&self) -> impl Iterator<Item = (usize, &PlannedValue<'s>)> {
        std::iter::once(&self.lookup).chain(&self.values).enumerate().map(|(i, p)| (i + LOOKUP_PARAMETER, p))
    }

    /// The values with their parameter numbers (from 2).
    pub fn numbered_values(&self) -> impl Iterator<Item = (usize, &PlannedValue<'s>)> {
        self.parameters().skip(1)
    }

    /// The columns an update of the existing row sets: the columns of the
    /// values written on every login, or, with none, the lookup column to
    /// itself (the row must still be returned, and locked where the engine
    /// locks rows).
    pub fn updated_columns(&self) -> Vec<&'s str> {
        let updated: Vec<&'s str> = self.updates().map(|v| v.column.name.as_str()).collect();
        if updated.is_empty() {
            vec![self.lookup.column.name.as_str()]
        } else {
            updated
        }
    }

    /// The values an update of the existing row writes (those of every
    /// login), in statement order.
    fn updates(&self) -> impl Iterator<Item = &PlannedValue<'s>> {
        self.values.iter().filter(|v| v.on == WriteOn::EveryLogin)
    }

    /// The parameters of the update of [`Attempt::Update`], numbered from
    /// [`LOOKUP_PARAMETER`]: the lookup value, then the values written on
    /// every login (the others are not bound).
    pub fn update_parameters(&self) -> impl Iterator<Item = (usize, &PlannedValue<'s>)> {
        std::iter::once(&self.lookup).chain(self.updates()).enumerate().map(|(i, p)| (i + LOOKUP_PARAMETER, p))
    }

    /// Whether the statement must leave an inactive row alone (the table
    /// has a boolean `is_active`): the update only happens where it is not
    /// false.
    pub fn guards_is_active(&self) -> bool {
        self.shape.has_is_active()
    }

    /// What to run after `refusal` failed `failed`: the next attempt and the
    /// columns whose values were dropped (the adapter warns about each), or
    /// the error that ends the login. Every retry drops a value or turns
    /// the upsert into an update, so retrying ends.
    pub fn next_attempt(&mut self, failed: &Attempt, refusal: Refusal) -> Result<(Attempt, Vec<String>), PlanError> {
        match refusal {
            Refusal::Constraint { constraint, columns } => {
                let mut dropped = Vec::new();
                self.values.retain(|v| {
                    let refused = columns.contains(&v.column.name);
                    if refused {
                        dropped.push(v.column.name.clone());
                    }
                    !refused
                });
                if !dropped.is_empty() {
                    return Ok((failed.clone(), dropped));
                }
                let lookup = &self.lookup.column.name;
                if columns.contains(lookup) {
                    return Err(PlanError::UnusableLookup(lookup.clone()));
                }
                Err(PlanError::Inconsistent(format!(
                    "constraint \"{constraint}\" of table \"{}\" failed, and it does not cover one column written",
                    self.table()
                )))
            }
            Refusal::NotNull(column) => match failed {
                Attempt::Upsert => Ok((Attempt::Update { missing: Some(column) }, Vec::new())),
                Attempt::Update { .. } => Err(PlanError::Inconsistent(format!(
                    "column \"{column}\" of table \"{}\" refused a value on update",
                    self.table()
                ))),
            },
        }
    }

    /// Why the upsert returned no row: the existing row is inactive (the
    /// guard left it alone), or, without an `is_active` column, something
    /// the rules do not explain.
    pub fn no_row_returned(&self) -> PlanError {
        if self.guards_is_active() {
            PlanError::Inactive
        } else {
            PlanError::Inconsistent("the upsert returned no row".to_owned())
        }
    }

    /// Why the update of [`Attempt::Update`] changed no row, given whether
    /// the row of the lookup value exists and is active (`None`: no row).
    pub fn not_updated(&self, existing_is_active: Option<bool>, missing: Option<&str>) -> PlanError {
        match (existing_is_active, missing) {
            (None, Some(missing)) => PlanError::MissingRequired(missing.to_owned()),
            (None, None) => PlanError::NotRegistered,
            (Some(false), _) => PlanError::Inactive,
            (Some(true), _) => PlanError::Inconsistent("the host user row changed during the login".to_owned()),
        }
    }
}

#[cfg(test)]
mod tests;
