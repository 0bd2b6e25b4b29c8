//! [`DataTransfer`] on PostgreSQL: each row read as one `json_build_object`
//! in the engine-neutral forms of [`credencial_ports::transfer`] and
//! streamed out as it arrives, and written back from them with one
//! `INSERT … SELECT` per row as the source yields it.

use async_trait::async_trait;
use std::collections::BTreeMap;

use credencial_ports::email_keys::{KeyedAccount, SharedAddresses};
use credencial_ports::transfer::{
    count_all_rows, key_user_row, not_empty, shared_addresses, ColumnKind, DataTransfer, ExportSink, ImportSource,
    TableSpec, TABLES,
};
use credencial_ports::RepositoryError;
use futures_util::TryStreamExt;
use sqlx::{PgConnection, PgPool};

use crate::error::to_repository_error;
use crate::user_lookups::ANOTHER_WITH_EMAIL_KEY;

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

/// Streams the rows of `table` into `sink`, each read as one JSON object.
async fn export_table(
    conn: &mut PgConnection,
    table: &TableSpec,
    sink: &mut dyn ExportSink,
) -> Result<(), RepositoryError> {
    let sql = format!(
        "SELECT jsonb_build_object({})::text FROM {} ORDER BY {}",
        table.object_arguments(read_expression),
        table.name,
        table.order_by
    );
    let mut rows = sqlx::query_scalar::<_, String>(&sql).fetch(&mut *conn);
    while let Some(row) = rows.try_next().await.map_err(to_repository_error)? {
        sink.row(serde_json::from_str(&row).map_err(decode_error)?)?;
    }
    Ok(())
}

/// The SQL of the last value `table`'s id sequence gave (NULL if none).
fn last_id(table: &str) -> String {
    format!("SELECT pg_sequence_last_value(pg_get_serial_sequence('{table}', 'id')::regclass)")
}

/// The account other than `id` that already holds the e-mail key `key`.
async fn key_holder(conn: &mut PgConnection, key: &str, id: i64) -> Result<Option<KeyedAccount>, RepositoryError> {
    let holder: Option<(i64, String, String)> =
        sqlx::query_as(&format!("SELECT id, username, email FROM users WHERE {ANOTHER_WITH_EMAIL_KEY}"))
            .bind(key)
            .bind(id)
            .fetch_optional(&mut *conn)
            .await
            .map_err(to_repository_error)?;
    Ok(holder.map(|(id, username, email)| KeyedAccount { id, username, email }))
}

#[async_trait]
impl DataTransfer for PgDataTransfer {
    async fn export_to(&self, sink: &mut dyn ExportSink) -> Result<(), RepositoryError> {
        // One snapshot of every table, whatever serving instances write meanwhile.
        let mut tx = self.pool.begin().await.map_err(to_repository_error)?;
        sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            .execute(&mut *tx)
            .await
            .map_err(to_repository_error)?;
        let mut counts = Vec::with_capacity(TABLES.len());
        let mut id_high_water = BTreeMap::new();
        for table in TABLES {
            let rows: i64 = sqlx::query_scalar(&format!("SELECT count(*) FROM {}", table.name))
                .fetch_one(&mut *tx)
                .await
                .map_err(to_repository_error)?;
            counts.push((*table, u64::try_from(rows).unwrap_or(0)));
            if table.generated_id {
                let last: Option<i64> =
                    sqlx::query_scalar(&last_id(table.name)).fetch_one(&mut *tx).await.map_err(to_repository_error)?;
                let largest: Option<i64> = sqlx::query_scalar(&format!("SELECT max(id)::bigint FROM {}", table.name))
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(to_repository_error)?;
                let high = last.into_iter().chain(largest).max().unwrap_or(0);
                id_high_water.insert(table.name.to_owned(), high);
            }
        }
        sink.begin(&counts, &id_high_water)?;
        for (table, rows) in &counts {
            sink.table(table, *rows)?;
            export_table(&mut tx, table, sink).await?;
        }
        tx.commit().await.map_err(to_repository_error)
    }

    async fn import_from(
        &self,
        source: &mut dyn ImportSource,
        id_high_water: &BTreeMap<String, i64>,
    ) -> Result<u64, RepositoryError> {
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
        // Explicit ids into identity columns need OVERRIDING SYSTEM VALUE.
        let statements: BTreeMap<&str, String> = TABLES
            .iter()
            .map(|t| (t.name, t.insert_from_json("OVERRIDING SYSTEM VALUE", "$1::jsonb", write_expression)))
            .collect();
        let mut shared = SharedAddresses::default();
        let mut written = 0;
        while let Some((table, mut row)) = source.next_row()? {
            if table.name == "users" {
                // The e-mail keys are computed here, not read; an address
                // another account has is named (all of them, at the end).
                let (key, account) = key_user_row(&mut row);
                if !key.is_empty() {
                    if let Some(holder) = key_holder(&mut tx, key.as_str(), account.id).await? {
                        shared.add(&[(key.clone(), holder), (key, account)]);
                        continue;
                    }
                }
            }
            let row = serde_json::Value::Object(row).to_string();
            sqlx::query(&statements[table.name]).bind(row).execute(&mut *tx).await.map_err(to_repository_error)?;
            written += 1;
        }
        if !shared.is_empty() {
            return Err(shared_addresses(&shared));
        }
        for table in TABLES.iter().filter(|t| t.generated_id) {
            let high = id_high_water.get(table.name).copied().unwrap_or(0);
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
        tx.commit().await.map_err(to_repository_error)?;
        Ok(written)
    }
}
