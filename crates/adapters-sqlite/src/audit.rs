//! [`AuditTrail`] on the append-only `audit_log` table, and the append that
//! other adapters run inside their own write transactions.

use async_trait::async_trait;
use credencial_domain::admin::{AuditEntry, AuditFilter, NewAuditEntry, Tally};
use credencial_ports::{AuditTrail, RepositoryError};
use sqlx::query::Query;
use sqlx::sqlite::SqliteArguments;
use sqlx::{Sqlite, SqliteConnection, Transaction};

use crate::error::to_repository_error;
use crate::SqliteDb;

const APPEND: &str = "INSERT INTO audit_log \
     (actor_kind, actor, actor_user_id, action, target_kind, target, changes, request_id) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";

/// The columns of a listed entry.
const COLUMNS: &str = "id, at, actor_kind, actor, action, target_kind, target, changes, request_id";

/// The statements of one page of the trail by `filter` and of its count.
/// The filter's names come first (`actor`, `target`: each searched by its
/// index, `lower(name), id DESC`); the page is read by key, newest first,
/// never by skipping rows: the next parameter is the entry it is older
/// than (when `before`), then its limit. The count stops at its limit (the
/// parameter after the filter's).
pub fn list_statements(filter: &AuditFilter, before: bool) -> (String, String) {
    let mut conditions = Vec::new();
    for (column, given) in [("actor", filter.actor.is_some()), ("target", filter.target.is_some())] {
        if given {
            conditions.push(format!("lower({column}) = lower(?{})", conditions.len() + 1));
        }
    }
    let bound = conditions.len();
    let filtered = if conditions.is_empty() { "TRUE".to_owned() } else { conditions.join(" AND ") };
    let keyset = if before { format!(" AND id < ?{}", bound + 1) } else { String::new() };
    let limit = bound + 1 + usize::from(before);
    (
        format!("SELECT {COLUMNS} FROM audit_log WHERE {filtered}{keyset} ORDER BY id DESC LIMIT ?{limit}"),
        format!("SELECT count(*) FROM (SELECT 1 FROM audit_log WHERE {filtered} LIMIT ?{}) AS matched", bound + 1),
    )
}

/// Appends `entry` on `conn` (a transaction's connection, so that the
/// change and its entry commit together or not at all).
pub(crate) async fn append_on(conn: &mut SqliteConnection, entry: &NewAuditEntry) -> Result<(), RepositoryError> {
    let changes: Vec<[&str; 2]> = entry.changes.iter().map(|(k, v)| [k.as_str(), v.as_str()]).collect();
    let changes = serde_json::to_string(&changes).map_err(|e| RepositoryError::Unexpected(e.to_string()))?;
    sqlx::query(APPEND)
        .bind(entry.actor.kind())
        .bind(entry.actor.name())
        .bind(entry.actor.user_id().map(|id| id.0))
        .bind(entry.action.code())
        .bind(entry.target.kind())
        .bind(entry.target.name())
        .bind(changes)
        .bind(entry.request_id.as_deref())
        .execute(conn)
        .await
        .map_err(to_repository_error)?;
    Ok(())
}

/// Appends `entry` in `tx` and commits: the change `tx` made is kept only
/// with its entry.
pub(crate) async fn commit_with(
    mut tx: Transaction<'static, Sqlite>,
    entry: &NewAuditEntry,
) -> Result<(), RepositoryError> {
    append_on(&mut tx, entry).await?;
    tx.commit().await.map_err(to_repository_error)
}

/// Runs `change` (an UPDATE of one row) with its audit entry in one write
/// transaction; `Ok(false)`, and nothing written, when no row changed.
pub(crate) async fn audited_change<'q>(
    db: &SqliteDb,
    change: Query<'q, Sqlite, SqliteArguments<'q>>,
    entry: &NewAuditEntry,
) -> Result<bool, RepositoryError> {
    let mut tx = db.begin_write().await.map_err(to_repository_error)?;
    let done = change.execute(&mut *tx).await.map_err(to_repository_error)?;
    if done.rows_affected() != 1 {
        return Ok(false);
    }
    commit_with(tx, entry).await?;
    Ok(true)
}

