//! [`UserDirectory`] on the `oauth_clients` (API tokens) and `users` tables.

use async_trait::async_trait;
use credencial_domain::account::UniqueField;
use credencial_domain::admin::{
    ApiPermissions, ApiTokenDigest, DirectoryKey, DirectoryUser, NewAuditEntry, Page, PreRegistration,
};
use credencial_domain::oauth::ClientId;
use credencial_domain::Cpf;
use credencial_ports::stored::{api_client_access, api_permissions, directory_user, DirectoryUserColumns};
use credencial_ports::{ApiClientAccess, ApiTokenState, PreRegistered, RepositoryError, UserDirectory};
use sqlx::PgPool;

use crate::audit::{audited_change, commit_with};
use crate::error::to_repository_error;
use crate::user_lookups::{BY_CPF, BY_CPFS, BY_EMAIL_KEY, TAKEN_BY_PRE_REGISTRATION};

/// The user-management API's storage in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgUserDirectory {
    pool: PgPool,
}

impl PgUserDirectory {
    /// A directory on `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

/// The columns of [`DirectoryUserColumns`].
const USER_COLUMNS: &str = "username, coalesce(cpf, '') AS cpf, email, name AS nome, genero, \
     to_char(data_de_nascimento, 'YYYY-MM-DD') AS data_de_nascimento, receita_validated AS validado";

#[async_trait]
impl UserDirectory for PgUserDirectory {
    async fn find_api_client(&self, lookup: &str) -> Result<Option<ApiClientAccess>, RepositoryError> {
        // A deactivated application's token is refused like an unknown one.
        let row: Option<(String, Vec<u8>, Vec<String>)> = sqlx::query_as(
            "SELECT client_id, api_token_hash, api_permissions FROM oauth_clients \
             WHERE api_token_lookup = $1 AND is_active",
        )
        .bind(lookup)
        .fetch_optional(&self.pool)
        .await
        .map_err(to_repository_error)?;
        row.map(|(client_id, hash, names)| api_client_access(&client_id, hash, &names)).transpose()
    }

    async fn api_token_state(&self, client_id: &ClientId) -> Result<Option<ApiTokenState>, RepositoryError> {
        let row: Option<(String, Vec<String>, bool, bool, bool, bool)> = sqlx::query_as(
            "SELECT name, api_permissions, api_token_hash IS NOT NULL, client_credentials, confidential, is_active \
             FROM oauth_clients WHERE client_id = $1",
        )
        .bind(client_id.as_str())
        .fetch_optional(&self.pool)
        .await
        .map_err(to_repository_error)?;
        row.map(|(name, names, has_token, client_credentials, confidential, is_active)| {
            let permissions = api_permissions(&names)?;
            Ok(ApiTokenState { name, permissions, has_token, client_credentials, confidential, is_active })
        })
        .transpose()
    }

    async fn set_api_access(
        &self,
        client_id: &ClientId,
        permissions: ApiPermissions,
        client_credentials: bool,
        audit: &NewAuditEntry,
    ) -> Result<bool, RepositoryError> {
        let change = sqlx::query(
            "UPDATE oauth_clients SET api_permissions = $2, client_credentials = $3, updated_at = now() \
             WHERE client_id = $1",
        )
        .bind(client_id.as_str())
        .bind(permissions.names())
        .bind(client_credentials);
        audited_change(&self.pool, change, audit).await
    }

    async fn set_api_token(
        &self,
        client_id: &ClientId,
        lookup: &str,
        digest: &ApiTokenDigest,
        permissions: ApiPermissions,
        audit: &NewAuditEntry,
    ) -> Result<bool, RepositoryError> {
        let change = sqlx::query(
            "UPDATE oauth_clients SET api_token_lookup = $2, api_token_hash = $3, api_permissions = $4, \
             updated_at = now() WHERE client_id = $1",
        )
        .bind(client_id.as_str())
        .bind(lookup)
        .bind(&digest.0[..])
        .bind(permissions.names());
        audited_change(&self.pool, change, audit).await
    }

