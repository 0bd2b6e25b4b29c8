//! [`AccessLog`] on the append-only `access_log` table.

use std::sync::LazyLock;

use async_trait::async_trait;
use credencial_domain::account::AccessLogPage;
use credencial_domain::UserId;
use credencial_ports::account::{AccessLog, AccessLogEntry, AccessLogRow};
use credencial_ports::stored::client_id;
use credencial_ports::RepositoryError;
use sqlx::SqliteConnection;

use crate::error::{is_constraint_violation, to_repository_error};
use crate::json::{scopes_from_json, scopes_to_json};
use crate::SqliteDb;

/// The insert of one entry (`?1` to `?5`: user, client, scopes, instant,
/// request id), as a `SELECT` that a condition can follow.
const INSERT_ENTRY: &str =
    "INSERT INTO access_log (user_id, client_id, scopes, accessed_at, request_id) SELECT ?1, ?2, ?3, ?4, ?5";

/// Runs the [`INSERT_ENTRY`] statement `sql` for `entry` (with `grant`, the
/// stored scopes text, as `?6` when given) on `conn`; returns whether a row
/// was written.
async fn insert<'c>(
    conn: impl sqlx::SqliteExecutor<'c>,
    sql: &str,
    entry: &AccessLogEntry,
    grant: Option<&str>,
) -> Result<bool, RepositoryError> {
    let scopes = scopes_to_json(entry.scopes)?;
    let done = insert_with(conn, sql, entry, &scopes, grant).await.map_err(to_repository_error)?;
    Ok(done)
}

/// [`insert`], with the scopes already as stored, and the driver's error.
async fn insert_with<'c>(
    conn: impl sqlx::SqliteExecutor<'c>,
    sql: &str,
    entry: &AccessLogEntry,
    scopes: &str,
    grant: Option<&str>,
) -> Result<bool, sqlx::Error> {
    let mut query = sqlx::query(sql)
        .bind(entry.user.0)
        .bind(entry.client.as_str())
        .bind(scopes)
        .bind(entry.at)
        .bind(&entry.request_id);
    if let Some(grant) = grant {
        query = query.bind(grant);
    }
    Ok(query.execute(conn).await?.rows_affected() == 1)
}

/// Appends `entry` on `conn`: the writer, or the profile read's write
/// transaction, so that the entry is written exactly when the data is
/// answered.
pub(crate) async fn append_on<'c>(
    conn: impl sqlx::SqliteExecutor<'c>,
    entry: &AccessLogEntry,
) -> Result<(), RepositoryError> {
    insert(conn, INSERT_ENTRY, entry, None).await?;
    Ok(())
}

/// Whether, at that moment, the user `{user}` is active and grants the
/// client `{client}` exactly the stored scopes text `{grant}`: the
/// condition of an access-log append after a read on a reader.
fn grant_unchanged(user: &str, client: &str, grant: &str) -> String {
    format!(
        "EXISTS (SELECT 1 FROM oauth_grants g JOIN users u ON u.id = g.user_id \
           WHERE g.user_id = {user} AND g.client_id = {client} AND g.scopes = {grant} AND u.is_active)"
    )
}

/// Appends `entry` in the writer's next group
/// ([`GroupCommit`](crate::group_commit::GroupCommit)) if, when the group
/// is written, the user is active and still grants the client exactly
/// `grant` (the scopes text a read saw); returns whether it did, once the
/// group is committed. A revocation, a change of the scopes or a
/// deactivation committed since the read leaves the log untouched and
/// answers `false`, unless by then the same grant is in force again for an
/// active user.
pub(crate) async fn append_if_grant_unchanged(
    db: &SqliteDb,
    entry: &AccessLogEntry,
    grant: &str,
) -> Result<bool, RepositoryError> {
    db.group().log(entry.clone(), grant.to_owned()).await
}

/// An entry of a group, with the grant text its read saw.
pub(crate) type GroupEntry = (AccessLogEntry, String);

