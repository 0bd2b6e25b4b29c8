//! [`AccessLog`] on the append-only `access_log` table.

use async_trait::async_trait;
use credencial_domain::account::AccessLogPage;
use credencial_domain::UserId;
use credencial_ports::account::{AccessLog, AccessLogEntry, AccessLogRow};
use credencial_ports::stored::client_id;
use credencial_ports::RepositoryError;
use sqlx::SqliteConnection;

use crate::error::to_repository_error;
use crate::json::{scopes_from_json, scopes_to_json};
use crate::SqliteDb;

/// Appends `entry` on `conn` (the profile read's write transaction, so
/// that the entry is written exactly when the data is answered).
pub(crate) async fn append_on(conn: &mut SqliteConnection, entry: &AccessLogEntry) -> Result<(), RepositoryError> {
    sqlx::query(
        "INSERT INTO access_log (user_id, client_id, scopes, accessed_at, request_id) VALUES (?1, ?2, ?3, ?4, ?5)",
    )
    .bind(entry.user.0)
    .bind(entry.client.as_str())
    .bind(scopes_to_json(entry.scopes)?)
    .bind(entry.at)
    .bind(&entry.request_id)
    .execute(conn)
    .await
    .map_err(to_repository_error)?;
    Ok(())
}

/// The access log, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteAccessLog {
    db: SqliteDb,
}

impl SqliteAccessLog {
    /// The log on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}

#[async_trait]
impl AccessLog for SqliteAccessLog {
    async fn append(&self, entry: AccessLogEntry) -> Result<(), RepositoryError> {
        let mut conn = self.db.writer().acquire().await.map_err(to_repository_error)?;
        append_on(&mut conn, &entry).await
    }

    async fn list(&self, user: UserId, page: AccessLogPage) -> Result<(Vec<AccessLogRow>, u64), RepositoryError> {
        // The page and the total from one read transaction: one snapshot.
        let mut tx = self.db.readers().begin().await.map_err(to_repository_error)?;
        let total: i64 = sqlx::query_scalar("SELECT count(*) FROM access_log WHERE user_id = ?1")
            .bind(user.0)
            .fetch_one(&mut *tx)
            .await
            .map_err(to_repository_error)?;
        let rows: Vec<(String, String, String, i64, String)> = sqlx::query_as(
            "SELECT a.client_id, coalesce(c.name, a.client_id), a.scopes, a.accessed_at, a.request_id \
             FROM access_log a LEFT JOIN oauth_clients c ON c.client_id = a.client_id \
             WHERE a.user_id = ?1 ORDER BY a.accessed_at DESC, a.id DESC LIMIT ?2 OFFSET ?3",
        )
        .bind(user.0)
        .bind(i64::from(page.limit()))
        .bind(i64::try_from(page.offset()).unwrap_or(i64::MAX))
        .fetch_all(&mut *tx)
        .await
        .map_err(to_repository_error)?;
        tx.commit().await.map_err(to_repository_error)?;
        let entries = rows
            .into_iter()
            .map(|(id, client_name, scopes, at, request_id)| {
                Ok(AccessLogRow {
                    client_id: client_id(&id)?,
                    client_name,
                    scopes: scopes_from_json(&scopes)?,
                    at,
                    request_id,
                })
            })
            .collect::<Result<_, RepositoryError>>()?;
        Ok((entries, u64::try_from(total).unwrap_or(0)))
    }

    async fn purge_before(&self, before: i64, batch: u32) -> Result<u64, RepositoryError> {
        // Batches, each its own statement: the writer is free in between.
        let batch = i64::from(batch.max(1));
        let mut purged = 0;
        loop {
            let done = sqlx::query(
                "DELETE FROM access_log WHERE id IN \
                   (SELECT id FROM access_log WHERE accessed_at < ?1 LIMIT ?2)",
            )
            .bind(before)
            .bind(batch)
            .execute(self.db.writer())
            .await
            .map_err(to_repository_error)?;
            purged += done.rows_affected();
            if i64::try_from(done.rows_affected()).unwrap_or(i64::MAX) < batch {
                return Ok(purged);
            }
        }
    }
}
