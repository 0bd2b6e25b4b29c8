//! [`UserRepository`] on the `users` table.

use async_trait::async_trait;
use credencial_domain::account::{AccountDetails, Registration, UniqueField};
use credencial_domain::admin::NewAuditEntry;
use credencial_domain::{Cpf, EmailKey, UserData, UserId, Username};
use credencial_ports::stored::{
    account_record, credentials, user_data, CredentialColumns, RecordColumns, UserDataColumns,
};
use credencial_ports::{
    AccessChange, AccountRecord, DetailsUpdate, NewUser, Registered, RepositoryError, UserCredentials, UserRepository,
};
use sqlx::query::{Query, QueryScalar};
use sqlx::sqlite::SqliteArguments;
use sqlx::{Sqlite, SqliteConnection, SqlitePool};

use crate::audit::commit_with;
use crate::error::{is_unique_violation, to_repository_error};
use crate::user_lookups::{BY_USERNAME, BY_USERNAME_OR_CPF, CLAIMABLE, TAKEN_BY_SIGN_UP};
use crate::SqliteDb;

/// User accounts and their credentials, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteUserRepository {
    db: SqliteDb,
}

impl SqliteUserRepository {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}

/// Runs `change` (one statement that changes the row of `id` when it
/// exists) and appends `entry`, in one write transaction, unless
/// `takes_access` (the change takes the staff flag or the activation away)
/// and `id` is the last active staff account ([`AccessChange::LastStaff`],
/// nothing stored). The transaction holds the file's write lock from its
/// start (`BEGIN IMMEDIATE`): no other connection or process writes
/// between the check and the change.
pub(crate) async fn access_change<'q>(
    db: &SqliteDb,
    id: UserId,
    takes_access: bool,
    change: Query<'q, Sqlite, SqliteArguments<'q>>,
    entry: &NewAuditEntry,
) -> Result<AccessChange, RepositoryError> {
    let mut tx = db.begin_write().await.map_err(to_repository_error)?;
    if takes_access {
        let staff: Vec<i64> = sqlx::query_scalar("SELECT id FROM users WHERE is_active AND is_staff ORDER BY id")
            .fetch_all(&mut *tx)
            .await
            .map_err(to_repository_error)?;
        if staff == [id.0] {
            return Ok(AccessChange::LastStaff);
        }
    }
    let done = change.execute(&mut *tx).await.map_err(to_repository_error)?;
    if done.rows_affected() != 1 {
        return Ok(AccessChange::NotFound);
    }
    commit_with(tx, entry).await?;
    Ok(AccessChange::Changed)
}

/// The flags [`insert_user`] sets beside the [`NewUser`]'s fields.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct InsertFlags {
    /// The account may use the administration panel.
    pub staff: bool,
    /// The password is temporary: it must be changed at the next login.
    pub must_change_password: bool,
}

/// Inserts `user` with `flags` on `conn` and returns its id: the one insert
/// of an account by an operator, a test or the panel. Errors: the driver's
/// (a unique violation when the username, CPF or e-mail is taken), for the
/// caller to map.
pub(crate) async fn insert_user(
    conn: &mut SqliteConnection,
    user: &NewUser,
    flags: InsertFlags,
) -> Result<UserId, sqlx::Error> {
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO users (username, password, is_active, identificacao, nome_usual, \
         email, campus, tipo_usuario, name, cpf, is_staff, must_change_password, email_key) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) RETURNING id",
    )
    .bind(user.username.as_str())
    .bind(&user.password_hash)
    .bind(user.is_active)
    .bind(&user.data.identificacao)
    .bind(&user.data.nome_usual)
    .bind(&user.data.email)
    .bind(&user.data.campus)
    .bind(&user.data.tipo_usuario)
    .bind(&user.name)
    .bind(user.cpf.as_ref().map(Cpf::as_str))
    .bind(flags.staff)
    .bind(flags.must_change_password)
    .bind(EmailKey::of(&user.data.email).as_str().to_owned())
    .fetch_one(conn)
    .await?;
    Ok(UserId(id))
}

/// The columns of [`CredentialColumns`].
const CREDENTIALS_COLUMNS: &str = "id, username, password, is_active, must_change_password";

/// The columns of [`RecordColumns`].
pub(crate) const RECORD_COLUMNS: &str =
    "id, username, name, email, cpf, is_active, is_staff, receita_validated, must_change_password, created_at";

/// The account `id`, active or not (the operator's and the
/// administration's look-up).
pub(crate) async fn find_record_by_id(
    readers: &SqlitePool,
    id: UserId,
) -> Result<Option<AccountRecord>, RepositoryError> {
    let row = sqlx::query_as::<_, RecordColumns>(&format!("SELECT {RECORD_COLUMNS} FROM users WHERE id = ?1"))
        .bind(id.0)
        .fetch_optional(readers)
        .await
        .map_err(to_repository_error)?;
    Ok(row.map(account_record))
}