/// The audit trail in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteAuditTrail {
    db: SqliteDb,
}

impl SqliteAuditTrail {
    /// The trail on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}

type Row = (i64, i64, String, String, String, String, String, String, Option<String>);

#[async_trait]
impl AuditTrail for SqliteAuditTrail {
    async fn append(&self, entry: &NewAuditEntry) -> Result<(), RepositoryError> {
        let mut conn = self.db.writer().acquire().await.map_err(to_repository_error)?;
        append_on(&mut conn, entry).await
    }

    async fn list(
        &self,
        filter: &AuditFilter,
        before: Option<i64>,
        limit: u32,
    ) -> Result<(Vec<AuditEntry>, u64), RepositoryError> {
        let (page, count) = list_statements(filter, before.is_some());
        let mut rows = sqlx::query_as::<_, Row>(&page);
        let mut counted = sqlx::query_scalar::<_, i64>(&count);
        for name in [&filter.actor, &filter.target].into_iter().flatten() {
            rows = rows.bind(name);
            counted = counted.bind(name);
        }
        if let Some(before) = before {
            rows = rows.bind(before);
        }
        // The page and the count from one read transaction: one snapshot.
        let mut tx = self.db.readers().begin().await.map_err(to_repository_error)?;
        let rows = rows.bind(i64::from(limit)).fetch_all(&mut *tx).await.map_err(to_repository_error)?;
        let counted = counted.bind(Tally::count_bound()).fetch_one(&mut *tx).await.map_err(to_repository_error)?;
        tx.commit().await.map_err(to_repository_error)?;
        let entries = rows
            .into_iter()
            .map(|(id, at, actor_kind, actor, action, target_kind, target, changes, request_id)| {
                let changes: Vec<(String, String)> =
                    serde_json::from_str(&changes).map_err(|e| RepositoryError::Unexpected(e.to_string()))?;
                Ok(AuditEntry { id, at, actor_kind, actor, action, target_kind, target, changes, request_id })
            })
            .collect::<Result<Vec<_>, RepositoryError>>()?;
        Ok((entries, u64::try_from(counted).unwrap_or(0)))
    }
}

#[cfg(test)]
mod tests {
    use credencial_domain::admin::{Actor, AuditAction, AuditTarget};

    use super::*;

    async fn database() -> crate::testing::TestDatabase {
        let file = crate::testing::TestDatabase::new().await;
        sqlx::query("INSERT INTO users (id, username, password) VALUES (1, 'ana', 'x')")
            .execute(file.db.writer())
            .await
            .expect("ana");
        file
    }

    fn entry(os_user: &str) -> NewAuditEntry {
        NewAuditEntry::new(
            Actor::Cli { os_user: os_user.into() },
            AuditAction::UserStaff,
            AuditTarget::User("ana".into()),
        )
        .with("is_staff", "true")
    }

    async fn state(db: &SqliteDb) -> (bool, i64) {
        let staff: bool =
            sqlx::query_scalar("SELECT is_staff FROM users WHERE id = 1").fetch_one(db.readers()).await.expect("flag");
        let entries: i64 =
            sqlx::query_scalar("SELECT count(*) FROM audit_log").fetch_one(db.readers()).await.expect("count");
        (staff, entries)
    }

    #[tokio::test]
    async fn an_audited_change_is_kept_only_with_its_entry_and_only_when_a_row_changed() {
        let file = database().await;
        let db = &file.db;
        let change = |id: i64| sqlx::query("UPDATE users SET is_staff = 1 WHERE id = ?1").bind(id);

        let refused = audited_change(db, change(1), &entry(&"x".repeat(201))).await;
        assert!(matches!(refused, Err(RepositoryError::Unexpected(_))), "{refused:?}");
        assert_eq!(state(db).await, (false, 0), "the entry was refused: nothing changed");

        assert!(!audited_change(db, change(99), &entry("root")).await.expect("no such row"));
        assert_eq!(state(db).await, (false, 0), "no change, no entry");

        assert!(audited_change(db, change(1), &entry("root")).await.expect("changed"));
        assert_eq!(state(db).await, (true, 1));
    }
}
