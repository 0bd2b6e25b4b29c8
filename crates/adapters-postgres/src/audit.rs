//! [`AuditTrail`] on the append-only `audit_log` table, and the append that
//! other adapters run inside their own transactions.

use async_trait::async_trait;
use credencial_domain::admin::{AuditEntry, AuditFilter, NewAuditEntry, Page};
use credencial_ports::{AuditTrail, RepositoryError};
use sqlx::postgres::PgArguments;
use sqlx::query::Query;
use sqlx::{PgConnection, PgPool, Postgres, Transaction};

use crate::error::to_repository_error;
use crate::paging::split_page;

const APPEND: &str = "INSERT INTO audit_log \
     (actor_kind, actor, actor_user_id, action, target_kind, target, changes, request_id) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";

/// One round trip: the total the filter selects, and the page (a total with
/// no row when the page is past the end). `$1` actor, `$2` target (NULL:
/// any), `$3` limit, `$4` offset.
const PAGE: &str = "WITH selected AS ( \
       SELECT * FROM audit_log \
       WHERE ($1::TEXT IS NULL OR lower(actor) = lower($1)) \
         AND ($2::TEXT IS NULL OR lower(target) = lower($2))), \
     total AS (SELECT count(*) AS n FROM selected) \
     SELECT t.n, p.id, p.at, p.actor_kind, p.actor, p.action, p.target_kind, p.target, p.changes, p.request_id \
     FROM total t LEFT JOIN LATERAL ( \
       SELECT id, floor(extract(epoch FROM at))::BIGINT AS at, actor_kind, actor, action, target_kind, target, \
              changes, request_id \
       FROM selected ORDER BY id DESC LIMIT $3 OFFSET $4) p ON TRUE";

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

type PageRow = (
    i64,
    Option<i64>,
    Option<i64>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<sqlx::types::Json<Vec<(String, String)>>>,
    Option<String>,
);

#[async_trait]
impl AuditTrail for PgAuditTrail {
    async fn append(&self, entry: &NewAuditEntry) -> Result<(), RepositoryError> {
        let mut conn = self.pool.acquire().await.map_err(to_repository_error)?;
        append_on(&mut conn, entry).await
    }

    async fn list(&self, filter: &AuditFilter, page: Page) -> Result<(Vec<AuditEntry>, u64), RepositoryError> {
        let rows: Vec<PageRow> = sqlx::query_as(PAGE)
            .bind(filter.actor.as_deref())
            .bind(filter.target.as_deref())
            .bind(i64::from(page.limit()))
            .bind(i64::try_from(page.offset()).unwrap_or(i64::MAX))
            .fetch_all(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok(split_page(
            rows,
            |r| r.0,
            |(_, id, at, actor_kind, actor, action, target_kind, target, changes, request_id)| {
                Some(AuditEntry {
                    id: id?,
                    at: at?,
                    actor_kind: actor_kind?,
                    actor: actor?,
                    action: action?,
                    target_kind: target_kind?,
                    target: target?,
                    changes: changes?.0,
                    request_id,
                })
            },
        ))
    }
}
