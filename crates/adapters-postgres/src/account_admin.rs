//! [`AccountAdminStore`] and [`LoginHistory`] on `users`, `login_failures`
//! and `user_logins`; every change appends its audit entry in its own
//! transaction.

use async_trait::async_trait;
use credencial_domain::admin::{AccountFilter, AccountQuery, LoginRecord, LoginVia, NewAuditEntry, Tally};
use credencial_domain::throttle::ThrottleKey;
use credencial_domain::{UserId, Username};
use credencial_ports::stored::{account_record, RecordColumns};
use credencial_ports::{AccessChange, AccountAdminStore, AccountRecord, LoginHistory, NewUser, RepositoryError};
use sqlx::PgPool;

use crate::audit::{audited_change, commit_with};
use crate::error::to_repository_error;
use crate::user_lookups::{search_statements, BY_CPF, BY_EMAIL_KEY, CONTAINING};
use crate::users::{
    access_change, find_record_by_id, find_record_by_username, insert_user, InsertFlags, RECORD_COLUMNS,
};

/// Account administration in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgAccountAdminStore {
    pool: PgPool,
}

impl PgAccountAdminStore {
    /// A store on `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

/// Shortest text the trigram indexes can find: shorter text is matched
/// row by row, in username order, until a page is full.
const TRIGRAM: usize = 3;

/// The condition of `query`, its one bound value (none for an empty
/// search), and whether its matches are gathered before they are ordered:
/// a whole CPF or address by its index, else a substring through the
/// trigram indexes (`pg_trgm`).
fn search_filter(query: &AccountQuery) -> (&'static str, Option<String>, bool) {
    match query.filter() {
        AccountFilter::Everyone => ("TRUE", None, false),
        AccountFilter::Cpf(cpf) => (BY_CPF, Some(cpf), false),
        AccountFilter::EmailKey(key) => (BY_EMAIL_KEY, Some(key), false),
        AccountFilter::Substring { text, like } => (CONTAINING, Some(like), text.chars().count() >= TRIGRAM),
    }
}

#[async_trait]
impl AccountAdminStore for PgAccountAdminStore {
    async fn search<'a>(
        &self,
        query: &AccountQuery,
        after: Option<&'a str>,
        limit: u32,
    ) -> Result<(Vec<AccountRecord>, u64), RepositoryError> {
        let (condition, value, matches_first) = search_filter(query);
        let bound = usize::from(value.is_some());
        let (page, count) = search_statements(RECORD_COLUMNS, condition, bound, after.is_some(), matches_first);
        let mut rows = sqlx::query_as::<_, RecordColumns>(&page);
        let mut counted = sqlx::query_scalar::<_, i64>(&count);
        if let Some(value) = &value {
            rows = rows.bind(value);
            counted = counted.bind(value);
        }
        if let Some(after) = after {
            rows = rows.bind(after);
        }
        let rows = rows.bind(i64::from(limit)).fetch_all(&self.pool).await.map_err(to_repository_error)?;
        let counted = counted.bind(Tally::count_bound()).fetch_one(&self.pool).await.map_err(to_repository_error)?;
        Ok((rows.into_iter().map(account_record).collect(), u64::try_from(counted).unwrap_or(0)))
    }

    async fn find(&self, id: UserId) -> Result<Option<AccountRecord>, RepositoryError> {
        find_record_by_id(&self.pool, id).await
    }

    async fn find_by_username(&self, username: &Username) -> Result<Option<AccountRecord>, RepositoryError> {
        find_record_by_username(&self.pool, username).await
    }

    async fn create(
        &self,
        user: NewUser,
        staff: bool,
        temporary: bool,
        audit: &NewAuditEntry,
    ) -> Result<UserId, RepositoryError> {
        let mut tx = self.pool.begin().await.map_err(to_repository_error)?;
        let flags = InsertFlags { staff, must_change_password: temporary };
        let id = insert_user(&mut *tx, &user, flags).await.map_err(taken_field)?;
        commit_with(tx, audit).await?;
        Ok(id)
    }

    async fn set_active(
        &self,
        id: UserId,
        active: bool,
        audit: &NewAuditEntry,
    ) -> Result<AccessChange, RepositoryError> {
        let change = sqlx::query("UPDATE users SET is_active = $2 WHERE id = $1").bind(id.0).bind(active);
        access_change(&self.pool, id, !active, change, audit).await
    }

