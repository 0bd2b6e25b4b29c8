//! [`GrantRepository`] on `oauth_grants`.

use async_trait::async_trait;
use credencial_domain::oauth::ClientId;
use credencial_domain::{ScopeSet, UserId};
use credencial_ports::account::{GrantRepository, GrantSummary};
use credencial_ports::stored::{client_id, scope_names, scopes_from_names};
use credencial_ports::RepositoryError;
use sqlx::PgPool;

use crate::error::to_repository_error;

/// The grant check as an SQL condition on `$1` (user id) and `$2` (client
/// id): one primary-key probe, written so that the profile read can fold it
/// into its own statement (e.g. `SELECT …, <GRANT_EXISTS> AS granted FROM
/// users u WHERE u.id = $1`).
pub const GRANT_EXISTS: &str = "EXISTS (SELECT 1 FROM oauth_grants g WHERE g.user_id = $1 AND g.client_id = $2)";

/// One statement: a first grant is inserted; an existing one (also one
/// inserted by a concurrent statement: ON CONFLICT waits for it and then
/// updates the newest row version) becomes the union.
const WIDEN: &str = "INSERT INTO oauth_grants AS g (user_id, client_id, scopes, first_granted_at, last_used_at) \
     VALUES ($1, $2, $3::TEXT[], to_timestamp($4), to_timestamp($4)) \
     ON CONFLICT (user_id, client_id) DO UPDATE SET \
       scopes = ARRAY(SELECT DISTINCT s FROM unnest(g.scopes || EXCLUDED.scopes) AS s ORDER BY s), \
       last_used_at = GREATEST(g.last_used_at, EXCLUDED.last_used_at) \
     RETURNING scopes";

/// One statement: the grant goes, and so does every current refresh token
/// of the families the client's authorization codes started for the user
/// (`code:<client_id>:<code hash>`, see the refresh-token families
/// migration). `starts_with`, not LIKE: `_` is a client-id character.
const REVOKE: &str = "WITH tokens AS ( \
       UPDATE refresh_tokens SET rotated_at = now(), revoked = TRUE \
       WHERE user_id = $1 AND rotated_at IS NULL AND starts_with(family, 'code:' || $2 || ':')) \
     DELETE FROM oauth_grants WHERE user_id = $1 AND client_id = $2";

/// Grants in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgGrantRepository {
    pool: PgPool,
}

impl PgGrantRepository {
    /// A repository on `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

#[async_trait]
impl GrantRepository for PgGrantRepository {
    async fn widen(
        &self,
        user: UserId,
        client: &ClientId,
        approved: ScopeSet,
        now: i64,
    ) -> Result<ScopeSet, RepositoryError> {
        let (scopes,): (Vec<String>,) = sqlx::query_as(WIDEN)
            .bind(user.0)
            .bind(client.as_str())
            .bind(scope_names(approved))
            .bind(now)
            .fetch_one(&self.pool)
            .await
            .map_err(to_repository_error)?;
        scopes_from_names(&scopes)
    }

    async fn granted_scopes(&self, user: UserId, client: &ClientId) -> Result<Option<ScopeSet>, RepositoryError> {
        let row: Option<(Vec<String>,)> =
            sqlx::query_as("SELECT scopes FROM oauth_grants WHERE user_id = $1 AND client_id = $2")
                .bind(user.0)
                .bind(client.as_str())
                .fetch_optional(&self.pool)
                .await
                .map_err(to_repository_error)?;
        row.map(|(names,)| scopes_from_names(&names)).transpose()
    }

    async fn is_granted(&self, user: UserId, client: &ClientId) -> Result<bool, RepositoryError> {
        let (granted,): (bool,) = sqlx::query_as(&format!("SELECT {GRANT_EXISTS}"))
            .bind(user.0)
            .bind(client.as_str())
            .fetch_one(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok(granted)
    }

    async fn mark_used(&self, user: UserId, client: &ClientId, now: i64) -> Result<bool, RepositoryError> {
        let done = sqlx::query(
            "UPDATE oauth_grants SET last_used_at = GREATEST(last_used_at, to_timestamp($3)) \
             WHERE user_id = $1 AND client_id = $2",
        )
        .bind(user.0)
        .bind(client.as_str())
        .bind(now)
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }

    async fn list(&self, user: UserId) -> Result<Vec<GrantSummary>, RepositoryError> {
        let rows: Vec<(String, String, Vec<String>, i64, i64)> = sqlx::query_as(
            "SELECT g.client_id, c.name, g.scopes, \
               floor(extract(epoch FROM g.first_granted_at))::BIGINT, \
               floor(extract(epoch FROM g.last_used_at))::BIGINT \
             FROM oauth_grants g JOIN oauth_clients c ON c.client_id = g.client_id \
             WHERE g.user_id = $1 ORDER BY g.last_used_at DESC, g.client_id",
        )
        .bind(user.0)
        .fetch_all(&self.pool)
        .await
        .map_err(to_repository_error)?;
        rows.into_iter()
            .map(|(id, name, scopes, first, last)| {
                Ok(GrantSummary {
                    client_id: client_id(&id)?,
                    client_name: name,
                    scopes: scopes_from_names(&scopes)?,
                    first_granted_at: first,
                    last_used_at: last,
                })
            })
            .collect()
    }

    async fn revoke(&self, user: UserId, client: &ClientId) -> Result<bool, RepositoryError> {
        let done = sqlx::query(REVOKE)
            .bind(user.0)
            .bind(client.as_str())
            .execute(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }
}
