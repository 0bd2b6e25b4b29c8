//! [`AccountAdminStore`] and [`LoginHistory`] on `users`, `login_failures`
//! and `user_logins`; every change appends its audit entry in its own
//! transaction.

use async_trait::async_trait;
use credencial_domain::admin::{AccountFilter, AccountQuery, LoginRecord, LoginVia, NewAuditEntry};
use credencial_domain::throttle::ThrottleKey;
use credencial_domain::{UserId, Username};
use credencial_ports::account_search::{Bound, SearchRead};
use credencial_ports::stored::PlacedRecordColumns;
use credencial_ports::{AccessChange, AccountAdminStore, AccountRecord, LoginHistory, NewUser, RepositoryError};
use sqlx::postgres::PgArguments;
use sqlx::query::QueryAs;
use sqlx::{PgPool, Postgres};

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

/// The statements of a page of `filter`'s search and of its count (the
/// values [`SearchRead`] binds): a whole CPF or address by its index,
/// everyone by username, words through the search terms.
fn search_sql(filter: &AccountFilter, after: bool) -> (String, String) {
    match filter {
        AccountFilter::Cpf(_) => search_statements(RECORD_COLUMNS, BY_CPF, 1, after),
        AccountFilter::EmailKey(_) => search_statements(RECORD_COLUMNS, BY_EMAIL_KEY, 1, after),
        AccountFilter::Everyone => search_statements(RECORD_COLUMNS, "TRUE", 0, after),
        AccountFilter::Words(_) => term_search_statements(RECORD_COLUMNS, after),
    }
}

/// `query` with `values` bound in order.
fn bound<'q, O>(
    query: QueryAs<'q, Postgres, O, PgArguments>,
    values: &'q [Bound],
) -> QueryAs<'q, Postgres, O, PgArguments> {
    values.iter().fold(query, |query, value| match value {
        Bound::Text(text) => query.bind(text.as_str()),
        Bound::Int(n) => query.bind(*n),
    })
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
        let read = SearchRead::new(&filter, after);
        let (page, count) = search_sql(&filter, after.is_some());
        let rows = bound(sqlx::query_as::<_, PlacedRecordColumns>(&page), &read.page);
        let counted = bound(sqlx::query_as::<_, (i64, i64)>(&count), &read.count);
        let rows = rows.bind(i64::from(limit)).fetch_all(&self.pool).await.map_err(to_repository_error)?;
        let (found, accounts) = counted.fetch_one(&self.pool).await.map_err(to_repository_error)?;
        Ok((read.rows(rows), read.count(found, accounts)))
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
