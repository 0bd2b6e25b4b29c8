//! [`PoolStatus`] of the sqlx pool: its own counters, no query.

use credencial_ports::{PoolConnections, PoolStatus};
use sqlx::PgPool;

/// The state of the PostgreSQL connection pool, for the metrics.
#[derive(Debug, Clone)]
pub struct PgPoolStatus {
    pool: PgPool,
}

impl PgPoolStatus {
    /// The status of `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

impl PoolStatus for PgPoolStatus {
    fn connections(&self) -> PoolConnections {
        // `size` counts every open connection, idle ones included.
        PoolConnections::of(self.pool.size(), self.pool.num_idle(), self.pool.options().get_max_connections())
    }
}
