//! [`SnapshotStore`] on `scope_snapshots` (payloads as JSON text).

use async_trait::async_trait;
use credencial_domain::{Scope, UserId};
use credencial_ports::profile::SnapshotColumns;
use credencial_ports::{RepositoryError, Snapshot, SnapshotStore};

use crate::error::to_repository_error;
use crate::SqliteDb;

/// Durable upstream snapshots in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteSnapshotStore {
    db: SqliteDb,
}

impl SqliteSnapshotStore {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}

#[async_trait]
impl SnapshotStore for SqliteSnapshotStore {
    async fn get_many(&self, user: UserId, scopes: &[Scope]) -> Result<Vec<Snapshot>, RepositoryError> {
        if scopes.is_empty() {
            return Ok(Vec::new());
        }
        let names: Vec<&str> = scopes.iter().map(|s| s.name()).collect();
        let names = serde_json::to_string(&names).map_err(|e| RepositoryError::Unexpected(e.to_string()))?;
        let rows = sqlx::query_as::<_, SnapshotColumns>(
            "SELECT scope, payload, fetched_at, expires_at FROM scope_snapshots \
             WHERE user_id = ?1 AND scope IN (SELECT value FROM json_each(?2))",
        )
        .bind(user.0)
        .bind(names)
        .fetch_all(self.db.readers())
        .await
        .map_err(to_repository_error)?;
        rows.into_iter().filter_map(Snapshot::from_columns).collect()
    }

    async fn put(&self, user: UserId, snapshot: Snapshot) -> Result<(), RepositoryError> {
        sqlx::query(
            "INSERT INTO scope_snapshots (user_id, scope, payload, fetched_at, expires_at) \
             VALUES (?1, ?2, ?3, ?4, ?5) \
             ON CONFLICT (user_id, scope) DO UPDATE \
             SET payload = excluded.payload, fetched_at = excluded.fetched_at, expires_at = excluded.expires_at",
        )
        .bind(user.0)
        .bind(snapshot.scope.name())
        .bind(snapshot.payload.to_string())
        .bind(snapshot.fetched_at)
        .bind(snapshot.expires_at)
        .execute(self.db.writer())
        .await
        .map_err(to_repository_error)?;
        Ok(())
    }
}
