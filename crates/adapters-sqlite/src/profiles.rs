//! [`ProfileRepository`] on `users`, `experiences` and `degrees`.

use std::sync::LazyLock;

use async_trait::async_trait;
use credencial_domain::account::grant::covers;
use credencial_domain::oauth::userinfo::UserIdentity;
use credencial_domain::profile::{AcademicDegree, Experience, OwnProfile};
use credencial_domain::UserId;
use credencial_ports::account::AccessLogEntry;
use credencial_ports::stored::{identity, own_profile, ProfileColumns};
use credencial_ports::{ClientRead, ProfileRepository, RepositoryError};
use sqlx::sqlite::SqliteRow;
use sqlx::SqliteConnection;

use crate::account::{append_access_log_on, append_if_grant_unchanged};
use crate::error::to_repository_error;
use crate::json::scopes_from_json;
use crate::SqliteDb;

/// Own profile data, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteProfileRepository {
    db: SqliteDb,
}

impl SqliteProfileRepository {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}

/// The user row and both lists, aggregated as JSON text (the lists of
/// [`ProfileColumns`]): the select list of the profile reads, on `users u`.
const OWN_PROFILE_COLUMNS: &str = "
  u.name, u.avatar, u.cpf, u.email, u.receita_validated,
  (SELECT json_group_array(json_object(
       'estabelecimento', e.estabelecimento,
       'profissao', e.profissao,
       'data_inicio', e.data_inicio,
       'data_fim', e.data_fim,
       'municipio', e.municipio,
       'descricao', e.descricao) ORDER BY e.data_inicio NULLS LAST, e.id)
     FROM experiences e WHERE e.user_id = u.id) AS experiences,
  (SELECT json_group_array(json_object(
       'instituicao', d.instituicao,
       'curso', d.curso,
       'data_inicio', d.data_inicio,
       'data_fim', d.data_fim,
       'municipio', d.municipio,
       'descricao', d.descricao,
       'grau', d.grau) ORDER BY d.data_inicio, d.id)
     FROM degrees d WHERE d.user_id = u.id) AS degrees
";

/// One statement: the own profile of `?1`, if active.
static OWN_PROFILE: LazyLock<String> =
    LazyLock::new(|| format!("SELECT {OWN_PROFILE_COLUMNS}, {GOVBR} FROM users u WHERE u.id = ?1 AND u.is_active"));

/// The client's profile read ([`client_read`] of the own profile's columns).
static READ_FOR_CLIENT: LazyLock<String> = LazyLock::new(|| client_read(&format!("{OWN_PROFILE_COLUMNS}, {GOVBR}")));

/// The client's userinfo read ([`client_read`] of what the claims need,
/// nothing else).
static IDENTITY_FOR_CLIENT: LazyLock<String> =
    LazyLock::new(|| client_read(&format!("u.username, u.name, u.avatar, u.cpf, u.email, u.email_verified, {GOVBR}")));

/// gov.br's level and seals for the CPF of `u` as JSON text, when a gov.br
/// link proves it (by the links' `(user_id, provider)` index).
const GOVBR: &str = "(SELECT json_object('nivel', l.level, 'selos', json(l.seals), \
       'lido_em', strftime('%Y-%m-%dT%H:%M:%SZ', l.level_read_at, 'unixepoch')) \
     FROM federated_links l WHERE l.user_id = u.id AND l.proves_cpf AND l.subject = u.cpf AND l.level IS NOT NULL LIMIT 1) AS govbr";

/// A client's read of `columns` of the active user `?1`, with the scopes
/// the user granted to the client `?2` (NULL: no grant) as the last column.
fn client_read(columns: &str) -> String {
    format!(
        "SELECT {columns}, \
           (SELECT g.scopes FROM oauth_grants g WHERE g.user_id = ?1 AND g.client_id = ?2) AS granted \
         FROM users u WHERE u.id = ?1 AND u.is_active"
    )
}

