//! [`OwnEntryRepository`] on `experiences` and `degrees`: every statement
//! names both the entry id and the owner, so another person's id matches
//! nothing.

use async_trait::async_trait;
use credencial_domain::account::{DegreeEntry, EntryId, ExperienceEntry};
use credencial_domain::{Degree, UserId};
use credencial_ports::account::{OwnDegree, OwnEntryRepository, OwnExperience};
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

#[derive(sqlx::FromRow)]
struct ExperienceRow {
    id: i64,
    estabelecimento: String,
    profissao: String,
    data_inicio: Option<String>,
    data_fim: Option<String>,
    municipio: String,
    descricao: String,
    from_cnes: bool,
}

impl From<ExperienceRow> for OwnExperience {
    fn from(r: ExperienceRow) -> Self {
        Self {
            id: EntryId(r.id),
            estabelecimento: r.estabelecimento,
            profissao: r.profissao,
            data_inicio: r.data_inicio,
            data_fim: r.data_fim,
            municipio: r.municipio,
            descricao: r.descricao,
            from_cnes: r.from_cnes,
        }
    }
}

#[derive(sqlx::FromRow)]
struct DegreeRow {
    id: i64,
    instituicao: String,
    curso: String,
    grau: String,
    data_inicio: String,
    data_fim: Option<String>,
    municipio: String,
    descricao: String,
}

impl TryFrom<DegreeRow> for OwnDegree {
    type Error = RepositoryError;

    fn try_from(r: DegreeRow) -> Result<Self, Self::Error> {
        let grau = Degree::from_code(&r.grau)
            .ok_or_else(|| RepositoryError::Unexpected(format!("degree code {:?}", r.grau)))?;
        Ok(Self {
            id: EntryId(r.id),
            instituicao: r.instituicao,
            curso: r.curso,
            grau,
            data_inicio: r.data_inicio,
            data_fim: r.data_fim,
            municipio: r.municipio,
            descricao: r.descricao,
        })
    }
}

const EXPERIENCE_COLUMNS: &str = "id, estabelecimento, profissao, \
     to_char(data_inicio, 'YYYY-MM-DD') AS data_inicio, to_char(data_fim, 'YYYY-MM-DD') AS data_fim, \
     municipio, descricao, origin = 'cnes' AS from_cnes";

const DEGREE_COLUMNS: &str = "id, instituicao, curso, grau, \
     to_char(data_inicio, 'YYYY-MM-DD') AS data_inicio, to_char(data_fim, 'YYYY-MM-DD') AS data_fim, \
     municipio, descricao";

#[async_trait]
impl OwnEntryRepository for PgOwnEntryRepository {
    async fn experiences(&self, user: UserId) -> Result<Vec<OwnExperience>, RepositoryError> {
        let sql = format!(
            "SELECT {EXPERIENCE_COLUMNS} FROM experiences WHERE user_id = $1 ORDER BY data_inicio NULLS LAST, id"
        );
        let rows: Vec<ExperienceRow> =
            sqlx::query_as(&sql).bind(user.0).fetch_all(&self.pool).await.map_err(to_repository_error)?;
        Ok(rows.into_iter().map(Into::into).collect())
    }

