//! [`HostUserStore`] on a configurable host user table (default
//! `host_users`).
//!
//! Table and column names come from configuration, so they cannot be bound
//! as parameters: every name is checked against `[a-z_][a-z0-9_]*` (at most
//! 63 bytes) before any SQL runs, *and* double-quoted in the statement.
//! Values are always bound parameters, never part of the SQL text.
//!
//! **Conversion.** The table's shape is read from the catalogue once per
//! table and kept (a later [`HostUserStore::describe`] refreshes it). Each
//! value is checked in Rust against its column with
//! [`check_value`](credencial_domain::host_table::check_value) *before* the
//! statement (kind, `YYYY-MM-DD` calendar date, declared length, NUL
//! characters, timestamp range); a value that does not fit is skipped with a
//! `warn` naming the table, the column and the reason — never the value —
//! and the rest is written. The statement then casts each parameter to the
//! column's type (`CAST($n AS date)`, `to_timestamp($n)`,
//! `CAST($n AS jsonb)`), which cannot fail for a checked value.
//!
//! What only the database can judge — a single-column `CHECK` constraint, a
//! domain's `CHECK`, or a unique constraint on another column whose value
//! another row already holds — fails the statement as a whole; the adapter
//! then finds the column(s) the constraint covers (from the constraint name
//! and the error's data type), skips those values with a warning and runs
//! the statement again (each retry drops at least one value, so this ends).
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

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use credencial_domain::host_table::{
    check_value, is_sql_identifier, ColumnType, HostColumn, HostValue, TableShape, ValueProblem, ID_COLUMN,
    IS_ACTIVE_COLUMN,
};
use credencial_ports::{HostUserError, HostUserStore, UpsertOutcome};
use sqlx::postgres::{PgArguments, PgDatabaseError};
use sqlx::{Arguments, PgPool};

/// Host user tables in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgHostUserStore {
    pool: PgPool,
    /// Shapes read so far, by table name.
    shapes: Arc<Mutex<HashMap<String, Arc<TableShape>>>>,
}

