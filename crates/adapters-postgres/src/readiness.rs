//! [`ReadinessProbe`] on the pool: `SELECT 1`, bounded in time.

use std::time::Duration;

use async_trait::async_trait;
use credencial_ports::{ReadinessProbe, RepositoryError};
use sqlx::PgPool;

/// How long the probe waits for `SELECT 1` by default (the `/readyz`
/// contract's bound).
pub const READINESS_TIMEOUT: Duration = Duration::from_secs(1);

/// Readiness of the PostgreSQL pool.
#[derive(Debug, Clone)]
pub struct PgReadinessProbe {
    pool: PgPool,
    timeout: Duration,
}

impl PgReadinessProbe {
    /// A probe on `pool` that waits at most [`READINESS_TIMEOUT`].
    pub fn new(pool: PgPool) -> Self {
        Self { pool, timeout: READINESS_TIMEOUT }
    }

    /// The same probe with another time bound.
    pub fn with_timeout(self, timeout: Duration) -> Self {
        Self { timeout, ..self }
    }
}

#[async_trait]
impl ReadinessProbe for PgReadinessProbe {
    async fn check(&self) -> Result<(), RepositoryError> {
        // The bound covers the pool's checkout too: with PostgreSQL down the
        // pool keeps retrying the connection until its own acquire time-out
        // (seconds), which a balancer's probe must not wait for.
        let query = sqlx::query_scalar::<_, i32>("SELECT 1").fetch_one(&self.pool);
        match tokio::time::timeout(self.timeout, query).await {
            Ok(Ok(1)) => Ok(()),
            Ok(Ok(other)) => Err(RepositoryError::Unexpected(format!("SELECT 1 answered {other}"))),
            Ok(Err(e)) => Err(RepositoryError::Unexpected(e.to_string())),
            Err(_) => Err(RepositoryError::Unexpected(format!(
                "no answer to SELECT 1 within {} ms",
                self.timeout.as_millis()
            ))),
        }
    }
}
