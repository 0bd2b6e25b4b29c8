//! [`GrantRepository`] on `oauth_grants`.

use async_trait::async_trait;
use credencial_domain::oauth::ClientId;
use credencial_domain::{ScopeSet, UserId};
use credencial_ports::account::{GrantRepository, GrantSummary};
use credencial_ports::stored::client_id;
use credencial_ports::RepositoryError;

use crate::error::to_repository_error;
use crate::json::{scopes_from_json, scopes_to_json};
use crate::SqliteDb;

/// One statement: a first grant is inserted; an existing one becomes the
/// union (the names of both JSON arrays, sorted) and its last use the later
/// one. A statement that writes holds the file's write lock from its start,
/// so concurrent widenings (also of other processes) each see the one
/// before.
const WIDEN: &str = "INSERT INTO oauth_grants AS g (user_id, client_id, scopes, first_granted_at, last_used_at) \
     VALUES (?1, ?2, ?3, ?4, ?4) \
     ON CONFLICT (user_id, client_id) DO UPDATE SET \
       scopes = (SELECT json_group_array(value ORDER BY value) FROM \
                   (SELECT value FROM json_each(g.scopes) UNION SELECT value FROM json_each(excluded.scopes))), \
       last_used_at = max(g.last_used_at, excluded.last_used_at) \
     RETURNING scopes";

/// Remembered consent, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteGrantRepository {
    db: SqliteDb,
}

impl SqliteGrantRepository {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}

#[async_trait]
impl GrantRepository for SqliteGrantRepository {
    async fn widen(
        &self,
        user: UserId,
        client: &ClientId,
        approved: ScopeSet,
        now: i64,
    ) -> Result<ScopeSet, RepositoryError> {
        let scopes: String = sqlx::query_scalar(WIDEN)
            .bind(user.0)
            .bind(client.as_str())
            .bind(scopes_to_json(approved)?)
            .bind(now)
            .fetch_one(self.db.writer())
            .await
            .map_err(to_repository_error)?;
        scopes_from_json(&scopes)
    }

    async fn granted_scopes(&self, user: UserId, client: &ClientId) -> Result<Option<ScopeSet>, RepositoryError> {
        let scopes: Option<String> =
            sqlx::query_scalar("SELECT scopes FROM oauth_grants WHERE user_id = ?1 AND client_id = ?2")
                .bind(user.0)
                .bind(client.as_str())
                .fetch_optional(self.db.readers())
                .await
                .map_err(to_repository_error)?;
        scopes.as_deref().map(scopes_from_json).transpose()
    }

    async fn is_granted(&self, user: UserId, client: &ClientId) -> Result<bool, RepositoryError> {
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM oauth_grants WHERE user_id = ?1 AND client_id = ?2)")
            .bind(user.0)
            .bind(client.as_str())
            .fetch_one(self.db.readers())
            .await
            .map_err(to_repository_error)
    }

    async fn mark_used(&self, user: UserId, client: &ClientId, now: i64) -> Result<bool, RepositoryError> {
        let done = sqlx::query(
            "UPDATE oauth_grants SET last_used_at = max(last_used_at, ?3) WHERE user_id = ?1 AND client_id = ?2",
        )
        .bind(user.0)
        .bind(client.as_str())
        .bind(now)
        .execute(self.db.writer())
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }

    async fn list(&self, user: UserId) -> Result<Vec<GrantSummary>, RepositoryError> {
        let rows: Vec<(String, String, String, i64, i64)> = sqlx::query_as(
            "SELECT g.client_id, c.name, g.scopes, g.first_granted_at, g.last_used_at \
             FROM oauth_grants g JOIN oauth_clients c ON c.client_id = g.client_id \
             WHERE g.user_id = ?1 ORDER BY g.last_used_at DESC, g.client_id",
        )
        .bind(user.0)
        .fetch_all(self.db.readers())
        .await
        .map_err(to_repository_error)?;
        rows.into_iter()
            .map(|(id, name, scopes, first, last)| {
                Ok(GrantSummary {
                    client_id: client_id(&id)?,
                    client_name: name,
                    scopes: scopes_from_json(&scopes)?,
                    first_granted_at: first,
                    last_used_at: last,
                })
            })
            .collect()
    }

    async fn revoke(&self, user: UserId, client: &ClientId) -> Result<bool, RepositoryError> {
        // One write transaction: the grant goes, and so does every current
        // refresh token of the families the client's authorization codes
        // started for the user (`code:<client_id>:<code hash>`; a prefix
        // compared as text, not LIKE: `_` is a client-id character).
        let mut tx = self.db.begin_write().await.map_err(to_repository_error)?;
        sqlx::query(
            "UPDATE refresh_tokens SET rotated_at = unixepoch(), revoked = 1 \
             WHERE user_id = ?1 AND rotated_at IS NULL AND substr(family, 1, length(?2)) = ?2",
        )
        .bind(user.0)
        .bind(format!("code:{}:", client.as_str()))
        .execute(&mut *tx)
        .await
        .map_err(to_repository_error)?;
        let done = sqlx::query("DELETE FROM oauth_grants WHERE user_id = ?1 AND client_id = ?2")
            .bind(user.0)
            .bind(client.as_str())
            .execute(&mut *tx)
            .await
            .map_err(to_repository_error)?;
        tx.commit().await.map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }
}
