//! Computing `users.email_key` for the accounts that have none (see
//! [`credencial_domain::EmailKey`]): SQL cannot fold case and normalise as
//! the domain does (SQLite's `lower()` folds ASCII only), so `migrate` runs
//! this between the migration that adds the column and the one that makes
//! it unique.

use credencial_domain::EmailKey;
use credencial_ports::email_keys::{KeyedAccount, SharedAddresses};
use sqlx::SqliteConnection;

use crate::database::DatabaseError;
use crate::SqliteDb;

/// Accounts read per statement.
const BATCH: i64 = 1_000;

/// Keys every account without a key, in one write transaction and in
/// batches of [`BATCH`], and returns how many. Errors: `Migrate` naming the
/// accounts whose addresses would share a key (nothing is then written);
/// `Migrate` with the driver's cause.
pub(crate) async fn fill(db: &SqliteDb) -> Result<u64, DatabaseError> {
    let mut tx = db.begin_write().await.map_err(failed)?;
    let mut shared = SharedAddresses::default();
    let (mut after, mut keyed) = (0_i64, 0_u64);
    loop {
        let rows: Vec<(i64, String, String)> = sqlx::query_as(
            "SELECT id, username, email FROM users WHERE email_key IS NULL AND id > ?1 ORDER BY id LIMIT ?2",
        )
        .bind(after)
        .bind(BATCH)
        .fetch_all(&mut *tx)
        .await
        .map_err(failed)?;
        let Some(&(last, _, _)) = rows.last() else { break };
        after = last;
        let batch: Vec<(EmailKey, KeyedAccount)> = rows
            .into_iter()
            .map(|(id, username, email)| (EmailKey::of(&email), KeyedAccount { id, username, email }))
            .collect();
        let mut seen = holders(&mut tx, &batch).await?;
        seen.extend(batch.iter().cloned());
        shared.add(&seen);
        for (key, account) in batch.iter().filter(|(key, _)| !shared.contains(key)) {
            sqlx::query("UPDATE users SET email_key = ?2 WHERE id = ?1")
                .bind(account.id)
                .bind(key.as_str())
                .execute(&mut *tx)
                .await
                .map_err(failed)?;
            keyed += 1;
        }
    }
    if !shared.is_empty() {
        return Err(DatabaseError::Migrate(shared.message("run `credencial migrate` again")));
    }
    tx.commit().await.map_err(failed)?;
    if keyed > 0 {
        tracing::info!(accounts = keyed, "e-mail keys computed");
    }
    Ok(keyed)
}

/// The accounts already keyed under one of the keys of `batch`.
async fn holders(
    conn: &mut SqliteConnection,
    batch: &[(EmailKey, KeyedAccount)],
) -> Result<Vec<(EmailKey, KeyedAccount)>, DatabaseError> {
    let keys: Vec<&str> = batch.iter().filter(|(key, _)| !key.is_empty()).map(|(key, _)| key.as_str()).collect();
    let keys = serde_json::to_string(&keys).map_err(|e| DatabaseError::Migrate(e.to_string()))?;
    let rows: Vec<(i64, String, String)> =
        sqlx::query_as(&format!("SELECT id, username, email FROM users WHERE {}", crate::user_lookups::BY_EMAIL_KEYS))
            .bind(keys)
            .fetch_all(conn)
            .await
            .map_err(failed)?;
    Ok(rows
        .into_iter()
        .map(|(id, username, email)| (EmailKey::of(&email), KeyedAccount { id, username, email }))
        .collect())
}

fn failed(e: sqlx::Error) -> DatabaseError {
    DatabaseError::Migrate(format!("computing the e-mail keys failed: {e}"))
}
