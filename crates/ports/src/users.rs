//! User accounts and their credentials.

use async_trait::async_trait;
use credencial_domain::account::{AccountDetails, Registration, UniqueField};
use credencial_domain::admin::NewAuditEntry;
use credencial_domain::{Cpf, Redacted, UserData, UserId, Username};

use crate::error::RepositoryError;

/// What a login needs to know about a user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserCredentials {
    /// Primary key.
    pub id: UserId,
    /// The username as stored.
    pub username: String,
    /// The stored password hash (Django PBKDF2 text format).
    pub password_hash: Redacted<String>,
    /// Inactive users cannot log in.
    pub is_active: bool,
    /// The password was set by an administrator (temporary): it must be
    /// changed before the account is used.
    pub must_change_password: bool,
}

/// A user to create. `Debug` shows the username only: the hash and the
/// person's data (name, CPF, user data) stay out of logs.
#[derive(Clone, PartialEq, Eq)]
pub struct NewUser {
    /// Unique username.
    pub username: Username,
    /// Password hash in Django's PBKDF2 text format.
    pub password_hash: String,
    /// Whether the account may log in.
    pub is_active: bool,
    /// The data the user-data resource returns for this user.
    pub data: UserData,
    /// Public name (used by the profile service).
    pub name: String,
    /// CPF, if known (its check digits already checked).
    pub cpf: Option<Cpf>,
}

impl std::fmt::Debug for NewUser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewUser").field("username", &self.username).finish_non_exhaustive()
    }
}

/// One account as an operator or the administration sees it (no
/// password hash).
#[derive(Clone, PartialEq, Eq)]
pub struct AccountRecord {
    /// Primary key.
    pub id: UserId,
    /// The username as stored.
    pub username: String,
    /// Public name.
    pub name: String,
    /// E-mail address.
    pub email: String,
    /// CPF, 11 digits, if known (personal data: shown masked).
    pub cpf: Option<String>,
    /// Whether the account may log in.
    pub is_active: bool,
    /// Whether the account may use the administration panel.
    pub is_staff: bool,
    /// Whether the registration was validated through the tax id.
    pub tax_id_validated: bool,
    /// Whether the password must be changed at the next login.
    pub must_change_password: bool,
    /// When the account was created (Unix seconds).
    pub created_at: i64,
}

/// Shows no personal data: name, e-mail and CPF are left out.
impl std::fmt::Debug for AccountRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccountRecord")
            .field("id", &self.id)
            .field("username", &self.username)
            .field("is_active", &self.is_active)
            .field("is_staff", &self.is_staff)
            .finish_non_exhaustive()
    }
}

/// What [`UserRepository::register`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Registered {
    /// The account was created with this id.
    Created(UserId),
    /// Nothing was created: another account has these values (at least one;
    /// every one that is taken, as far as the storage saw).
    Taken(Vec<UniqueField>),
}

/// What [`UserRepository::update_details`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DetailsUpdate {
    /// The details were stored.
    Updated,
    /// Nothing was stored: another account has this e-mail address.
    EmailTaken,
    /// There is no such active account.
    NotFound,
}

/// The outcome of a change that may take away an account's access to the
/// administration panel (its staff flag, or its activation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessChange {
    /// Stored, with its audit entry.
    Changed,
    /// There is no such account; nothing stored.
    NotFound,
    /// Refused, nothing stored: the account is the last active staff
    /// account, and the change would leave none.
    LastStaff,
}