/// Appends the entries of the JSON array `?1` (each
/// `[user, client, scopes, at, request id, grant]`) whose grant is
/// unchanged, in order, in one statement; answers the rows written.
static APPEND_GROUP: LazyLock<String> = LazyLock::new(|| {
    format!(
        "INSERT INTO access_log (user_id, client_id, scopes, accessed_at, request_id) \
         SELECT json_extract(e.value, '$[0]'), json_extract(e.value, '$[1]'), json_extract(e.value, '$[2]'), \
                json_extract(e.value, '$[3]'), json_extract(e.value, '$[4]') \
         FROM json_each(?1) e WHERE {} ORDER BY e.key \
         RETURNING user_id, client_id, scopes, accessed_at, request_id",
        grant_unchanged(
            "json_extract(e.value, '$[0]')",
            "json_extract(e.value, '$[1]')",
            "json_extract(e.value, '$[5]')"
        )
    )
});

/// The conditional append of one entry ([`grant_unchanged`] on `?6`).
static APPEND_ONE: LazyLock<String> =
    LazyLock::new(|| format!("{INSERT_ENTRY} WHERE {}", grant_unchanged("?1", "?2", "?6")));

/// A row as [`APPEND_GROUP`] answers it.
type Written = (i64, String, String, i64, String);

/// Appends `group` on `conn` by one statement ([`APPEND_GROUP`]), each
/// entry only if its grant is unchanged; answers each entry's outcome
/// (written or not, or its error), in order. An entry the table refuses
/// fails that statement as a whole, which SQLite undoes alone: each entry
/// is then appended alone, so that the failure is its own.
///
/// `in_transaction`: `conn` is in the group's write transaction, where an
/// error other than a constraint's may have rolled everything back — the
/// answer is then an error of the whole (the group must roll back).
/// Outside one, every statement is its own transaction and each entry's
/// error stays its own.
pub(crate) async fn append_group_on(
    conn: &mut SqliteConnection,
    group: &[GroupEntry],
    in_transaction: bool,
) -> Result<Vec<Result<bool, RepositoryError>>, RepositoryError> {
    let stored = group.iter().map(|(e, _)| scopes_to_json(e.scopes)).collect::<Result<Vec<_>, _>>()?;
    let rows: Vec<_> = group
        .iter()
        .zip(&stored)
        .map(|((e, grant), scopes)| serde_json::json!([e.user.0, e.client.as_str(), scopes, e.at, e.request_id, grant]))
        .collect();
    let together: Result<Vec<Written>, sqlx::Error> =
        sqlx::query_as(&APPEND_GROUP).bind(serde_json::Value::Array(rows).to_string()).fetch_all(&mut *conn).await;
    match together {
        Ok(written) => {
            // Each row written is an entry's (two entries alike in every
            // field are interchangeable).
            let mut outcomes = vec![false; group.len()];
            for row in written {
                let same = |(i, ((e, _), scopes)): (usize, (&GroupEntry, &String))| {
                    (!outcomes[i]
                        && row.0 == e.user.0
                        && row.1 == e.client.as_str()
                        && &row.2 == scopes
                        && row.3 == e.at
                        && row.4 == e.request_id)
                        .then_some(i)
                };
                if let Some(i) = group.iter().zip(&stored).enumerate().find_map(same) {
                    outcomes[i] = true;
                }
            }
            Ok(outcomes.into_iter().map(Ok).collect())
        }
        Err(e) if is_constraint_violation(&e) => {
            let mut outcomes = Vec::with_capacity(group.len());
            for ((entry, grant), scopes) in group.iter().zip(&stored) {
                outcomes.push(match insert_with(&mut *conn, &APPEND_ONE, entry, scopes, Some(grant)).await {
                    Ok(written) => Ok(written),
                    Err(e) if !in_transaction || is_constraint_violation(&e) => Err(to_repository_error(e)),
                    Err(e) => return Err(to_repository_error(e)),
                });
            }
            Ok(outcomes)
        }
        Err(e) => Err(to_repository_error(e)),
    }
}

/// The access log, in its own SQLite file beside the database's
/// ([`access_log_path`](crate::access_log_path)).
#[derive(Debug, Clone)]
pub struct SqliteAccessLog {
    db: SqliteDb,
}

