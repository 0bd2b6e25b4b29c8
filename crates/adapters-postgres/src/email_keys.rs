//! Computing `users.email_key` for the accounts that have none (see
//! [`credencial_domain::EmailKey`]): SQL cannot fold case and normalise as
//! the domain does, so `migrate` runs this between the migration that adds
//! the column and the one that makes it unique.

use credencial_domain::EmailKey;
use credencial_ports::email_keys::{KeyedAccount, SharedAddresses};
use sqlx::{PgConnection, PgPool};

use crate::database::DatabaseError;

/// Accounts keyed per statement.
const BATCH: i64 = 1_000;

/// Keys every account without a key, in one transaction and in batches
/// of [`BATCH`], and returns how many. Errors: `Migrate` naming the
/// accounts whose addresses would share a key (nothing is then written);
/// `Migrate` with the driver's cause.
pub(crate) async fn fill(pool: &PgPool) -> Result<u64, DatabaseError> {
    let mut tx = pool.begin().await.map_err(failed)?;
    let mut shared = SharedAddresses::default();
    let (mut after, mut keyed) = (0_i64, 0_u64);
    loop {
        let rows: Vec<(i64, String, String)> = sqlx::query_as(
            "SELECT id, username, email FROM users WHERE email_key IS NULL AND id > $1 ORDER BY id LIMIT $2",
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
        let (ids, keys): (Vec<i64>, Vec<&str>) =
            batch.iter().filter(|(key, _)| !shared.contains(key)).map(|(key, a)| (a.id, key.as_str())).unzip();
        sqlx::query(
            "UPDATE users AS u SET email_key = v.key FROM unnest($1::bigint[], $2::text[]) AS v (id, key) \
             WHERE u.id = v.id",
        )
        .bind(&ids)
        .bind(&keys)
        .execute(&mut *tx)
        .await
        .map_err(failed)?;
        keyed += ids.len() as u64;
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
    conn: &mut PgConnection,
    batch: &[(EmailKey, KeyedAccount)],
) -> Result<Vec<(EmailKey, KeyedAccount)>, DatabaseError> {
    let keys: Vec<&str> = batch.iter().filter(|(key, _)| !key.is_empty()).map(|(key, _)| key.as_str()).collect();
    let rows: Vec<(i64, String, String)> =
        sqlx::query_as(&format!("SELECT id, username, email FROM users WHERE {}", crate::user_lookups::BY_EMAIL_KEYS))
            .bind(&keys)
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
