//! Deleting rows whose `expires_at` has passed, for the tables that the
//! periodic purge keeps small (authorization codes, refresh tokens).

use credencial_ports::RepositoryError;
use sqlx::PgPool;

use crate::error::to_repository_error;

/// A table with an `expires_at` column that the purge may empty.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Expiring {
    /// `oauth_codes`.
    AuthorizationCodes,
    /// `refresh_tokens`.
    RefreshTokens,
}

/// Deletes the rows of `table` that expired before `before` (Unix seconds)
/// and returns how many.
pub(crate) async fn delete_expired(pool: &PgPool, table: Expiring, before: i64) -> Result<u64, RepositoryError> {
    let statement = match table {
        Expiring::AuthorizationCodes => "DELETE FROM oauth_codes WHERE expires_at < to_timestamp($1)",
        Expiring::RefreshTokens => "DELETE FROM refresh_tokens WHERE expires_at < to_timestamp($1)",
    };
    let done = sqlx::query(statement).bind(before as f64).execute(pool).await.map_err(to_repository_error)?;
    Ok(done.rows_affected())
}
