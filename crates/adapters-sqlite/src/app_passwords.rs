//! [`AppPasswordStore`] on `application_passwords`.

use async_trait::async_trait;
use credencial_domain::UserId;
use credencial_ports::{AppPasswordColumns, AppPasswordRecord, AppPasswordStore, NewAppPassword, RepositoryError};

use crate::error::to_repository_error;
use crate::SqliteSecondFactorStore;

#[async_trait]
impl AppPasswordStore for SqliteSecondFactorStore {
    async fn create_app_password(&self, new: &NewAppPassword, limit: u32) -> Result<Option<i64>, RepositoryError> {
        // One statement on the one writer: the count is read where the row
        // is written, and concurrent creations are serialised.
        sqlx::query_scalar(
            "INSERT INTO application_passwords (user_id, name, password_hash, created_at) \
             SELECT ?1, ?2, ?3, ?4 \
             WHERE (SELECT count(*) FROM application_passwords WHERE user_id = ?1) < ?5 \
             RETURNING id",
        )
        .bind(new.user.0)
        .bind(&new.name)
        .bind(&new.hash[..])
        .bind(new.now)
        .bind(i64::from(limit))
        .fetch_optional(self.db().writer())
        .await
        .map_err(to_repository_error)
    }

    async fn app_passwords(&self, user: UserId, limit: u32) -> Result<Vec<AppPasswordRecord>, RepositoryError> {
        let rows: Vec<AppPasswordColumns> = sqlx::query_as(
            "SELECT id, name, created_at, last_used_at FROM application_passwords \
             WHERE user_id = ?1 ORDER BY id LIMIT ?2",
        )
        .bind(user.0)
        .bind(i64::from(limit))
        .fetch_all(self.db().readers())
        .await
        .map_err(to_repository_error)?;
        Ok(rows.into_iter().map(AppPasswordRecord::from).collect())
    }

    async fn use_app_password(&self, user: UserId, hash: &[u8; 32], now: i64) -> Result<Option<i64>, RepositoryError> {
        sqlx::query_scalar(
            "UPDATE application_passwords SET last_used_at = ?3 \
             WHERE user_id = ?1 AND password_hash = ?2 RETURNING id",
        )
        .bind(user.0)
        .bind(&hash[..])
        .bind(now)
        .fetch_optional(self.db().writer())
        .await
        .map_err(to_repository_error)
    }

    async fn app_password_exists(&self, user: UserId, id: i64) -> Result<bool, RepositoryError> {
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM application_passwords WHERE id = ?1 AND user_id = ?2)")
            .bind(id)
            .bind(user.0)
            .fetch_one(self.db().readers())
            .await
            .map_err(to_repository_error)
    }

    async fn revoke_app_password(&self, user: UserId, id: i64) -> Result<Option<String>, RepositoryError> {
        sqlx::query_scalar("DELETE FROM application_passwords WHERE id = ?1 AND user_id = ?2 RETURNING name")
            .bind(id)
            .bind(user.0)
            .fetch_optional(self.db().writer())
            .await
            .map_err(to_repository_error)
    }
}