/// The row of a [`client_read`] statement: the data (a tuple of the
/// statement's first columns) and the grant's scopes.
#[derive(sqlx::FromRow)]
struct ClientReadRow<T> {
    #[sqlx(flatten)]
    data: T,
    granted: Option<String>,
}

/// The ISO 8601 datetime `?N` as stored (`YYYY-MM-DDTHH:MM:SS`), or NULL.
const DATETIME: &str = "strftime('%Y-%m-%dT%H:%M:%S', ?N)";

/// Whether the date or datetime `?N` is NULL or well-formed: a real date,
/// not one SQLite would carry into the next month (`2021-02-30`).
const WELL_FORMED: &str = "(?N IS NULL OR (julianday(?N) IS NOT NULL AND date(?N) = substr(?N, 1, 10)))";

impl SqliteProfileRepository {
    /// Runs the [`client_read`] `statement` for `entry`: the data is
    /// answered exactly when `entry` is appended, and only if at that
    /// moment the grant covers the read — a revocation still in force when
    /// the entry would be appended refuses the read, and an entry that
    /// cannot be written fails it. Data that does not decode fails the
    /// read before anything is logged.
    ///
    /// The read runs on a reader; [`append_or_read_again`](Self::append_or_read_again)
    /// then holds the single writer for one statement, not a transaction
    /// of four.
    async fn client_read<T, R>(
        &self,
        statement: &str,
        entry: &AccessLogEntry,
        decode: impl Fn(R) -> Result<T, RepositoryError>,
    ) -> Result<ClientRead<T>, RepositoryError>
    where
        R: for<'r> sqlx::FromRow<'r, SqliteRow> + Send + Unpin,
    {
        let row = query_client_read(statement, entry, self.db.readers()).await?;
        match checked(row, entry, &decode)? {
            Checked::Covered { data, granted } => {
                self.append_or_read_again(statement, entry, data, &granted, decode).await
            }
            Checked::Refused(refusal) => Ok(refusal),
        }
    }

    /// Answers `data`, read under the grant whose stored scopes are
    /// `granted`, if `entry` can be appended while that grant is in force
    /// for an active user ([`append_if_grant_unchanged`]). If the grant or
    /// the user changed since the read, the whole read runs again as one
    /// write transaction, which decides.
    async fn append_or_read_again<T, R>(
        &self,
        statement: &str,
        entry: &AccessLogEntry,
        data: T,
        granted: &str,
        decode: impl Fn(R) -> Result<T, RepositoryError>,
    ) -> Result<ClientRead<T>, RepositoryError>
    where
        R: for<'r> sqlx::FromRow<'r, SqliteRow> + Send + Unpin,
    {
        // Benchmarks only: the read without its log row (the feature's
        // binary warns at start).
        if cfg!(feature = "bench-unlogged") {
            return Ok(ClientRead::Answered(data));
        }
        if append_if_grant_unchanged(&self.db, entry, granted).await? {
            return Ok(ClientRead::Answered(data));
        }
        let mut tx = self.db.begin_write().await.map_err(to_repository_error)?;
        let row = query_client_read(statement, entry, &mut *tx).await?;
        let data = match checked(row, entry, &decode)? {
            Checked::Covered { data, .. } => data,
            Checked::Refused(refusal) => return Ok(refusal),
        };
        append_access_log_on(&mut *tx, entry).await?;
        tx.commit().await.map_err(to_repository_error)?;
        Ok(ClientRead::Answered(data))
    }
}

/// Runs the [`client_read`] `statement` for `entry` on `conn`.
async fn query_client_read<'c, R>(
    statement: &str,
    entry: &AccessLogEntry,
    conn: impl sqlx::SqliteExecutor<'c>,
) -> Result<Option<ClientReadRow<R>>, RepositoryError>
where
    R: for<'r> sqlx::FromRow<'r, SqliteRow> + Send + Unpin,
{
    sqlx::query_as::<_, ClientReadRow<R>>(statement)
        .bind(entry.user.0)
        .bind(entry.client.as_str())
        .fetch_optional(conn)
        .await
        .map_err(to_repository_error)
}

