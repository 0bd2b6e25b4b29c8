//! [`HostUserStore`](credencial_ports::HostUserStore) on a configurable
//! host user table (default `host_users`): PostgreSQL's catalogue and
//! statements ([`PgHostTable`]) under the port's shared implementation
//! ([`HostTableStore`]: shape cache, plan, retries, log lines).
//!
//! Table and column names come from configuration, so they cannot be bound
//! as parameters: they arrive checked
//! ([`TableName`], [`ColumnName`](credencial_domain::host_table::ColumnName):
//! `[a-z_][a-z0-9_]*`, at most 63 bytes) *and* are double-quoted in the
//! statement. Values are always bound parameters, never part of the SQL
//! text.
//!
//! **Conversion.** The table's shape is read from the catalogue once per
//! table and kept. The domain's [`UpsertPlan`] checks each value against
//! its column *before* the statement (kind, `YYYY-MM-DD` calendar date,
//! declared length, NUL characters, timestamp range) and orders the
//! columns; a value that does not fit is skipped with a `warn` naming the
//! table, the column and the reason — never the value — and the rest is
//! written. The statement then casts each parameter to the column's type
//! (`CAST($n AS date)`, `to_timestamp($n)`, `CAST($n AS jsonb)`), which
//! cannot fail for a checked value.
//!
//! What only the database can judge — a single-column `CHECK` constraint, a
//! domain's `CHECK`, or a unique constraint on another column whose value
//! another row already holds — fails the statement as a whole; the adapter
//! then finds the column(s) the constraint covers (from the constraint name
//! and the error's data type) and hands them to the plan
//! ([`UpsertPlan::next_attempt`]), which skips those values; the statement
//! runs again (each retry drops at least one value, so this ends).
//! Nothing is written by a failed statement, so the retry is safe. A
//! constraint that covers several columns cannot be pinned on one value and
//! fails the login (`Unexpected`). Error texts of data exceptions (SQLSTATE
//! class 22) are withheld: they quote the value.
//!
//! **Get-or-create** is one statement:
//!
//! ```sql
//! INSERT INTO "t" ("lookup", "a", "b") VALUES ($1, $2, $3)
//! ON CONFLICT ("lookup") DO UPDATE SET "a" = EXCLUDED."a", "b" = EXCLUDED."b"
//! WHERE "t"."is_active" IS NOT FALSE          -- only when the table has it
//! RETURNING "t"."id"::bigint, ("t".xmax = 0)  -- created?
//! ```
//!
//! Concurrent first logins of one person all land on one row (the unique
//! lookup column arbitrates), and only the inserting call sees `xmax = 0`
//! (a row updated by `ON CONFLICT` carries the updater's transaction id as
//! its lock). No row back means the existing row is inactive: it was locked,
//! not changed, and the login is refused.
//!
//! PostgreSQL checks `NOT NULL` on the proposed row before it looks for a
//! conflict, so when a required column's value was skipped the insert fails
//! even for an existing user; the adapter then falls back to one `UPDATE …
//! WHERE "lookup" = $1 AND "is_active" IS NOT FALSE`, so an existing user
//! still logs in, and only a new one is refused (`MissingRequired`).

use async_trait::async_trait;
use credencial_domain::host_table::{
    ColumnType, HostColumn, HostParam, PlannedValue, Refusal, TableName, TableShape, UpsertPlan, ID_COLUMN,
    IS_ACTIVE_COLUMN, LOOKUP_PARAMETER,
};
use credencial_ports::{HostTableEngine, HostTableStore, HostUserError, StatementFailure, UpsertOutcome};
use sqlx::postgres::{PgArguments, PgDatabaseError};
use sqlx::{Arguments, PgPool};

/// Host user tables in PostgreSQL: the port over [`PgHostTable`].
pub type PgHostUserStore = HostTableStore<PgHostTable>;

/// PostgreSQL's catalogue and statements for a host table (see the module
/// documentation); [`PgHostUserStore::new`] takes the pool itself.
#[derive(Debug, Clone)]
pub struct PgHostTable {
    pool: PgPool,
}

impl From<PgPool> for PgHostTable {
    fn from(pool: PgPool) -> Self {
        Self { pool }
    }
}

impl PgHostTable {
    /// The columns a failed constraint may stand for: the single column a
    /// table constraint or unique index covers, or every column of a
    /// domain type whose own constraint failed.
    async fn constrained_columns(&self, table: &TableName, failed: &Violation) -> Result<Vec<String>, sqlx::Error> {
        let (sql, name) = match &failed.domain {
            Some(domain) => (DOMAIN_COLUMNS, domain),
            None => (CONSTRAINED_COLUMN, &failed.constraint),
        };
        sqlx::query_scalar(sql).bind(table.as_str()).bind(name).fetch_all(&self.pool).await
    }
}

