//! [`AccountAdminStore`] and [`LoginHistory`] on `users`, `login_failures`
//! and `user_logins`; every change appends its audit entry in its own
//! write transaction.

use async_trait::async_trait;
use credencial_domain::admin::{AccountFilter, AccountQuery, LoginRecord, LoginVia, NewAuditEntry};
use credencial_domain::throttle::ThrottleKey;
use credencial_domain::{UserId, Username};
use credencial_ports::account_search::{Bound, SearchRead};
use credencial_ports::stored::PlacedRecordColumns;
use credencial_ports::{AccessChange, AccountAdminStore, AccountRecord, LoginHistory, NewUser, RepositoryError};

use sqlx::query::QueryAs;
use sqlx::sqlite::SqliteArguments;
use sqlx::Sqlite;

use crate::audit::{audited_change, commit_with};
use crate::error::to_repository_error;
use crate::user_lookups::{search_statements, term_search_statements, BY_CPF, BY_EMAIL_KEY};
use crate::users::{
    access_change, find_record_by_id, find_record_by_username, insert_user, InsertFlags, RECORD_COLUMNS,
};
use crate::SqliteDb;

/// Account administration, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteAccountAdminStore {
    db: SqliteDb,
}

impl SqliteAccountAdminStore {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
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
    query: QueryAs<'q, Sqlite, O, SqliteArguments<'q>>,
    values: &'q [Bound],
) -> QueryAs<'q, Sqlite, O, SqliteArguments<'q>> {
    values.iter().fold(query, |query, value| match value {
        Bound::Text(text) => query.bind(text.as_str()),
        Bound::Int(n) => query.bind(*n),
    })
}

#[async_trait]
impl AccountAdminStore for SqliteAccountAdminStore {
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
        // The page and the count from one read transaction: one snapshot.
        let mut tx = self.db.readers().begin().await.map_err(to_repository_error)?;
        let rows = rows.bind(i64::from(limit)).fetch_all(&mut *tx).await.map_err(to_repository_error)?;
        let (found, accounts) = counted.fetch_one(&mut *tx).await.map_err(to_repository_error)?;
        tx.commit().await.map_err(to_repository_error)?;
        Ok((read.rows(rows), read.count(found, accounts)))
    }

    async fn find(&self, id: UserId) -> Result<Option<AccountRecord>, RepositoryError> {
        find_record_by_id(self.db.readers(), id).await
    }

    async fn find_by_username(&self, username: &Username) -> Result<Option<AccountRecord>, RepositoryError> {
        find_record_by_username(self.db.readers(), username).await
    }

    async fn create(
        &self,
        user: NewUser,
        staff: bool,
        temporary: bool,
        audit: &NewAuditEntry,
    ) -> Result<UserId, RepositoryError> {
        let mut tx = self.db.begin_write().await.map_err(to_repository_error)?;
        let flags = InsertFlags { staff, must_change_password: temporary };
        let id = insert_user(&mut tx, &user, flags).await.map_err(taken_field)?;
        commit_with(tx, audit).await?;
        Ok(id)
    }

    async fn set_active(
        &self,
        id: UserId,
        active: bool,
        audit: &NewAuditEntry,
    ) -> Result<AccessChange, RepositoryError> {
        let change = sqlx::query("UPDATE users SET is_active = ?2 WHERE id = ?1").bind(id.0).bind(active);
        access_change(&self.db, id, !active, change, audit).await
    }

    async fn set_password(
        &self,
        id: UserId,
        password_hash: &str,
        temporary: bool,
        audit: &NewAuditEntry,
    ) -> Result<bool, RepositoryError> {
        let change = sqlx::query("UPDATE users SET password = ?2, must_change_password = ?3 WHERE id = ?1")
            .bind(id.0)
            .bind(password_hash)
            .bind(temporary);
        audited_change(&self.db, change, audit).await
    }

    async fn clear_validation(&self, id: UserId, audit: &NewAuditEntry) -> Result<bool, RepositoryError> {
        audited_change(&self.db, sqlx::query("UPDATE users SET receita_validated = 0 WHERE id = ?1").bind(id.0), audit)
            .await
    }

    async fn lift_throttle(&self, keys: &[ThrottleKey], audit: &NewAuditEntry) -> Result<bool, RepositoryError> {
        let keys: Vec<&str> = keys.iter().map(ThrottleKey::as_str).collect();
        let keys = serde_json::to_string(&keys).map_err(|e| RepositoryError::Unexpected(e.to_string()))?;
        let mut tx = self.db.begin_write().await.map_err(to_repository_error)?;
        let done = sqlx::query("DELETE FROM login_failures WHERE key IN (SELECT value FROM json_each(?1))")
            .bind(keys)
            .execute(&mut *tx)
            .await
            .map_err(to_repository_error)?;
        commit_with(tx, audit).await?;
        Ok(done.rows_affected() > 0)
    }
}