/// What a [`client_read`] row allows.
enum Checked<T> {
    /// The grant covers the read: the decoded data, and the grant's scopes
    /// as stored.
    Covered { data: T, granted: String },
    /// No user, or no grant that covers the read: the answer, with nothing
    /// logged.
    Refused(ClientRead<T>),
}

/// Whether the [`client_read`] `row` lets `entry`'s read be answered, with
/// its data decoded when it does.
fn checked<T, R>(
    row: Option<ClientReadRow<R>>,
    entry: &AccessLogEntry,
    decode: impl Fn(R) -> Result<T, RepositoryError>,
) -> Result<Checked<T>, RepositoryError> {
    let Some(ClientReadRow { data, granted }) = row else {
        return Ok(Checked::Refused(ClientRead::UnknownUser));
    };
    let Some(granted) = granted else {
        return Ok(Checked::Refused(ClientRead::NotGranted));
    };
    if !covers(scopes_from_json(&granted)?, entry.scopes) {
        return Ok(Checked::Refused(ClientRead::NotGranted));
    }
    Ok(Checked::Covered { data: decode(data)?, granted })
}

/// Inserts `experience` of `user` with `origin` on `conn`; a date that is
/// not well-formed is refused and nothing is written.
async fn insert_experience(
    conn: &mut SqliteConnection,
    user: UserId,
    e: &Experience,
    origin: &str,
) -> Result<(), RepositoryError> {
    let (inicio, fim) = (DATETIME.replace("?N", "?4"), DATETIME.replace("?N", "?5"));
    let (inicio_ok, fim_ok) = (WELL_FORMED.replace("?N", "?4"), WELL_FORMED.replace("?N", "?5"));
    let done = sqlx::query(&format!(
        "INSERT INTO experiences (user_id, estabelecimento, profissao, data_inicio, data_fim, municipio, descricao, \
           origin) \
         SELECT ?1, ?2, ?3, {inicio}, {fim}, ?6, ?7, ?8 WHERE {inicio_ok} AND {fim_ok}"
    ))
    .bind(user.0)
    .bind(&e.estabelecimento)
    .bind(&e.profissao)
    .bind(&e.data_inicio)
    .bind(&e.data_fim)
    .bind(&e.municipio)
    .bind(&e.descricao)
    .bind(origin)
    .execute(conn)
    .await
    .map_err(to_repository_error)?;
    if done.rows_affected() != 1 {
        return Err(RepositoryError::Unexpected("an experience's date is not an ISO 8601 datetime".into()));
    }
    Ok(())
}

#[async_trait]
impl ProfileRepository for SqliteProfileRepository {
    async fn own_profile(&self, user: UserId) -> Result<Option<OwnProfile>, RepositoryError> {
        let row = sqlx::query_as::<_, ProfileColumns>(&OWN_PROFILE)
            .bind(user.0)
            .fetch_optional(self.db.readers())
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
        sqlx::query("UPDATE users SET avatar = ?2, receita_validated = ?3 WHERE id = ?1")
            .bind(user.0)
            .bind(avatar)
            .bind(receita_validated)
            .execute(self.db.writer())
            .await
            .map_err(to_repository_error)?;
        Ok(())
    }

    async fn add_experience(&self, user: UserId, experience: Experience) -> Result<(), RepositoryError> {
        let mut conn = self.db.writer().acquire().await.map_err(to_repository_error)?;
        insert_experience(&mut conn, user, &experience, "user").await
    }

    async fn add_degree(&self, user: UserId, degree: AcademicDegree) -> Result<(), RepositoryError> {
        let (inicio_ok, fim_ok) = (WELL_FORMED.replace("?N", "?4"), WELL_FORMED.replace("?N", "?5"));
        let done = sqlx::query(&format!(
            "INSERT INTO degrees (user_id, instituicao, curso, data_inicio, data_fim, municipio, descricao, grau) \
             SELECT ?1, ?2, ?3, date(?4), date(?5), ?6, ?7, ?8 WHERE {inicio_ok} AND {fim_ok}"
        ))
        .bind(user.0)
        .bind(&degree.instituicao)
        .bind(&degree.curso)
        .bind(&degree.data_inicio)
        .bind(&degree.data_fim)
        .bind(&degree.municipio)
        .bind(&degree.descricao)
        .bind(degree.grau.code())
        .execute(self.db.writer())
        .await
        .map_err(to_repository_error)?;
        if done.rows_affected() != 1 {
            return Err(RepositoryError::Unexpected("a degree's date is not an ISO 8601 date".into()));
        }
        Ok(())
    }