impl PgHostUserStore {
    /// A store on `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { pool, shapes: Arc::default() }
    }

    fn cached(&self, table: &str) -> Option<Arc<TableShape>> {
        self.shapes.lock().unwrap_or_else(PoisonError::into_inner).get(table).cloned()
    }

    fn remember(&self, shape: TableShape) -> Arc<TableShape> {
        let shape = Arc::new(shape);
        self.shapes.lock().unwrap_or_else(PoisonError::into_inner).insert(shape.table.clone(), Arc::clone(&shape));
        shape
    }

    fn forget(&self, table: &str) {
        self.shapes.lock().unwrap_or_else(PoisonError::into_inner).remove(table);
    }

    async fn shape(&self, table: &str) -> Result<Arc<TableShape>, HostUserError> {
        match self.cached(table) {
            Some(shape) => Ok(shape),
            None => Ok(self.remember(self.read_shape(table).await?)),
        }
    }

    /// Reads the shape of `table` (a validated name) from the catalogue.
    async fn read_shape(&self, table: &str) -> Result<TableShape, HostUserError> {
        let kind: Option<String> =
            sqlx::query_scalar("SELECT c.relkind::text FROM pg_class c WHERE c.oid = to_regclass(quote_ident($1))")
                .bind(table)
                .fetch_optional(&self.pool)
                .await
                .map_err(unexpected)?;
        match kind.as_deref() {
            None => return Err(HostUserError::InvalidTable(format!("table \"{table}\" does not exist"))),
            Some("r" | "p") => {}
            Some(_) => return Err(HostUserError::InvalidTable(format!("\"{table}\" is not a table"))),
        }
        let rows = sqlx::query_as::<_, ColumnRow>(DESCRIBE_COLUMNS)
            .bind(table)
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
        Ok(TableShape { table: table.to_owned(), columns })
    }

    /// The one-statement get-or-create. `Ok(Err(_))` is a refusal, `Err` a
    /// failed statement (nothing written).
    async fn try_upsert(
        &self,
        shape: &TableShape,
        lookup: &Prepared<'_>,
        values: &[Prepared<'_>],
    ) -> Result<Result<UpsertOutcome, HostUserError>, sqlx::Error> {
        let args = match arguments(lookup, values) {
            Ok(args) => args,
            Err(e) => return Ok(Err(e)),
        };
        let sql = upsert_sql(shape, lookup, values);
        let row = sqlx::query_as_with::<_, UpsertRow, _>(&sql, args).fetch_optional(&self.pool).await?;
        Ok(match row {
            Some(row) => Ok(UpsertOutcome { id: row.id, created: row.created }),
            None if shape.has_is_active() => Err(HostUserError::Inactive),
            None => Err(HostUserError::Unexpected("the upsert returned no row".to_owned())),
        })
    }

    /// The fallback when a new row cannot be built (`missing` got no
    /// value): update the existing active row, or tell why there is none.
    async fn try_update(
        &self,
        shape: &TableShape,
        lookup: &Prepared<'_>,
        values: &[Prepared<'_>],
        missing: &str,
    ) -> Result<Result<UpsertOutcome, HostUserError>, sqlx::Error> {
        let args = match arguments(lookup, values) {
            Ok(args) => args,
            Err(e) => return Ok(Err(e)),
        };
        let updated: Option<i64> =
            sqlx::query_scalar_with(&update_sql(shape, lookup, values), args).fetch_optional(&self.pool).await?;
        if let Some(id) = updated {
            return Ok(Ok(UpsertOutcome { id, created: false }));
        }
        let args = match arguments(lookup, &[]) {
            Ok(args) => args,
            Err(e) => return Ok(Err(e)),
        };
        let existing: Option<bool> =
            sqlx::query_scalar_with(&existing_sql(shape, lookup), args).fetch_optional(&self.pool).await?;
        Ok(match existing {
            None => Err(HostUserError::MissingRequired(missing.to_owned())),
            Some(false) => Err(HostUserError::Inactive),
            Some(true) => Err(HostUserError::Unexpected("the host user row changed during the login".to_owned())),
        })
    }

    /// The columns a failed constraint may stand for: the single column a
    /// table constraint or unique index covers, or every column of a
    /// domain type whose own constraint failed.
    async fn constrained_columns(&self, table: &str, failed: &Violation) -> Result<Vec<String>, HostUserError> {
        let (sql, name) = match &failed.domain {
            Some(domain) => (DOMAIN_COLUMNS, domain),
            None => (CONSTRAINED_COLUMN, &failed.constraint),
        };
        sqlx::query_scalar(sql).bind(table).bind(name).fetch_all(&self.pool).await.map_err(unexpected)
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

/// A parameter as it is bound.
#[derive(Clone)]
enum Bound {
    Text(String),
    Int(i64),
    Bool(bool),
}

/// A checked value with its column, ready to bind.
struct Prepared<'a> {
    column: &'a HostColumn,
    bound: Bound,
}

impl<'a> Prepared<'a> {
    /// `value` for `column` once [`check_value`] accepted it.
    fn new(column: &'a HostColumn, value: HostValue) -> Self {
        let bound = match value {
            HostValue::Text(s) | HostValue::Date(s) => Bound::Text(s),
            HostValue::Timestamp(t) => Bound::Int(t),
            HostValue::Bool(b) => Bound::Bool(b),
            HostValue::Json(v) => Bound::Text(v.to_string()),
        };
        Self { column, bound }
    }

    /// Parameter `$n` cast to the column's type. Only fixed type names are
    /// written into the SQL, never anything from the value.
    fn expression(&self, n: usize) -> String {
        match (&self.column.column_type, &self.bound) {
            (ColumnType::Date, _) => format!("CAST(${n} AS date)"),
            (ColumnType::Json, _) if self.column.type_name == "json" => format!("CAST(${n} AS json)"),
            (ColumnType::Json, _) => format!("CAST(${n} AS jsonb)"),
            (ColumnType::Timestamp, _) if self.column.type_name == "timestamp" => {
                format!("(to_timestamp(${n}) AT TIME ZONE 'UTC')")
            }
            (ColumnType::Timestamp, _) => format!("to_timestamp(${n})"),
            _ => format!("${n}"),
        }
    }
}

/// The lookup value as `$1` and `values` as `$2…`.
fn arguments(lookup: &Prepared<'_>, values: &[Prepared<'_>]) -> Result<PgArguments, HostUserError> {
    let mut args = PgArguments::default();
    for bound in std::iter::once(&lookup.bound).chain(values.iter().map(|v| &v.bound)) {
        match bound {
            Bound::Text(s) => args.add(s.clone()),
            Bound::Int(i) => args.add(*i),
            Bound::Bool(b) => args.add(*b),
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
    if let sqlx::Error::Database(db) = &e {
        if let Some(code) = db.code().filter(|c| c.starts_with("22")) {
            return HostUserError::Unexpected(format!(
                "data exception {code} (message withheld: it may quote a value)"
            ));
        }
    }
    HostUserError::Unexpected(e.to_string())
}

fn check_table_name(table: &str) -> Result<(), HostUserError> {
    if is_sql_identifier(table) {
        Ok(())
    } else {
        Err(HostUserError::InvalidTable(format!(
            "\"{table}\" is not a valid table name ([a-z_][a-z0-9_]*, at most 63 characters)"
        )))
    }
}

/// The one-statement get-or-create (see the module documentation).
fn upsert_sql(shape: &TableShape, lookup: &Prepared<'_>, values: &[Prepared<'_>]) -> String {
    let table = quoted(&shape.table);
    let lookup_column = quoted(&lookup.column.name);
    let mut columns = vec![lookup_column.clone()];
    let mut expressions = vec![lookup.expression(1)];
    let mut assignments = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        let column = quoted(&v.column.name);
        expressions.push(v.expression(i + 2));
        assignments.push(format!("{column} = EXCLUDED.{column}"));
        columns.push(column);
    }
    if assignments.is_empty() {
        // Nothing to change, but the row must still be returned (and locked).
        assignments.push(format!("{lookup_column} = EXCLUDED.{lookup_column}"));
    }
    let active = if shape.has_is_active() {
        format!(" WHERE {table}.\"{IS_ACTIVE_COLUMN}\" IS NOT FALSE")
    } else {
        String::new()
    };
    format!(
        "INSERT INTO {table} ({}) VALUES ({}) ON CONFLICT ({lookup_column}) DO UPDATE SET {}{active} \
         RETURNING {table}.\"{ID_COLUMN}\"::bigint AS id, ({table}.xmax = 0) AS created",
        columns.join(", "),
        expressions.join(", "),
        assignments.join(", "),
    )
}

/// The update of an existing, active row (the fallback of the upsert).
fn update_sql(shape: &TableShape, lookup: &Prepared<'_>, values: &[Prepared<'_>]) -> String {
    let table = quoted(&shape.table);
    let lookup_column = quoted(&lookup.column.name);
    let mut assignments: Vec<String> = values
        .iter()
        .enumerate()
        .map(|(i, v)| format!("{} = {}", quoted(&v.column.name), v.expression(i + 2)))
        .collect();
    if assignments.is_empty() {
        assignments.push(format!("{lookup_column} = {lookup_column}"));
    }
    let active =
        if shape.has_is_active() { format!(" AND {table}.\"{IS_ACTIVE_COLUMN}\" IS NOT FALSE") } else { String::new() };
    format!(
        "UPDATE {table} SET {} WHERE {lookup_column} = {}{active} RETURNING {table}.\"{ID_COLUMN}\"::bigint",
        assignments.join(", "),
        lookup.expression(1)
    )
}

