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
use sqlx::{SqliteConnection, SqliteExecutor};

use crate::audit::{audited_change, commit_with};
use crate::error::to_repository_error;
use crate::json::{from_json, to_json};
use crate::user_lookups::{BY_CPF, BY_CPFS, BY_EMAIL_KEY, TAKEN_BY_PRE_REGISTRATION};
use crate::SqliteDb;

/// The user-management API's storage, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteUserDirectory {
    db: SqliteDb,
}

impl SqliteUserDirectory {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}

/// The columns of [`DirectoryUserColumns`].
const USER_COLUMNS: &str = "username, coalesce(cpf, '') AS cpf, email, name AS nome, genero, data_de_nascimento, \
     receita_validated AS validado";

/// The user `key` names, read on `on`.
async fn find_user_on<'e>(
    on: impl SqliteExecutor<'e>,
    key: &DirectoryKey,
) -> Result<Option<DirectoryUser>, RepositoryError> {
    let (condition, value) = match key {
        DirectoryKey::Cpf(cpf) => (BY_CPF, cpf.as_str().to_owned()),
        DirectoryKey::Email(email) => (BY_EMAIL_KEY, email.key().as_str().to_owned()),
    };
    let sql = format!("SELECT {USER_COLUMNS} FROM users WHERE {condition}");
    let row = sqlx::query_as::<_, DirectoryUserColumns>(&sql)
        .bind(value)
        .fetch_optional(on)
        .await
        .map_err(to_repository_error)?;
    Ok(row.map(directory_user))
}

/// Creates the pre-registered account of `user` on `conn` (a write
/// transaction's), or says why not.
async fn pre_register_on(
    conn: &mut SqliteConnection,
    user: &PreRegistration,
    unusable_password: &str,
) -> Result<PreRegistered, RepositoryError> {
    // DO NOTHING without a target covers every unique index (username,
    // cpf, email_key).
    let email_key = user.email.key();
    let created = sqlx::query_as::<_, DirectoryUserColumns>(&format!(
        "INSERT INTO users (username, password, is_active, nome_usual, email, name, cpf, genero, \
         data_de_nascimento, email_key) \
         VALUES (?1, ?2, 1, ?3, ?4, ?3, ?1, ?5, ?6, ?7) ON CONFLICT DO NOTHING RETURNING {USER_COLUMNS}"
    ))
    .bind(user.cpf.as_str())
    .bind(unusable_password)
    .bind(&user.nome)
    .bind(user.email.as_str())
    .bind(&user.genero)
    .bind(user.data_de_nascimento.as_str())
    .bind(email_key.as_str())
    .fetch_optional(&mut *conn)
    .await
    .map_err(to_repository_error)?;
    if let Some(row) = created {
        return Ok(PreRegistered::Created(directory_user(row)));
    }
    if let Some(existing) = find_user_on(&mut *conn, &DirectoryKey::Cpf(user.cpf.clone())).await? {
        return Ok(PreRegistered::Existing(existing));
    }
    let (username, email): (bool, bool) = sqlx::query_as(&format!(
        "SELECT coalesce(max(username = ?1), 0), coalesce(max(email_key = ?2), 0) \
         FROM users WHERE {TAKEN_BY_PRE_REGISTRATION}"
    ))
    .bind(user.cpf.as_str())
    .bind(email_key.as_str())
    .fetch_one(&mut *conn)
    .await
    .map_err(to_repository_error)?;
    let taken = UniqueField::taken(false, email, username);
    if taken.is_empty() {
        // Cannot happen inside one write transaction; answered as
        // PostgreSQL answers it.
        return Err(RepositoryError::Conflict("a unique value was taken, then freed".into()));
    }
    Ok(PreRegistered::Taken(taken))
}

#[async_trait]
impl UserDirectory for SqliteUserDirectory {
    async fn find_api_client(&self, lookup: &str) -> Result<Option<ApiClientAccess>, RepositoryError> {
        // A deactivated application's token is refused like an unknown one.
        let row: Option<(String, Vec<u8>, String)> = sqlx::query_as(
            "SELECT client_id, api_token_hash, api_permissions FROM oauth_clients \
             WHERE api_token_lookup = ?1 AND is_active",
        )
        .bind(lookup)
        .fetch_optional(self.db.readers())
        .await
        .map_err(to_repository_error)?;
        row.map(|(client_id, hash, names)| api_client_access(&client_id, hash, &from_json::<Vec<String>>(&names)?))
            .transpose()
    }

    async fn api_token_state(&self, client_id: &ClientId) -> Result<Option<ApiTokenState>, RepositoryError> {
        let row: Option<(String, String, bool, bool, bool, bool)> = sqlx::query_as(
            "SELECT name, api_permissions, api_token_hash IS NOT NULL, client_credentials, confidential, is_active \
             FROM oauth_clients WHERE client_id = ?1",
        )
        .bind(client_id.as_str())
        .fetch_optional(self.db.readers())
        .await
        .map_err(to_repository_error)?;
        row.map(|(name, names, has_token, client_credentials, confidential, is_active)| {
            let permissions = api_permissions(&from_json::<Vec<String>>(&names)?)?;
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
            "UPDATE oauth_clients SET api_permissions = ?2, client_credentials = ?3, updated_at = unixepoch() \
             WHERE client_id = ?1",
        )
        .bind(client_id.as_str())
        .bind(to_json(&permissions.names())?)
        .bind(client_credentials);
        audited_change(&self.db, change, audit).await
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
            "UPDATE oauth_clients SET api_token_lookup = ?2, api_token_hash = ?3, api_permissions = ?4, \
             updated_at = unixepoch() WHERE client_id = ?1",
        )
        .bind(client_id.as_str())
        .bind(lookup)
        .bind(&digest.0[..])
        .bind(to_json(&permissions.names())?);
        audited_change(&self.db, change, audit).await
    }

    async fn find_user(&self, key: &DirectoryKey) -> Result<Option<DirectoryUser>, RepositoryError> {
        find_user_on(self.db.readers(), key).await
    }

    async fn list_by_cpfs(&self, cpfs: &[Cpf], page: Page) -> Result<Vec<DirectoryUser>, RepositoryError> {
        let cpfs: Vec<&str> = cpfs.iter().map(Cpf::as_str).collect();
        let rows = sqlx::query_as::<_, DirectoryUserColumns>(&format!(
            "SELECT {USER_COLUMNS} FROM users WHERE {BY_CPFS} \
             ORDER BY cpf LIMIT ?2 OFFSET ?3"
        ))
        .bind(to_json(&cpfs)?)
        .bind(i64::from(page.limit()))
        .bind(i64::try_from(page.offset()).unwrap_or(i64::MAX))
        .fetch_all(self.db.readers())
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
        // One write transaction: of concurrent pre-registrations of one CPF
        // the first creates, the others find its account.
        let mut tx = self.db.begin_write().await.map_err(to_repository_error)?;
        let outcome = pre_register_on(&mut tx, user, unusable_password).await?;
        if matches!(outcome, PreRegistered::Created(_)) {
            commit_with(tx, audit).await?;
        }
        Ok(outcome)
    }
}