    async fn supplement_from_cnes(&self, user: UserId, experiences: Vec<Experience>) -> Result<bool, RepositoryError> {
        // One write transaction: a concurrent second call waits for it,
        // then finds the flag set and inserts nothing.
        let mut tx = self.db.begin_write().await.map_err(to_repository_error)?;
        let claimed = sqlx::query(
            "UPDATE users SET cnes_supplemented_at = unixepoch() WHERE id = ?1 AND cnes_supplemented_at IS NULL",
        )
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
            insert_experience(&mut tx, user, experience, "cnes").await?;
        }
        tx.commit().await.map_err(to_repository_error)?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::client_read::{database, entry, logged};
    use credencial_ports::stored::IdentityColumns;

    fn decode(row: IdentityColumns) -> Result<UserIdentity, RepositoryError> {
        identity(row)
    }

    /// The first half of a userinfo read, on a reader: the data and the
    /// grant it was read under.
    async fn read_on_a_reader(db: &SqliteDb) -> (UserIdentity, String) {
        let row = query_client_read(&IDENTITY_FOR_CLIENT, &entry(), db.readers()).await.expect("read");
        match checked(row, &entry(), decode).expect("checked") {
            Checked::Covered { data, granted } => (data, granted),
            Checked::Refused(refusal) => panic!("the grant covers the read: {refusal:?}"),
        }
    }

    /// Changes the database with `statement` between the read on a reader
    /// and the append, then finishes the read: what it answers, and how
    /// many entries the log holds.
    async fn race(statement: &str) -> (ClientRead<UserIdentity>, i64) {
        let file = database().await;
        let repository = SqliteProfileRepository::new(file.db.clone());
        let (data, granted) = read_on_a_reader(&file.db).await;
        sqlx::query(statement).execute(file.db.writer()).await.expect(statement);
        let answer = repository
            .append_or_read_again(&IDENTITY_FOR_CLIENT, &entry(), data, &granted, decode)
            .await
            .expect("answer");
        (answer, logged(&file).await)
    }

    #[tokio::test]
    async fn a_revocation_between_the_read_and_the_append_refuses_the_read_and_logs_nothing() {
        assert_eq!(race("DELETE FROM oauth_grants").await, (ClientRead::NotGranted, 0));
    }

    #[tokio::test]
    async fn a_deactivation_between_the_read_and_the_append_refuses_the_read_and_logs_nothing() {
        assert_eq!(race("UPDATE users SET is_active = 0").await, (ClientRead::UnknownUser, 0));
    }

    #[tokio::test]
    async fn a_narrowing_below_the_read_between_the_read_and_the_append_refuses_it() {
        assert_eq!(race(r#"UPDATE oauth_grants SET scopes = '["cpf"]'"#).await, (ClientRead::NotGranted, 0));
    }

    #[tokio::test]
    async fn a_widening_between_the_read_and_the_append_answers_the_data_read_again_with_one_entry() {
        let (answer, logged) = race(r#"UPDATE oauth_grants SET scopes = '["cnes","cpf","email"]'"#).await;
        let ClientRead::Answered(identity) = answer else { panic!("still covered: {answer:?}") };
        assert_eq!((identity.username.as_str(), identity.name.as_str(), logged), ("ana", "Ana", 1));
    }

    #[tokio::test]
    async fn with_nothing_changed_the_read_is_answered_with_one_entry() {
        let (answer, logged) = race("SELECT 1").await;
        assert!(matches!(answer, ClientRead::Answered(_)), "{answer:?}");
        assert_eq!(logged, 1);
    }
}