impl SqliteAccessLog {
    /// The log on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}

#[async_trait]
impl AccessLog for SqliteAccessLog {
    async fn append(&self, entry: AccessLogEntry) -> Result<(), RepositoryError> {
        self.db.group().run(Box::new(move |conn| Box::pin(async move { append_on(conn, &entry).await }))).await
    }

    async fn list(&self, user: UserId, page: AccessLogPage) -> Result<(Vec<AccessLogRow>, u64), RepositoryError> {
        // The page and the total from one read transaction: one snapshot.
        let mut tx = self.db.readers().begin().await.map_err(to_repository_error)?;
        let total: i64 = sqlx::query_scalar("SELECT count(*) FROM access_log WHERE user_id = ?1")
            .bind(user.0)
            .fetch_one(&mut *tx)
            .await
            .map_err(to_repository_error)?;
        let rows: Vec<(String, String, String, i64, String)> = sqlx::query_as(
            "SELECT a.client_id, coalesce(c.name, a.client_id), a.scopes, a.accessed_at, a.request_id \
             FROM access_log a LEFT JOIN oauth_clients c ON c.client_id = a.client_id \
             WHERE a.user_id = ?1 ORDER BY a.accessed_at DESC, a.id DESC LIMIT ?2 OFFSET ?3",
        )
        .bind(user.0)
        .bind(i64::from(page.limit()))
        .bind(i64::try_from(page.offset()).unwrap_or(i64::MAX))
        .fetch_all(&mut *tx)
        .await
        .map_err(to_repository_error)?;
        tx.commit().await.map_err(to_repository_error)?;
        let entries = rows
            .into_iter()
            .map(|(id, client_name, scopes, at, request_id)| {
                Ok(AccessLogRow {
                    client_id: client_id(&id)?,
                    client_name,
                    scopes: scopes_from_json(&scopes)?,
                    at,
                    request_id,
                })
            })
            .collect::<Result<_, RepositoryError>>()?;
        Ok((entries, u64::try_from(total).unwrap_or(0)))
    }

    async fn purge_before(&self, before: i64, limit: u32) -> Result<u64, RepositoryError> {
        // One bounded statement, the oldest first through
        // `access_log_accessed_at_idx`: the single writer is free between
        // the caller's batches.
        let done = sqlx::query(
            "DELETE FROM access_log WHERE rowid IN ( \
               SELECT rowid FROM access_log WHERE accessed_at < ?1 ORDER BY accessed_at LIMIT ?2)",
        )
        .bind(before)
        .bind(i64::from(limit))
        .execute(self.db.writer())
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::client_read::{database, entry, logged, GRANT};

    async fn run(db: &SqliteDb, statement: &str) {
        sqlx::query(statement).execute(db.writer()).await.expect(statement);
    }

    #[tokio::test]
    async fn the_conditional_append_writes_only_while_the_grant_read_is_still_the_stored_one() {
        let file = database().await;
        let db = &file.db;
        assert!(append_if_grant_unchanged(db, &entry(), GRANT).await.expect("append"));
        assert_eq!(logged(&file).await, 1);

        // Widened since the read: the text differs, nothing is written.
        run(db, r#"UPDATE oauth_grants SET scopes = '["cnes","cpf","email"]'"#).await;
        assert!(!append_if_grant_unchanged(db, &entry(), GRANT).await.expect("append"));
        run(db, &format!("UPDATE oauth_grants SET scopes = '{GRANT}'")).await;

        // The account deactivated since the read.
        run(db, "UPDATE users SET is_active = 0").await;
        assert!(!append_if_grant_unchanged(db, &entry(), GRANT).await.expect("append"));
        run(db, "UPDATE users SET is_active = 1").await;

        // Revoked since the read.
        run(db, "DELETE FROM oauth_grants").await;
        assert!(!append_if_grant_unchanged(db, &entry(), GRANT).await.expect("append"));
        assert_eq!(logged(&file).await, 1, "only the first append wrote an entry");
    }

    #[tokio::test]
    async fn an_entry_the_table_refuses_fails_the_conditional_append() {
        let file = database().await;
        let refused = AccessLogEntry { request_id: "x".repeat(201), ..entry() };
        assert!(append_if_grant_unchanged(&file.db, &refused, GRANT).await.is_err());
        assert_eq!(logged(&file).await, 0);
    }
}
