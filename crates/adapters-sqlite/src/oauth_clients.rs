//! [`OAuthClientRepository`] on the `oauth_clients` table. Each write runs
//! in a write transaction with its audit entry ([`crate::audit::commit_with`]).
//! The lists are JSON arrays of strings in TEXT columns.

use async_trait::async_trait;
use credencial_domain::admin::NewAuditEntry;
use credencial_domain::oauth::ClientId;
use credencial_ports::oauth::{level_name, scope_names, ClientColumns};
use credencial_ports::{OAuthClient, OAuthClientRepository, OAuthClientUpdate, RepositoryError};

use crate::error::to_repository_error;
use crate::SqliteDb;

/// Registered OAuth2 clients in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteOAuthClientRepository {
    db: SqliteDb,
}

impl SqliteOAuthClientRepository {
    /// The repository on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}

/// [`ClientColumns`].
const COLUMNS: &str = "client_id, name, secret_hash, confidential, redirect_uris, post_logout_redirect_uris, \
     require_pkce, requires_second_factor, minimum_govbr_level, enabled_scopes, is_active, created_at, \
     backchannel_logout_uri";

/// `list` as the text of a JSON array.
fn json_text<T: serde::Serialize + ?Sized>(list: &T) -> Result<String, RepositoryError> {
    serde_json::to_string(list).map_err(|e| RepositoryError::Unexpected(e.to_string()))
}

/// `list`, when given, as the text of a JSON array.
fn json_text_of<T: serde::Serialize>(list: Option<T>) -> Result<Option<String>, RepositoryError> {
    list.as_ref().map(json_text).transpose()
}

#[async_trait]
impl OAuthClientRepository for SqliteOAuthClientRepository {
    async fn create(&self, client: OAuthClient, audit: &NewAuditEntry) -> Result<(), RepositoryError> {
        let redirect_uris = json_text(&client.redirect_uris)?;
        let post_logout = json_text(&client.post_logout_redirect_uris)?;
        let scopes = json_text(&scope_names(client.enabled_scopes))?;
        let mut tx = self.db.begin_write().await.map_err(to_repository_error)?;
        sqlx::query(
            "INSERT INTO oauth_clients (client_id, name, secret_hash, confidential, \
             redirect_uris, require_pkce, enabled_scopes, is_active, post_logout_redirect_uris, \
             requires_second_factor, minimum_govbr_level, backchannel_logout_uri) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )
        .bind(client.client_id.as_str())
        .bind(&client.name)
        .bind(&client.secret_hash)
        .bind(client.confidential)
        .bind(redirect_uris)
        .bind(client.require_pkce)
        .bind(scopes)
        .bind(client.is_active)
        .bind(post_logout)
        .bind(client.requires_second_factor)
        .bind(level_name(client.minimum_govbr_level))
        .bind(&client.backchannel_logout_uri)
        .execute(&mut *tx)
        .await
        .map_err(to_repository_error)?;
        crate::audit::commit_with(tx, audit).await
    }

    async fn update(
        &self,
        client_id: &ClientId,
        changes: OAuthClientUpdate,
        audit: &NewAuditEntry,
    ) -> Result<Option<OAuthClient>, RepositoryError> {
        let redirect_uris = json_text_of(changes.redirect_uris)?;
        let scopes = json_text_of(changes.enabled_scopes.map(scope_names))?;
        let post_logout = json_text_of(changes.post_logout_redirect_uris)?;
        let mut tx = self.db.begin_write().await.map_err(to_repository_error)?;
        let row = sqlx::query_as::<_, ClientColumns>(&format!(
            "UPDATE oauth_clients SET \
                 name = coalesce(?2, name), \
                 redirect_uris = coalesce(?3, redirect_uris), \
                 enabled_scopes = coalesce(?4, enabled_scopes), \
                 require_pkce = coalesce(?5, require_pkce), \
                 secret_hash = coalesce(?6, secret_hash), \
                 is_active = coalesce(?7, is_active), \
                 post_logout_redirect_uris = coalesce(?8, post_logout_redirect_uris), \
                 requires_second_factor = coalesce(?9, requires_second_factor), \
                 minimum_govbr_level = CASE WHEN ?10 THEN ?11 ELSE minimum_govbr_level END, \
                 backchannel_logout_uri = CASE WHEN ?12 THEN ?13 ELSE backchannel_logout_uri END, \
                 updated_at = unixepoch() \
             WHERE client_id = ?1 \
             RETURNING {COLUMNS}"
        ))
        .bind(client_id.as_str())
        .bind(changes.name)
        .bind(redirect_uris)
        .bind(scopes)
        .bind(changes.require_pkce)
        .bind(changes.secret_hash)
        .bind(changes.is_active)
        .bind(post_logout)
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
            sqlx::query_as::<_, ClientColumns>(&format!("SELECT {COLUMNS} FROM oauth_clients WHERE client_id = ?1"))
                .bind(client_id.as_str())
                .fetch_optional(self.db.readers())
                .await
                .map_err(to_repository_error)?;
        row.map(OAuthClient::from_columns).transpose()
    }

    async fn list(&self) -> Result<Vec<OAuthClient>, RepositoryError> {
        // BINARY collation: ordered bytewise, as PostgreSQL's "C".
        let rows =
            sqlx::query_as::<_, ClientColumns>(&format!("SELECT {COLUMNS} FROM oauth_clients ORDER BY client_id"))
                .fetch_all(self.db.readers())
                .await
                .map_err(to_repository_error)?;
        rows.into_iter().map(OAuthClient::from_columns).collect()
    }
}
