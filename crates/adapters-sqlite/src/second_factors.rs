//! [`SecondFactorStore`] on `user_totp` and `recovery_codes`.

use async_trait::async_trait;
use credencial_domain::UserId;
use credencial_ports::{RepositoryError, SecondFactorStore, TotpRecord};

use crate::error::to_repository_error;
use crate::SqliteDb;

/// Second factors in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteSecondFactorStore {
    db: SqliteDb,
}

impl SqliteSecondFactorStore {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}

#[async_trait]
impl SecondFactorStore for SqliteSecondFactorStore {
    async fn totp(&self, user: UserId) -> Result<Option<TotpRecord>, RepositoryError> {
        let row: Option<(Vec<u8>, Option<i64>, Option<i64>)> =
            sqlx::query_as("SELECT secret_sealed, confirmed_at, last_step FROM user_totp WHERE user_id = ?1")
                .bind(user.0)
                .fetch_optional(self.db.readers())
                .await
                .map_err(to_repository_error)?;
        Ok(row.map(|(sealed_secret, confirmed_at, last_step)| TotpRecord {
            sealed_secret,
            confirmed: confirmed_at.is_some(),
            last_step,
        }))
    }

    async fn begin_totp(&self, user: UserId, sealed_secret: &[u8]) -> Result<bool, RepositoryError> {
        let done = sqlx::query(
            "INSERT INTO user_totp (user_id, secret_sealed) VALUES (?1, ?2) \
             ON CONFLICT (user_id) DO UPDATE SET secret_sealed = excluded.secret_sealed, last_step = NULL \
             WHERE user_totp.confirmed_at IS NULL",
        )
        .bind(user.0)
        .bind(sealed_secret)
        .execute(self.db.writer())
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }

    async fn confirm_totp(&self, user: UserId, step: i64, now: i64) -> Result<bool, RepositoryError> {
        let done = sqlx::query(
            "UPDATE user_totp SET confirmed_at = ?3, last_step = ?2 WHERE user_id = ?1 AND confirmed_at IS NULL",
        )
        .bind(user.0)
        .bind(step)
        .bind(now)
        .execute(self.db.writer())
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }

    async fn use_totp_step(&self, user: UserId, step: i64) -> Result<bool, RepositoryError> {
        // One statement on the one writer: concurrent uses are serialised,
        // and only the first finds the step fresh.
        let done = sqlx::query(
            "UPDATE user_totp SET last_step = ?2 WHERE user_id = ?1 AND confirmed_at IS NOT NULL \
             AND (last_step IS NULL OR last_step < ?2)",
        )
        .bind(user.0)
        .bind(step)
        .execute(self.db.writer())
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }

    async fn remove_totp(&self, user: UserId) -> Result<bool, RepositoryError> {
        let done = sqlx::query("DELETE FROM user_totp WHERE user_id = ?1")
            .bind(user.0)
            .execute(self.db.writer())
            .await
            .map_err(to_repository_error)?;
        Ok(done.rows_affected() > 0)
    }

    async fn replace_recovery_codes(&self, user: UserId, hashes: &[[u8; 32]]) -> Result<(), RepositoryError> {
        let mut tx = self.db.begin_write().await.map_err(to_repository_error)?;
        sqlx::query("DELETE FROM recovery_codes WHERE user_id = ?1")
            .bind(user.0)
            .execute(&mut *tx)
            .await
            .map_err(to_repository_error)?;
        for hash in hashes {
            sqlx::query("INSERT INTO recovery_codes (user_id, code_hash) VALUES (?1, ?2)")
                .bind(user.0)
                .bind(&hash[..])
                .execute(&mut *tx)
                .await
                .map_err(to_repository_error)?;
        }
        tx.commit().await.map_err(to_repository_error)
    }

    async fn use_recovery_code(&self, user: UserId, hash: &[u8; 32]) -> Result<bool, RepositoryError> {
        let done = sqlx::query("DELETE FROM recovery_codes WHERE user_id = ?1 AND code_hash = ?2")
            .bind(user.0)
            .bind(&hash[..])
            .execute(self.db.writer())
            .await
            .map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }

    async fn recovery_codes_left(&self, user: UserId) -> Result<u64, RepositoryError> {
        let n: i64 = sqlx::query_scalar("SELECT count(*) FROM recovery_codes WHERE user_id = ?1")
            .bind(user.0)
            .fetch_one(self.db.readers())
            .await
            .map_err(to_repository_error)?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    async fn remove_all(&self, user: UserId) -> Result<bool, RepositoryError> {
        let mut tx = self.db.begin_write().await.map_err(to_repository_error)?;
        let totp = sqlx::query("DELETE FROM user_totp WHERE user_id = ?1")
            .bind(user.0)
            .execute(&mut *tx)
            .await
            .map_err(to_repository_error)?;
        let codes = sqlx::query("DELETE FROM recovery_codes WHERE user_id = ?1")
            .bind(user.0)
            .execute(&mut *tx)
            .await
            .map_err(to_repository_error)?;
        tx.commit().await.map_err(to_repository_error)?;
        Ok(totp.rows_affected() + codes.rows_affected() > 0)
    }
}
