//! [`LoginFailureLog`] on the `login_failures` table. A window's start is
//! kept in Unix milliseconds (the port's unit), so that windows begin and
//! end at the millisecond, as on PostgreSQL.

use async_trait::async_trait;
use credencial_domain::throttle::{FailureWindow, ThrottleKey};
use credencial_ports::login_failures::{windows_from_columns, WindowColumns};
use credencial_ports::{LoginFailureLog, RepositoryError};

use crate::error::to_repository_error;
use crate::SqliteDb;

/// Failure counts in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteLoginFailureLog {
    db: SqliteDb,
}

impl SqliteLoginFailureLog {
    /// The log on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}

/// The keys' texts as a JSON array, for `json_each`.
fn json_keys(keys: &[ThrottleKey]) -> Result<String, RepositoryError> {
    let texts: Vec<&str> = keys.iter().map(ThrottleKey::as_str).collect();
    serde_json::to_string(&texts).map_err(|e| RepositoryError::Unexpected(e.to_string()))
}

#[async_trait]
impl LoginFailureLog for SqliteLoginFailureLog {
    async fn windows(&self, keys: &[ThrottleKey]) -> Result<Vec<FailureWindow>, RepositoryError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let rows: Vec<WindowColumns> = sqlx::query_as(
            "SELECT key, failures, window_start FROM login_failures \
             WHERE key IN (SELECT value FROM json_each(?1))",
        )
        .bind(json_keys(keys)?)
        .fetch_all(self.db.readers())
        .await
        .map_err(to_repository_error)?;
        Ok(windows_from_columns(keys, rows))
    }

    async fn record_failure(&self, keys: &[ThrottleKey], now_ms: i64, window_ms: i64) -> Result<(), RepositoryError> {
        if keys.is_empty() {
            return Ok(());
        }
        // One statement on the one writer connection (other processes wait
        // on the file's write lock): concurrent failures all count. A key
        // named twice counts once (DISTINCT), as on PostgreSQL. `WHERE
        // true` keeps SQLite's parser from reading ON CONFLICT as a join's.
        sqlx::query(
            "INSERT INTO login_failures (key, failures, window_start) \
             SELECT DISTINCT value, 1, ?2 FROM json_each(?1) WHERE true \
             ON CONFLICT (key) DO UPDATE SET \
               failures = CASE WHEN window_start <= ?2 - ?3 THEN 1 ELSE min(failures, 2147483646) + 1 END, \
               window_start = CASE WHEN window_start <= ?2 - ?3 THEN excluded.window_start ELSE window_start END",
        )
        .bind(json_keys(keys)?)
        .bind(now_ms)
        .bind(window_ms)
        .execute(self.db.writer())
        .await
        .map_err(to_repository_error)?;
        Ok(())
    }

    async fn clear(&self, key: &ThrottleKey) -> Result<(), RepositoryError> {
        sqlx::query("DELETE FROM login_failures WHERE key = ?1")
            .bind(key.as_str())
            .execute(self.db.writer())
            .await
            .map_err(to_repository_error)?;
        Ok(())
    }

    async fn purge_started_before(&self, before_ms: i64, limit: u32) -> Result<u64, RepositoryError> {
        let done = sqlx::query(
            "DELETE FROM login_failures WHERE rowid IN ( \
               SELECT rowid FROM login_failures WHERE window_start < ?1 ORDER BY window_start LIMIT ?2)",
        )
        .bind(before_ms)
        .bind(i64::from(limit))
        .execute(self.db.writer())
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected())
    }
}