/// Columns of the table the session's search path resolves `$1` to: the
/// class of the (base) type, the declared length of `varchar(n)`/`char(n)`,
/// and whether a unique index usable by `ON CONFLICT` covers exactly it.
const DESCRIBE_COLUMNS: &str = "\
SELECT a.attname::text AS name,
       bt.typname::text AS type_name,
       CASE WHEN bt.typname IN ('varchar', 'bpchar') AND tm.typmod > 4 THEN tm.typmod - 4 END AS max_length,
       (a.attnotnull AND NOT a.atthasdef AND a.attidentity = '' AND a.attgenerated = '') AS required,
       (a.attgenerated <> '' OR a.attidentity = 'a') AS generated,
       EXISTS (SELECT 1 FROM pg_index i
               WHERE i.indrelid = a.attrelid AND i.indisunique AND i.indisvalid AND i.indimmediate
                 AND i.indnkeyatts = 1 AND i.indkey[0] = a.attnum
                 AND i.indpred IS NULL AND i.indexprs IS NULL) AS is_unique
FROM pg_attribute a
JOIN pg_type t ON t.oid = a.atttypid
JOIN pg_type bt ON bt.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
CROSS JOIN LATERAL (SELECT CASE WHEN t.typtype = 'd' THEN t.typtypmod ELSE a.atttypmod END AS typmod) tm
WHERE a.attrelid = to_regclass(quote_ident($1)) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum";

/// The column of table `$1` that the single-column constraint or unique
/// index named `$2` covers.
const CONSTRAINED_COLUMN: &str = "\
SELECT a.attname::text FROM pg_constraint c
JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
WHERE c.conrelid = to_regclass(quote_ident($1)) AND c.conname = $2 AND cardinality(c.conkey) = 1
UNION ALL
SELECT a.attname::text FROM pg_index i
JOIN pg_class ic ON ic.oid = i.indexrelid
JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
WHERE i.indrelid = to_regclass(quote_ident($1)) AND ic.relname = $2 AND i.indnkeyatts = 1 AND i.indexprs IS NULL
LIMIT 1";

/// The columns of table `$1` whose type is the domain `$2`.
const DOMAIN_COLUMNS: &str = "\
SELECT a.attname::text FROM pg_attribute a
JOIN pg_type t ON t.oid = a.atttypid
WHERE a.attrelid = to_regclass(quote_ident($1)) AND a.attnum > 0 AND NOT a.attisdropped
  AND t.typtype = 'd' AND t.typname = $2";

#[derive(sqlx::FromRow)]
struct ColumnRow {
    name: String,
    type_name: String,
    max_length: Option<i32>,
    required: bool,
    generated: bool,
    is_unique: bool,
}

#[derive(sqlx::FromRow)]
struct UpsertRow {
    id: i64,
    created: bool,
}

/// Parameter `$n` cast to `column`'s type. Only fixed type names are
/// written into the SQL, never anything from the value.
fn expression(column: &HostColumn, n: usize) -> String {
    match &column.column_type {
        ColumnType::Date => format!("CAST(${n} AS date)"),
        ColumnType::Json if column.type_name == "json" => format!("CAST(${n} AS json)"),
        ColumnType::Json => format!("CAST(${n} AS jsonb)"),
        ColumnType::Timestamp if column.type_name == "timestamp" => {
            format!("(to_timestamp(${n}) AT TIME ZONE 'UTC')")
        }
        ColumnType::Timestamp => format!("to_timestamp(${n})"),
        _ => format!("${n}"),
    }
}

/// `params` bound in order (`$1`, `$2`, …).
fn arguments<'a>(params: impl Iterator<Item = &'a PlannedValue<'a>>) -> Result<PgArguments, HostUserError> {
    let mut args = PgArguments::default();
    for planned in params {
        match &planned.param {
            HostParam::Text(s) => args.add(s.clone()),
            HostParam::Integer(i) => args.add(*i),
            HostParam::Bool(b) => args.add(*b),
        }
        .map_err(|e| HostUserError::Unexpected(format!("binding a host user value: {e}")))?;
    }
    Ok(args)
}

fn quoted(name: &str) -> String {
    format!("\"{name}\"")
}