/// Storage of user accounts.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait UserRepository: Send + Sync + 'static {
    /// Credentials of the user with exactly this username; `Ok(None)` when
    /// there is none. Errors: `Unexpected` when storage fails.
    async fn find_credentials(&self, username: &str) -> Result<Option<UserCredentials>, RepositoryError>;

    /// User data of an active user; `Ok(None)` when the user does not exist
    /// or is inactive. Errors: `Unexpected`.
    async fn find_active_user_data(&self, id: UserId) -> Result<Option<UserData>, RepositoryError>;

    /// Creates a user and returns its id. Errors: `Conflict` when the
    /// username is taken, `Unexpected` otherwise.
    async fn create(&self, user: NewUser) -> Result<UserId, RepositoryError>;

    /// The user named exactly `username`; `Ok(None)` when there is none.
    /// Errors: `Unexpected`.
    async fn find_summary(&self, username: &Username) -> Result<Option<AccountRecord>, RepositoryError>;

    /// The user with id `id`, active or not; `Ok(None)` when there is none.
    /// Errors: `Unexpected`.
    async fn find_summary_by_id(&self, id: UserId) -> Result<Option<AccountRecord>, RepositoryError>;

    /// Replaces the password hash of the user `id` (the owner's change: it
    /// no longer has to be changed); `Ok(false)` when there is no such
    /// user. Errors: `Unexpected`.
    async fn set_password_hash(&self, id: UserId, password_hash: &str) -> Result<bool, RepositoryError>;

    /// Credentials for a login typed as a CPF (`as_typed`, the text the
    /// person typed, trimmed): those of the user named exactly `as_typed`
    /// if there is one (a username wins), else those of the user whose CPF
    /// is `cpf`; `Ok(None)` when neither exists. One round trip.
    /// Errors: `Unexpected`.
    async fn find_credentials_for_cpf(
        &self,
        cpf: &Cpf,
        as_typed: &str,
    ) -> Result<Option<UserCredentials>, RepositoryError>;

    /// Credentials of the user with id `id`, active or not; `Ok(None)`
    /// when there is none. Errors: `Unexpected`.
    async fn find_credentials_by_id(&self, id: UserId) -> Result<Option<UserCredentials>, RepositoryError>;

    /// Creates the active account of a sign-up with `password_hash`,
    /// unless another account has its username, CPF or e-mail address
    /// (ignoring case): then nothing is created and the taken values are
    /// answered. A pre-registered account (user-management API: an
    /// unusable password, still active) with the same CPF and e-mail is
    /// claimed instead: it takes the username, name and password, and its
    /// id is answered as `Created`. Of concurrent registrations with one value (on any
    /// instance) exactly one is created. Errors: `Conflict` when a value
    /// was taken and freed again between the insert and the look-up (the
    /// caller may retry); `Unexpected`.
    async fn register(&self, registration: &Registration, password_hash: &str) -> Result<Registered, RepositoryError>;

    /// Replaces the name, e-mail address and avatar of the active user
    /// `id`, unless another account has the e-mail address (ignoring case).
    /// Errors: `Unexpected`.
    async fn update_details(&self, id: UserId, details: &AccountDetails) -> Result<DetailsUpdate, RepositoryError>;

    /// The username of the user `id` when it is active and staff (may use
    /// the administration panel); `Ok(None)` otherwise. Errors:
    /// `Unexpected`.
    async fn find_active_staff(&self, id: UserId) -> Result<Option<String>, RepositoryError>;

    /// Makes the user `id` staff or not and appends `audit`, in one
    /// transaction. Nothing is stored (nor appended) when there is no such
    /// user (`NotFound`), or when `id` is the last active staff account and
    /// `staff` is false (`LastStaff`): the panel always keeps an active
    /// staff account.
    ///
    /// The check and the change are atomic against every other change of
    /// staff flags or activations, on any instance or connection: of two
    /// concurrent changes that would each leave the other account as the
    /// last active staff one, exactly one is stored (PostgreSQL locks the
    /// active staff rows, `SELECT … FOR UPDATE`, in the change's
    /// transaction; SQLite takes the file's write lock first, `BEGIN
    /// IMMEDIATE`). The same holds for
    /// [`crate::AccountAdminStore::set_active`]. Errors: `Unexpected`.
    async fn set_staff(&self, id: UserId, staff: bool, audit: &NewAuditEntry) -> Result<AccessChange, RepositoryError>;
}
