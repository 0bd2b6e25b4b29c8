//! Deleting rows whose `expires_at` has passed, in bounded batches, for the
//! tables that the periodic purge keeps small (authorization codes, refresh
//! tokens).

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

/// Deletes at most `limit` rows of `table` that expired before `before`
/// (Unix seconds), the oldest first through the table's `expires_at` index,
/// and returns how many.
pub(crate) async fn delete_expired(
    pool: &PgPool,
    table: Expiring,
    before: i64,
    limit: u32,
) -> Result<u64, RepositoryError> {
    // The rows are picked by their physical address (ctid) in the same
    // statement: one index range scan, one delete, no second look-up.
    let statement = match table {
        Expiring::AuthorizationCodes => {
            "DELETE FROM oauth_codes WHERE ctid = ANY(ARRAY( \
               SELECT ctid FROM oauth_codes WHERE expires_at < to_timestamp($1) ORDER BY expires_at LIMIT $2))"
        }
        Expiring::RefreshTokens => {
            "DELETE FROM refresh_tokens WHERE ctid = ANY(ARRAY( \
               SELECT ctid FROM refresh_tokens WHERE expires_at < to_timestamp($1) ORDER BY expires_at LIMIT $2))"
        }
    };
    let done = sqlx::query(statement)
        .bind(before as f64)
        .bind(i64::from(limit))
        .execute(pool)
        .await
        .map_err(to_repository_error)?;
    Ok(done.rows_affected())
}
