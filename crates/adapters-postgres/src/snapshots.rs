//! [`SnapshotStore`] on `scope_snapshots`.

use async_trait::async_trait;
use credencial_domain::{Scope, UserId};
use credencial_ports::profile::SnapshotColumns;
use credencial_ports::{RepositoryError, Snapshot, SnapshotStore};
use sqlx::PgPool;

use crate::error::to_repository_error;

/// Durable upstream snapshots in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgSnapshotStore {
    pool: PgPool,
}

impl PgSnapshotStore {
    /// A store on `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

#[async_trait]
impl SnapshotStore for PgSnapshotStore {
    async fn get_many(&self, user: UserId, scopes: &[Scope]) -> Result<Vec<Snapshot>, RepositoryError> {
        if scopes.is_empty() {
            return Ok(Vec::new());
        }
        let names: Vec<&str> = scopes.iter().map(|s| s.name()).collect();
        let rows = sqlx::query_as::<_, SnapshotColumns>(
            "SELECT scope, payload::text, extract(epoch FROM fetched_at)::bigint, extract(epoch FROM expires_at)::bigint \
             FROM scope_snapshots WHERE user_id = $1 AND scope = ANY($2)",
        )
        .bind(user.0)
        .bind(&names)
        .fetch_all(&self.pool)
        .await
        .map_err(to_repository_error)?;
        rows.into_iter().filter_map(Snapshot::from_columns).collect()
    }

    async fn put(&self, user: UserId, snapshot: Snapshot) -> Result<(), RepositoryError> {
        sqlx::query(
            "INSERT INTO scope_snapshots (user_id, scope, payload, fetched_at, expires_at) \
             VALUES ($1, $2, $3::jsonb, to_timestamp($4), to_timestamp($5)) \
             ON CONFLICT (user_id, scope) DO UPDATE \
             SET payload = EXCLUDED.payload, fetched_at = EXCLUDED.fetched_at, expires_at = EXCLUDED.expires_at",
        )
        .bind(user.0)
        .bind(snapshot.scope.name())
        .bind(snapshot.payload.to_string())
        .bind(snapshot.fetched_at as f64)
        .bind(snapshot.expires_at as f64)
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(())
    }
}
