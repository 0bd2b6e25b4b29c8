//! [`TaxIdValidationStore`] on `tax_id_attempts` and `users`.

use async_trait::async_trait;
use credencial_domain::{Cpf, UserId};
use credencial_ports::account::{CpfChange, TaxIdValidationStore};
use credencial_ports::RepositoryError;

use crate::error::to_repository_error;
use crate::SqliteDb;

/// Tax-id validation state, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteTaxIdValidationStore {
    db: SqliteDb,
}

impl SqliteTaxIdValidationStore {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}

#[async_trait]
impl TaxIdValidationStore for SqliteTaxIdValidationStore {
    async fn attempts_since(&self, user: UserId, since: i64) -> Result<Vec<i64>, RepositoryError> {
        sqlx::query_scalar(
            "SELECT attempted_at FROM tax_id_attempts WHERE user_id = ?1 AND attempted_at > ?2 ORDER BY attempted_at",
        )
        .bind(user.0)
        .bind(since)
        .fetch_all(self.db.readers())
        .await
        .map_err(to_repository_error)
    }

    async fn record_attempt(&self, user: UserId, now: i64, since: i64, max: u32) -> Result<bool, RepositoryError> {
        // One statement that writes: it holds the file's write lock from
        // its start, so the count it checks is the one it adds to; attempts
        // (of every user, in every process) are serialised.
        let done = sqlx::query(
            "INSERT INTO tax_id_attempts (user_id, attempted_at) SELECT ?1, ?2 \
             WHERE EXISTS (SELECT 1 FROM users WHERE id = ?1) \
               AND (SELECT count(*) FROM tax_id_attempts WHERE user_id = ?1 AND attempted_at > ?3) < ?4",
        )
        .bind(user.0)
        .bind(now)
        .bind(since)
        .bind(i64::from(max))
        .execute(self.db.writer())
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }

    async fn set_validated(&self, user: UserId, checked: &Cpf) -> Result<bool, RepositoryError> {
        let done = sqlx::query("UPDATE users SET receita_validated = 1 WHERE id = ?1 AND cpf = ?2")
            .bind(user.0)
            .bind(checked.as_str())
            .execute(self.db.writer())
            .await
            .map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }

    async fn change_cpf(&self, user: UserId, cpf: &Cpf) -> Result<CpfChange, RepositoryError> {
        // The guard is in the statement (and, for any other writer, in the
        // users_validated_cpf_frozen trigger); the look-up of why nothing
        // changed reads in the same write transaction.
        let mut tx = self.db.begin_write().await.map_err(to_repository_error)?;
        let done = sqlx::query("UPDATE users SET cpf = ?2 WHERE id = ?1 AND (NOT receita_validated OR cpf = ?2)")
            .bind(user.0)
            .bind(cpf.as_str())
            .execute(&mut *tx)
            .await
            .map_err(to_repository_error)?;
        if done.rows_affected() == 1 {
            tx.commit().await.map_err(to_repository_error)?;
            return Ok(CpfChange::Changed);
        }
        let exists: bool = sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM users WHERE id = ?1)")
            .bind(user.0)
            .fetch_one(&mut *tx)
            .await
            .map_err(to_repository_error)?;
        Ok(if exists { CpfChange::Validated } else { CpfChange::NotFound })
    }

    async fn purge_attempts_before(&self, before: i64, limit: u32) -> Result<u64, RepositoryError> {
        let done = sqlx::query(
            "DELETE FROM tax_id_attempts WHERE rowid IN ( \
               SELECT rowid FROM tax_id_attempts WHERE attempted_at < ?1 ORDER BY attempted_at LIMIT ?2)",
        )
        .bind(before)
        .bind(i64::from(limit))
        .execute(self.db.writer())
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected())
    }
}
