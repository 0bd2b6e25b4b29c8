//! [`HostUserRecords`] on PostgreSQL: one host user row, column by column,
//! in table order, values in their text form (`row_to_json` then
//! `json_each_text`, so any column type reads back as text).

use async_trait::async_trait;
use credencial_domain::host_table::TableName;
use credencial_ports::{HostUserError, HostUserRecords, RecordColumn};
use sqlx::PgPool;

/// Reads host user rows from PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgHostUserRecords {
    pool: PgPool,
}

impl PgHostUserRecords {
    /// Reads from `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

#[async_trait]
impl HostUserRecords for PgHostUserRecords {
    async fn fetch(&self, table: &TableName, id: i64) -> Result<Option<Vec<RecordColumn>>, HostUserError> {
        // The name is a checked identifier and quoted; the id is bound.
        let sql = format!(
            "SELECT e.key, e.value FROM \"{table}\" AS t \
             CROSS JOIN LATERAL json_each_text(row_to_json(t)) WITH ORDINALITY AS e(key, value, n) \
             WHERE t.id = $1 ORDER BY e.n"
        );
        let rows: Vec<(String, Option<String>)> =
            sqlx::query_as(&sql).bind(id).fetch_all(&self.pool).await.map_err(|e| match &e {
                sqlx::Error::Database(db) if db.code().as_deref() == Some("42P01") => {
                    HostUserError::InvalidTable(format!("table \"{table}\" does not exist"))
                }
                _ => HostUserError::Unexpected(e.to_string()),
            })?;
        Ok((!rows.is_empty()).then_some(rows))
    }
}
