//! [`HostUserStore`](credencial_ports::HostUserStore) on a configurable
//! host user table in the SQLite file (default `host_users`): SQLite's
//! catalogue and statements ([`SqliteHostTable`]) under the port's shared
//! implementation ([`HostTableStore`]: shape cache, the domain's plan,
//! retries, log lines) — what the PostgreSQL adapter does, with SQLite's
//! catalogue and SQL.
//!
//! Names arrive checked ([`TableName`],
//! [`ColumnName`](credencial_domain::host_table::ColumnName)) and are
//! double-quoted in the statement; values are always bound parameters
//! (text, integers, booleans as 0/1), with no cast: SQLite keeps what it is
//! given.
//!
//! **Shape.** `sqlite_schema` says whether the name is a table (a view or
//! a virtual table is not); `pragma_table_xinfo` gives the columns in table
//! order with their declared types, `NOT NULL`, defaults and generated
//! columns; `pragma_index_list`/`pragma_index_info` the unique indexes (a
//! `UNIQUE` or `PRIMARY KEY` constraint is one) on exactly one column, not
//! partial, not on an expression. An `INTEGER PRIMARY KEY` (the rowid) is
//! unique and never required. The declared type gives the class
//! ([`ColumnType::from_sqlite_type_name`]): text as `TEXT`/`VARCHAR(n)`/
//! `CHAR(n)` (the length, which SQLite ignores, is enforced before
//! writing), `DATE` as `YYYY-MM-DD` text, `BOOLEAN` as 0/1, `JSON`/`JSONB`
//! as JSON text (a `json_valid` check in the table keeps it so),
//! `TIMESTAMP` as Unix seconds. The shape is kept per table and refreshed by
//! `describe`.
//!
//! **Get-or-create** is one `BEGIN IMMEDIATE` transaction on the writer:
//!
//! ```sql
//! SELECT "id" FROM "t" WHERE "lookup" = ?1            -- exists already?
//! INSERT INTO "t" ("lookup", "a", "b") VALUES (?1, ?2, ?3)
//! ON CONFLICT ("lookup") DO UPDATE SET "a" = excluded."a", "b" = excluded."b"
//! WHERE "t"."is_active" IS NOT FALSE                  -- only when the table has it
//! RETURNING "id"
//! ```
//!
//! The transaction holds the file's write lock from its first statement
//! (and the one writer connection serialises the service's own writers),
//! so the first statement tells truly whether this call creates the row;
//! concurrent first logins of one person queue and land on one row. No row
//! back means the existing row is inactive: it was not changed, and the
//! login is refused.
//!
//! **Refusals** are those of PostgreSQL, read from SQLite's messages:
//! `UNIQUE constraint failed: t.c` names the column another row holds the
//! value of; `CHECK constraint failed: x` names the check, whose columns
//! come from the table's `CREATE TABLE` text ([`checks`]); the plan skips
//! the value of a single column and the statement runs again. SQLite checks
//! `NOT NULL` before it looks for a conflict, as PostgreSQL does, so a
//! required column without a value turns the upsert into the update of the
//! existing, active row, and only a new user is refused
//! (`MissingRequired`).

use async_trait::async_trait;
use credencial_domain::host_table::{
    sqlite_declared_length, sqlite_type_base, ColumnType, HostColumn, HostParam, PlannedValue, Refusal, TableName,
    TableShape, UpsertPlan, ID_COLUMN, IS_ACTIVE_COLUMN, LOOKUP_PARAMETER,
};
use credencial_ports::{HostTableEngine, HostTableStore, HostUserError, StatementFailure, UpsertOutcome};
use sqlx::error::ErrorKind;
use sqlx::sqlite::SqliteArguments;
use sqlx::{Arguments, SqliteConnection};

use crate::SqliteDb;

mod checks;

/// Host user tables in the SQLite file: the port over [`SqliteHostTable`].
pub type SqliteHostUserStore = HostTableStore<SqliteHostTable>;

/// SQLite's catalogue and statements for a host table (see the module
/// documentation); [`SqliteHostUserStore::new`] takes the db itself.
#[derive(Debug, Clone)]
pub struct SqliteHostTable {
    db: SqliteDb,
}

impl From<SqliteDb> for SqliteHostTable {
    fn from(db: SqliteDb) -> Self {
        Self { db }
    }
}

