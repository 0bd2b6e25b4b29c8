//! [`SecurityEvents`] on `security_events`.

use async_trait::async_trait;
use credencial_domain::UserId;
use credencial_ports::{RepositoryError, SecurityEvent, SecurityEvents};

use crate::error::to_repository_error;
use crate::SqliteDb;

/// A person's security activity in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteSecurityEvents {
    db: SqliteDb,
}

impl SqliteSecurityEvents {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}

#[async_trait]
impl SecurityEvents for SqliteSecurityEvents {
    async fn record(&self, user: UserId, event: &SecurityEvent) -> Result<(), RepositoryError> {
        sqlx::query(
            "INSERT INTO security_events (user_id, at, kind, detail, device, place) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .bind(user.0)
        .bind(event.at)
        .bind(&event.kind)
        .bind(&event.detail)
        .bind(&event.device)
        .bind(&event.place)
        .execute(self.db.writer())
        .await
        .map_err(to_repository_error)?;
        Ok(())
    }

    async fn recent(&self, user: UserId, limit: u32) -> Result<Vec<SecurityEvent>, RepositoryError> {
        let rows: Vec<(i64, String, String, String, String)> = sqlx::query_as(
            "SELECT at, kind, detail, device, place FROM security_events WHERE user_id = ?1 \
             ORDER BY id DESC LIMIT ?2",
        )
        .bind(user.0)
        .bind(i64::from(limit))
        .fetch_all(self.db.readers())
        .await
        .map_err(to_repository_error)?;
        Ok(rows
            .into_iter()
            .map(|(at, kind, detail, device, place)| SecurityEvent { at, kind, detail, device, place })
            .collect())
    }

    async fn purge(&self, before: i64, limit: u32) -> Result<u64, RepositoryError> {
        let done = sqlx::query(
            "DELETE FROM security_events WHERE id IN ( \
               SELECT id FROM security_events WHERE at < ?1 ORDER BY at LIMIT ?2)",
        )
        .bind(before)
        .bind(i64::from(limit))
        .execute(self.db.writer())
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected())
    }
}
