//! [`UserRepository`] on the `users` table.

use async_trait::async_trait;
use credencial_domain::{UserData, UserId, Username};
use credencial_ports::{NewUser, RepositoryError, UserCredentials, UserRepository, UserSummary};
use sqlx::PgPool;

use crate::error::to_repository_error;

/// Users in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgUserRepository {
    pool: PgPool,
}

impl PgUserRepository {
    /// A repository on `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

#[derive(sqlx::FromRow)]
struct CredentialsRow {
    id: i64,
    username: String,
    password: String,
    is_active: bool,
}

#[derive(sqlx::FromRow)]
struct SummaryRow {
    id: i64,
    username: String,
    name: String,
    email: String,
    cpf: Option<String>,
    is_active: bool,
}

impl From<SummaryRow> for UserSummary {
    fn from(r: SummaryRow) -> Self {
        Self {
            id: UserId(r.id),
            username: r.username,
            name: r.name,
            email: r.email,
            cpf: r.cpf,
            is_active: r.is_active,
        }
    }
}

/// The columns of a [`SummaryRow`].
const SUMMARY_COLUMNS: &str = "id, username, name, email, cpf, is_active";

#[derive(sqlx::FromRow)]
struct UserDataRow {
    identificacao: String,
    nome_usual: String,
    email: String,
    campus: String,
    tipo_usuario: String,
}

#[async_trait]
impl UserRepository for PgUserRepository {
    async fn find_credentials(&self, username: &str) -> Result<Option<UserCredentials>, RepositoryError> {
        let row = sqlx::query_as::<_, CredentialsRow>(
            "SELECT id, username, password, is_active FROM users WHERE username = $1",
        )
        .bind(username)
        .fetch_optional(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(row.map(|r| UserCredentials {
            id: UserId(r.id),
            username: r.username,
            password_hash: r.password,
            is_active: r.is_active,
        }))
    }

    async fn find_active_user_data(&self, id: UserId) -> Result<Option<UserData>, RepositoryError> {
        let row = sqlx::query_as::<_, UserDataRow>(
            "SELECT identificacao, nome_usual, email, campus, tipo_usuario \
             FROM users WHERE id = $1 AND is_active",
        )
        .bind(id.0)
        .fetch_optional(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(row.map(|r| UserData {
            identificacao: r.identificacao,
            nome_usual: r.nome_usual,
            email: r.email,
            campus: r.campus,
            tipo_usuario: r.tipo_usuario,
        }))
    }

    async fn create(&self, user: NewUser) -> Result<UserId, RepositoryError> {
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO users (username, password, is_active, identificacao, nome_usual, \
             email, campus, tipo_usuario, name, cpf) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
        )
        .bind(user.username.as_str())
        .bind(&user.password_hash)
        .bind(user.is_active)
        .bind(&user.data.identificacao)
        .bind(&user.data.nome_usual)
        .bind(&user.data.email)
        .bind(&user.data.campus)
        .bind(&user.data.tipo_usuario)
        .bind(&user.name)
        .bind(&user.cpf)
        .fetch_one(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(UserId(id))
    }

    async fn find_summary(&self, username: &Username) -> Result<Option<UserSummary>, RepositoryError> {
        let row = sqlx::query_as::<_, SummaryRow>(&format!("SELECT {SUMMARY_COLUMNS} FROM users WHERE username = $1"))
            .bind(username.as_str())
            .fetch_optional(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok(row.map(Into::into))
    }

    async fn find_summary_by_id(&self, id: UserId) -> Result<Option<UserSummary>, RepositoryError> {
        let row = sqlx::query_as::<_, SummaryRow>(&format!("SELECT {SUMMARY_COLUMNS} FROM users WHERE id = $1"))
            .bind(id.0)
            .fetch_optional(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok(row.map(Into::into))
    }

    async fn list(&self, offset: u64, limit: u32) -> Result<(Vec<UserSummary>, u64), RepositoryError> {
        let offset = i64::try_from(offset).unwrap_or(i64::MAX);
        let rows = sqlx::query_as::<_, SummaryRow>(&format!(
            "SELECT {SUMMARY_COLUMNS} FROM users ORDER BY id LIMIT $1 OFFSET $2"
        ))
        .bind(i64::from(limit))
        .bind(offset)
        .fetch_all(&self.pool)
        .await
        .map_err(to_repository_error)?;
        let total: i64 = sqlx::query_scalar("SELECT count(*) FROM users")
            .fetch_one(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok((rows.into_iter().map(Into::into).collect(), u64::try_from(total).unwrap_or(0)))
    }

    async fn set_active(&self, id: UserId, active: bool) -> Result<bool, RepositoryError> {
        let done = sqlx::query("UPDATE users SET is_active = $2 WHERE id = $1")
            .bind(id.0)
            .bind(active)
            .execute(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }

    async fn set_password_hash(&self, id: UserId, password_hash: &str) -> Result<bool, RepositoryError> {
        let done = sqlx::query("UPDATE users SET password = $2 WHERE id = $1")
            .bind(id.0)
            .bind(password_hash)
            .execute(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }
}
