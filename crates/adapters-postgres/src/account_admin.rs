//! [`AccountAdminStore`] and [`LoginHistory`] on `users`, `login_failures`
//! and `user_logins`; every change appends its audit entry in its own
//! transaction.

use async_trait::async_trait;
use credencial_domain::admin::{
    term_place, words_count, write_term_place, AccountFilter, AccountQuery, LoginRecord, LoginVia, NewAuditEntry,
    COUNT_LIMIT, WORDS_COUNT_WINDOW,
};
use credencial_domain::throttle::ThrottleKey;
use credencial_domain::{UserId, Username};
use credencial_ports::stored::{placed_account_record, PlacedRecordColumns};
use credencial_ports::{AccessChange, AccountAdminStore, AccountRecord, LoginHistory, NewUser, RepositoryError};
use sqlx::PgPool;

use crate::audit::{audited_change, commit_with};
use crate::error::to_repository_error;
use crate::user_lookups::{search_statements, term_search_statements, BY_CPF, BY_EMAIL_KEY};
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

/// The condition of a search by username order and its one bound value
/// (none for an empty search): a whole CPF or address by its index.
fn search_filter(filter: &AccountFilter) -> (&'static str, Option<&str>) {
    match filter {
        AccountFilter::Cpf(cpf) => (BY_CPF, Some(cpf)),
        AccountFilter::EmailKey(key) => (BY_EMAIL_KEY, Some(key)),
        AccountFilter::Everyone | AccountFilter::Words(_) => ("TRUE", None),
    }
}

#[async_trait]
impl AccountAdminStore for PgAccountAdminStore {
    async fn search<'a>(
        &self,
        query: &AccountQuery,
        after: Option<&'a str>,
        limit: u32,
    ) -> Result<(Vec<(String, AccountRecord)>, u64), RepositoryError> {
        let filter = query.filter();
        let words = match &filter {
            AccountFilter::Words(prefix) => Some((prefix.start(), prefix.end())),
            _ => None,
        };
        let (condition, value) = search_filter(&filter);
        let (page, count) = match words {
            Some(_) => term_search_statements(RECORD_COLUMNS, after.is_some()),
            None => search_statements(RECORD_COLUMNS, condition, usize::from(value.is_some()), after.is_some()),
        };
        let mut rows = sqlx::query_as::<_, PlacedRecordColumns>(&page);
        let mut counted = sqlx::query_as::<_, (i64, i64)>(&count);
        if let Some((start, end)) = &words {
            rows = rows.bind(*start).bind(end.as_str());
            counted = counted.bind(*start).bind(end.as_str());
        }
        if let Some(value) = value {
            rows = rows.bind(value);
            counted = counted.bind(value);
        }
        let place = after.map(|after| (after, term_place(after)));
        match (&place, words.is_some()) {
            (Some((_, (term, id))), true) => rows = rows.bind(term.as_str()).bind(*id),
            (Some((after, _)), false) => rows = rows.bind(*after),
            (None, _) => {}
        }
        let window = if words.is_some() { WORDS_COUNT_WINDOW } else { COUNT_LIMIT + 1 };
        let counted = counted.bind(i64::try_from(window).unwrap_or(i64::MAX));
        let rows = rows.bind(i64::from(limit)).fetch_all(&self.pool).await.map_err(to_repository_error)?;
        let (found, accounts) = counted.fetch_one(&self.pool).await.map_err(to_repository_error)?;
        let rows = rows.into_iter().map(placed_account_record).map(|(place, account)| match words {
            Some(_) => (write_term_place(&place, account.id.0), account),
            None => (place, account),
        });
        let (found, accounts) = (u64::try_from(found).unwrap_or(0), u64::try_from(accounts).unwrap_or(0));
        Ok((rows.collect(), if words.is_some() { words_count(found, accounts) } else { found }))
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
