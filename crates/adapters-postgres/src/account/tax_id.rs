//! [`TaxIdValidationStore`] on `tax_id_attempts` and `users`.

use async_trait::async_trait;
use credencial_domain::{Cpf, UserId};
use credencial_ports::account::{CpfChange, TaxIdValidationStore};
use credencial_ports::RepositoryError;
use sqlx::PgPool;

use crate::error::to_repository_error;

/// Tax-id validation state in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgTaxIdValidationStore {
    pool: PgPool,
}

impl PgTaxIdValidationStore {
    /// A store on `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

#[async_trait]
impl TaxIdValidationStore for PgTaxIdValidationStore {
    async fn attempts_since(&self, user: UserId, since: i64) -> Result<Vec<i64>, RepositoryError> {
        let rows: Vec<(i64,)> = sqlx::query_as(
            "SELECT floor(extract(epoch FROM attempted_at))::BIGINT FROM tax_id_attempts \
             WHERE user_id = $1 AND attempted_at > to_timestamp($2) ORDER BY attempted_at",
        )
        .bind(user.0)
        .bind(since)
        .fetch_all(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(rows.into_iter().map(|(t,)| t).collect())
    }

    async fn record_attempt(&self, user: UserId, now: i64, since: i64, max: u32) -> Result<bool, RepositoryError> {
        let mut tx = self.pool.begin().await.map_err(to_repository_error)?;
        // The user's row lock serialises attempts of one user: a second
        // caller waits here, and its count below (a new statement, so a new
        // snapshot under READ COMMITTED) sees the first one's row. NO KEY
        // UPDATE does not block inserts that reference the user.
        let exists = sqlx::query("SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE")
            .bind(user.0)
            .fetch_optional(&mut *tx)
            .await
            .map_err(to_repository_error)?
            .is_some();
        if !exists {
            return Ok(false);
        }
        let recorded = sqlx::query(
            "INSERT INTO tax_id_attempts (user_id, attempted_at) SELECT $1, to_timestamp($2) \
             WHERE (SELECT count(*) FROM tax_id_attempts WHERE user_id = $1 AND attempted_at > to_timestamp($3)) < $4",
        )
        .bind(user.0)
        .bind(now)
        .bind(since)
        .bind(i64::from(max))
        .execute(&mut *tx)
        .await
        .map_err(to_repository_error)?
        .rows_affected()
            == 1;
        tx.commit().await.map_err(to_repository_error)?;
        Ok(recorded)
    }

    async fn set_validated(&self, user: UserId, checked: &Cpf) -> Result<bool, RepositoryError> {
        let done = sqlx::query("UPDATE users SET receita_validated = TRUE WHERE id = $1 AND cpf = $2::bpchar")
            .bind(user.0)
            .bind(checked.as_str())
            .execute(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }

    async fn change_cpf(&self, user: UserId, cpf: &Cpf) -> Result<CpfChange, RepositoryError> {
        // The guard is in the statement (and, for any other writer, in the
        // users_validated_cpf_frozen trigger).
        let row: Option<(bool, bool)> = sqlx::query_as(
            "WITH changed AS ( \
               UPDATE users SET cpf = $2 WHERE id = $1 AND (NOT receita_validated OR cpf = $2) RETURNING id) \
             SELECT EXISTS (SELECT 1 FROM changed), receita_validated FROM users WHERE id = $1",
        )
        .bind(user.0)
        .bind(cpf.as_str())
        .fetch_optional(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(match row {
            None => CpfChange::NotFound,
            Some((true, _)) => CpfChange::Changed,
            Some((false, _)) => CpfChange::Validated,
        })
    }

    async fn purge_attempts_before(&self, before: i64, limit: u32) -> Result<u64, RepositoryError> {
        let done = sqlx::query(
            "DELETE FROM tax_id_attempts WHERE ctid = ANY(ARRAY( \
               SELECT ctid FROM tax_id_attempts WHERE attempted_at < to_timestamp($1) \
               ORDER BY attempted_at LIMIT $2))",
        )
        .bind(before)
        .bind(i64::from(limit))
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected())
    }
}
