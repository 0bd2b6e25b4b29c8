//! [`AuditTrail`] on the append-only `audit_log` table, and the append that
//! other adapters run inside their own transactions.

use async_trait::async_trait;
use credencial_domain::admin::{AuditEntry, AuditFilter, NewAuditEntry, Tally};
use credencial_ports::{AuditTrail, RepositoryError};
use sqlx::postgres::PgArguments;
use sqlx::query::Query;
use sqlx::{PgConnection, PgPool, Postgres, Transaction};

use crate::error::to_repository_error;

const APPEND: &str = "INSERT INTO audit_log \
     (actor_kind, actor, actor_user_id, action, target_kind, target, changes, request_id) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";

/// The columns of a listed entry.
const COLUMNS: &str = "id, floor(extract(epoch FROM at))::BIGINT, actor_kind, actor, action, target_kind, target, \
     changes, request_id";

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
            conditions.push(format!("lower({column}) = lower(${})", conditions.len() + 1));
        }
    }
    let bound = conditions.len();
    let filtered = if conditions.is_empty() { "TRUE".to_owned() } else { conditions.join(" AND ") };
    let keyset = if before { format!(" AND id < ${}", bound + 1) } else { String::new() };
    let limit = bound + 1 + usize::from(before);
    (
        format!("SELECT {COLUMNS} FROM audit_log WHERE {filtered}{keyset} ORDER BY id DESC LIMIT ${limit}"),
        format!("SELECT count(*) FROM (SELECT 1 FROM audit_log WHERE {filtered} LIMIT ${}) AS matched", bound + 1),
    )
}

/// Appends `entry` on `conn` (inside the caller's transaction, so that the
/// change it records and the entry are stored together or not at all).
pub(crate) async fn append_on(conn: &mut PgConnection, entry: &NewAuditEntry) -> Result<(), RepositoryError> {
    let changes: Vec<[&str; 2]> = entry.changes.iter().map(|(k, v)| [k.as_str(), v.as_str()]).collect();
    sqlx::query(APPEND)
        .bind(entry.actor.kind())
        .bind(entry.actor.name())
        .bind(entry.actor.user_id().map(|id| id.0))
        .bind(entry.action.code())
        .bind(entry.target.kind())
        .bind(entry.target.name())
        .bind(sqlx::types::Json(changes))
        .bind(entry.request_id.as_deref())
        .execute(conn)
        .await
        .map_err(to_repository_error)?;
    Ok(())
}

/// Appends `entry` inside `tx` and commits it: the change `tx` holds and
/// its entry are stored together.
pub(crate) async fn commit_with(
    mut tx: Transaction<'_, Postgres>,
    entry: &NewAuditEntry,
) -> Result<(), RepositoryError> {
    append_on(&mut tx, entry).await?;
    tx.commit().await.map_err(to_repository_error)
}

/// Runs `change` (one statement that changes one row when its target
/// exists) on `pool` and, when it changed one, appends `entry`, in one
/// transaction; `Ok(false)` and nothing stored otherwise.
pub(crate) async fn audited_change(
    pool: &PgPool,
    change: Query<'_, Postgres, PgArguments>,
    entry: &NewAuditEntry,
) -> Result<bool, RepositoryError> {
    let mut tx = pool.begin().await.map_err(to_repository_error)?;
    let done = change.execute(&mut *tx).await.map_err(to_repository_error)?;
    if done.rows_affected() != 1 {
        return Ok(false);
    }
    commit_with(tx, entry).await?;
    Ok(true)
}

/// The audit trail in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgAuditTrail {
    pool: PgPool,
}

impl PgAuditTrail {
    /// A trail on `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

type Row = (i64, i64, String, String, String, String, String, sqlx::types::Json<Vec<(String, String)>>, Option<String>);

#[async_trait]
impl AuditTrail for PgAuditTrail {
    async fn append(&self, entry: &NewAuditEntry) -> Result<(), RepositoryError> {
        let mut conn = self.pool.acquire().await.map_err(to_repository_error)?;
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
        let rows = rows.bind(i64::from(limit)).fetch_all(&self.pool).await.map_err(to_repository_error)?;
        let counted = counted.bind(Tally::count_bound()).fetch_one(&self.pool).await.map_err(to_repository_error)?;
        let entries = rows
            .into_iter()
            .map(|(id, at, actor_kind, actor, action, target_kind, target, changes, request_id)| AuditEntry {
                id,
                at,
                actor_kind,
                actor,
                action,
                target_kind,
                target,
                changes: changes.0,
                request_id,
            })
            .collect();
        Ok((entries, u64::try_from(counted).unwrap_or(0)))
    }
}
