//! [`HostSessionEnds`] on the `host_logout_tokens` and `host_session_ends`
//! tables.

use async_trait::async_trait;
use credencial_ports::host_session_ends::{sid_key, sub_key};
use credencial_ports::{HostLogout, HostSessionEnds, RepositoryError};

use crate::error::to_repository_error;
use crate::SqliteDb;

/// How many expired rows of each table one record forgets at most.
const FORGET_BATCH: i64 = 100;

/// The receiver's record in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteHostSessionEnds {
    db: SqliteDb,
}

impl SqliteHostSessionEnds {
    /// The record on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}

#[async_trait]
impl HostSessionEnds for SqliteHostSessionEnds {
    async fn record(&self, logout: &HostLogout) -> Result<bool, RepositoryError> {
        let mut tx = self.db.begin_write().await.map_err(to_repository_error)?;
        for (table, key) in [("host_logout_tokens", "jti"), ("host_session_ends", "key")] {
            sqlx::query(&format!(
                "DELETE FROM {table} WHERE {key} IN (SELECT {key} FROM {table} WHERE expires_at < ?1 LIMIT ?2)"
            ))
            .bind(logout.now)
            .bind(FORGET_BATCH)
            .execute(&mut *tx)
            .await
            .map_err(to_repository_error)?;
        }
        let taken =
            sqlx::query("INSERT INTO host_logout_tokens (jti, expires_at) VALUES (?1, ?2) ON CONFLICT DO NOTHING")
                .bind(&logout.jti)
                .bind(logout.token_expires_at)
                .execute(&mut *tx)
                .await
                .map_err(to_repository_error)?;
        if taken.rows_affected() == 0 {
            return Ok(false);
        }
        let keys = logout.sid.as_deref().map(sid_key).into_iter().chain(logout.sub.as_deref().map(sub_key));
        for key in keys {
            sqlx::query(
                "INSERT INTO host_session_ends (key, ended_at, expires_at) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (key) DO UPDATE SET ended_at = excluded.ended_at, expires_at = excluded.expires_at",
            )
            .bind(key)
            .bind(logout.now)
            .bind(logout.keep_until)
            .execute(&mut *tx)
            .await
            .map_err(to_repository_error)?;
        }
        tx.commit().await.map_err(to_repository_error)?;
        Ok(true)
    }

    async fn ended_since<'a>(
        &self,
        sid: Option<&'a str>,
        sub: Option<&'a str>,
        since: i64,
    ) -> Result<bool, RepositoryError> {
        let ended: bool = sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM host_session_ends WHERE key = ?1 OR (key = ?2 AND ended_at >= ?3))",
        )
        .bind(sid.map(sid_key))
        .bind(sub.map(sub_key))
        .bind(since)
        .fetch_one(self.db.readers())
        .await
        .map_err(to_repository_error)?;
        Ok(ended)
    }
}
