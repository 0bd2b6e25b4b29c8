//! [`LogoutDeliveries`] on the `logout_deliveries` table.

use async_trait::async_trait;
use credencial_ports::logout_deliveries::LogoutColumns;
use credencial_ports::{ClaimedLogout, LogoutDeliveries, RepositoryError};

use crate::error::to_repository_error;
use sqlx::PgPool;

/// Back-channel logout's outbox in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgLogoutDeliveries {
    pool: PgPool,
}

impl PgLogoutDeliveries {
    /// The outbox on `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

#[async_trait]
impl LogoutDeliveries for PgLogoutDeliveries {
    async fn claim(&self, now: i64, lease: i64, limit: u32) -> Result<Vec<ClaimedLogout>, RepositoryError> {
        // Rows another sender is claiming are skipped, not waited for.
        let rows: Vec<LogoutColumns> = sqlx::query_as(
            "UPDATE logout_deliveries d SET due_at = $2 FROM ( \
               SELECT id FROM logout_deliveries WHERE due_at <= $1 ORDER BY due_at, id LIMIT $3 \
               FOR UPDATE SKIP LOCKED) due \
             WHERE d.id = due.id \
             RETURNING d.id, d.client_id, \
               (SELECT c.backchannel_logout_uri FROM oauth_clients c WHERE c.client_id = d.client_id), \
               d.user_id, d.sid, d.created_at, d.attempts, d.due_at",
        )
        .bind(now)
        .bind(lease)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(rows.into_iter().filter_map(ClaimedLogout::from_columns).collect())
    }

    async fn finish(&self, id: i64, lease: i64) -> Result<(), RepositoryError> {
        sqlx::query("DELETE FROM logout_deliveries WHERE id = $1 AND due_at = $2")
            .bind(id)
            .bind(lease)
            .execute(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok(())
    }

    async fn retry(&self, id: i64, lease: i64, at: i64) -> Result<(), RepositoryError> {
        sqlx::query("UPDATE logout_deliveries SET due_at = $3, attempts = attempts + 1 WHERE id = $1 AND due_at = $2")
            .bind(id)
            .bind(lease)
            .bind(at)
            .execute(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok(())
    }
}
