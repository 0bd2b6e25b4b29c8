//! [`RefreshTokenStore`] on the `refresh_tokens` table.

use async_trait::async_trait;
use credencial_domain::admin::LoginVia;
use credencial_domain::UserId;
use credencial_ports::{NewRefreshToken, RefreshTokenStore, RepositoryError, Rotation};
use sqlx::PgPool;

use crate::error::to_repository_error;
use crate::expiry::{delete_expired, Expiring};

/// Refresh-token state in PostgreSQL, shared by every instance.
#[derive(Debug, Clone)]
pub struct PgRefreshTokenStore {
    pool: PgPool,
}

impl PgRefreshTokenStore {
    /// A store on `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

#[async_trait]
impl RefreshTokenStore for PgRefreshTokenStore {
    async fn record(&self, token: NewRefreshToken, family: &str) -> Result<(), RepositoryError> {
        sqlx::query(
            "INSERT INTO refresh_tokens (jti, user_id, expires_at, family) VALUES ($1, $2, to_timestamp($3), $4)",
        )
        .bind(&token.jti)
        .bind(token.user_id.0)
        .bind(token.expires_at as f64)
        .bind(family)
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(())
    }

    async fn record_login(&self, token: NewRefreshToken, family: &str, via: LoginVia) -> Result<(), RepositoryError> {
        // One statement (one round trip, one implicit transaction): the
        // token and the login are stored together or not at all.
        sqlx::query(
            "WITH login AS (INSERT INTO user_logins (user_id, via) VALUES ($2, $5)) \
             INSERT INTO refresh_tokens (jti, user_id, expires_at, family) VALUES ($1, $2, to_timestamp($3), $4)",
        )
        .bind(&token.jti)
        .bind(token.user_id.0)
        .bind(token.expires_at as f64)
        .bind(family)
        .bind(via.code())
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(())
    }

    async fn rotate(&self, old_jti: &str, user_id: UserId, new: NewRefreshToken) -> Result<Rotation, RepositoryError> {
        // One statement, so one snapshot: of two concurrent rotations of the
        // same token the second finds rotated_at set after the first commits
        // (the row lock makes it re-check) and inserts nothing. `prior` reads
        // the old row as the statement's snapshot has it, before `old`
        // changes it: already rotated there means a replay (a concurrent
        // rotation that committed meanwhile is not in the snapshot: Refused).
        // A revoked token (not rotated) is refused too, with no replay.
        let (inserted, replayed_family): (Option<String>, Option<String>) = sqlx::query_as(
            "WITH prior AS ( \
                 SELECT family FROM refresh_tokens \
                 WHERE jti = $1 AND user_id = $2 AND rotated_at IS NOT NULL AND NOT revoked), \
             old AS ( \
                 UPDATE refresh_tokens SET rotated_at = now() \
                 WHERE jti = $1 AND user_id = $2 AND rotated_at IS NULL \
                 RETURNING user_id, family), \
             issued AS ( \
                 INSERT INTO refresh_tokens (jti, user_id, expires_at, family) \
                 SELECT $3, old.user_id, to_timestamp($4), old.family \
                 FROM old JOIN users u ON u.id = old.user_id AND u.is_active \
                 RETURNING jti) \
             SELECT (SELECT jti FROM issued), (SELECT family FROM prior)",
        )
        .bind(old_jti)
        .bind(user_id.0)
        .bind(&new.jti)
        .bind(new.expires_at as f64)
        .fetch_one(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(match (inserted, replayed_family) {
            (Some(_), _) => Rotation::Rotated,
            (None, Some(family)) => Rotation::Replayed { family },
            (None, None) => Rotation::Refused,
        })
    }

    async fn revoke_family(&self, family: &str) -> Result<u64, RepositoryError> {
        let done = sqlx::query(
            "UPDATE refresh_tokens SET rotated_at = now(), revoked = TRUE WHERE family = $1 AND rotated_at IS NULL",
        )
        .bind(family)
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected())
    }

    async fn revoke_user(&self, user: UserId) -> Result<u64, RepositoryError> {
        let done = sqlx::query(
            "UPDATE refresh_tokens SET rotated_at = now(), revoked = TRUE WHERE user_id = $1 AND rotated_at IS NULL",
        )
        .bind(user.0)
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected())
    }

    async fn is_current(&self, jti: &str) -> Result<bool, RepositoryError> {
        let found: Option<i32> =
            sqlx::query_scalar("SELECT 1 FROM refresh_tokens WHERE jti = $1 AND rotated_at IS NULL")
                .bind(jti)
                .fetch_optional(&self.pool)
                .await
                .map_err(to_repository_error)?;
        Ok(found.is_some())
    }

    async fn purge_expired(&self, before: i64) -> Result<u64, RepositoryError> {
        delete_expired(&self.pool, Expiring::RefreshTokens, before).await
    }
}
