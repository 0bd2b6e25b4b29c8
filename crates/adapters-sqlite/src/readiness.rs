//! [`ReadinessProbe`] on the file: one query on a reader, bounded in time,
//! that both proves the database answers and counts this build's
//! migrations in `_sqlx_migrations`.

use std::time::Duration;

use async_trait::async_trait;
use credencial_ports::{NotReady, ProbeAnswer, ReadinessProbe, READINESS_TIMEOUT};

use crate::database::{is_missing_table, known_versions};
use crate::SqliteDb;

/// Readiness of the SQLite file and its schema.
#[derive(Debug, Clone)]
pub struct SqliteReadinessProbe {
    db: SqliteDb,
    timeout: Duration,
    known: Vec<i64>,
}

impl SqliteReadinessProbe {
    /// A probe on `db` that waits at most [`READINESS_TIMEOUT`].
    pub fn new(db: SqliteDb) -> Self {
        Self { db, timeout: READINESS_TIMEOUT, known: known_versions() }
    }

    /// The same probe with another time bound.
    pub fn with_timeout(self, timeout: Duration) -> Self {
        Self { timeout, ..self }
    }
}

#[async_trait]
impl ReadinessProbe for SqliteReadinessProbe {
    async fn check(&self) -> Result<(), NotReady> {
        let known = match serde_json::to_string(&self.known) {
            Ok(known) => known,
            Err(e) => return Err(NotReady::Unreachable(e.to_string())),
        };
        let query = sqlx::query_scalar::<_, i64>(
            "SELECT count(*) FROM _sqlx_migrations WHERE success AND version IN (SELECT value FROM json_each(?1))",
        )
        .bind(known)
        .fetch_one(self.db.readers());
        // The bound covers the wait for a reader too: every reader busy
        // with long reads must not hold a balancer's probe past it.
        let answer = match tokio::time::timeout(self.timeout, query).await {
            Ok(Ok(applied)) => ProbeAnswer::Applied(applied),
            Ok(Err(e)) if is_missing_table(&e) => ProbeAnswer::NeverMigrated,
            Ok(Err(e)) => ProbeAnswer::Failed(e.to_string()),
            Err(_) => ProbeAnswer::NoAnswer(self.timeout),
        };
        answer.verdict(self.known.len())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    #[tokio::test]
    async fn every_reader_busy_is_unavailable_after_the_probes_bound() {
        let file = crate::testing::TestDatabase::with_readers(2).await;
        let db = file.db.clone();
        let probe = SqliteReadinessProbe::new(db.clone()).with_timeout(Duration::from_millis(300));
        probe.check().await.expect("ready");

        let held = [db.readers().acquire().await.expect("reader"), db.readers().acquire().await.expect("reader")];
        let start = Instant::now();
        let result = probe.check().await;
        let took = start.elapsed();
        let Err(NotReady::Unreachable(reason)) = result else { panic!("{result:?}") };
        assert!(reason.contains("within 300 ms"), "{reason}");
        assert!(took >= Duration::from_millis(300) && took < Duration::from_secs(5), "answered after {took:?}");
        drop(held);
        probe.check().await.expect("ready again once a reader is free");
    }
}
