//! [`ProfileRepository`] on `users`, `experiences` and `degrees`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};

use async_trait::async_trait;
use credencial_domain::oauth::userinfo::UserIdentity;
use credencial_domain::profile::{AcademicDegree, Experience, OwnProfile};
use credencial_domain::UserId;
use credencial_ports::account::AccessLogEntry;
use credencial_ports::stored::{identity, own_profile, scope_names, ProfileColumns};
use credencial_ports::{ClientRead, ProfileRepository, RepositoryError};
use sqlx::PgPool;

use crate::access_log_group::{grant_covers, may_append, AccessLogGroup};
use crate::account::ACCESS_LOG_APPEND;
use crate::error::to_repository_error;

/// Own profile data in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgProfileRepository {
    pool: PgPool,
    access_log: AccessLogGroup,
    /// Client reads in progress (shared by the clones).
    reading: Arc<AtomicUsize>,
}

/// A client read in progress, counted while it lives.
struct Reading<'a> {
    count: &'a AtomicUsize,
    /// No other client read was in progress when this one began.
    alone: bool,
}

impl<'a> Reading<'a> {
    fn enter(count: &'a AtomicUsize) -> Self {
        Self { count, alone: count.fetch_add(1, Ordering::AcqRel) == 0 }
    }
}

impl Drop for Reading<'_> {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::AcqRel);
    }
}

impl PgProfileRepository {
    /// A repository on `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { access_log: AccessLogGroup::new(pool.clone()), pool, reading: Arc::new(AtomicUsize::new(0)) }
    }
}

