//! Application passwords kept per account
//! ([`credencial_domain::app_password`]): a name, the password's hash,
//! when it was made and last used.

use async_trait::async_trait;
use credencial_domain::UserId;

use crate::RepositoryError;

/// An application password as the security page lists it (never its
/// hash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppPasswordRecord {
    /// The record's id.
    pub id: i64,
    /// The name the person gave it.
    pub name: String,
    /// When it was made (Unix seconds).
    pub created_at: i64,
    /// When it last opened a login at `pair` (Unix seconds).
    pub last_used_at: Option<i64>,
}

/// The columns an adapter reads an [`AppPasswordRecord`] from, in order:
/// `id`, `name`, `created_at`, `last_used_at` (both engines map rows the
/// same way through the `From` below).
pub type AppPasswordColumns = (i64, String, i64, Option<i64>);

impl From<AppPasswordColumns> for AppPasswordRecord {
    fn from((id, name, created_at, last_used_at): AppPasswordColumns) -> Self {
        Self { id, name, created_at, last_used_at }
    }
}

/// An application password to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAppPassword {
    /// Whose it is.
    pub user: UserId,
    /// The name the person gave it.
    pub name: String,
    /// [`credencial_domain::app_password::hash`] of the password.
    pub hash: [u8; 32],
    /// Now (Unix seconds).
    pub now: i64,
}

/// Where application passwords are kept.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait AppPasswordStore: Send + Sync + 'static {
    /// Stores `new` when its account has fewer than `limit`: its id, or
    /// `None` (nothing stored) at the limit. Of concurrent creations on
    /// one account, no more than `limit` are ever stored. Errors:
    /// `Unexpected`.
    async fn create_app_password(&self, new: &NewAppPassword, limit: u32) -> Result<Option<i64>, RepositoryError>;

    /// `user`'s application passwords, oldest first, at most `limit`.
    /// Errors: `Unexpected`.
    async fn app_passwords(&self, user: UserId, limit: u32) -> Result<Vec<AppPasswordRecord>, RepositoryError>;

    /// Finds `user`'s application password with `hash` and records its use
    /// at `now`, in one statement: its id, or `None` when `user` has none
    /// with that hash (another person's is never found). Errors:
    /// `Unexpected`.
    async fn use_app_password(&self, user: UserId, hash: &[u8; 32], now: i64) -> Result<Option<i64>, RepositoryError>;

    /// Whether `user`'s application password `id` still exists (not
    /// revoked). Errors: `Unexpected`.
    async fn app_password_exists(&self, user: UserId, id: i64) -> Result<bool, RepositoryError>;

    /// Deletes `user`'s application password `id`: its name, or `None`
    /// when `user` has none with that id (another person's id revokes
    /// nothing). Errors: `Unexpected`.
    async fn revoke_app_password(&self, user: UserId, id: i64) -> Result<Option<String>, RepositoryError>;
}