/// The account named exactly `username`, active or not.
pub(crate) async fn find_record_by_username(
    readers: &SqlitePool,
    username: &Username,
) -> Result<Option<AccountRecord>, RepositoryError> {
    let row = sqlx::query_as::<_, RecordColumns>(&format!("SELECT {RECORD_COLUMNS} FROM users WHERE {BY_USERNAME}"))
        .bind(username.as_str())
        .fetch_optional(readers)
        .await
        .map_err(to_repository_error)?;
    Ok(row.map(account_record))
}

impl SqliteUserRepository {
    /// The credentials of the first user `condition` (on `?1`, `?2`… bound
    /// to `values`, and possibly followed by an ORDER BY) selects.
    async fn credentials_where(
        &self,
        condition: &str,
        values: &[&str],
    ) -> Result<Option<UserCredentials>, RepositoryError> {
        let sql = format!("SELECT {CREDENTIALS_COLUMNS} FROM users WHERE {condition} LIMIT 1");
        let query = values.iter().fold(sqlx::query_as::<_, CredentialColumns>(&sql), |q, v| q.bind(*v));
        let row = query.fetch_optional(self.db.readers()).await.map_err(to_repository_error)?;
        Ok(row.map(credentials))
    }
}

/// `registration` bound as `?1` username, `?2` password hash, `?3` name,
/// `?4` e-mail, `?5` CPF and `?6` e-mail key.
fn bind_registration<'q>(
    query: QueryScalar<'q, Sqlite, i64, SqliteArguments<'q>>,
    registration: &'q Registration,
    password_hash: &'q str,
) -> QueryScalar<'q, Sqlite, i64, SqliteArguments<'q>> {
    query
        .bind(registration.username.as_str())
        .bind(password_hash)
        .bind(&registration.name)
        .bind(registration.email.as_str())
        .bind(registration.cpf.as_str())
        .bind(registration.email.key().as_str().to_owned())
}

/// The sign-up's pre-registered claim, its insert and its taken-values
/// answer, on the connection of one write transaction.
async fn register_on(
    conn: &mut SqliteConnection,
    registration: &Registration,
    password_hash: &str,
) -> Result<Registered, RepositoryError> {
    // A pre-registered account (user-management API: unusable password
    // '!…', still active) with this CPF and e-mail is claimed: it takes
    // the chosen username, name and password, never a second account. The
    // address is compared by its key.
    let sql = format!(
        "UPDATE users SET username = ?1, password = ?2, nome_usual = ?3, name = ?3 WHERE {CLAIMABLE} RETURNING id"
    );
    let claimed = sqlx::query_scalar(&sql);
    let claimed = bind_registration(claimed, registration, password_hash).fetch_optional(&mut *conn).await;
    match claimed {
        Ok(Some(id)) => return Ok(Registered::Created(UserId(id))),
        Ok(None) => {}
        // The chosen username is another account's.
        Err(e) if is_unique_violation(&e) => return Ok(Registered::Taken(vec![UniqueField::Username])),
        Err(e) => return Err(to_repository_error(e)),
    }
    // DO NOTHING without a target covers every unique index (username,
    // cpf, email_key).
    let created = sqlx::query_scalar(
        "INSERT INTO users (username, password, is_active, nome_usual, email, name, cpf, email_key) \
         VALUES (?1, ?2, 1, ?3, ?4, ?3, ?5, ?6) ON CONFLICT DO NOTHING RETURNING id",
    );
    let created = bind_registration(created, registration, password_hash)
        .fetch_optional(&mut *conn)
        .await
        .map_err(to_repository_error)?;
    if let Some(id) = created {
        return Ok(Registered::Created(UserId(id)));
    }
    let (username, cpf, email): (bool, bool, bool) = sqlx::query_as(&format!(
        "SELECT coalesce(max(username = ?1), 0), coalesce(max(cpf = ?2), 0), coalesce(max(email_key = ?3), 0) \
         FROM users WHERE {TAKEN_BY_SIGN_UP}"
    ))
    .bind(registration.username.as_str())
    .bind(registration.cpf.as_str())
    .bind(registration.email.key().as_str().to_owned())
    .fetch_one(&mut *conn)
    .await
    .map_err(to_repository_error)?;
    let taken = UniqueField::taken(cpf, email, username);
    if taken.is_empty() {
        // Cannot happen inside one write transaction; answered as
        // PostgreSQL answers it.
        return Err(RepositoryError::Conflict("a unique value was taken, then freed".into()));
    }
    Ok(Registered::Taken(taken))
}

