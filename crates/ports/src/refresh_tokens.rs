//! State of issued refresh tokens, so that rotation holds across instances.

use async_trait::async_trait;
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

/// Remembers which refresh tokens are current and rotates them atomically.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait RefreshTokenStore: Send + Sync + 'static {
    /// Records a newly issued refresh token as current. Errors: `Unexpected`.
    async fn record(&self, token: NewRefreshToken) -> Result<(), RepositoryError>;

    /// In one atomic step: marks `old_jti` (issued to `user_id`) as rotated
    /// and records `new` as current, provided `old_jti` is current and the
    /// user is still active. Returns `Ok(false)` — and changes nothing but the
    /// old token — when `old_jti` is unknown, already rotated, belongs to
    /// another user, or the user is inactive. Of two concurrent calls with
    /// the same `old_jti`, at most one returns `Ok(true)`. Errors: `Unexpected`.
    async fn rotate(&self, old_jti: &str, user_id: UserId, new: NewRefreshToken) -> Result<bool, RepositoryError>;

    /// Whether `jti` was issued and not yet rotated. Errors: `Unexpected`.
    async fn is_current(&self, jti: &str) -> Result<bool, RepositoryError>;

    /// Deletes the tokens that expired before `before` (Unix seconds),
    /// rotated or not, and returns how many. Errors: `Unexpected`.
    async fn purge_expired(&self, before: i64) -> Result<u64, RepositoryError>;
}
