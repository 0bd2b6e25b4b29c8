//! [`OAuthClientRepository`] on the `oauth_clients` table.

use async_trait::async_trait;
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

const COLUMNS: &str = "client_id, name, secret_hash, confidential, redirect_uris, require_pkce, enabled_scopes";

#[derive(sqlx::FromRow)]
struct ClientRow {
    client_id: String,
    name: String,
    secret_hash: Option<String>,
    confidential: bool,
    redirect_uris: Vec<String>,
    require_pkce: bool,
    enabled_scopes: Vec<String>,
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
            confidential: row.confidential,
            require_pkce: row.require_pkce,
            enabled_scopes,
        })
    }
}

fn scope_names(scopes: ScopeSet) -> Vec<String> {
    scopes.iter().map(|s| s.name().to_owned()).collect()
}

#[async_trait]
impl OAuthClientRepository for PgOAuthClientRepository {
    async fn create(&self, client: OAuthClient) -> Result<(), RepositoryError> {
        sqlx::query(
            "INSERT INTO oauth_clients (client_id, name, secret_hash, confidential, \
             redirect_uris, require_pkce, enabled_scopes) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(client.client_id.as_str())
        .bind(&client.name)
        .bind(&client.secret_hash)
        .bind(client.confidential)
        .bind(&client.redirect_uris)
        .bind(client.require_pkce)
        .bind(scope_names(client.enabled_scopes))
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(())
    }

    async fn update(
        &self,
        client_id: &ClientId,
        changes: OAuthClientUpdate,
    ) -> Result<Option<OAuthClient>, RepositoryError> {
        let row = sqlx::query_as::<_, ClientRow>(&format!(
            "UPDATE oauth_clients SET \
                 name = COALESCE($2, name), \
                 redirect_uris = COALESCE($3, redirect_uris), \
                 enabled_scopes = COALESCE($4, enabled_scopes), \
                 require_pkce = COALESCE($5, require_pkce), \
                 secret_hash = COALESCE($6, secret_hash), \
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
        .fetch_optional(&self.pool)
        .await
        .map_err(to_repository_error)?;
        row.map(OAuthClient::try_from).transpose()
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