impl SqliteHostTable {
    /// The columns the failed check `reported` may stand for: the one
    /// column of `plan`'s table its expression refers to, or none.
    async fn checked_column(&self, plan: &UpsertPlan<'_>, reported: &str) -> Result<Vec<String>, sqlx::Error> {
        let sql: Option<String> =
            sqlx::query_scalar("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?1 COLLATE NOCASE")
                .bind(plan.table().as_str())
                .fetch_optional(self.db.readers())
                .await?
                .flatten();
        let names: Vec<&str> = plan.shape().columns.iter().map(|c| c.name.as_str()).collect();
        Ok(single(checks::checked_columns(sql.as_deref().unwrap_or_default(), &names, reported)))
    }
}

/// Reads the shape of `table` from SQLite's catalogue, on `conn`.
pub(crate) async fn read_shape(conn: &mut SqliteConnection, table: &TableName) -> Result<TableShape, HostUserError> {
    let kind: Option<(String, Option<String>)> = sqlx::query_as(
        "SELECT type, sql FROM sqlite_schema WHERE type IN ('table', 'view') AND name = ?1 COLLATE NOCASE",
    )
    .bind(table.as_str())
    .fetch_optional(&mut *conn)
    .await
    .map_err(unexpected)?;
    match kind {
        None => return Err(HostUserError::InvalidTable(format!("table \"{table}\" does not exist"))),
        Some((kind, sql)) if kind == "table" && !sql.as_deref().is_some_and(is_virtual) => {}
        Some(_) => return Err(HostUserError::InvalidTable(format!("\"{table}\" is not a table"))),
    }
    let rows = sqlx::query_as::<_, ColumnRow>(DESCRIBE_COLUMNS)
        .bind(table.as_str())
        .fetch_all(&mut *conn)
        .await
        .map_err(unexpected)?;
    let primary_key_columns = rows.iter().filter(|r| r.pk > 0).count();
    let columns = rows
        .into_iter()
        .map(|r| {
            // `INTEGER PRIMARY KEY` of a rowid table: the rowid itself.
            let rowid = r.pk == 1
                && primary_key_columns == 1
                && !r.primary_key_index
                && r.declared.trim().eq_ignore_ascii_case("integer");
            let generated = r.hidden == 2 || r.hidden == 3;
            HostColumn {
                column_type: ColumnType::from_sqlite_type_name(&r.declared),
                max_length: sqlite_declared_length(&r.declared),
                type_name: sqlite_type_base(&r.declared),
                required: r.not_null && !r.has_default && !generated && !rowid,
                generated,
                unique: r.in_unique_index || rowid,
                name: r.name,
            }
        })
        .collect();
    Ok(TableShape { table: table.clone(), columns })
}

/// Whether a `CREATE` statement makes a virtual table.
fn is_virtual(create_sql: &str) -> bool {
    let words: Vec<&str> = create_sql.split_whitespace().take(2).collect();
    words.get(1).is_some_and(|w| w.eq_ignore_ascii_case("virtual"))
}

/// The columns of table `?1` in table order (hidden columns of virtual
/// tables left out): declared type, `NOT NULL`, default, primary key rank,
/// generated (`hidden` 2 or 3), whether a unique index (a `UNIQUE` or
/// `PRIMARY KEY` constraint's included) covers exactly it — not partial,
/// not an expression — and whether the primary key has an index of its own
/// (it has none when it is the rowid).
const DESCRIBE_COLUMNS: &str = "\
SELECT c.name AS name,
       c.type AS declared,
       c.\"notnull\" <> 0 AS not_null,
       c.dflt_value IS NOT NULL AS has_default,
       c.pk AS pk,
       c.hidden AS hidden,
       EXISTS (SELECT 1 FROM pragma_index_list(?1) il
               WHERE il.\"unique\" AND NOT il.partial
                 AND (SELECT count(*) FROM pragma_index_info(il.name)) = 1
                 AND (SELECT ii.name FROM pragma_index_info(il.name) ii) = c.name) AS in_unique_index,
       EXISTS (SELECT 1 FROM pragma_index_list(?1) il WHERE il.origin = 'pk') AS primary_key_index
FROM pragma_table_xinfo(?1) c
WHERE c.hidden <> 1
ORDER BY c.cid";

#[derive(sqlx::FromRow)]
struct ColumnRow {
    name: String,
    declared: String,
    not_null: bool,
    has_default: bool,
    pk: i64,
    hidden: i64,
    in_unique_index: bool,
    primary_key_index: bool,
}

/// `params` bound in order (`?1`, `?2`, …): text, integers, and booleans
/// as 0/1.
fn arguments<'a>(params: impl Iterator<Item = &'a PlannedValue<'a>>) -> Result<SqliteArguments<'static>, sqlx::Error> {
    let mut args = SqliteArguments::default();
    for planned in params {
        match &planned.param {
            HostParam::Text(s) => args.add(s.clone()),
            HostParam::Integer(i) => args.add(*i),
            HostParam::Bool(b) => args.add(*b),
        }
        .map_err(sqlx::Error::Encode)?;
    }
    Ok(args)
}

