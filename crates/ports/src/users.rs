//! User accounts and their credentials.

use async_trait::async_trait;
use credencial_domain::{UserData, UserId, Username};

use crate::error::RepositoryError;

/// What a login needs to know about a user.
#[derive(Clone, PartialEq, Eq)]
pub struct UserCredentials {
    /// Primary key.
    pub id: UserId,
    /// The username as stored.
    pub username: String,
    /// The stored password hash (Django PBKDF2 text format).
    pub password_hash: String,
    /// Inactive users cannot log in.
    pub is_active: bool,
}

impl std::fmt::Debug for UserCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserCredentials")
            .field("id", &self.id)
            .field("username", &self.username)
            .field("password_hash", &"[redacted]")
            .field("is_active", &self.is_active)
            .finish()
    }
}

/// A user to create.
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
    /// CPF, 11 digits, if known.
    pub cpf: Option<String>,
}

impl std::fmt::Debug for NewUser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewUser")
            .field("username", &self.username)
            .field("password_hash", &"[redacted]")
            .finish_non_exhaustive()
    }
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
}
