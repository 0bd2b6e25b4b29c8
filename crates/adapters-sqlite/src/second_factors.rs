//! [`SecondFactorStore`] on `user_totp`, `passkeys` and `recovery_codes`;
//! [`PasskeyStore`] on `passkeys` and `webauthn_ceremonies`.

use async_trait::async_trait;
use credencial_domain::UserId;
use credencial_ports::{
    Ceremony, NewPasskey, PasskeyRecord, PasskeyStore, RepositoryError, SecondFactorStore, TotpRecord,
};

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

    /// The database (the application passwords' statements run on it too).
    pub(crate) fn db(&self) -> &SqliteDb {
        &self.db
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
        let passkeys = sqlx::query("DELETE FROM passkeys WHERE user_id = ?1")
            .bind(user.0)
            .execute(&mut *tx)
            .await
            .map_err(to_repository_error)?;
        tx.commit().await.map_err(to_repository_error)?;
        Ok(totp.rows_affected() + codes.rows_affected() + passkeys.rows_affected() > 0)
    }

    async fn has_factor(&self, user: UserId) -> Result<bool, RepositoryError> {
        sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM user_totp WHERE user_id = ?1 AND confirmed_at IS NOT NULL) \
             OR EXISTS (SELECT 1 FROM passkeys WHERE user_id = ?1)",
        )
        .bind(user.0)
        .fetch_one(self.db.readers())
        .await
        .map_err(to_repository_error)
    }
}

/// A `passkeys` row.
type PasskeyRow = (i64, i64, Vec<u8>, Vec<u8>, String, String, i64, Option<i64>);

fn passkey_of(row: PasskeyRow) -> PasskeyRecord {
    let (id, user, credential_id, user_handle, name, data, created_at, last_used_at) = row;
    PasskeyRecord { id, user: UserId(user), credential_id, user_handle, name, data, created_at, last_used_at }
}

#[async_trait]
impl PasskeyStore for SqliteSecondFactorStore {
    async fn add_passkey(&self, new: &NewPasskey, limit: u32) -> Result<bool, RepositoryError> {
        // One statement: the limit is read where the row is written.
        let done = sqlx::query(
            "INSERT INTO passkeys (user_id, credential_id, user_handle, name, data, created_at) \
             SELECT ?1, ?2, ?3, ?4, ?5, ?6 \
             WHERE (SELECT count(*) FROM passkeys WHERE user_id = ?1) < ?7 \
             ON CONFLICT (credential_id) DO NOTHING",
        )
        .bind(new.user.0)
        .bind(&new.credential_id)
        .bind(&new.user_handle)
        .bind(&new.name)
        .bind(&new.data)
        .bind(new.now)
        .bind(i64::from(limit))
        .execute(self.db.writer())
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }

    async fn passkeys(&self, user: UserId, limit: u32) -> Result<Vec<PasskeyRecord>, RepositoryError> {
        let rows: Vec<PasskeyRow> =
            sqlx::query_as("SELECT id, user_id, credential_id, user_handle, name, data, created_at, last_used_at FROM passkeys WHERE user_id = ?1 ORDER BY id LIMIT ?2")
                .bind(user.0)
                .bind(i64::from(limit))
                .fetch_all(self.db.readers())
                .await
                .map_err(to_repository_error)?;
        Ok(rows.into_iter().map(passkey_of).collect())
    }

    async fn passkey_by_credential(&self, credential_id: &[u8]) -> Result<Option<PasskeyRecord>, RepositoryError> {
        let row: Option<PasskeyRow> = sqlx::query_as("SELECT id, user_id, credential_id, user_handle, name, data, created_at, last_used_at FROM passkeys WHERE credential_id = ?1")
            .bind(credential_id)
            .fetch_optional(self.db.readers())
            .await
            .map_err(to_repository_error)?;
        Ok(row.map(passkey_of))
    }

    async fn passkey_used(&self, id: i64, data: Option<String>, now: i64) -> Result<(), RepositoryError> {
        sqlx::query("UPDATE passkeys SET last_used_at = ?2, data = COALESCE(?3, data) WHERE id = ?1")
            .bind(id)
            .bind(now)
            .bind(data)
            .execute(self.db.writer())
            .await
            .map_err(to_repository_error)?;
        Ok(())
    }

    async fn remove_passkey(&self, user: UserId, id: i64) -> Result<bool, RepositoryError> {
        let done = sqlx::query("DELETE FROM passkeys WHERE id = ?1 AND user_id = ?2")
            .bind(id)
            .bind(user.0)
            .execute(self.db.writer())
            .await
            .map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }

    async fn put_ceremony(&self, ceremony: &Ceremony) -> Result<(), RepositoryError> {
        sqlx::query(
            "INSERT INTO webauthn_ceremonies (id_hash, user_id, purpose, state, expires_at) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .bind(&ceremony.id_hash[..])
        .bind(ceremony.user.map(|u| u.0))
        .bind(&ceremony.purpose)
        .bind(&ceremony.state)
        .bind(ceremony.expires_at)
        .execute(self.db.writer())
        .await
        .map_err(to_repository_error)?;
        Ok(())
    }

    async fn take_ceremony(&self, id_hash: &[u8; 32], now: i64) -> Result<Option<Ceremony>, RepositoryError> {
        let row: Option<(Vec<u8>, Option<i64>, String, String, i64)> = sqlx::query_as(
            "DELETE FROM webauthn_ceremonies WHERE id_hash = ?1 AND expires_at > ?2 RETURNING id_hash, user_id, purpose, state, expires_at",
        )
        .bind(&id_hash[..])
        .bind(now)
        .fetch_optional(self.db.writer())
        .await
        .map_err(to_repository_error)?;
        Ok(row.and_then(|(hash, user, purpose, state, expires_at)| {
            Some(Ceremony { id_hash: hash.try_into().ok()?, user: user.map(UserId), purpose, state, expires_at })
        }))
    }

    async fn purge_ceremonies(&self, now: i64, limit: u32) -> Result<u64, RepositoryError> {
        let done = sqlx::query(
            "DELETE FROM webauthn_ceremonies WHERE id_hash IN ( \
               SELECT id_hash FROM webauthn_ceremonies WHERE expires_at <= ?1 ORDER BY expires_at LIMIT ?2)",
        )
        .bind(now)
        .bind(i64::from(limit))
        .execute(self.db.writer())
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected())
    }
}