/// The lookup value alone, as `?1`.
fn lookup_argument(plan: &UpsertPlan<'_>) -> Result<SqliteArguments<'static>, sqlx::Error> {
    arguments(std::iter::once(plan.lookup()))
}

fn quoted(name: &str) -> String {
    format!("\"{name}\"")
}

fn unexpected(e: sqlx::Error) -> HostUserError {
    HostUserError::Unexpected(e.to_string())
}

/// The columns when there is exactly one: a constraint over several
/// columns cannot be pinned on one value.
fn single(columns: Vec<String>) -> Vec<String> {
    if columns.len() == 1 {
        columns
    } else {
        Vec::new()
    }
}

/// The id of the row of the lookup value, if any.
fn existing_id_sql(plan: &UpsertPlan<'_>) -> String {
    format!(
        "SELECT \"{ID_COLUMN}\" FROM {} WHERE {} = ?{LOOKUP_PARAMETER}",
        quoted(plan.table().as_str()),
        quoted(&plan.lookup().column.name)
    )
}

/// Whether the row of the lookup value is active (no row: none).
fn is_active_sql(plan: &UpsertPlan<'_>) -> String {
    let active = if plan.guards_is_active() { format!("\"{IS_ACTIVE_COLUMN}\" IS NOT FALSE") } else { "1".to_owned() };
    format!(
        "SELECT {active} FROM {} WHERE {} = ?{LOOKUP_PARAMETER}",
        quoted(plan.table().as_str()),
        quoted(&plan.lookup().column.name)
    )
}

/// The one-statement get-or-create (see the module documentation).
fn upsert_sql(plan: &UpsertPlan<'_>) -> String {
    let table = quoted(plan.table().as_str());
    let lookup = quoted(&plan.lookup().column.name);
    let (columns, params): (Vec<String>, Vec<String>) =
        plan.parameters().map(|(n, v)| (quoted(&v.column.name), format!("?{n}"))).unzip();
    let assignments: Vec<String> =
        plan.updated_columns().into_iter().map(|c| format!("{0} = excluded.{0}", quoted(c))).collect();
    let active = if plan.guards_is_active() {
        format!(" WHERE {table}.\"{IS_ACTIVE_COLUMN}\" IS NOT FALSE")
    } else {
        String::new()
    };
    format!(
        "INSERT INTO {table} ({}) VALUES ({}) ON CONFLICT ({lookup}) DO UPDATE SET {}{active} RETURNING \"{ID_COLUMN}\"",
        columns.join(", "),
        params.join(", "),
        assignments.join(", "),
    )
}

/// The update of the existing, active row (the fallback of the upsert).
fn update_sql(plan: &UpsertPlan<'_>) -> String {
    let table = quoted(plan.table().as_str());
    let lookup = quoted(&plan.lookup().column.name);
    let mut assignments: Vec<String> =
        plan.update_parameters().skip(1).map(|(n, v)| format!("{} = ?{n}", quoted(&v.column.name))).collect();
    if assignments.is_empty() {
        assignments.push(format!("{lookup} = {lookup}"));
    }
    let active =
        if plan.guards_is_active() { format!(" AND \"{IS_ACTIVE_COLUMN}\" IS NOT FALSE") } else { String::new() };
    format!(
        "UPDATE {table} SET {} WHERE {lookup} = ?{LOOKUP_PARAMETER}{active} RETURNING \"{ID_COLUMN}\"",
        assignments.join(", ")
    )
}

/// How a failed statement is handled.
enum Failure {
    /// A value violated a constraint whose columns are known.
    Constraint {
        /// The constraint, as the message names it.
        constraint: String,
        /// The one column it covers, or none.
        columns: Vec<String>,
    },
    /// A `CHECK` failed: its columns come from the table's SQL.
    Check(String),
    /// A `NOT NULL` column without a default got no value.
    NotNull(String),
    /// No unique index on the lookup column (any more).
    NoArbiter(sqlx::Error),
    /// The table changed under the cached shape.
    Schema(sqlx::Error),
    /// Anything else.
    Other(sqlx::Error),
}

/// The column names of a message's `table.column, table.column` list.
fn message_columns(list: &str) -> Vec<String> {
    list.split(", ")
        .map(|qualified| qualified.rsplit_once('.').map_or(qualified, |(_, column)| column).to_owned())
        .collect()
}

fn classify(e: sqlx::Error) -> Failure {
    let sqlx::Error::Database(db) = &e else {
        return Failure::Other(e);
    };
    let message = db.message().to_owned();
    match db.kind() {
        ErrorKind::UniqueViolation => match message.strip_prefix("UNIQUE constraint failed: ") {
            // `index 'name'`: an index on an expression, which no one value
            // can be blamed for.
            Some(list) if !list.starts_with("index ") => {
                Failure::Constraint { constraint: list.to_owned(), columns: single(message_columns(list)) }
            }
            Some(list) => Failure::Constraint { constraint: list.to_owned(), columns: Vec::new() },
            None => Failure::Other(e),
        },
        ErrorKind::CheckViolation => match message.strip_prefix("CHECK constraint failed: ") {
            Some(check) => Failure::Check(check.to_owned()),
            None => Failure::Other(e),
        },
        ErrorKind::NotNullViolation => {
            match message.strip_prefix("NOT NULL constraint failed: ").map(message_columns) {
                Some(columns) if columns.len() == 1 => Failure::NotNull(columns.concat()),
                _ => Failure::Other(e),
            }
        }
        _ if message.starts_with("ON CONFLICT clause does not match") => Failure::NoArbiter(e),
        _ if message.starts_with("no such table") || message.starts_with("no such column") => Failure::Schema(e),
        _ if message.contains("has no column named") => Failure::Schema(e),
        _ => Failure::Other(e),
    }
}

#[async_trait]
impl HostTableEngine for SqliteHostTable {
    type Failure = sqlx::Error;

    async fn read_shape(&self, table: &TableName) -> Result<TableShape, HostUserError> {
        let mut conn = self.db.readers().acquire().await.map_err(unexpected)?;
        read_shape(&mut conn, table).await
    }

    async fn upsert(&self, plan: &UpsertPlan<'_>) -> Result<Result<UpsertOutcome, HostUserError>, sqlx::Error> {
        let mut tx = self.db.begin_write().await?;
        let existing: Option<i64> =
            sqlx::query_scalar_with(&existing_id_sql(plan), lookup_argument(plan)?).fetch_optional(&mut *tx).await?;
        let id: Option<i64> = sqlx::query_scalar_with(&upsert_sql(plan), arguments(plan.parameters().map(|(_, p)| p))?)
            .fetch_optional(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(match id {
            Some(id) => Ok(UpsertOutcome { id, created: existing.is_none() }),
            None => Err(plan.no_row_returned().into()),
        })
    }

    async fn update(
        &self,
        plan: &UpsertPlan<'_>,
        missing: Option<&str>,
    ) -> Result<Result<UpsertOutcome, HostUserError>, sqlx::Error> {
        let mut tx = self.db.begin_write().await?;
        let updated: Option<i64> =
            sqlx::query_scalar_with(&update_sql(plan), arguments(plan.update_parameters().map(|(_, p)| p))?)
                .fetch_optional(&mut *tx)
                .await?;
        let outcome = match updated {
            Some(id) => Ok(UpsertOutcome { id, created: false }),
            None => {
                let existing: Option<bool> = sqlx::query_scalar_with(&is_active_sql(plan), lookup_argument(plan)?)
                    .fetch_optional(&mut *tx)
                    .await?;
                Err(plan.not_updated(existing, missing).into())
            }
        };
        tx.commit().await?;
        Ok(outcome)
    }

    async fn classify(&self, plan: &UpsertPlan<'_>, failure: sqlx::Error) -> StatementFailure {
        match classify(failure) {
            Failure::Constraint { constraint, columns } => {
                StatementFailure::Refused(Refusal::Constraint { constraint, columns })
            }
            Failure::Check(check) => match self.checked_column(plan, &check).await {
                Ok(columns) => StatementFailure::Refused(Refusal::Constraint { columns, constraint: check }),
                Err(e) => StatementFailure::Storage(e.to_string()),
            },
            Failure::NotNull(column) => StatementFailure::Refused(Refusal::NotNull(column)),
            Failure::NoArbiter(e) => StatementFailure::NoArbiter(e.to_string()),
            Failure::Schema(e) => StatementFailure::TableChanged(e.to_string()),
            Failure::Other(e) => StatementFailure::Storage(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_their_columns() {
        assert_eq!(message_columns("host_users.cpf"), ["cpf"]);
        assert_eq!(message_columns("t.a, t.b"), ["a", "b"]);
        assert!(is_virtual("CREATE VIRTUAL TABLE f USING fts5(x)"));
        assert!(!is_virtual("CREATE TABLE virtual_things (id INTEGER)"));
    }
}
