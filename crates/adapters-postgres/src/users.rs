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
use sqlx::postgres::PgArguments;
use sqlx::query::Query;
use sqlx::{PgExecutor, PgPool, Postgres};

use crate::audit::commit_with;
use crate::error::to_repository_error;
use crate::user_lookups::{BY_USERNAME, BY_USERNAME_OR_CPF, CLAIMABLE, TAKEN_BY_SIGN_UP};

/// Users in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgUserRepository {
    pool: PgPool,
}

impl PgUserRepository {
    /// A repository on `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

/// Runs `change` (one statement that changes the row of `id` when it
/// exists) and appends `entry`, in one transaction, unless `takes_access`
/// (the change takes the staff flag or the activation away) and `id` is
/// the last active staff account ([`AccessChange::LastStaff`], nothing
/// stored). The active staff rows are locked first (`FOR UPDATE`, in id
/// order, so that two such changes never deadlock): a concurrent change
/// waits, then sees this one's outcome.
pub(crate) async fn access_change(
    pool: &PgPool,
    id: UserId,
    takes_access: bool,
    change: Query<'_, Postgres, PgArguments>,
    entry: &NewAuditEntry,
) -> Result<AccessChange, RepositoryError> {
    let mut tx = pool.begin().await.map_err(to_repository_error)?;
    if takes_access {
        let staff: Vec<i64> =
            sqlx::query_scalar("SELECT id FROM users WHERE is_active AND is_staff ORDER BY id FOR UPDATE")
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

/// Inserts `user` with `flags` on `on` and returns its id: the one insert
/// of an account by an operator, a test or the panel. Errors: the driver's
/// (a unique violation when the username, CPF or e-mail is taken), for the
/// caller to map.
pub(crate) async fn insert_user(
    on: impl PgExecutor<'_>,
    user: &NewUser,
    flags: InsertFlags,
) -> Result<UserId, sqlx::Error> {
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO users (username, password, is_active, identificacao, nome_usual, \
         email, campus, tipo_usuario, name, cpf, is_staff, must_change_password, email_key) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id",
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
    .bind(EmailKey::of(&user.data.email).as_str())
    .fetch_one(on)
    .await?;
    Ok(UserId(id))
}

/// The flags [`insert_user`] sets beside the [`NewUser`]'s fields.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct InsertFlags {
    /// The account may use the administration panel.
    pub staff: bool,
    /// The password is temporary: it must be changed at the next login.
    pub must_change_password: bool,
}

/// The columns of [`CredentialColumns`].
const CREDENTIALS_COLUMNS: &str = "id, username, password, is_active, must_change_password";

/// The columns of [`RecordColumns`].
pub(crate) const RECORD_COLUMNS: &str = "id, username, name, email, cpf, is_active, is_staff, receita_validated, \
     must_change_password, floor(extract(epoch FROM created_at))::BIGINT AS created_at";

/// The account `id`, active or not (the operator's and the
/// administration's look-up).
pub(crate) async fn find_record_by_id(pool: &PgPool, id: UserId) -> Result<Option<AccountRecord>, RepositoryError> {
    let row = sqlx::query_as::<_, RecordColumns>(&format!("SELECT {RECORD_COLUMNS} FROM users WHERE id = $1"))
        .bind(id.0)
        .fetch_optional(pool)
        .await
        .map_err(to_repository_error)?;
    Ok(row.map(account_record))
}

/// The account named exactly `username`, active or not.
pub(crate) async fn find_record_by_username(
    pool: &PgPool,
    username: &Username,
) -> Result<Option<AccountRecord>, RepositoryError> {
    let row = sqlx::query_as::<_, RecordColumns>(&format!("SELECT {RECORD_COLUMNS} FROM users WHERE {BY_USERNAME}"))
        .bind(username.as_str())
        .fetch_optional(pool)
        .await
        .map_err(to_repository_error)?;
    Ok(row.map(account_record))
}

#[async_trait]
impl UserRepository for PgUserRepository {
    async fn find_credentials(&self, username: &str) -> Result<Option<UserCredentials>, RepositoryError> {
        let row = sqlx::query_as::<_, CredentialColumns>(&format!(
            "SELECT {CREDENTIALS_COLUMNS} FROM users WHERE {BY_USERNAME}"
        ))
        .bind(username)
        .fetch_optional(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(row.map(credentials))
    }

    async fn find_active_user_data(&self, id: UserId) -> Result<Option<UserData>, RepositoryError> {
        let row = sqlx::query_as::<_, UserDataColumns>(
            "SELECT identificacao, nome_usual, email, campus, tipo_usuario \
             FROM users WHERE id = $1 AND is_active",
        )
        .bind(id.0)
        .fetch_optional(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(row.map(user_data))
    }

    async fn create(&self, user: NewUser) -> Result<UserId, RepositoryError> {
        insert_user(&self.pool, &user, InsertFlags::default()).await.map_err(to_repository_error)
    }

    async fn find_summary(&self, username: &Username) -> Result<Option<AccountRecord>, RepositoryError> {
        find_record_by_username(&self.pool, username).await
    }

    async fn find_summary_by_id(&self, id: UserId) -> Result<Option<AccountRecord>, RepositoryError> {
        find_record_by_id(&self.pool, id).await
    }

    async fn set_password_hash(&self, id: UserId, password_hash: &str) -> Result<bool, RepositoryError> {
        let done = sqlx::query("UPDATE users SET password = $2, must_change_password = FALSE WHERE id = $1")
            .bind(id.0)
            .bind(password_hash)
            .execute(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }

    async fn find_credentials_for_cpf(
        &self,
        cpf: &Cpf,
        as_typed: &str,
    ) -> Result<Option<UserCredentials>, RepositoryError> {
        // Both lookups are unique-index scans; a username equal to the typed
        // text wins over a CPF.
        let row = sqlx::query_as::<_, CredentialColumns>(&format!(
            "SELECT {CREDENTIALS_COLUMNS} FROM users WHERE {BY_USERNAME_OR_CPF} \
             ORDER BY (username = $1) DESC LIMIT 1"
        ))
        .bind(as_typed)
        .bind(cpf.as_str())
        .fetch_optional(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(row.map(credentials))
    }

    async fn find_credentials_by_id(&self, id: UserId) -> Result<Option<UserCredentials>, RepositoryError> {
        let row =
            sqlx::query_as::<_, CredentialColumns>(&format!("SELECT {CREDENTIALS_COLUMNS} FROM users WHERE id = $1"))
                .bind(id.0)
                .fetch_optional(&self.pool)
                .await
                .map_err(to_repository_error)?;
        Ok(row.map(credentials))
    }

    async fn register(&self, registration: &Registration, password_hash: &str) -> Result<Registered, RepositoryError> {
        // A pre-registered account (user-management API: unusable password
        // '!…', still active) with this CPF and e-mail is claimed: it takes
        // the chosen username, name and password, never a second account.
        // One statement; of concurrent claims the row lock lets one win,
        // the others see a usable password and fall through to the insert,
        // which finds the CPF taken. The address is compared by its key.
        let email_key = registration.email.key();
        let claimed = sqlx::query_scalar::<_, i64>(&format!(
            "UPDATE users SET username = $1, password = $2, nome_usual = $3, name = $3 WHERE {CLAIMABLE} RETURNING id"
        ))
        .bind(registration.username.as_str())
        .bind(password_hash)
        .bind(&registration.name)
        .bind(email_key.as_str())
        .bind(registration.cpf.as_str())
        .fetch_optional(&self.pool)
        .await;
        match claimed {
            Ok(Some(id)) => return Ok(Registered::Created(UserId(id))),
            Ok(None) => {}
            // The chosen username is another account's.
            Err(sqlx::Error::Database(db)) if db.is_unique_violation() => {
                return Ok(Registered::Taken(vec![UniqueField::Username]));
            }
            Err(e) => return Err(to_repository_error(e)),
        }
        // ON CONFLICT DO NOTHING covers every unique index (username, cpf,
        // email_key): a concurrent registration with one of the values
        // waits for the other's commit, then inserts nothing.
        let created: Option<i64> = sqlx::query_scalar(
            "INSERT INTO users (username, password, is_active, nome_usual, email, name, cpf, email_key) \
             VALUES ($1, $2, TRUE, $3, $4, $3, $5, $6) ON CONFLICT DO NOTHING RETURNING id",
        )
        .bind(registration.username.as_str())
        .bind(password_hash)
        .bind(&registration.name)
        .bind(registration.email.as_str())
        .bind(registration.cpf.as_str())
        .bind(email_key.as_str())
        .fetch_optional(&self.pool)
        .await
        .map_err(to_repository_error)?;
        if let Some(id) = created {
            return Ok(Registered::Created(UserId(id)));
        }
        let (username, cpf, email): (bool, bool, bool) = sqlx::query_as(&format!(
            "SELECT coalesce(bool_or(username = $1), FALSE), coalesce(bool_or(cpf = $2::bpchar), FALSE), \
                    coalesce(bool_or(email_key = $3), FALSE) \
             FROM users WHERE {TAKEN_BY_SIGN_UP}"
        ))
        .bind(registration.username.as_str())
        .bind(registration.cpf.as_str())
        .bind(email_key.as_str())
        .fetch_one(&self.pool)
        .await
        .map_err(to_repository_error)?;
        let taken = UniqueField::taken(cpf, email, username);
        if taken.is_empty() {
            // The other account went away between the two statements.
            return Err(RepositoryError::Conflict("a unique value was taken, then freed".into()));
        }
        Ok(Registered::Taken(taken))
    }

    async fn update_details(&self, id: UserId, details: &AccountDetails) -> Result<DetailsUpdate, RepositoryError> {
        let done = sqlx::query(
            "UPDATE users SET name = $2, email = $3, avatar = $4, email_key = $5, \
             email_verified = CASE WHEN email = $3 THEN email_verified ELSE FALSE END WHERE id = $1 AND is_active",
        )
        .bind(id.0)
        .bind(&details.name)
        .bind(details.email.as_str())
        .bind(&details.avatar)
        .bind(details.email.key().as_str())
        .execute(&self.pool)
        .await;
        match done {
            Ok(done) if done.rows_affected() == 1 => Ok(DetailsUpdate::Updated),
            Ok(_) => Ok(DetailsUpdate::NotFound),
            // The e-mail index is the only unique one these columns have.
            Err(sqlx::Error::Database(db)) if db.is_unique_violation() => Ok(DetailsUpdate::EmailTaken),
            Err(e) => Err(to_repository_error(e)),
        }
    }

    async fn find_active_staff(&self, id: UserId) -> Result<Option<String>, RepositoryError> {
        sqlx::query_scalar("SELECT username FROM users WHERE id = $1 AND is_active AND is_staff")
            .bind(id.0)
            .fetch_optional(&self.pool)
            .await
            .map_err(to_repository_error)
    }

    async fn set_staff(&self, id: UserId, staff: bool, audit: &NewAuditEntry) -> Result<AccessChange, RepositoryError> {
        let change = sqlx::query("UPDATE users SET is_staff = $2 WHERE id = $1").bind(id.0).bind(staff);
        access_change(&self.pool, id, !staff, change, audit).await
    }
}
