//! [`HostUserRecords`] on SQLite: one host user row, column by column, in
//! table order, each value in the text form PostgreSQL's adapter gives, so
//! the "my record" page reads the same on both engines: a boolean column
//! reads `true`/`false`, a timestamp (Unix seconds) `YYYY-MM-DDTHH:MM:SS+00:00`,
//! a blob `\x` and its hex digits, anything else its SQL text.

use async_trait::async_trait;
use credencial_domain::host_table::{ColumnType, HostColumn, TableName};
use credencial_ports::{HostUserError, HostUserRecords, RecordColumn};
use sqlx::Row;

use crate::host_users::read_shape;
use crate::SqliteDb;

/// Reads host user rows from the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteHostUserRecords {
    db: SqliteDb,
}

impl SqliteHostUserRecords {
    /// Reads from `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}

/// The text of `column`'s value (see the module documentation).
fn as_text(column: &HostColumn) -> String {
    let c = format!("\"{}\"", column.name);
    match column.column_type {
        ColumnType::Boolean => format!("CASE WHEN {c} IS NULL THEN NULL WHEN {c} THEN 'true' ELSE 'false' END"),
        ColumnType::Timestamp => format!(
            "CASE typeof({c}) WHEN 'integer' THEN strftime('%Y-%m-%dT%H:%M:%S+00:00', {c}, 'unixepoch') \
             ELSE CAST({c} AS TEXT) END"
        ),
        _ => format!("CASE typeof({c}) WHEN 'blob' THEN '\\x' || lower(hex({c})) ELSE CAST({c} AS TEXT) END"),
    }
}

fn unexpected(e: sqlx::Error) -> HostUserError {
    HostUserError::Unexpected(e.to_string())
}

#[async_trait]
impl HostUserRecords for SqliteHostUserRecords {
    async fn fetch(&self, table: &TableName, id: i64) -> Result<Option<Vec<RecordColumn>>, HostUserError> {
        // The shape and the row from one snapshot.
        let mut tx = self.db.readers().begin().await.map_err(unexpected)?;
        let shape = read_shape(&mut tx, table).await?;
        let columns: Vec<String> = shape.columns.iter().map(as_text).collect();
        // The name is a checked identifier and quoted; the id is bound.
        let sql = format!("SELECT {} FROM \"{table}\" WHERE \"id\" = ?1", columns.join(", "));
        let row = sqlx::query(&sql).bind(id).fetch_optional(&mut *tx).await.map_err(unexpected)?;
        tx.commit().await.map_err(unexpected)?;
        let Some(row) = row else {
            return Ok(None);
        };
        shape
            .columns
            .into_iter()
            .enumerate()
            .map(|(i, c)| Ok((c.name, row.try_get::<Option<String>, _>(i).map_err(unexpected)?)))
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
}
