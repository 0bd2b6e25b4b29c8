//! [`ReadinessProbe`] on the pool: one query, bounded in time, that both
//! proves the database answers and counts this build's migrations in
//! `_sqlx_migrations`.

use std::time::Duration;

use async_trait::async_trait;
pub use credencial_ports::READINESS_TIMEOUT;
use credencial_ports::{NotReady, ProbeAnswer, ReadinessProbe};
use sqlx::PgPool;

use crate::database::{known_versions, UNDEFINED_TABLE};

/// Readiness of the PostgreSQL pool and its schema.
#[derive(Debug, Clone)]
pub struct PgReadinessProbe {
    pool: PgPool,
    timeout: Duration,
    known: Vec<i64>,
}

impl PgReadinessProbe {
    /// A probe on `pool` that waits at most [`READINESS_TIMEOUT`].
    pub fn new(pool: PgPool) -> Self {
        Self { pool, timeout: READINESS_TIMEOUT, known: known_versions() }
    }

    /// The same probe with another time bound.
    pub fn with_timeout(self, timeout: Duration) -> Self {
        Self { timeout, ..self }
    }
}

#[async_trait]
impl ReadinessProbe for PgReadinessProbe {
    async fn check(&self) -> Result<(), NotReady> {
        // One round trip, like `SELECT 1`: the migrations table is a few
        // rows with a primary key on `version`.
        let query =
            sqlx::query_scalar::<_, i64>("SELECT count(*) FROM _sqlx_migrations WHERE success AND version = ANY($1)")
                .bind(&self.known)
                .fetch_one(&self.pool);
        // The bound covers the pool's checkout too: with PostgreSQL down the
        // pool keeps retrying the connection until its own acquire time-out
        // (seconds), which a balancer's probe must not wait for.
        let answer = match tokio::time::timeout(self.timeout, query).await {
            Ok(Ok(applied)) => ProbeAnswer::Applied(applied),
            Ok(Err(sqlx::Error::Database(db))) if db.code().as_deref() == Some(UNDEFINED_TABLE) => {
                ProbeAnswer::NeverMigrated
            }
            Ok(Err(e)) => ProbeAnswer::Failed(e.to_string()),
            Err(_) => ProbeAnswer::NoAnswer(self.timeout),
        };
        answer.verdict(self.known.len())
    }
}