/// Recent successful logins, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteLoginHistory {
    db: SqliteDb,
}

impl SqliteLoginHistory {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}

#[async_trait]
impl LoginHistory for SqliteLoginHistory {
    async fn record(&self, user: UserId, via: LoginVia) -> Result<(), RepositoryError> {
        sqlx::query("INSERT INTO user_logins (user_id, via) VALUES (?1, ?2)")
            .bind(user.0)
            .bind(via.code())
            .execute(self.db.writer())
            .await
            .map_err(to_repository_error)?;
        Ok(())
    }

    async fn recent(&self, user: UserId, limit: u32) -> Result<Vec<LoginRecord>, RepositoryError> {
        let rows: Vec<(i64, String)> =
            sqlx::query_as("SELECT at, via FROM user_logins WHERE user_id = ?1 ORDER BY id DESC LIMIT ?2")
                .bind(user.0)
                .bind(i64::from(limit))
                .fetch_all(self.db.readers())
                .await
                .map_err(to_repository_error)?;
        Ok(rows.into_iter().filter_map(|(at, via)| Some(LoginRecord { at, via: LoginVia::from_code(&via)? })).collect())
    }

    async fn purge(&self, before: i64, keep: u32, limit: u32) -> Result<u64, RepositoryError> {
        // Old rows by age, the oldest first through `user_logins_at_idx`;
        // once none is left, for each account, what lies beyond its `keep`
        // newest. Each its own statement: the writer is free in between.
        let old = sqlx::query(
            "DELETE FROM user_logins WHERE rowid IN ( \
               SELECT rowid FROM user_logins WHERE at < ?1 ORDER BY at LIMIT ?2)",
        )
        .bind(before)
        .bind(i64::from(limit))
        .execute(self.db.writer())
        .await
        .map_err(to_repository_error)?
        .rows_affected();
        let left = u64::from(limit).saturating_sub(old);
        if left == 0 {
            return Ok(old);
        }
        let surplus = sqlx::query(
            "DELETE FROM user_logins WHERE id IN ( \
               SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY user_id ORDER BY id DESC) AS n \
                               FROM user_logins) \
               WHERE n > ?1 LIMIT ?2)",
        )
        .bind(i64::from(keep))
        .bind(i64::try_from(left).unwrap_or(i64::MAX))
        .execute(self.db.writer())
        .await
        .map_err(to_repository_error)?;
        Ok(old + surplus.rows_affected())
    }
}

/// A unique violation of a new account as `Conflict` naming the taken
/// field (`username`, `cpf` or `email`, by the column or index SQLite
/// names: `UNIQUE constraint failed: users.cpf`, `…: index
/// 'users_email_key_key'`); any other error as usual.
fn taken_field(e: sqlx::Error) -> RepositoryError {
    if let sqlx::Error::Database(db) = &e {
        if db.is_unique_violation() {
            let field = match db.message() {
                m if m.contains("cpf") => "cpf",
                m if m.contains("email") => "email",
                _ => "username",
            };
            return RepositoryError::Conflict(field.to_owned());
        }
    }
    to_repository_error(e)
}
