//! [`SessionStore`] on the `sessions` table.

use async_trait::async_trait;
use credencial_domain::UserId;
use credencial_ports::{NewSession, RepositoryError, ResumedSession, SessionEntry, SessionStore};
use sqlx::PgPool;

use crate::error::to_repository_error;

/// Sessions in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgSessionStore {
    pool: PgPool,
}

impl PgSessionStore {
    /// The store on `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

#[derive(sqlx::FromRow)]
struct ResumedColumns {
    id: i64,
    user_id: i64,
    auth_time: i64,
    amr: String,
    acr: String,
    must_change_password: bool,
    second_factor_pending: bool,
    display_name: String,
}

#[derive(sqlx::FromRow)]
struct EntryColumns {
    id: i64,
    created_at: i64,
    last_seen_at: i64,
    amr: String,
    device: String,
    place: String,
}

type SessionQuery<'q> = sqlx::query::QueryScalar<'q, sqlx::Postgres, i64, sqlx::postgres::PgArguments>;

impl PgSessionStore {
    /// Ends the sessions `filter` selects (a condition on `sessions`'
    /// columns, its parameters bound by `bind`) and returns how many; in
    /// the same transaction, queues a logout token for every client that
    /// was issued an ID token in one of them and listens for them
    /// (back-channel logout). The sessions are locked first: a code being
    /// issued in one of them meanwhile has either committed its
    /// `session_clients` row (which the next statement then sees) or waits
    /// and finds the session gone.
    async fn end_where(
        &self,
        filter: &str,
        bind: impl for<'q> Fn(SessionQuery<'q>) -> SessionQuery<'q>,
    ) -> Result<u64, RepositoryError> {
        let lock = format!("SELECT id FROM sessions WHERE {filter} FOR UPDATE");
        let mut tx = self.pool.begin().await.map_err(to_repository_error)?;
        let ids: Vec<i64> = bind(sqlx::query_scalar(&lock)).fetch_all(&mut *tx).await.map_err(to_repository_error)?;
        if ids.is_empty() {
            return Ok(0);
        }
        sqlx::query(
            "INSERT INTO logout_deliveries (client_id, user_id, sid, created_at, due_at) \
             SELECT sc.client_id, s.user_id, sc.sid, t.now, t.now \
             FROM sessions s JOIN session_clients sc ON sc.session_id = s.id \
             JOIN oauth_clients c ON c.client_id = sc.client_id \
             CROSS JOIN (SELECT floor(extract(epoch FROM now()))::BIGINT AS now) t \
             WHERE s.id = ANY($1) AND c.backchannel_logout_uri IS NOT NULL",
        )
        .bind(&ids)
        .execute(&mut *tx)
        .await
        .map_err(to_repository_error)?;
        let done = sqlx::query("DELETE FROM sessions WHERE id = ANY($1)")
            .bind(&ids)
            .execute(&mut *tx)
            .await
            .map_err(to_repository_error)?;
        tx.commit().await.map_err(to_repository_error)?;
        Ok(done.rows_affected())
    }
}

#[async_trait]
impl SessionStore for PgSessionStore {
    async fn create(&self, s: &NewSession) -> Result<i64, RepositoryError> {
        sqlx::query_scalar(
            "INSERT INTO sessions (token_hash, user_id, created_at, last_seen_at, expires_at, auth_time, amr, acr, \
             device, place, second_factor_pending) VALUES ($1, $2, $3, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
        )
        .bind(&s.token_hash[..])
        .bind(s.user.0)
        .bind(s.now)
        .bind(s.expires_at)
        .bind(s.auth_time)
        .bind(&s.amr)
        .bind(&s.acr)
        .bind(&s.device)
        .bind(&s.place)
        .bind(s.second_factor_pending)
        .fetch_one(&self.pool)
        .await
        .map_err(to_repository_error)
    }

    async fn resume(
        &self,
        token_hash: &[u8; 32],
        now: i64,
        idle_since: i64,
        touch_before: i64,
    ) -> Result<Option<ResumedSession>, RepositoryError> {
        // One statement: the live session and its account by the unique
        // index, and its activity recorded when stale (at most once a
        // minute: most requests write nothing).
        let row = sqlx::query_as::<_, ResumedColumns>(
            "WITH live AS ( \
               SELECT s.id, s.user_id, s.auth_time, s.amr, s.acr, s.last_seen_at, s.second_factor_pending, u.must_change_password, \
                      COALESCE(NULLIF(u.nome_usual, ''), NULLIF(u.name, ''), u.username) AS display_name \
               FROM sessions s JOIN users u ON u.id = s.user_id \
               WHERE s.token_hash = $1 AND s.expires_at > $2 AND s.last_seen_at >= $3 AND u.is_active), \
             touched AS ( \
               UPDATE sessions SET last_seen_at = $2 FROM live \
               WHERE sessions.id = live.id AND live.last_seen_at < $4) \
             SELECT id, user_id, auth_time, amr, acr, must_change_password, second_factor_pending, display_name FROM live",
        )
        .bind(&token_hash[..])
        .bind(now)
        .bind(idle_since)
        .bind(touch_before)
        .fetch_optional(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(row.map(|r| ResumedSession {
            id: r.id,
            user: UserId(r.user_id),
            auth_time: r.auth_time,
            amr: r.amr,
            acr: r.acr,
            must_change_password: r.must_change_password,
            second_factor_pending: r.second_factor_pending,
            display_name: r.display_name,
        }))
    }

    async fn end(&self, token_hash: &[u8; 32]) -> Result<bool, RepositoryError> {
        let ended = self.end_where("token_hash = $1", |q| q.bind(token_hash.to_vec())).await?;
        Ok(ended > 0)
    }

    async fn reauthenticated(&self, id: i64, now: i64) -> Result<(), RepositoryError> {
        sqlx::query("UPDATE sessions SET auth_time = $2 WHERE id = $1")
            .bind(id)
            .bind(now)
            .execute(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok(())
    }

    async fn end_one(&self, user: UserId, id: i64) -> Result<bool, RepositoryError> {
        let ended = self.end_where("id = $1 AND user_id = $2", |q| q.bind(id).bind(user.0)).await?;
        Ok(ended > 0)
    }

    async fn end_all(&self, user: UserId, except: Option<i64>) -> Result<u64, RepositoryError> {
        self.end_where("user_id = $1 AND id IS DISTINCT FROM $2", |q| q.bind(user.0).bind(except)).await
    }

    async fn list(
        &self,
        user: UserId,
        now: i64,
        idle_since: i64,
        limit: u32,
    ) -> Result<Vec<SessionEntry>, RepositoryError> {
        let rows = sqlx::query_as::<_, EntryColumns>(
            "SELECT id, created_at, last_seen_at, amr, device, place FROM sessions \
             WHERE user_id = $1 AND expires_at > $2 AND last_seen_at >= $3 \
             ORDER BY last_seen_at DESC, id DESC LIMIT $4",
        )
        .bind(user.0)
        .bind(now)
        .bind(idle_since)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(rows.into_iter().map(entry).collect())
    }

    async fn purge_expired(&self, now: i64, limit: u32) -> Result<u64, RepositoryError> {
        let done = sqlx::query(
            "DELETE FROM sessions WHERE id IN ( \
               SELECT id FROM sessions WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2)",
        )
        .bind(now)
        .bind(i64::from(limit))
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected())
    }
}

fn entry(r: EntryColumns) -> SessionEntry {
    SessionEntry {
        id: r.id,
        created_at: r.created_at,
        last_seen_at: r.last_seen_at,
        amr: r.amr,
        device: r.device,
        place: r.place,
    }
}
