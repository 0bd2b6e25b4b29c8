//! [`LoginFailureLog`] on the `login_failures` table.

use async_trait::async_trait;
use credencial_domain::throttle::{FailureWindow, ThrottleKey};
use credencial_ports::login_failures::{windows_from_columns, WindowColumns};
use credencial_ports::{LoginFailureLog, RepositoryError};
use sqlx::PgPool;

use crate::error::to_repository_error;

/// Failure counts in PostgreSQL, shared by every instance.
#[derive(Debug, Clone)]
pub struct PgLoginFailureLog {
    pool: PgPool,
}

impl PgLoginFailureLog {
    /// A log on `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

/// Unix milliseconds as a PostgreSQL `timestamptz` argument (seconds with a
/// fraction; `to_timestamp` keeps microseconds).
fn seconds(ms: i64) -> f64 {
    ms as f64 / 1000.0
}

fn texts(keys: &[ThrottleKey]) -> Vec<String> {
    let mut texts: Vec<String> = keys.iter().map(|k| k.as_str().to_owned()).collect();
    // One lock order for every statement, so two upserts never deadlock.
    texts.sort();
    texts.dedup();
    texts
}

#[async_trait]
impl LoginFailureLog for PgLoginFailureLog {
    async fn windows(&self, keys: &[ThrottleKey]) -> Result<Vec<FailureWindow>, RepositoryError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let rows: Vec<WindowColumns> = sqlx::query_as(
            "SELECT key, failures::BIGINT, floor(extract(epoch FROM window_start) * 1000)::BIGINT \
             FROM login_failures WHERE key = ANY($1)",
        )
        .bind(texts(keys))
        .fetch_all(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(windows_from_columns(keys, rows))
    }

    async fn record_failure(&self, keys: &[ThrottleKey], now_ms: i64, window_ms: i64) -> Result<(), RepositoryError> {
        if keys.is_empty() {
            return Ok(());
        }
        // One statement: a conflicting row is locked and re-read before the
        // update, so concurrent failures on one key all count, on any
        // number of instances. Rows are taken in key order (no deadlock).
        sqlx::query(
            "INSERT INTO login_failures AS f (key, failures, window_start) \
             SELECT key, 1, to_timestamp($2) FROM unnest($1::TEXT[]) AS key ORDER BY key \
             ON CONFLICT (key) DO UPDATE SET \
               failures = CASE WHEN f.window_start <= to_timestamp($2) - make_interval(secs => $3) \
                               THEN 1 ELSE LEAST(f.failures, 2147483646) + 1 END, \
               window_start = CASE WHEN f.window_start <= to_timestamp($2) - make_interval(secs => $3) \
                                   THEN EXCLUDED.window_start ELSE f.window_start END",
        )
        .bind(texts(keys))
        .bind(seconds(now_ms))
        .bind(seconds(window_ms))
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(())
    }

    async fn clear(&self, key: &ThrottleKey) -> Result<(), RepositoryError> {
        sqlx::query("DELETE FROM login_failures WHERE key = $1")
            .bind(key.as_str())
            .execute(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok(())
    }

    async fn purge_started_before(&self, before_ms: i64, limit: u32) -> Result<u64, RepositoryError> {
        // Rows a failure being recorded holds are skipped (purged next
        // time): the purge never waits on a row lock, so it cannot
        // deadlock with `record_failure`, which locks its keys in key order
        // while a plain DELETE would lock in scan order.
        let done = sqlx::query(
            "DELETE FROM login_failures WHERE key IN \
             (SELECT key FROM login_failures WHERE window_start < to_timestamp($1) \
              ORDER BY window_start LIMIT $2 FOR UPDATE SKIP LOCKED)",
        )
        .bind(seconds(before_ms))
        .bind(i64::from(limit))
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected())
    }
}
