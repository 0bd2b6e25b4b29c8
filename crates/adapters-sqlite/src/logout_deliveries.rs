//! [`LogoutDeliveries`] on the `logout_deliveries` table.

use async_trait::async_trait;
use credencial_ports::logout_deliveries::LogoutColumns;
use credencial_ports::{ClaimedLogout, LogoutDeliveries, RepositoryError};

use crate::error::to_repository_error;
use crate::SqliteDb;

/// Back-channel logout's outbox in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteLogoutDeliveries {
    db: SqliteDb,
}

impl SqliteLogoutDeliveries {
    /// The outbox on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}

#[async_trait]
impl LogoutDeliveries for SqliteLogoutDeliveries {
    async fn claim(&self, now: i64, lease: i64, limit: u32) -> Result<Vec<ClaimedLogout>, RepositoryError> {
        // One statement on the one writer: claims never overlap.
        let rows: Vec<LogoutColumns> = sqlx::query_as(
            "UPDATE logout_deliveries SET due_at = ?2 WHERE id IN ( \
               SELECT id FROM logout_deliveries WHERE due_at <= ?1 ORDER BY due_at, id LIMIT ?3) \
             RETURNING id, client_id, \
               (SELECT c.backchannel_logout_uri FROM oauth_clients c WHERE c.client_id = logout_deliveries.client_id), \
               user_id, sid, created_at, attempts, due_at",
        )
        .bind(now)
        .bind(lease)
        .bind(i64::from(limit))
        .fetch_all(self.db.writer())
        .await
        .map_err(to_repository_error)?;
        Ok(rows.into_iter().filter_map(ClaimedLogout::from_columns).collect())
    }

    async fn finish(&self, id: i64, lease: i64) -> Result<(), RepositoryError> {
        sqlx::query("DELETE FROM logout_deliveries WHERE id = ?1 AND due_at = ?2")
            .bind(id)
            .bind(lease)
            .execute(self.db.writer())
            .await
            .map_err(to_repository_error)?;
        Ok(())
    }

    async fn retry(&self, id: i64, lease: i64, at: i64) -> Result<(), RepositoryError> {
        sqlx::query("UPDATE logout_deliveries SET due_at = ?3, attempts = attempts + 1 WHERE id = ?1 AND due_at = ?2")
            .bind(id)
            .bind(lease)
            .bind(at)
            .execute(self.db.writer())
            .await
            .map_err(to_repository_error)?;
        Ok(())
    }
}