/// Whether the row of the lookup value is active (no row: none).
fn existing_sql(shape: &TableShape, lookup: &Prepared<'_>) -> String {
    let table = quoted(&shape.table);
    let active =
        if shape.has_is_active() { format!("{table}.\"{IS_ACTIVE_COLUMN}\" IS NOT FALSE") } else { "true".to_owned() };
    format!("SELECT {active} FROM {table} WHERE {} = {}", quoted(&lookup.column.name), lookup.expression(1))
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

fn skip(table: &str, column: &str, reason: &dyn std::fmt::Display) {
    tracing::warn!(table, column, reason = %reason, "host user value skipped: it does not fit its column");
}

#[async_trait]
impl HostUserStore for PgHostUserStore {
    async fn describe(&self, table: &str) -> Result<TableShape, HostUserError> {
        check_table_name(table)?;
        let shape = self.read_shape(table).await?;
        self.remember(shape.clone());
        Ok(shape)
    }

    async fn upsert(
        &self,
        table: &str,
        lookup_column: &str,
        lookup_value: HostValue,
        values: Vec<(String, HostValue)>,
    ) -> Result<UpsertOutcome, HostUserError> {
        check_table_name(table)?;
        if let Some(bad) =
            std::iter::once(lookup_column).chain(values.iter().map(|(c, _)| c.as_str())).find(|c| !is_sql_identifier(c))
        {
            return Err(HostUserError::UnknownColumn(bad.to_owned()));
        }
        let shape = self.shape(table).await?;

        let lookup_col =
            shape.column(lookup_column).ok_or_else(|| HostUserError::UnknownColumn(lookup_column.to_owned()))?;
        if lookup_col.generated || lookup_column == ID_COLUMN || lookup_column == IS_ACTIVE_COLUMN {
            return Err(HostUserError::UnknownColumn(lookup_column.to_owned()));
        }
        if !lookup_col.unique {
            return Err(HostUserError::InvalidTable(format!(
                "lookup column \"{lookup_column}\" of table \"{table}\" has no unique constraint of its own"
            )));
        }
        if !shape.column(ID_COLUMN).is_some_and(|c| c.column_type == ColumnType::Integer) {
            return Err(HostUserError::InvalidTable(format!("table \"{table}\" has no integer \"id\" column")));
        }
        let blank = matches!(&lookup_value, HostValue::Text(s) | HostValue::Date(s) if s.trim().is_empty());
        if blank || check_value(lookup_col, &lookup_value).is_err() {
            return Err(HostUserError::UnusableLookup(lookup_column.to_owned()));
        }
        let lookup = Prepared::new(lookup_col, lookup_value);

        // One entry per column (the later wins), the lookup column left out.
        let mut latest: Vec<(String, HostValue)> = Vec::with_capacity(values.len());
        for (column, value) in values {
            if column == lookup_column {
                continue;
            }
            match latest.iter_mut().find(|(c, _)| *c == column) {
                Some(entry) => entry.1 = value,
                None => latest.push((column, value)),
            }
        }
        let mut prepared = Vec::with_capacity(latest.len());
        for (name, value) in latest {
            let column = shape.column(&name).ok_or_else(|| HostUserError::UnknownColumn(name.clone()))?;
            if column.generated || name == ID_COLUMN || name == IS_ACTIVE_COLUMN {
                return Err(HostUserError::UnknownColumn(name));
            }
            match check_value(column, &value) {
                Ok(()) => prepared.push(Prepared::new(column, value)),
                Err(ValueProblem::Nothing) => {
                    tracing::debug!(table, column = name.as_str(), "host user value null: column left as it is");
                }
                Err(problem) => skip(table, &name, &problem),
            }
        }

        // The upsert; or, once a new row turned out impossible, the update of
        // the existing one. Each retry drops one value, so this ends.
        let mut missing: Option<String> = None;
        loop {
            let attempt = match &missing {
                None => self.try_upsert(&shape, &lookup, &prepared).await,
                Some(column) => self.try_update(&shape, &lookup, &prepared, column).await,
            };
            let error = match attempt {
                Ok(outcome) => return outcome,
                Err(e) => e,
            };
            match classify(error) {
                Failure::Constraint(failed) => {
                    let columns = self.constrained_columns(table, &failed).await?;
                    let before = prepared.len();
                    prepared.retain(|p| {
                        let refused = columns.contains(&p.column.name);
                        if refused {
                            skip(table, &p.column.name, &"a constraint on the column refuses it");
                        }
                        !refused
                    });
                    if prepared.len() == before {
                        if columns.iter().any(|c| c == lookup_column) {
                            return Err(HostUserError::UnusableLookup(lookup_column.to_owned()));
                        }
                        return Err(HostUserError::Unexpected(format!(
                            "constraint \"{}\" of table \"{table}\" failed, and it does not cover one column written",
                            failed.constraint
                        )));
                    }
                }
                Failure::NotNull(column) if missing.is_none() => missing = Some(column),
                Failure::NotNull(column) => {
                    return Err(HostUserError::Unexpected(format!(
                        "column \"{column}\" of table \"{table}\" refused a value on update"
                    )))
                }
                Failure::NoArbiter(e) => {
                    self.forget(table);
                    return Err(HostUserError::InvalidTable(format!(
                        "lookup column \"{lookup_column}\" of table \"{table}\" has no unique constraint of its own ({e})"
                    )));
                }
                Failure::Schema(e) => {
                    self.forget(table);
                    return Err(unexpected(e));
                }
                Failure::Other(e) => return Err(unexpected(e)),
            }
        }
    }
}