    async fn find_user(&self, key: &DirectoryKey) -> Result<Option<DirectoryUser>, RepositoryError> {
        let (condition, value) = match key {
            DirectoryKey::Cpf(cpf) => (BY_CPF, cpf.as_str().to_owned()),
            DirectoryKey::Email(email) => (BY_EMAIL_KEY, email.key().as_str().to_owned()),
        };
        let sql = format!("SELECT {USER_COLUMNS} FROM users WHERE {condition}");
        let query = sqlx::query_as::<_, DirectoryUserColumns>(&sql).bind(value);
        let row = query.fetch_optional(&self.pool).await.map_err(to_repository_error)?;
        Ok(row.map(directory_user))
    }

    async fn list_by_cpfs(&self, cpfs: &[Cpf], page: Page) -> Result<Vec<DirectoryUser>, RepositoryError> {
        let cpfs: Vec<&str> = cpfs.iter().map(Cpf::as_str).collect();
        let rows = sqlx::query_as::<_, DirectoryUserColumns>(&format!(
            "SELECT {USER_COLUMNS} FROM users WHERE {BY_CPFS} ORDER BY cpf LIMIT $2 OFFSET $3"
        ))
        .bind(cpfs)
        .bind(i64::from(page.limit()))
        .bind(i64::try_from(page.offset()).unwrap_or(i64::MAX))
        .fetch_all(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(rows.into_iter().map(directory_user).collect())
    }

    async fn pre_register(
        &self,
        user: &PreRegistration,
        unusable_password: &str,
        audit: &NewAuditEntry,
    ) -> Result<PreRegistered, RepositoryError> {
        let mut tx = self.pool.begin().await.map_err(to_repository_error)?;
        // ON CONFLICT DO NOTHING covers every unique index (username, cpf,
        // email_key): a concurrent pre-registration of the CPF waits for
        // the other's commit, then inserts nothing.
        let email_key = user.email.key();
        let created = sqlx::query_as::<_, DirectoryUserColumns>(&format!(
            "INSERT INTO users (username, password, is_active, nome_usual, email, name, cpf, genero, \
             data_de_nascimento, email_key) \
             VALUES ($1, $2, TRUE, $3, $4, $3, $1, $5, $6::DATE, $7) ON CONFLICT DO NOTHING RETURNING {USER_COLUMNS}"
        ))
        .bind(user.cpf.as_str())
        .bind(unusable_password)
        .bind(&user.nome)
        .bind(user.email.as_str())
        .bind(&user.genero)
        .bind(user.data_de_nascimento.as_str())
        .bind(email_key.as_str())
        .fetch_optional(&mut *tx)
        .await
        .map_err(to_repository_error)?;
        if let Some(row) = created {
            commit_with(tx, audit).await?;
            return Ok(PreRegistered::Created(directory_user(row)));
        }
        tx.rollback().await.map_err(to_repository_error)?;
        if let Some(existing) = self.find_user(&DirectoryKey::Cpf(user.cpf.clone())).await? {
            return Ok(PreRegistered::Existing(existing));
        }
        let (username, email): (bool, bool) = sqlx::query_as(&format!(
            "SELECT coalesce(bool_or(username = $1), FALSE), coalesce(bool_or(email_key = $2), FALSE) \
             FROM users WHERE {TAKEN_BY_PRE_REGISTRATION}"
        ))
        .bind(user.cpf.as_str())
        .bind(email_key.as_str())
        .fetch_one(&self.pool)
        .await
        .map_err(to_repository_error)?;
        let taken = UniqueField::taken(false, email, username);
        if taken.is_empty() {
            return Err(RepositoryError::Conflict("a unique value was taken, then freed".into()));
        }
        Ok(PreRegistered::Taken(taken))
    }
}
