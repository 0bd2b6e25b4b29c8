//! [`OwnEntryRepository`] on `experiences` and `degrees`: one set of
//! statements for both, from a description of each table. Every statement
//! names both the entry id and the owner, so another person's id matches
//! nothing.

use async_trait::async_trait;
use credencial_domain::account::{Entry, EntryId, EntryKind};
use credencial_domain::{Degree, UserId};
use credencial_ports::account::{OwnEntry, OwnEntryRepository};
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

/// The table of one kind of entry and the names of its columns.
struct Table {
    /// The table.
    name: &'static str,
    /// The column that says where (`estabelecimento`, `instituicao`).
    place: &'static str,
    /// The column that says what (`profissao`, `curso`).
    subject: &'static str,
    /// The degree code's column, for degrees.
    grau: Option<&'static str>,
    /// Whether rows have an `origin` ('user' or 'cnes').
    has_origin: bool,
}

const EXPERIENCES: Table =
    Table { name: "experiences", place: "estabelecimento", subject: "profissao", grau: None, has_origin: true };
const DEGREES: Table =
    Table { name: "degrees", place: "instituicao", subject: "curso", grau: Some("grau"), has_origin: false };

impl Table {
    fn of(kind: EntryKind) -> &'static Self {
        match kind {
            EntryKind::Experience => &EXPERIENCES,
            EntryKind::Degree => &DEGREES,
        }
    }

    /// The rows of the table matching `filter`, in the profile answer's
    /// order, with the columns of [`EntryRow`].
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

    /// Inserts a row typed by the user: `$1` the owner, `$2`…`$7` the
    /// fields, `$8` the degree code (degrees only).
    fn insert(&self) -> String {
        let Self { name, place, subject, .. } = self;
        let (grau, value) = self.grau.map_or((String::new(), ""), |g| (format!(", {g}"), ", $8"));
        format!(
            "INSERT INTO {name} (user_id, {place}, {subject}, data_inicio, data_fim, municipio, descricao{grau}) \
             VALUES ($1, $2, $3, $4::date, $5::date, $6, $7{value}) RETURNING id"
        )
    }

    /// Replaces the fields of `$8`, owned by `$1`, with `$2`…`$7` and `$9`
    /// (the degree code, degrees only); the row is the user's own from then
    /// on. Returns the id of the row it changed.
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

#[derive(sqlx::FromRow)]
struct EntryRow {
    id: i64,
    place: String,
    subject: String,
    grau: Option<String>,
    data_inicio: Option<String>,
    data_fim: Option<String>,
    municipio: String,
    descricao: String,
    from_cnes: bool,
}

impl EntryRow {
    fn into_entry(self, kind: EntryKind) -> Result<OwnEntry, RepositoryError> {
        let grau = match (kind, self.grau.as_deref()) {
            (EntryKind::Experience, _) => None,
            (EntryKind::Degree, code) => Some(
                code.and_then(Degree::from_code)
                    .ok_or_else(|| RepositoryError::Unexpected(format!("degree code {code:?}")))?,
            ),
        };
        Ok(OwnEntry {
            id: EntryId(self.id),
            kind,
            place: self.place,
            subject: self.subject,
            grau,
            data_inicio: self.data_inicio,
            data_fim: self.data_fim,
            municipio: self.municipio,
            descricao: self.descricao,
            from_cnes: self.from_cnes,
        })
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
        let sql = Table::of(kind).select("user_id = $1");
        let rows: Vec<EntryRow> =
            sqlx::query_as(&sql).bind(user.0).fetch_all(&self.pool).await.map_err(to_repository_error)?;
        rows.into_iter().map(|r| r.into_entry(kind)).collect()
    }

    async fn find(&self, user: UserId, kind: EntryKind, id: EntryId) -> Result<Option<OwnEntry>, RepositoryError> {
        let sql = Table::of(kind).select("user_id = $1 AND id = $2");
        let row: Option<EntryRow> = sqlx::query_as(&sql)
            .bind(user.0)
            .bind(id.0)
            .fetch_optional(&self.pool)
            .await
            .map_err(to_repository_error)?;
        row.map(|r| r.into_entry(kind)).transpose()
    }

    async fn add(&self, user: UserId, entry: &Entry) -> Result<EntryId, RepositoryError> {
        let sql = Table::of(entry.kind()).insert();
        let mut query = bind_fields(sqlx::query_as(&sql), user, entry);
        if let Some(grau) = entry.grau() {
            query = query.bind(grau.code());
        }
        let (id,) = query.fetch_one(&self.pool).await.map_err(to_repository_error)?;
        Ok(EntryId(id))
    }

    async fn update(&self, user: UserId, id: EntryId, entry: &Entry) -> Result<bool, RepositoryError> {
        let sql = Table::of(entry.kind()).update();
        let mut query = bind_fields(sqlx::query_as(&sql), user, entry).bind(id.0);
        if let Some(grau) = entry.grau() {
            query = query.bind(grau.code());
        }
        let row = query.fetch_optional(&self.pool).await.map_err(to_repository_error)?;
        Ok(row.is_some())
    }

    async fn delete(&self, user: UserId, kind: EntryKind, id: EntryId) -> Result<bool, RepositoryError> {
        let sql = format!("DELETE FROM {} WHERE user_id = $1 AND id = $2", Table::of(kind).name);
        let done = sqlx::query(&sql).bind(user.0).bind(id.0).execute(&self.pool).await.map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }
}
