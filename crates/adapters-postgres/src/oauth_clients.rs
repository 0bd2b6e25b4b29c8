//! [`OAuthClientRepository`] on the `oauth_clients` table. Each write runs
//! in a transaction with its audit entry ([`crate::audit::commit_with`]).

use async_trait::async_trait;
use credencial_domain::admin::NewAuditEntry;
use credencial_domain::oauth::ClientId;
use credencial_domain::ScopeSet;
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

const COLUMNS: &str = "client_id, name, secret_hash, confidential, redirect_uris, post_logout_redirect_uris, \
     require_pkce, enabled_scopes, is_active, floor(extract(epoch FROM created_at))::BIGINT AS created_at";

#[derive(sqlx::FromRow)]
struct ClientRow {
    client_id: String,
    name: String,
    secret_hash: Option<String>,
    confidential: bool,
    redirect_uris: Vec<String>,
    post_logout_redirect_uris: Vec<String>,
    require_pkce: bool,
    enabled_scopes: Vec<String>,
    is_active: bool,
    created_at: i64,
}

impl TryFrom<ClientRow> for OAuthClient {
    type Error = RepositoryError;

    fn try_from(row: ClientRow) -> Result<Self, Self::Error> {
        let client_id = ClientId::parse(&row.client_id)
            .map_err(|e| RepositoryError::Unexpected(format!("stored client id: {e}")))?;
        let enabled_scopes = row
            .enabled_scopes
            .iter()
            .map(|name| name.parse())
            .collect::<Result<ScopeSet, _>>()
            .map_err(|e| RepositoryError::Unexpected(format!("stored scopes of a client: {e}")))?;
        Ok(OAuthClient {
            client_id,
            name: row.name,
            secret_hash: row.secret_hash,
            redirect_uris: row.redirect_uris,
            post_logout_redirect_uris: row.post_logout_redirect_uris,
            confidential: row.confidential,
            require_pkce: row.require_pkce,
            enabled_scopes,
            is_active: row.is_active,
            created_at: row.created_at,
        })
    }
}

fn scope_names(scopes: ScopeSet) -> Vec<String> {
    scopes.iter().map(|s| s.name().to_owned()).collect()
}

#[async_trait]
impl OAuthClientRepository for PgOAuthClientRepository {
    async fn create(&self, client: OAuthClient, audit: &NewAuditEntry) -> Result<(), RepositoryError> {
        let mut tx = self.pool.begin().await.map_err(to_repository_error)?;
        sqlx::query(
            "INSERT INTO oauth_clients (client_id, name, secret_hash, confidential, \
             redirect_uris, require_pkce, enabled_scopes, is_active, post_logout_redirect_uris) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
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
        let row = sqlx::query_as::<_, ClientRow>(&format!(
            "UPDATE oauth_clients SET \
                 name = COALESCE($2, name), \
                 redirect_uris = COALESCE($3, redirect_uris), \
                 enabled_scopes = COALESCE($4, enabled_scopes), \
                 require_pkce = COALESCE($5, require_pkce), \
                 secret_hash = COALESCE($6, secret_hash), \
                 is_active = COALESCE($7, is_active), \
                 post_logout_redirect_uris = COALESCE($8, post_logout_redirect_uris), \
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
        .fetch_optional(&mut *tx)
        .await
        .map_err(to_repository_error)?;
        let Some(row) = row else {
            // No such client: nothing changed, nothing to record.
            return Ok(None);
        };
        let client = OAuthClient::try_from(row)?;
        crate::audit::commit_with(tx, audit).await?;
        Ok(Some(client))
    }

    async fn find(&self, client_id: &ClientId) -> Result<Option<OAuthClient>, RepositoryError> {
        let row = sqlx::query_as::<_, ClientRow>(&format!("SELECT {COLUMNS} FROM oauth_clients WHERE client_id = $1"))
            .bind(client_id.as_str())
            .fetch_optional(&self.pool)
            .await
            .map_err(to_repository_error)?;
        row.map(OAuthClient::try_from).transpose()
    }

    async fn list(&self) -> Result<Vec<OAuthClient>, RepositoryError> {
        let rows = sqlx::query_as::<_, ClientRow>(&format!(
            "SELECT {COLUMNS} FROM oauth_clients ORDER BY client_id COLLATE \"C\""
        ))
        .fetch_all(&self.pool)
        .await
        .map_err(to_repository_error)?;
        rows.into_iter().map(OAuthClient::try_from).collect()
    }
}