#[async_trait]
impl UserRepository for SqliteUserRepository {
    async fn find_credentials(&self, username: &str) -> Result<Option<UserCredentials>, RepositoryError> {
        self.credentials_where(BY_USERNAME, &[username]).await
    }

    async fn find_active_user_data(&self, id: UserId) -> Result<Option<UserData>, RepositoryError> {
        let row = sqlx::query_as::<_, UserDataColumns>(
            "SELECT identificacao, nome_usual, email, campus, tipo_usuario FROM users WHERE id = ?1 AND is_active",
        )
        .bind(id.0)
        .fetch_optional(self.db.readers())
        .await
        .map_err(to_repository_error)?;
        Ok(row.map(user_data))
    }

    async fn create(&self, user: NewUser) -> Result<UserId, RepositoryError> {
        let mut conn = self.db.writer().acquire().await.map_err(to_repository_error)?;
        insert_user(&mut conn, &user, InsertFlags::default()).await.map_err(to_repository_error)
    }

    async fn find_summary(&self, username: &Username) -> Result<Option<AccountRecord>, RepositoryError> {
        find_record_by_username(self.db.readers(), username).await
    }

    async fn find_summary_by_id(&self, id: UserId) -> Result<Option<AccountRecord>, RepositoryError> {
        find_record_by_id(self.db.readers(), id).await
    }

    async fn set_password_hash(&self, id: UserId, password_hash: &str) -> Result<bool, RepositoryError> {
        let done = sqlx::query("UPDATE users SET password = ?2, must_change_password = 0 WHERE id = ?1")
            .bind(id.0)
            .bind(password_hash)
            .execute(self.db.writer())
            .await
            .map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }

    async fn find_credentials_for_cpf(
        &self,
        cpf: &Cpf,
        as_typed: &str,
    ) -> Result<Option<UserCredentials>, RepositoryError> {
        // A username equal to the typed text wins over a CPF.
        self.credentials_where(
            &format!("{BY_USERNAME_OR_CPF} ORDER BY (username = ?1) DESC"),
            &[as_typed, cpf.as_str()],
        )
        .await
    }

    async fn find_credentials_by_id(&self, id: UserId) -> Result<Option<UserCredentials>, RepositoryError> {
        let sql = format!("SELECT {CREDENTIALS_COLUMNS} FROM users WHERE id = ?1");
        let row = sqlx::query_as::<_, CredentialColumns>(&sql)
            .bind(id.0)
            .fetch_optional(self.db.readers())
            .await
            .map_err(to_repository_error)?;
        Ok(row.map(credentials))
    }

    async fn register(&self, registration: &Registration, password_hash: &str) -> Result<Registered, RepositoryError> {
        // One write transaction: the claim, the insert and the look-up of
        // what is taken see no other writer in between, so of concurrent
        // registrations with one value exactly one is created.
        let mut tx = self.db.begin_write().await.map_err(to_repository_error)?;
        let registered = register_on(&mut tx, registration, password_hash).await?;
        if matches!(registered, Registered::Created(_)) {
            tx.commit().await.map_err(to_repository_error)?;
        }
        Ok(registered)
    }

    async fn update_details(&self, id: UserId, details: &AccountDetails) -> Result<DetailsUpdate, RepositoryError> {
        let done = sqlx::query(
            "UPDATE users SET name = ?2, email = ?3, avatar = ?4, email_key = ?5, \
             email_verified = CASE WHEN email = ?3 THEN email_verified ELSE 0 END WHERE id = ?1 AND is_active",
        )
        .bind(id.0)
        .bind(&details.name)
        .bind(details.email.as_str())
        .bind(&details.avatar)
        .bind(details.email.key().as_str().to_owned())
        .execute(self.db.writer())
        .await;
        match done {
            Ok(done) if done.rows_affected() == 1 => Ok(DetailsUpdate::Updated),
            Ok(_) => Ok(DetailsUpdate::NotFound),
            // The e-mail index is the only unique one these columns have.
            Err(e) if is_unique_violation(&e) => Ok(DetailsUpdate::EmailTaken),
            Err(e) => Err(to_repository_error(e)),
        }
    }

    async fn find_active_staff(&self, id: UserId) -> Result<Option<String>, RepositoryError> {
        sqlx::query_scalar("SELECT username FROM users WHERE id = ?1 AND is_active AND is_staff")
            .bind(id.0)
            .fetch_optional(self.db.readers())
            .await
            .map_err(to_repository_error)
    }

    async fn set_staff(&self, id: UserId, staff: bool, audit: &NewAuditEntry) -> Result<AccessChange, RepositoryError> {
        let change = sqlx::query("UPDATE users SET is_staff = ?2 WHERE id = ?1").bind(id.0).bind(staff);
        access_change(&self.db, id, !staff, change, audit).await
    }
}