    async fn set_password(
        &self,
        id: UserId,
        password_hash: &str,
        temporary: bool,
        audit: &NewAuditEntry,
    ) -> Result<bool, RepositoryError> {
        let change = sqlx::query("UPDATE users SET password = $2, must_change_password = $3 WHERE id = $1")
            .bind(id.0)
            .bind(password_hash)
            .bind(temporary);
        audited_change(&self.pool, change, audit).await
    }

    async fn clear_validation(&self, id: UserId, audit: &NewAuditEntry) -> Result<bool, RepositoryError> {
        audited_change(
            &self.pool,
            sqlx::query("UPDATE users SET receita_validated = FALSE WHERE id = $1").bind(id.0),
            audit,
        )
        .await
    }

    async fn lift_throttle(&self, keys: &[ThrottleKey], audit: &NewAuditEntry) -> Result<bool, RepositoryError> {
        let keys: Vec<&str> = keys.iter().map(ThrottleKey::as_str).collect();
        let mut tx = self.pool.begin().await.map_err(to_repository_error)?;
        let done = sqlx::query("DELETE FROM login_failures WHERE key = ANY($1)")
            .bind(&keys)
            .execute(&mut *tx)
            .await
            .map_err(to_repository_error)?;
        commit_with(tx, audit).await?;
        Ok(done.rows_affected() > 0)
    }
}

/// The login history in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgLoginHistory {
    pool: PgPool,
}

impl PgLoginHistory {
    /// A history on `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

#[async_trait]
impl LoginHistory for PgLoginHistory {
    async fn record(&self, user: UserId, via: LoginVia) -> Result<(), RepositoryError> {
        sqlx::query("INSERT INTO user_logins (user_id, via) VALUES ($1, $2)")
            .bind(user.0)
            .bind(via.code())
            .execute(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok(())
    }

    async fn recent(&self, user: UserId, limit: u32) -> Result<Vec<LoginRecord>, RepositoryError> {
        let rows: Vec<(i64, String)> = sqlx::query_as(
            "SELECT floor(extract(epoch FROM at))::BIGINT, via FROM user_logins \
             WHERE user_id = $1 ORDER BY id DESC LIMIT $2",
        )
        .bind(user.0)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(rows.into_iter().filter_map(|(at, via)| Some(LoginRecord { at, via: LoginVia::from_code(&via)? })).collect())
    }

    async fn purge(&self, before: i64, keep: u32, limit: u32) -> Result<u64, RepositoryError> {
        // Old rows by age, the oldest first through `user_logins_at_idx`;
        // once none is left, for each account, what lies beyond its `keep`
        // newest (an index probe per account with that many).
        let old = sqlx::query(
            "DELETE FROM user_logins WHERE ctid = ANY(ARRAY( \
               SELECT ctid FROM user_logins WHERE at < to_timestamp($1) ORDER BY at LIMIT $2))",
        )
        .bind(before as f64)
        .bind(i64::from(limit))
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?
        .rows_affected();
        let left = u64::from(limit).saturating_sub(old);
        if left == 0 {
            return Ok(old);
        }
        let surplus = sqlx::query(
            "DELETE FROM user_logins WHERE id IN ( \
               SELECT l.id FROM user_logins l JOIN ( \
                 SELECT u.user_id, ( \
                   SELECT id FROM user_logins x WHERE x.user_id = u.user_id \
                   ORDER BY id DESC OFFSET $1 LIMIT 1) AS last_dropped \
                 FROM (SELECT user_id FROM user_logins GROUP BY user_id HAVING count(*) > $1) u) c \
               ON l.user_id = c.user_id AND l.id <= c.last_dropped \
               LIMIT $2)",
        )
        .bind(i64::from(keep))
        .bind(i64::try_from(left).unwrap_or(i64::MAX))
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(old + surplus.rows_affected())
    }
}

/// A unique violation of a new account as `Conflict` naming the taken
/// field (`username`, `cpf` or `email`, by the constraint); any other
/// error as usual.
fn taken_field(e: sqlx::Error) -> RepositoryError {
    if let sqlx::Error::Database(db) = &e {
        if db.is_unique_violation() {
            let field = match db.constraint().unwrap_or("") {
                c if c.contains("cpf") => "cpf",
                c if c.contains("email") => "email",
                _ => "username",
            };
            return RepositoryError::Conflict(field.to_owned());
        }
    }
    to_repository_error(e)
}
