//! [`AccessLog`] on the append-only `access_log` table.

use async_trait::async_trait;
use credencial_domain::account::AccessLogPage;
use credencial_domain::UserId;
use credencial_ports::account::{AccessLog, AccessLogEntry, AccessLogRow};
use credencial_ports::stored::{client_id, scope_names, scopes_from_names};
use credencial_ports::RepositoryError;
use sqlx::PgPool;

use crate::error::to_repository_error;
use crate::paging::split_page;

/// The append as one statement on `$1` user, `$2` client, `$3` scope names,
/// `$4` Unix seconds, `$5` request id. An `INSERT … SELECT` without `FROM`,
/// so that the profile read can carry it as a data-modifying CTE of its own
/// statement with a `WHERE` of its own (the grant still exists).
pub const APPEND: &str = "INSERT INTO access_log (user_id, client_id, scopes, accessed_at, request_id) \
     SELECT $1::BIGINT, $2::TEXT, $3::TEXT[], to_timestamp($4::BIGINT), $5::TEXT";

/// One round trip: the total, and the page (a total with no row when the
/// page is past the end).
const PAGE: &str = "WITH total AS (SELECT count(*) AS n FROM access_log WHERE user_id = $1) \
     SELECT t.n, p.client_id, p.client_name, p.scopes, p.at, p.request_id \
     FROM total t LEFT JOIN LATERAL ( \
       SELECT a.client_id, COALESCE(c.name, a.client_id) AS client_name, a.scopes, \
              floor(extract(epoch FROM a.accessed_at))::BIGINT AS at, a.request_id \
       FROM access_log a LEFT JOIN oauth_clients c ON c.client_id = a.client_id \
       WHERE a.user_id = $1 ORDER BY a.accessed_at DESC, a.id DESC LIMIT $2 OFFSET $3) p ON TRUE";

/// The access log in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgAccessLog {
    pool: PgPool,
}

impl PgAccessLog {
    /// A log on `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

type PageRow = (i64, Option<String>, Option<String>, Option<Vec<String>>, Option<i64>, Option<String>);

#[async_trait]
impl AccessLog for PgAccessLog {
    async fn append(&self, entry: AccessLogEntry) -> Result<(), RepositoryError> {
        sqlx::query(APPEND)
            .bind(entry.user.0)
            .bind(entry.client.as_str())
            .bind(scope_names(entry.scopes))
            .bind(entry.at)
            .bind(&entry.request_id)
            .execute(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok(())
    }

    async fn list(&self, user: UserId, page: AccessLogPage) -> Result<(Vec<AccessLogRow>, u64), RepositoryError> {
        let rows: Vec<PageRow> = sqlx::query_as(PAGE)
            .bind(user.0)
            .bind(i64::from(page.limit()))
            .bind(i64::try_from(page.offset()).unwrap_or(i64::MAX))
            .fetch_all(&self.pool)
            .await
            .map_err(to_repository_error)?;
        let (present, total) = split_page(
            rows,
            |r| r.0,
            |(_, id, name, scopes, at, request_id)| Some((id?, name?, scopes?, at?, request_id?)),
        );
        let entries = present
            .into_iter()
            .map(|(id, name, scopes, at, request_id)| {
                Ok(AccessLogRow {
                    client_id: client_id(&id)?,
                    client_name: name,
                    scopes: scopes_from_names(&scopes)?,
                    at,
                    request_id,
                })
            })
            .collect::<Result<_, RepositoryError>>()?;
        Ok((entries, total))
    }

    async fn purge_before(&self, before: i64, limit: u32) -> Result<u64, RepositoryError> {
        // The oldest first through `access_log_accessed_at_idx` (the
        // ORDER BY keeps the planner off `access_log_user_idx`, where the
        // time is the second column).
        let done = sqlx::query(
            "DELETE FROM access_log WHERE ctid = ANY(ARRAY( \
               SELECT ctid FROM access_log WHERE accessed_at < to_timestamp($1) ORDER BY accessed_at LIMIT $2))",
        )
        .bind(before)
        .bind(i64::from(limit))
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected())
    }
}
