//! [`DataTransfer`] on PostgreSQL: each row read as one `json_build_object`
//! in the engine-neutral forms of [`credencial_ports::transfer`], and
//! written back from them with one `INSERT … SELECT` per row.

use async_trait::async_trait;
use credencial_ports::transfer::{count_all_rows, not_empty, ColumnKind, DataTransfer, Dump, Row, TableSpec, TABLES};
use credencial_ports::RepositoryError;
use sqlx::{PgConnection, PgPool};

use crate::error::to_repository_error;

/// Whole tables in and out of PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgDataTransfer {
    pool: PgPool,
}

impl PgDataTransfer {
    /// The transfer on `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

/// The SQL of `column`'s value in its transferred form.
fn read_expression(column: &str, kind: ColumnKind) -> String {
    match kind {
        ColumnKind::Integer => format!("{column}::bigint"),
        ColumnKind::Text => format!("{column}::text"),
        ColumnKind::Boolean => column.to_owned(),
        ColumnKind::Instant => format!("extract(epoch FROM {column})::float8"),
        ColumnKind::InstantMillis => format!("round(extract(epoch FROM {column}) * 1000)::bigint"),
        ColumnKind::Date => format!("to_char({column}, 'YYYY-MM-DD')"),
        ColumnKind::LocalDateTime => format!("to_char({column}, 'YYYY-MM-DD\"T\"HH24:MI:SS')"),
        ColumnKind::TextArray => format!("to_jsonb({column})"),
        ColumnKind::Json => format!("{column}::jsonb"),
        ColumnKind::Bytes => format!("encode({column}, 'hex')"),
    }
}

/// The SQL that turns the row `r` (jsonb) back into `column`'s type.
fn write_expression(column: &str, kind: ColumnKind) -> String {
    match kind {
        ColumnKind::Integer => format!("(r->>'{column}')::bigint"),
        ColumnKind::Text => format!("r->>'{column}'"),
        ColumnKind::Boolean => format!("(r->>'{column}')::boolean"),
        ColumnKind::Instant => format!("to_timestamp((r->>'{column}')::float8)"),
        ColumnKind::InstantMillis => format!("to_timestamp((r->>'{column}')::float8 / 1000)"),
        ColumnKind::Date => format!("(r->>'{column}')::date"),
        ColumnKind::LocalDateTime => format!("(r->>'{column}')::timestamp"),
        ColumnKind::TextArray => format!("ARRAY(SELECT jsonb_array_elements_text(r->'{column}'))"),
        ColumnKind::Json => format!("nullif(r->'{column}', 'null'::jsonb)"),
        ColumnKind::Bytes => format!("decode(r->>'{column}', 'hex')"),
    }
}

fn decode_error(e: serde_json::Error) -> RepositoryError {
    RepositoryError::Unexpected(format!("an exported row is not a JSON object: {e}"))
}

/// The rows of `table`, each as one JSON object.
async fn export_table(conn: &mut PgConnection, table: &TableSpec) -> Result<Vec<Row>, RepositoryError> {
    let sql = format!(
        "SELECT jsonb_build_object({})::text FROM {} ORDER BY {}",
        table.object_arguments(read_expression),
        table.name,
        table.order_by
    );
    let rows: Vec<String> = sqlx::query_scalar(&sql).fetch_all(&mut *conn).await.map_err(to_repository_error)?;
    rows.iter().map(|row| serde_json::from_str(row).map_err(decode_error)).collect()
}

/// The SQL of the last value `table`'s id sequence gave (NULL if none).
fn last_id(table: &str) -> String {
    format!("SELECT pg_sequence_last_value(pg_get_serial_sequence('{table}', 'id')::regclass)")
}

#[async_trait]
impl DataTransfer for PgDataTransfer {
    async fn export(&self) -> Result<Dump, RepositoryError> {
        // One snapshot of every table, whatever serving instances write meanwhile.
        let mut tx = self.pool.begin().await.map_err(to_repository_error)?;
        sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            .execute(&mut *tx)
            .await
            .map_err(to_repository_error)?;
        let mut dump = Dump::default();
        for table in TABLES {
            let rows = export_table(&mut tx, table).await?;
            if table.generated_id {
                let last: Option<i64> =
                    sqlx::query_scalar(&last_id(table.name)).fetch_one(&mut *tx).await.map_err(to_repository_error)?;
                let largest = rows.iter().filter_map(|r| r.get("id").and_then(serde_json::Value::as_i64)).max();
                let high = last.into_iter().chain(largest).max().unwrap_or(0);
                dump.id_high_water.insert(table.name.to_owned(), high);
            }
            dump.tables.push((*table, rows));
        }
        tx.commit().await.map_err(to_repository_error)?;
        Ok(dump)
    }

    async fn import(&self, dump: &Dump) -> Result<(), RepositoryError> {
        // The e-mail keys are computed here, not read (a shared one is named).
        let dump = &dump.with_email_keys()?;
        let mut tx = self.pool.begin().await.map_err(to_repository_error)?;
        // No other writer may add rows between the check and the import.
        let names: Vec<&str> = TABLES.iter().map(|t| t.name).collect();
        sqlx::query(&format!("LOCK TABLE {} IN SHARE ROW EXCLUSIVE MODE", names.join(", ")))
            .execute(&mut *tx)
            .await
            .map_err(to_repository_error)?;
        let present: i64 =
            sqlx::query_scalar(&count_all_rows()).fetch_one(&mut *tx).await.map_err(to_repository_error)?;
        if present > 0 {
            return Err(not_empty(present));
        }
        for (table, rows) in &dump.tables {
            // Explicit ids into identity columns need OVERRIDING SYSTEM VALUE.
            let sql = table.insert_from_json("OVERRIDING SYSTEM VALUE", "$1::jsonb", write_expression);
            for row in rows {
                let row = serde_json::Value::Object(row.clone()).to_string();
                sqlx::query(&sql).bind(row).execute(&mut *tx).await.map_err(to_repository_error)?;
            }
            if table.generated_id {
                let high = dump.id_high_water.get(table.name).copied().unwrap_or(0);
                sqlx::query(&format!(
                    "SELECT setval(pg_get_serial_sequence('{0}', 'id'), greatest($1, coalesce(max(id), 0), 1), \
                     greatest($1, coalesce(max(id), 0)) > 0) FROM {0}",
                    table.name
                ))
                .bind(high)
                .execute(&mut *tx)
                .await
                .map_err(to_repository_error)?;
            }
        }
        tx.commit().await.map_err(to_repository_error)
    }
}