    async fn experience(&self, user: UserId, id: EntryId) -> Result<Option<OwnExperience>, RepositoryError> {
        let sql = format!("SELECT {EXPERIENCE_COLUMNS} FROM experiences WHERE id = $1 AND user_id = $2");
        let row: Option<ExperienceRow> = sqlx::query_as(&sql)
            .bind(id.0)
            .bind(user.0)
            .fetch_optional(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok(row.map(Into::into))
    }

    async fn add_experience(&self, user: UserId, e: &ExperienceEntry) -> Result<EntryId, RepositoryError> {
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO experiences \
               (user_id, estabelecimento, profissao, data_inicio, data_fim, municipio, descricao, origin) \
             VALUES ($1, $2, $3, $4::date, $5::date, $6, $7, 'user') RETURNING id",
        )
        .bind(user.0)
        .bind(e.estabelecimento())
        .bind(e.profissao())
        .bind(e.data_inicio().as_str())
        .bind(e.data_fim().map(|d| d.as_str()))
        .bind(e.municipio())
        .bind(e.descricao())
        .fetch_one(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(EntryId(id))
    }

    async fn update_experience(&self, user: UserId, id: EntryId, e: &ExperienceEntry) -> Result<bool, RepositoryError> {
        let done = sqlx::query(
            "UPDATE experiences SET estabelecimento = $3, profissao = $4, data_inicio = $5::date, \
               data_fim = $6::date, municipio = $7, descricao = $8 \
             WHERE id = $1 AND user_id = $2",
        )
        .bind(id.0)
        .bind(user.0)
        .bind(e.estabelecimento())
        .bind(e.profissao())
        .bind(e.data_inicio().as_str())
        .bind(e.data_fim().map(|d| d.as_str()))
        .bind(e.municipio())
        .bind(e.descricao())
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }

    async fn delete_experience(&self, user: UserId, id: EntryId) -> Result<bool, RepositoryError> {
        let done = sqlx::query("DELETE FROM experiences WHERE id = $1 AND user_id = $2")
            .bind(id.0)
            .bind(user.0)
            .execute(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }

    async fn degrees(&self, user: UserId) -> Result<Vec<OwnDegree>, RepositoryError> {
        let sql = format!("SELECT {DEGREE_COLUMNS} FROM degrees WHERE user_id = $1 ORDER BY data_inicio, id");
        let rows: Vec<DegreeRow> =
            sqlx::query_as(&sql).bind(user.0).fetch_all(&self.pool).await.map_err(to_repository_error)?;
        rows.into_iter().map(TryInto::try_into).collect()
    }

    async fn degree(&self, user: UserId, id: EntryId) -> Result<Option<OwnDegree>, RepositoryError> {
        let sql = format!("SELECT {DEGREE_COLUMNS} FROM degrees WHERE id = $1 AND user_id = $2");
        let row: Option<DegreeRow> = sqlx::query_as(&sql)
            .bind(id.0)
            .bind(user.0)
            .fetch_optional(&self.pool)
            .await
            .map_err(to_repository_error)?;
        row.map(TryInto::try_into).transpose()
    }

    async fn add_degree(&self, user: UserId, d: &DegreeEntry) -> Result<EntryId, RepositoryError> {
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO degrees (user_id, instituicao, curso, grau, data_inicio, data_fim, municipio, descricao) \
             VALUES ($1, $2, $3, $4, $5::date, $6::date, $7, $8) RETURNING id",
        )
        .bind(user.0)
        .bind(d.instituicao())
        .bind(d.curso())
        .bind(d.grau().code())
        .bind(d.data_inicio().as_str())
        .bind(d.data_fim().map(|x| x.as_str()))
        .bind(d.municipio())
        .bind(d.descricao())
        .fetch_one(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(EntryId(id))
    }

    async fn update_degree(&self, user: UserId, id: EntryId, d: &DegreeEntry) -> Result<bool, RepositoryError> {
        let done = sqlx::query(
            "UPDATE degrees SET instituicao = $3, curso = $4, grau = $5, data_inicio = $6::date, \
               data_fim = $7::date, municipio = $8, descricao = $9 \
             WHERE id = $1 AND user_id = $2",
        )
        .bind(id.0)
        .bind(user.0)
        .bind(d.instituicao())
        .bind(d.curso())
        .bind(d.grau().code())
        .bind(d.data_inicio().as_str())
        .bind(d.data_fim().map(|x| x.as_str()))
        .bind(d.municipio())
        .bind(d.descricao())
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }

    async fn delete_degree(&self, user: UserId, id: EntryId) -> Result<bool, RepositoryError> {
        let done = sqlx::query("DELETE FROM degrees WHERE id = $1 AND user_id = $2")
            .bind(id.0)
            .bind(user.0)
            .execute(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }
}