/// The user row and both lists, aggregated as JSON text: the select list
/// of the profile reads, on `users u`.
const OWN_PROFILE_COLUMNS: &str = r#"
  u.name, u.avatar, u.cpf, u.email, u.receita_validated,
  COALESCE((SELECT json_agg(json_build_object(
       'estabelecimento', e.estabelecimento,
       'profissao', e.profissao,
       'data_inicio', to_char(e.data_inicio, 'YYYY-MM-DD"T"HH24:MI:SS'),
       'data_fim', to_char(e.data_fim, 'YYYY-MM-DD"T"HH24:MI:SS'),
       'municipio', e.municipio,
       'descricao', e.descricao) ORDER BY e.data_inicio NULLS LAST, e.id)
     FROM experiences e WHERE e.user_id = u.id), '[]')::text AS experiences,
  COALESCE((SELECT json_agg(json_build_object(
       'instituicao', d.instituicao,
       'curso', d.curso,
       'data_inicio', to_char(d.data_inicio, 'YYYY-MM-DD'),
       'data_fim', to_char(d.data_fim, 'YYYY-MM-DD'),
       'municipio', d.municipio,
       'descricao', d.descricao,
       'grau', d.grau) ORDER BY d.data_inicio, d.id)
     FROM degrees d WHERE d.user_id = u.id), '[]')::text AS degrees,
  (SELECT json_build_object('nivel', l.level, 'selos', l.seals::json,
       'lido_em', to_char(to_timestamp(l.level_read_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))::text
     FROM federated_links l WHERE l.user_id = u.id AND l.proves_cpf AND l.subject = u.cpf::text AND l.level IS NOT NULL LIMIT 1) AS govbr
"#;

/// One statement: the own profile of `$1`, if active.
static OWN_PROFILE: LazyLock<String> =
    LazyLock::new(|| format!("SELECT {OWN_PROFILE_COLUMNS} FROM users u WHERE u.id = $1 AND u.is_active"));

/// The client's profile read ([`ClientReads`] of the own profile's
/// columns).
static READ_FOR_CLIENT: LazyLock<ClientReads> = LazyLock::new(|| ClientReads::of(OWN_PROFILE_COLUMNS));

/// The columns of the userinfo read: what the claims need, nothing else.
const IDENTITY_COLUMNS: &str = "u.username, u.name, u.avatar, u.cpf, u.email, u.email_verified, \
    (SELECT json_build_object('nivel', l.level, 'selos', l.seals::json, \
         'lido_em', to_char(to_timestamp(l.level_read_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'))::text \
       FROM federated_links l WHERE l.user_id = u.id AND l.proves_cpf AND l.subject = u.cpf::text AND l.level IS NOT NULL LIMIT 1) AS govbr";

/// The client's userinfo read ([`ClientReads`] of [`IDENTITY_COLUMNS`]).
static IDENTITY_FOR_CLIENT: LazyLock<ClientReads> = LazyLock::new(|| ClientReads::of(IDENTITY_COLUMNS));

/// The two statements of a client's read of some columns of the user, on
/// `$1` user, `$2` client and the access-log entry's `$3` scopes (and, for
/// `logged`, `$4` time and `$5` request id). The grant check — the grant
/// exists and still covers every scope the read answers: a person who
/// revoked the client and then granted it less sees the client's older,
/// wider tokens refused — is a column of both.
struct ClientReads {
    /// The read and the grant check, nothing written: its entry then goes
    /// to the access log's next group ([`AccessLogGroup`]).
    checked: String,
    /// The read, the grant check and the log row in one statement: the row
    /// is a data-modifying CTE ([`ACCESS_LOG_APPEND`]) that inserts only
    /// when the grant covers the read and the user is active — the
    /// statement's one snapshot decides both, so the row is written exactly
    /// when the data is answered, and a failing insert fails the whole
    /// statement. Run when the grant changed between the `checked` read and
    /// its group.
    logged: String,
}

impl ClientReads {
    fn of(columns: &str) -> Self {
        let grant_covers = grant_covers("$1", "$2", "$3::TEXT[]");
        let may_append = may_append("$1", "$2", "$3::TEXT[]");
        Self {
            checked: format!(
                "SELECT {columns}, {grant_covers} AS granted, TRUE AS logged FROM users u WHERE u.id = $1 AND u.is_active"
            ),
            logged: format!(
                "WITH logged AS ( \
                   {ACCESS_LOG_APPEND} \
                   WHERE {may_append} \
                   RETURNING 1) \
                 SELECT {columns}, {grant_covers} AS granted, EXISTS (SELECT 1 FROM logged) AS logged \
                 FROM users u WHERE u.id = $1 AND u.is_active"
            ),
        }
    }
}

/// The row of a [`ClientReads`] statement: the data (a tuple of the
/// statement's first columns) and its two checks.
#[derive(sqlx::FromRow)]
struct ClientReadRow<T> {
    #[sqlx(flatten)]
    data: T,
    granted: bool,
    logged: bool,
}

impl PgProfileRepository {
    /// Runs the client's read `reads` for `entry`. A read that overlaps no
    /// other client read of this repository runs the `logged` statement:
    /// one round trip, nothing to share a commit with. Reads that overlap
    /// run the `checked` read, and when the grant covers it, hand their
    /// entry to the access log's next group; the data (through `decode`,
    /// before anything is logged) is answered once the entry is durable. If
    /// by then the grant or the user changed, the `logged` statement reads
    /// again and decides.
    async fn client_read<T, R>(
        &self,
        reads: &ClientReads,
        entry: &AccessLogEntry,
        decode: impl Fn(R) -> Result<T, RepositoryError>,
    ) -> Result<ClientRead<T>, RepositoryError>
    where
        R: for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow> + Send + Unpin,
    {
        let reading = Reading::enter(&self.reading);
        if reading.alone && !cfg!(feature = "bench-unlogged") {
            return match self.run_read(&reads.logged, entry, true).await? {
                Ok(data) => Ok(ClientRead::Answered(decode(data)?)),
                Err(refusal) => Ok(refusal),
            };
        }
        let data = match self.run_read(&reads.checked, entry, false).await? {
            Ok(data) => decode(data)?,
            Err(refusal) => return Ok(refusal),
        };
        // Benchmarks only: the read without its log row (the feature's
        // binary warns at start).
        if cfg!(feature = "bench-unlogged") || self.access_log.append_if_granted(entry.clone()).await? {
            return Ok(ClientRead::Answered(data));
        }
        match self.run_read(&reads.logged, entry, true).await? {
            Ok(data) => Ok(ClientRead::Answered(decode(data)?)),
            Err(refusal) => Ok(refusal),
        }
    }

    /// Runs one [`ClientReads`] `statement` (`with_entry`: it binds the
    /// entry's time and request id too): the data, or the refusal.
    async fn run_read<T, R>(
        &self,
        statement: &str,
        entry: &AccessLogEntry,
        with_entry: bool,
    ) -> Result<Result<R, ClientRead<T>>, RepositoryError>
    where
        R: for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow> + Send + Unpin,
    {
        let mut query = sqlx::query_as::<_, ClientReadRow<R>>(statement)
            .bind(entry.user.0)
            .bind(entry.client.as_str())
            .bind(scope_names(entry.scopes));
        if with_entry {
            query = query.bind(entry.at).bind(&entry.request_id);
        }
        let row = query.fetch_optional(&self.pool).await.map_err(to_repository_error)?;
        match row {
            None => Ok(Err(ClientRead::UnknownUser)),
            Some(ClientReadRow { granted: false, .. }) => Ok(Err(ClientRead::NotGranted)),
            Some(ClientReadRow { logged: false, .. }) => {
                Err(RepositoryError::Unexpected("the access-log entry of a granted read was not written".into()))
            }
            Some(ClientReadRow { data, .. }) => Ok(Ok(data)),
        }
    }
}

#[async_trait]
impl ProfileRepository for PgProfileRepository {
    async fn own_profile(&self, user: UserId) -> Result<Option<OwnProfile>, RepositoryError> {
        let row = sqlx::query_as::<_, ProfileColumns>(&OWN_PROFILE)
            .bind(user.0)
            .fetch_optional(&self.pool)
            .await
            .map_err(to_repository_error)?;
        row.map(own_profile).transpose()
    }

    async fn read_for_client(&self, entry: &AccessLogEntry) -> Result<ClientRead, RepositoryError> {
        self.client_read(&READ_FOR_CLIENT, entry, own_profile).await
    }

    async fn identity_for_client(&self, entry: &AccessLogEntry) -> Result<ClientRead<UserIdentity>, RepositoryError> {
        self.client_read(&IDENTITY_FOR_CLIENT, entry, identity).await
    }

    async fn set_profile(&self, user: UserId, avatar: &str, receita_validated: bool) -> Result<(), RepositoryError> {
        sqlx::query("UPDATE users SET avatar = $2, receita_validated = $3 WHERE id = $1")
            .bind(user.0)
            .bind(avatar)
            .bind(receita_validated)
            .execute(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok(())
    }

    async fn add_experience(&self, user: UserId, experience: Experience) -> Result<(), RepositoryError> {
        insert_experience(&self.pool, user, &experience, "user").await
    }

    async fn add_degree(&self, user: UserId, degree: AcademicDegree) -> Result<(), RepositoryError> {
        sqlx::query(
            "INSERT INTO degrees (user_id, instituicao, curso, data_inicio, data_fim, municipio, descricao, grau) \
             VALUES ($1, $2, $3, $4::date, $5::date, $6, $7, $8)",
        )
        .bind(user.0)
        .bind(&degree.instituicao)
        .bind(&degree.curso)
        .bind(&degree.data_inicio)
        .bind(&degree.data_fim)
        .bind(&degree.municipio)
        .bind(&degree.descricao)
        .bind(degree.grau.code())
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(())
    }

    async fn supplement_from_cnes(&self, user: UserId, experiences: Vec<Experience>) -> Result<bool, RepositoryError> {
        let mut tx = self.pool.begin().await.map_err(to_repository_error)?;
        // The row lock makes a concurrent second call wait, then find the
        // flag set and insert nothing.
        let claimed =
            sqlx::query("UPDATE users SET cnes_supplemented_at = now() WHERE id = $1 AND cnes_supplemented_at IS NULL")
                .bind(user.0)
                .execute(&mut *tx)
                .await
                .map_err(to_repository_error)?
                .rows_affected()
                == 1;
        if !claimed {
            return Ok(false);
        }
        for experience in &experiences {
            insert_experience(&mut *tx, user, experience, "cnes").await?;
        }
        tx.commit().await.map_err(to_repository_error)?;
        Ok(true)
    }
}

async fn insert_experience<'e>(
    executor: impl sqlx::PgExecutor<'e>,
    user: UserId,
    e: &Experience,
    origin: &str,
) -> Result<(), RepositoryError> {
    sqlx::query(
        "INSERT INTO experiences (user_id, estabelecimento, profissao, data_inicio, data_fim, municipio, descricao, origin) \
         VALUES ($1, $2, $3, $4::timestamp, $5::timestamp, $6, $7, $8)",
    )
    .bind(user.0)
    .bind(&e.estabelecimento)
    .bind(&e.profissao)
    .bind(&e.data_inicio)
    .bind(&e.data_fim)
    .bind(&e.municipio)
    .bind(&e.descricao)
    .bind(origin)
    .execute(executor)
    .await
    .map_err(to_repository_error)?;
    Ok(())
}
