//! [`AccountAdminStore`] and [`LoginHistory`] on `users`, `login_failures`
//! and `user_logins`; every change appends its audit entry in its own
//! write transaction.

use async_trait::async_trait;
use credencial_domain::admin::{
    term_place, words_count, write_term_place, AccountFilter, AccountQuery, LoginRecord, LoginVia, NewAuditEntry,
    COUNT_LIMIT, WORDS_COUNT_WINDOW,
};
use credencial_domain::throttle::ThrottleKey;
use credencial_domain::{UserId, Username};
use credencial_ports::stored::{placed_account_record, PlacedRecordColumns};
use credencial_ports::{AccessChange, AccountAdminStore, AccountRecord, LoginHistory, NewUser, RepositoryError};

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

/// The condition of a search in username order and its one bound value
/// (none for an empty search): a whole CPF or address by its index.
fn search_filter(filter: &AccountFilter) -> (&'static str, Option<&str>) {
    match filter {
        AccountFilter::Cpf(cpf) => (BY_CPF, Some(cpf)),
        AccountFilter::EmailKey(key) => (BY_EMAIL_KEY, Some(key)),
        AccountFilter::Everyone | AccountFilter::Words(_) => ("TRUE", None),
    }
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
        // The page and the count from one read transaction: one snapshot.
        let mut tx = self.db.readers().begin().await.map_err(to_repository_error)?;
        let rows = rows.bind(i64::from(limit)).fetch_all(&mut *tx).await.map_err(to_repository_error)?;
        let (found, accounts) = counted.fetch_one(&mut *tx).await.map_err(to_repository_error)?;
        tx.commit().await.map_err(to_repository_error)?;
        let rows = rows.into_iter().map(placed_account_record).map(|(place, account)| match words {
            Some(_) => (write_term_place(&place, account.id.0), account),
            None => (place, account),
        });
        let (found, accounts) = (u64::try_from(found).unwrap_or(0), u64::try_from(accounts).unwrap_or(0));
        Ok((rows.collect(), if words.is_some() { words_count(found, accounts) } else { found }))
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