/// `Unexpected`, with PostgreSQL's message, except for data exceptions
/// (SQLSTATE class 22), whose messages quote the offending value.
fn unexpected(e: sqlx::Error) -> HostUserError {
    HostUserError::Unexpected(message(&e))
}

/// PostgreSQL's message, except for data exceptions (SQLSTATE class 22),
/// whose messages quote the offending value.
fn message(e: &sqlx::Error) -> String {
    if let sqlx::Error::Database(db) = e {
        if let Some(code) = db.code().filter(|c| c.starts_with("22")) {
            return format!("data exception {code} (message withheld: it may quote a value)");
        }
    }
    e.to_string()
}

/// The one-statement get-or-create (see the module documentation).
fn upsert_sql(plan: &UpsertPlan<'_>) -> String {
    let table = quoted(plan.table().as_str());
    let lookup = plan.lookup().column;
    let mut columns = vec![quoted(&lookup.name)];
    let mut expressions = vec![expression(lookup, LOOKUP_PARAMETER)];
    for (n, v) in plan.numbered_values() {
        columns.push(quoted(&v.column.name));
        expressions.push(expression(v.column, n));
    }
    let assignments: Vec<String> =
        plan.updated_columns().into_iter().map(|c| format!("{0} = EXCLUDED.{0}", quoted(c))).collect();
    let active = if plan.guards_is_active() {
        format!(" WHERE {table}.\"{IS_ACTIVE_COLUMN}\" IS NOT FALSE")
    } else {
        String::new()
    };
    format!(
        "INSERT INTO {table} ({}) VALUES ({}) ON CONFLICT ({}) DO UPDATE SET {}{active} \
         RETURNING {table}.\"{ID_COLUMN}\"::bigint AS id, ({table}.xmax = 0) AS created",
        columns.join(", "),
        expressions.join(", "),
        quoted(&lookup.name),
        assignments.join(", "),
    )
}

/// The update of an existing, active row (the fallback of the upsert).
fn update_sql(plan: &UpsertPlan<'_>) -> String {
    let table = quoted(plan.table().as_str());
    let lookup = plan.lookup().column;
    let lookup_column = quoted(&lookup.name);
    let mut assignments: Vec<String> = plan
        .update_parameters()
        .skip(1)
        .map(|(n, v)| format!("{} = {}", quoted(&v.column.name), expression(v.column, n)))
        .collect();
    if assignments.is_empty() {
        assignments.push(format!("{lookup_column} = {lookup_column}"));
    }
    let active = if plan.guards_is_active() {
        format!(" AND {table}.\"{IS_ACTIVE_COLUMN}\" IS NOT FALSE")
    } else {
        String::new()
    };
    format!(
        "UPDATE {table} SET {} WHERE {lookup_column} = {}{active} RETURNING {table}.\"{ID_COLUMN}\"::bigint",
        assignments.join(", "),
        expression(lookup, LOOKUP_PARAMETER)
    )
}

/// Whether the row of the lookup value is active (no row: none).
fn existing_sql(plan: &UpsertPlan<'_>) -> String {
    let table = quoted(plan.table().as_str());
    let lookup = plan.lookup().column;
    let active = if plan.guards_is_active() {
        format!("{table}.\"{IS_ACTIVE_COLUMN}\" IS NOT FALSE")
    } else {
        "true".to_owned()
    };
    format!("SELECT {active} FROM {table} WHERE {} = {}", quoted(&lookup.name), expression(lookup, LOOKUP_PARAMETER))
}

/// A failed `CHECK` or unique constraint.
struct Violation {
    /// The constraint's (or unique index's) name.
    constraint: String,
    /// The domain whose constraint it is, if it is a domain's.
    domain: Option<String>,
}

/// How a failed statement is handled.
enum Failure {
    /// A value violated a constraint: skip the value(s) it may stand for.
    Constraint(Violation),
    /// A `NOT NULL` column without a default got no value.
    NotNull(String),
    /// No unique index on the lookup column.
    NoArbiter(sqlx::Error),
    /// The table changed under the cached shape.
    Schema(sqlx::Error),
    /// Anything else.
    Other(sqlx::Error),
}

