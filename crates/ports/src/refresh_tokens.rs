//! State of issued refresh tokens, so that rotation holds across instances.

use async_trait::async_trait;
use credencial_domain::admin::LoginVia;
use credencial_domain::UserId;

use crate::error::RepositoryError;

/// A refresh token to remember.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRefreshToken {
    /// Its `jti` claim.
    pub jti: String,
    /// Its `user_id` claim.
    pub user_id: UserId,
    /// Its `exp` claim (Unix seconds).
    pub expires_at: i64,
}

/// What [`RefreshTokenStore::rotate`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rotation {
    /// The old token was current: it is rotated, and the new one is
    /// recorded as current in the same family.
    Rotated,
    /// The old token had been rotated (or revoked) before this call: it is
    /// being replayed. Nothing was recorded; `family` is its family, for the
    /// caller to revoke.
    Replayed {
        /// The replayed token's family.
        family: String,
    },
    /// Nothing was recorded: the old token is unknown, belongs to another
    /// user, or the user is inactive (the old token is then rotated).
    Refused,
}

/// Remembers which refresh tokens are current and rotates them atomically.
///
/// Tokens come in families: the first token of a login or of an
/// authorization code starts one, and every token rotated from a member
/// joins it, so that a replay can revoke everything issued from the same
/// start.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait RefreshTokenStore: Send + Sync + 'static {
    /// Records a newly issued refresh token as current, as the first of
    /// `family`. Errors: `Unexpected`.
    async fn record(&self, token: NewRefreshToken, family: &str) -> Result<(), RepositoryError>;

    /// [`record`](Self::record), and in the same statement a successful
    /// login of the token's user through `via` in the login history (what
    /// a login that issues a refresh token records, at no extra round
    /// trip). Errors: `Unexpected` (nothing stored).
    async fn record_login(&self, token: NewRefreshToken, family: &str, via: LoginVia) -> Result<(), RepositoryError>;

    /// In one atomic step: marks `old_jti` (issued to `user_id`) as rotated
    /// and records `new` as current in the old token's family, provided
    /// `old_jti` is current and the user is still active. Otherwise records
    /// nothing and says why ([`Rotation`]); only an inactive user's current
    /// token is still rotated. Of two concurrent calls with the same
    /// `old_jti`, at most one returns `Rotated` (the other may see
    /// `Refused` rather than `Replayed`). Errors: `Unexpected`.
    async fn rotate(&self, old_jti: &str, user_id: UserId, new: NewRefreshToken) -> Result<Rotation, RepositoryError>;

    /// Marks every current token of `family` as rotated, so that none of
    /// them is accepted again, and returns how many. An unknown family
    /// revokes nothing. Errors: `Unexpected`.
    async fn revoke_family(&self, family: &str) -> Result<u64, RepositoryError>;

    /// Whether `jti` was issued and not yet rotated. Errors: `Unexpected`.
    async fn is_current(&self, jti: &str) -> Result<bool, RepositoryError>;

    /// Revokes every current refresh token of `user`, in every family (a
    /// deactivated account, a new password), and returns how many. Errors:
    /// `Unexpected`.
    async fn revoke_user(&self, user: UserId) -> Result<u64, RepositoryError>;

    /// Deletes the tokens that expired before `before` (Unix seconds),
    /// rotated or not, and returns how many. Errors: `Unexpected`.
    async fn purge_expired(&self, before: i64) -> Result<u64, RepositoryError>;
}
