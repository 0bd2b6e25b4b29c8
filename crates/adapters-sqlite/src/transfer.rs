//! [`DataTransfer`] on SQLite: each row read as one `json_object` in the
//! engine-neutral forms of [`credencial_ports::transfer`], and written back
//! from them with one `INSERT … SELECT` per row.

use async_trait::async_trait;
use credencial_ports::transfer::{count_all_rows, not_empty, ColumnKind, DataTransfer, Dump, Row, TableSpec, TABLES};
use credencial_ports::RepositoryError;
use sqlx::SqliteConnection;

use crate::error::to_repository_error;
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

/// The rows of `table`, each as one JSON object.
async fn export_table(conn: &mut SqliteConnection, table: &TableSpec) -> Result<Vec<Row>, RepositoryError> {
    let sql = format!(
        "SELECT json_object({}) FROM {} ORDER BY {}",
        table.object_arguments(read_expression),
        table.name,
        table.order_by
    );
    let rows: Vec<String> = sqlx::query_scalar(&sql).fetch_all(&mut *conn).await.map_err(to_repository_error)?;
    rows.iter().map(|row| serde_json::from_str(row).map_err(decode_error)).collect()
}

#[async_trait]
impl DataTransfer for SqliteDataTransfer {
    async fn export(&self) -> Result<Dump, RepositoryError> {
        // One read transaction: one snapshot of every table (WAL), whatever
        // a serving instance writes meanwhile.
        let mut tx = self.db.readers().begin().await.map_err(to_repository_error)?;
        let mut dump = Dump::default();
        for table in TABLES {
            let rows = export_table(&mut tx, table).await?;
            if table.generated_id {
                // AUTOINCREMENT's counter: the largest id ever given.
                let high: Option<i64> = sqlx::query_scalar("SELECT seq FROM sqlite_sequence WHERE name = ?1")
                    .bind(table.name)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err(to_repository_error)?;
                dump.id_high_water.insert(table.name.to_owned(), high.unwrap_or(0));
            }
            dump.tables.push((*table, rows));
        }
        tx.commit().await.map_err(to_repository_error)?;
        Ok(dump)
    }

    async fn import(&self, dump: &Dump) -> Result<(), RepositoryError> {
        // The e-mail keys are computed here, not read (a shared one is named).
        let dump = &dump.with_email_keys()?;
        // BEGIN IMMEDIATE: the emptiness check and the rows under one lock.
        let mut tx = self.db.begin_write().await.map_err(to_repository_error)?;
        let present: i64 =
            sqlx::query_scalar(&count_all_rows()).fetch_one(&mut *tx).await.map_err(to_repository_error)?;
        if present > 0 {
            return Err(not_empty(present));
        }
        for (table, rows) in &dump.tables {
            let sql = table.insert_from_json("", "json(?1)", write_expression);
            for row in rows {
                let row = serde_json::Value::Object(row.clone()).to_string();
                sqlx::query(&sql).bind(row).execute(&mut *tx).await.map_err(to_repository_error)?;
            }
            if table.generated_id {
                // AUTOINCREMENT followed the inserted ids; the high-water
                // mark also covers ids deleted before the export.
                let high = dump.id_high_water.get(table.name).copied().unwrap_or(0);
                sqlx::query("UPDATE sqlite_sequence SET seq = max(seq, ?2) WHERE name = ?1")
                    .bind(table.name)
                    .bind(high)
                    .execute(&mut *tx)
                    .await
                    .map_err(to_repository_error)?;
                sqlx::query(
                    "INSERT INTO sqlite_sequence (name, seq) SELECT ?1, ?2 \
                     WHERE ?2 > 0 AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ?1)",
                )
                .bind(table.name)
                .bind(high)
                .execute(&mut *tx)
                .await
                .map_err(to_repository_error)?;
            }
        }
        tx.commit().await.map_err(to_repository_error)
    }
}