fn classify(e: sqlx::Error) -> Failure {
    let sqlx::Error::Database(db) = &e else {
        return Failure::Other(e);
    };
    let code = db.code().map(|c| c.into_owned()).unwrap_or_default();
    match code.as_str() {
        // check_violation, unique_violation
        "23514" | "23505" => match db.constraint() {
            Some(name) => Failure::Constraint(Violation {
                constraint: name.to_owned(),
                domain: db
                    .try_downcast_ref::<PgDatabaseError>()
                    .and_then(PgDatabaseError::data_type)
                    .map(str::to_owned),
            }),
            None => Failure::Other(e),
        },
        // not_null_violation
        "23502" => {
            match db.try_downcast_ref::<PgDatabaseError>().and_then(PgDatabaseError::column).map(str::to_owned) {
                Some(column) => Failure::NotNull(column),
                None => Failure::Other(e),
            }
        }
        // invalid_column_reference: no unique index for ON CONFLICT (any more)
        "42P10" => Failure::NoArbiter(e),
        // undefined_table, undefined_column: the table changed since it was described
        "42P01" | "42703" => Failure::Schema(e),
        _ => Failure::Other(e),
    }
}

#[async_trait]
impl HostTableEngine for PgHostTable {
    type Failure = sqlx::Error;

    async fn read_shape(&self, table: &TableName) -> Result<TableShape, HostUserError> {
        let kind: Option<String> =
            sqlx::query_scalar("SELECT c.relkind::text FROM pg_class c WHERE c.oid = to_regclass(quote_ident($1))")
                .bind(table.as_str())
                .fetch_optional(&self.pool)
                .await
                .map_err(unexpected)?;
        match kind.as_deref() {
            None => return Err(HostUserError::InvalidTable(format!("table \"{table}\" does not exist"))),
            Some("r" | "p") => {}
            Some(_) => return Err(HostUserError::InvalidTable(format!("\"{table}\" is not a table"))),
        }
        let rows = sqlx::query_as::<_, ColumnRow>(DESCRIBE_COLUMNS)
            .bind(table.as_str())
            .fetch_all(&self.pool)
            .await
            .map_err(unexpected)?;
        let columns = rows
            .into_iter()
            .map(|r| HostColumn {
                column_type: ColumnType::from_pg_type_name(&r.type_name),
                max_length: r.max_length.and_then(|n| usize::try_from(n).ok()),
                name: r.name,
                type_name: r.type_name,
                required: r.required,
                generated: r.generated,
                unique: r.is_unique,
            })
            .collect();
        Ok(TableShape { table: table.clone(), columns })
    }

    async fn upsert(&self, plan: &UpsertPlan<'_>) -> Result<Result<UpsertOutcome, HostUserError>, sqlx::Error> {
        let args = match arguments(plan.parameters().map(|(_, p)| p)) {
            Ok(args) => args,
            Err(e) => return Ok(Err(e)),
        };
        let row = sqlx::query_as_with::<_, UpsertRow, _>(&upsert_sql(plan), args).fetch_optional(&self.pool).await?;
        Ok(match row {
            Some(row) => Ok(UpsertOutcome { id: row.id, created: row.created }),
            None => Err(plan.no_row_returned().into()),
        })
    }

    async fn update(
        &self,
        plan: &UpsertPlan<'_>,
        missing: Option<&str>,
    ) -> Result<Result<UpsertOutcome, HostUserError>, sqlx::Error> {
        let args = match arguments(plan.update_parameters().map(|(_, p)| p)) {
            Ok(args) => args,
            Err(e) => return Ok(Err(e)),
        };
        let updated: Option<i64> = sqlx::query_scalar_with(&update_sql(plan), args).fetch_optional(&self.pool).await?;
        if let Some(id) = updated {
            return Ok(Ok(UpsertOutcome { id, created: false }));
        }
        let args = match arguments(std::iter::once(plan.lookup())) {
            Ok(args) => args,
            Err(e) => return Ok(Err(e)),
        };
        let existing: Option<bool> =
            sqlx::query_scalar_with(&existing_sql(plan), args).fetch_optional(&self.pool).await?;
        Ok(Err(plan.not_updated(existing, missing).into()))
    }

    async fn classify(&self, plan: &UpsertPlan<'_>, failure: sqlx::Error) -> StatementFailure {
        match classify(failure) {
            Failure::Constraint(failed) => match self.constrained_columns(plan.table(), &failed).await {
                Ok(columns) => {
                    StatementFailure::Refused(Refusal::Constraint { columns, constraint: failed.constraint })
                }
                Err(e) => StatementFailure::Storage(message(&e)),
            },
            Failure::NotNull(column) => StatementFailure::Refused(Refusal::NotNull(column)),
            Failure::NoArbiter(e) => StatementFailure::NoArbiter(e.to_string()),
            Failure::Schema(e) => StatementFailure::TableChanged(message(&e)),
            Failure::Other(e) => StatementFailure::Storage(message(&e)),
        }
    }
}
