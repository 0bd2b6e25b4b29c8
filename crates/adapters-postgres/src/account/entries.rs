//! [`OwnEntryRepository`] on `experiences` and `degrees`: one set of
//! statements for both, from a description of each table. Every statement
//! names both the entry id and the owner, so another person's id matches
//! nothing.

use async_trait::async_trait;
use credencial_domain::account::{Entry, EntryId, EntryKind};
use credencial_domain::UserId;
use credencial_ports::account::{OwnEntry, OwnEntryRepository};
use credencial_ports::stored::{own_entry, EntryColumns, EntryTable};
use credencial_ports::RepositoryError;
use sqlx::PgPool;

use crate::error::to_repository_error;

/// Own entries in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgOwnEntryRepository {
    pool: PgPool,
}

impl PgOwnEntryRepository {
    /// A repository on `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

/// The statements of one [`EntryTable`] in PostgreSQL's SQL.
trait Statements {
    /// The rows of the table matching `filter`, in the profile answer's
    /// order, with the columns of [`EntryColumns`].
    fn select(&self, filter: &str) -> String;
    /// Inserts a row typed by the user: `$1` the owner, `$2`…`$7` the
    /// fields, `$8` the degree code (degrees only).
    fn insert(&self) -> String;
    /// Replaces the fields of `$8`, owned by `$1`, with `$2`…`$7` and `$9`
    /// (the degree code, degrees only); the row is the user's own from then
    /// on. Returns the id of the row it changed.
    fn update(&self) -> String;
}

impl Statements for EntryTable {
    fn select(&self, filter: &str) -> String {
        let Self { name, place, subject, .. } = self;
        let grau = self.grau.map_or_else(|| "NULL::text".to_owned(), |g| format!("{g}::text"));
        let from_cnes = if self.has_origin { "origin = 'cnes'" } else { "FALSE" };
        format!(
            "SELECT id, {place} AS place, {subject} AS subject, {grau} AS grau, \
               to_char(data_inicio, 'YYYY-MM-DD') AS data_inicio, to_char(data_fim, 'YYYY-MM-DD') AS data_fim, \
               municipio, descricao, {from_cnes} AS from_cnes \
             FROM {name} WHERE {filter} ORDER BY data_inicio NULLS LAST, id"
        )
    }

    fn insert(&self) -> String {
        let Self { name, place, subject, .. } = self;
        let (grau, value) = self.grau.map_or((String::new(), ""), |g| (format!(", {g}"), ", $8"));
        format!(
            "INSERT INTO {name} (user_id, {place}, {subject}, data_inicio, data_fim, municipio, descricao{grau}) \
             VALUES ($1, $2, $3, $4::date, $5::date, $6, $7{value}) RETURNING id"
        )
    }

    fn update(&self) -> String {
        let Self { name, place, subject, .. } = self;
        let grau = self.grau.map_or_else(String::new, |g| format!(", {g} = $9"));
        let origin = if self.has_origin { ", origin = 'user'" } else { "" };
        format!(
            "UPDATE {name} SET {place} = $2, {subject} = $3, data_inicio = $4::date, data_fim = $5::date, \
               municipio = $6, descricao = $7{grau}{origin} \
             WHERE user_id = $1 AND id = $8 RETURNING id"
        )
    }
}

/// `entry`'s fields bound as `$2`…`$7` after the owner `$1`.
fn bind_fields<'q>(
    query: sqlx::query::QueryAs<'q, sqlx::Postgres, (i64,), sqlx::postgres::PgArguments>,
    user: UserId,
    entry: &'q Entry,
) -> sqlx::query::QueryAs<'q, sqlx::Postgres, (i64,), sqlx::postgres::PgArguments> {
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
impl OwnEntryRepository for PgOwnEntryRepository {
    async fn list(&self, user: UserId, kind: EntryKind) -> Result<Vec<OwnEntry>, RepositoryError> {
        let sql = EntryTable::of(kind).select("user_id = $1");
        let rows: Vec<EntryColumns> =
            sqlx::query_as(&sql).bind(user.0).fetch_all(&self.pool).await.map_err(to_repository_error)?;
        rows.into_iter().map(|r| own_entry(kind, r)).collect()
    }

    async fn find(&self, user: UserId, kind: EntryKind, id: EntryId) -> Result<Option<OwnEntry>, RepositoryError> {
        let sql = EntryTable::of(kind).select("user_id = $1 AND id = $2");
        let row: Option<EntryColumns> = sqlx::query_as(&sql)
            .bind(user.0)
            .bind(id.0)
            .fetch_optional(&self.pool)
            .await
            .map_err(to_repository_error)?;
        row.map(|r| own_entry(kind, r)).transpose()
    }

    async fn add(&self, user: UserId, entry: &Entry) -> Result<EntryId, RepositoryError> {
        let sql = EntryTable::of(entry.kind()).insert();
        let mut query = bind_fields(sqlx::query_as(&sql), user, entry);
        if let Some(grau) = entry.grau() {
            query = query.bind(grau.code());
        }
        let (id,) = query.fetch_one(&self.pool).await.map_err(to_repository_error)?;
        Ok(EntryId(id))
    }

    async fn update(&self, user: UserId, id: EntryId, entry: &Entry) -> Result<bool, RepositoryError> {
        let sql = EntryTable::of(entry.kind()).update();
        let mut query = bind_fields(sqlx::query_as(&sql), user, entry).bind(id.0);
        if let Some(grau) = entry.grau() {
            query = query.bind(grau.code());
        }
        let row = query.fetch_optional(&self.pool).await.map_err(to_repository_error)?;
        Ok(row.is_some())
    }

    async fn delete(&self, user: UserId, kind: EntryKind, id: EntryId) -> Result<bool, RepositoryError> {
        let sql = format!("DELETE FROM {} WHERE user_id = $1 AND id = $2", EntryTable::of(kind).name);
        let done = sqlx::query(&sql).bind(user.0).bind(id.0).execute(&self.pool).await.map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }
}
