//! [`OwnEntryRepository`] on `experiences` and `degrees`: one set of
//! statements for both, from each one's [`EntryTable`]. Every statement
//! names both the entry id and the owner, so another person's id matches
//! nothing.

use async_trait::async_trait;
use credencial_domain::account::{Entry, EntryId, EntryKind};
use credencial_domain::UserId;
use credencial_ports::account::{OwnEntry, OwnEntryRepository};
use credencial_ports::stored::{own_entry, EntryColumns, EntryTable};
use credencial_ports::RepositoryError;
use sqlx::query::QueryAs;
use sqlx::sqlite::SqliteArguments;
use sqlx::Sqlite;

use crate::error::to_repository_error;
use crate::SqliteDb;

/// Own entries, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteOwnEntryRepository {
    db: SqliteDb,
}

impl SqliteOwnEntryRepository {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}

/// How a `YYYY-MM-DD` parameter is stored in `table`: experiences keep a
/// datetime (`YYYY-MM-DDTHH:MM:SS`, midnight), degrees a date.
fn stored_date(table: &EntryTable, parameter: &str) -> String {
    if table.grau.is_some() {
        format!("date({parameter})")
    } else {
        format!("strftime('%Y-%m-%dT%H:%M:%S', {parameter})")
    }
}

/// The rows of `table` matching `filter`, in the profile answer's order
/// (undated last), with the columns of [`EntryColumns`].
fn select(table: &EntryTable, filter: &str) -> String {
    let EntryTable { name, place, subject, .. } = table;
    let grau = table.grau.unwrap_or("NULL");
    let from_cnes = if table.has_origin { "origin = 'cnes'" } else { "0" };
    format!(
        "SELECT id, {place}, {subject}, {grau}, date(data_inicio), date(data_fim), municipio, descricao, {from_cnes} \
         FROM {name} WHERE {filter} ORDER BY data_inicio NULLS LAST, id"
    )
}

/// Inserts a row typed by the user: `?1` the owner, `?2`…`?7` the fields,
/// `?8` the degree code (degrees only).
fn insert(table: &EntryTable) -> String {
    let EntryTable { name, place, subject, .. } = table;
    let (grau, value) = table.grau.map_or((String::new(), ""), |g| (format!(", {g}"), ", ?8"));
    let (inicio, fim) = (stored_date(table, "?4"), stored_date(table, "?5"));
    format!(
        "INSERT INTO {name} (user_id, {place}, {subject}, data_inicio, data_fim, municipio, descricao{grau}) \
         VALUES (?1, ?2, ?3, {inicio}, {fim}, ?6, ?7{value}) RETURNING id"
    )
}

/// Replaces the fields of `?8`, owned by `?1`, with `?2`…`?7` and `?9` (the
/// degree code, degrees only); the row is the user's own from then on.
/// Returns the id of the row it changed.
fn update(table: &EntryTable) -> String {
    let EntryTable { name, place, subject, .. } = table;
    let grau = table.grau.map_or_else(String::new, |g| format!(", {g} = ?9"));
    let origin = if table.has_origin { ", origin = 'user'" } else { "" };
    let (inicio, fim) = (stored_date(table, "?4"), stored_date(table, "?5"));
    format!(
        "UPDATE {name} SET {place} = ?2, {subject} = ?3, data_inicio = {inicio}, data_fim = {fim}, \
           municipio = ?6, descricao = ?7{grau}{origin} \
         WHERE user_id = ?1 AND id = ?8 RETURNING id"
    )
}

/// `entry`'s fields bound as `?2`…`?7` after the owner `?1`.
fn bind_fields<'q>(
    query: QueryAs<'q, Sqlite, (i64,), SqliteArguments<'q>>,
    user: UserId,
    entry: &'q Entry,
) -> QueryAs<'q, Sqlite, (i64,), SqliteArguments<'q>> {
    query
        .bind(user.0)
        .bind(entry.place())
        .bind(entry.subject())
        .bind(entry.data_inicio().as_str())
        .bind(entry.data_fim().map(|d| d.as_str()))
        .bind(entry.municipio())
        .bind(entry.descricao())
}

#[async_trait]
impl OwnEntryRepository for SqliteOwnEntryRepository {
    async fn list(&self, user: UserId, kind: EntryKind) -> Result<Vec<OwnEntry>, RepositoryError> {
        let sql = select(EntryTable::of(kind), "user_id = ?1");
        let rows: Vec<EntryColumns> =
            sqlx::query_as(&sql).bind(user.0).fetch_all(self.db.readers()).await.map_err(to_repository_error)?;
        rows.into_iter().map(|r| own_entry(kind, r)).collect()
    }

    async fn find(&self, user: UserId, kind: EntryKind, id: EntryId) -> Result<Option<OwnEntry>, RepositoryError> {
        let sql = select(EntryTable::of(kind), "user_id = ?1 AND id = ?2");
        let row: Option<EntryColumns> = sqlx::query_as(&sql)
            .bind(user.0)
            .bind(id.0)
            .fetch_optional(self.db.readers())
            .await
            .map_err(to_repository_error)?;
        row.map(|r| own_entry(kind, r)).transpose()
    }

    async fn add(&self, user: UserId, entry: &Entry) -> Result<EntryId, RepositoryError> {
        let sql = insert(EntryTable::of(entry.kind()));
        let mut query = bind_fields(sqlx::query_as(&sql), user, entry);
        if let Some(grau) = entry.grau() {
            query = query.bind(grau.code());
        }
        let (id,) = query.fetch_one(self.db.writer()).await.map_err(to_repository_error)?;
        Ok(EntryId(id))
    }

    async fn update(&self, user: UserId, id: EntryId, entry: &Entry) -> Result<bool, RepositoryError> {
        let sql = update(EntryTable::of(entry.kind()));
        let mut query = bind_fields(sqlx::query_as(&sql), user, entry).bind(id.0);
        if let Some(grau) = entry.grau() {
            query = query.bind(grau.code());
        }
        let row = query.fetch_optional(self.db.writer()).await.map_err(to_repository_error)?;
        Ok(row.is_some())
    }

    async fn delete(&self, user: UserId, kind: EntryKind, id: EntryId) -> Result<bool, RepositoryError> {
        let sql = format!("DELETE FROM {} WHERE user_id = ?1 AND id = ?2", EntryTable::of(kind).name);
        let done =
            sqlx::query(&sql).bind(user.0).bind(id.0).execute(self.db.writer()).await.map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }
}
