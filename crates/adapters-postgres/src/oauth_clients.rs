//! [`OAuthClientRepository`] on the `oauth_clients` table. Each write runs
//! in a transaction with its audit entry ([`crate::audit::commit_with`]).

use async_trait::async_trait;
use credencial_domain::admin::NewAuditEntry;
use credencial_domain::oauth::ClientId;
use credencial_ports::oauth::{level_name, scope_names, ClientColumns};
use credencial_ports::{OAuthClient, OAuthClientRepository, OAuthClientUpdate, RepositoryError};
use sqlx::PgPool;

use crate::error::to_repository_error;

/// Registered OAuth2 clients in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgOAuthClientRepository {
    pool: PgPool,
}

impl PgOAuthClientRepository {
    /// A repository on `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

/// [`ClientColumns`], the lists as JSON text.
const COLUMNS: &str = "client_id, name, secret_hash, confidential, array_to_json(redirect_uris)::text, \
     array_to_json(post_logout_redirect_uris)::text, require_pkce, requires_second_factor, minimum_govbr_level, array_to_json(enabled_scopes)::text, is_active, \
     floor(extract(epoch FROM created_at))::BIGINT, backchannel_logout_uri";

#[async_trait]
impl OAuthClientRepository for PgOAuthClientRepository {
    async fn create(&self, client: OAuthClient, audit: &NewAuditEntry) -> Result<(), RepositoryError> {
        let mut tx = self.pool.begin().await.map_err(to_repository_error)?;
        sqlx::query(
            "INSERT INTO oauth_clients (client_id, name, secret_hash, confidential, \
             redirect_uris, require_pkce, enabled_scopes, is_active, post_logout_redirect_uris, \
             requires_second_factor, minimum_govbr_level, backchannel_logout_uri) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
        )
        .bind(client.client_id.as_str())
        .bind(&client.name)
        .bind(&client.secret_hash)
        .bind(client.confidential)
        .bind(&client.redirect_uris)
        .bind(client.require_pkce)
        .bind(scope_names(client.enabled_scopes))
        .bind(client.is_active)
        .bind(&client.post_logout_redirect_uris)
        .bind(client.requires_second_factor)
        .bind(level_name(client.minimum_govbr_level))
        .bind(&client.backchannel_logout_uri)
        .execute(&mut *tx)
        .await
        .map_err(to_repository_error)?;
        crate::audit::commit_with(tx, audit).await?;
        Ok(())
    }

    async fn update(
        &self,
        client_id: &ClientId,
        changes: OAuthClientUpdate,
        audit: &NewAuditEntry,
    ) -> Result<Option<OAuthClient>, RepositoryError> {
        let mut tx = self.pool.begin().await.map_err(to_repository_error)?;
        let row = sqlx::query_as::<_, ClientColumns>(&format!(
            "UPDATE oauth_clients SET \
                 name = COALESCE($2, name), \
                 redirect_uris = COALESCE($3, redirect_uris), \
                 enabled_scopes = COALESCE($4, enabled_scopes), \
                 require_pkce = COALESCE($5, require_pkce), \
                 secret_hash = COALESCE($6, secret_hash), \
                 is_active = COALESCE($7, is_active), \
                 post_logout_redirect_uris = COALESCE($8, post_logout_redirect_uris), \
                 requires_second_factor = COALESCE($9, requires_second_factor), \
                 minimum_govbr_level = CASE WHEN $10 THEN $11 ELSE minimum_govbr_level END, \
                 backchannel_logout_uri = CASE WHEN $12 THEN $13 ELSE backchannel_logout_uri END, \
                 updated_at = now() \
             WHERE client_id = $1 \
             RETURNING {COLUMNS}"
        ))
        .bind(client_id.as_str())
        .bind(changes.name)
        .bind(changes.redirect_uris)
        .bind(changes.enabled_scopes.map(scope_names))
        .bind(changes.require_pkce)
        .bind(changes.secret_hash)
        .bind(changes.is_active)
        .bind(changes.post_logout_redirect_uris)
        .bind(changes.requires_second_factor)
        // Whether the level changes, and to what (`NULL`: none).
        .bind(changes.minimum_govbr_level.is_some())
        .bind(level_name(changes.minimum_govbr_level.flatten()))
        .bind(changes.backchannel_logout_uri.is_some())
        .bind(changes.backchannel_logout_uri.flatten())
        .fetch_optional(&mut *tx)
        .await
        .map_err(to_repository_error)?;
        let Some(row) = row else {
            // No such client: nothing changed, nothing to record.
            return Ok(None);
        };
        let client = OAuthClient::from_columns(row)?;
        crate::audit::commit_with(tx, audit).await?;
        Ok(Some(client))
    }

    async fn find(&self, client_id: &ClientId) -> Result<Option<OAuthClient>, RepositoryError> {
        let row =
            sqlx::query_as::<_, ClientColumns>(&format!("SELECT {COLUMNS} FROM oauth_clients WHERE client_id = $1"))
                .bind(client_id.as_str())
                .fetch_optional(&self.pool)
                .await
                .map_err(to_repository_error)?;
        row.map(OAuthClient::from_columns).transpose()
    }

    async fn list(&self) -> Result<Vec<OAuthClient>, RepositoryError> {
        let rows = sqlx::query_as::<_, ClientColumns>(&format!(
            "SELECT {COLUMNS} FROM oauth_clients ORDER BY client_id COLLATE \"C\""
        ))
        .fetch_all(&self.pool)
        .await
        .map_err(to_repository_error)?;
        rows.into_iter().map(OAuthClient::from_columns).collect()
    }
}
