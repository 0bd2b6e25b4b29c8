//! [`DataTransfer`] on SQLite: each row read as one `json_object` in the
//! engine-neutral forms of [`credencial_ports::transfer`] and streamed out
//! as it is read, and written back from them with one `INSERT … SELECT`
//! per row as the source yields it.

use std::collections::BTreeMap;

use async_trait::async_trait;
use credencial_ports::email_keys::{KeyedAccount, SharedAddresses};
use credencial_ports::transfer::{
    count_all_rows, key_user_row, not_empty, shared_addresses, ColumnKind, DataTransfer, ExportSink, ImportSource,
    TableSpec, TABLES,
};
use credencial_ports::RepositoryError;
use futures_util::TryStreamExt;
use sqlx::SqliteConnection;

use crate::database::{raise_sequence, schema_of, ACCESS_LOG_SCHEMA};
use crate::error::to_repository_error;
use crate::user_lookups::ANOTHER_WITH_EMAIL_KEY;
use crate::SqliteDb;

/// Whole tables in and out of the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteDataTransfer {
    db: SqliteDb,
}

impl SqliteDataTransfer {
    /// The transfer on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}

/// The SQL of `column`'s value in its transferred form (the schema keeps
/// instants, dates and texts in that form already).
fn read_expression(column: &str, kind: ColumnKind) -> String {
    match kind {
        ColumnKind::Integer
        | ColumnKind::Text
        | ColumnKind::Instant
        | ColumnKind::InstantMillis
        | ColumnKind::Date
        | ColumnKind::LocalDateTime => column.to_owned(),
        ColumnKind::Boolean => {
            format!("CASE WHEN {column} IS NULL THEN NULL WHEN {column} THEN json('true') ELSE json('false') END")
        }
        ColumnKind::TextArray | ColumnKind::Json => format!("json({column})"),
        // hex(NULL) is '', not NULL.
        ColumnKind::Bytes => format!("CASE WHEN {column} IS NULL THEN NULL ELSE lower(hex({column})) END"),
    }
}

/// The SQL that turns the row `r` (JSON text) back into `column`'s form.
fn write_expression(column: &str, kind: ColumnKind) -> String {
    let value = format!("json_extract(r, '$.{column}')");
    match kind {
        // JSON true/false come out of json_extract as 1/0.
        ColumnKind::Integer | ColumnKind::Boolean => value,
        // Sub-second instants (from PostgreSQL) keep their whole seconds.
        ColumnKind::Instant | ColumnKind::InstantMillis => format!("CAST({value} AS INTEGER)"),
        ColumnKind::Text | ColumnKind::Date | ColumnKind::LocalDateTime => value,
        // Arrays and documents as JSON text (`->`); a JSON null as NULL.
        ColumnKind::TextArray | ColumnKind::Json => format!("nullif(r -> '$.{column}', 'null')"),
        ColumnKind::Bytes => format!("unhex({value})"),
    }
}

fn decode_error(e: serde_json::Error) -> RepositoryError {
    RepositoryError::Unexpected(format!("an exported row is not a JSON object: {e}"))
}

/// Streams the rows of `table` into `sink`, each read as one JSON object.
async fn export_table(
    conn: &mut SqliteConnection,
    table: &TableSpec,
    sink: &mut dyn ExportSink,
) -> Result<(), RepositoryError> {
    let sql = format!(
        "SELECT json_object({}) FROM {} ORDER BY {}",
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

/// The account other than `id` that already holds the e-mail key `key`.
async fn key_holder(conn: &mut SqliteConnection, key: &str, id: i64) -> Result<Option<KeyedAccount>, RepositoryError> {
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
impl DataTransfer for SqliteDataTransfer {
    async fn export_to(&self, sink: &mut dyn ExportSink) -> Result<(), RepositoryError> {
        // One read transaction: one snapshot of every table of each file
        // (WAL), whatever a serving instance writes meanwhile. A file's
        // snapshot starts at its first read: the access log's first, so
        // that the main file's, taken after it, holds the account of every
        // row in it (an account is committed before its first row).
        let mut tx = self.db.readers().begin().await.map_err(to_repository_error)?;
        sqlx::query(&format!("SELECT count(*) FROM {ACCESS_LOG_SCHEMA}.sqlite_schema"))
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
                // AUTOINCREMENT's counter: the largest id ever given.
                let sql = format!("SELECT seq FROM {}.sqlite_sequence WHERE name = ?1", schema_of(table.name));
                let high: Option<i64> = sqlx::query_scalar(&sql)
                    .bind(table.name)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err(to_repository_error)?;
                id_high_water.insert(table.name.to_owned(), high.unwrap_or(0));
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
        // BEGIN IMMEDIATE: the emptiness check and the rows under one lock.
        let mut tx = self.db.begin_write().await.map_err(to_repository_error)?;
        let present: i64 =
            sqlx::query_scalar(&count_all_rows()).fetch_one(&mut *tx).await.map_err(to_repository_error)?;
        if present > 0 {
            return Err(not_empty(present));
        }
        let statements: BTreeMap<&str, String> =
            TABLES.iter().map(|t| (t.name, t.insert_from_json("", "json(?1)", write_expression))).collect();
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
            // AUTOINCREMENT followed the inserted ids; the high-water
            // mark also covers ids deleted before the export.
            let high = id_high_water.get(table.name).copied().unwrap_or(0);
            raise_sequence(&mut tx, table.name, high).await.map_err(to_repository_error)?;
        }
        tx.commit().await.map_err(to_repository_error)?;
        Ok(written)
    }
}
