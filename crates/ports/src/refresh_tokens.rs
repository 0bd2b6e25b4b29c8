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

/// The concurrent-refresh grace window of one rotation (see
/// [`credencial_domain::refresh_grace`]). `Debug` hides the sealed bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct GraceRotation {
    /// The pair this rotation issues, sealed for the holder of the old
    /// token: kept beside the old token's record, to be answered again if
    /// the old token comes back within the window.
    pub sealed_successor: Vec<u8>,
    /// The rotation time to record (Unix seconds).
    pub at: i64,
    /// The earliest rotation time whose replay is still answered with its
    /// sealed pair (`at` less the window).
    pub covered_since: i64,
}

impl std::fmt::Debug for GraceRotation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraceRotation")
            .field("at", &self.at)
            .field("covered_since", &self.covered_since)
            .finish_non_exhaustive()
    }
}

/// What [`RefreshTokenStore::rotate`] did.
#[derive(Clone, PartialEq, Eq)]
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
    /// The old token was rotated within the grace window (its rotation
    /// time is at or after the call's `covered_since`) and the successor it
    /// was rotated into is still current: a concurrent refresh, not a
    /// theft. Nothing was recorded; `sealed` is what that rotation kept,
    /// for the caller to open with the old token and answer again.
    Repeated {
        /// The successor pair, as sealed by the first rotation.
        sealed: Vec<u8>,
    },
    /// Nothing was recorded: the old token is unknown, belongs to another
    /// user, or the user is inactive (the old token is then rotated).
    Refused,
}

impl std::fmt::Debug for Rotation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Rotated => f.write_str("Rotated"),
            Self::Replayed { family } => f.debug_struct("Replayed").field("family", family).finish(),
            Self::Repeated { .. } => f.write_str("Repeated { [sealed] }"),
            Self::Refused => f.write_str("Refused"),
        }
    }
}

/// What [`RefreshTokenStore::revoke_token`] found and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenRevocation {
    /// The token was current: it and every current token of its family
    /// are revoked now.
    Revoked,
    /// The token had been rotated before (a replay): every current token
    /// of its family is revoked now.
    WasRotated,
    /// The token had been revoked before: nothing changed.
    WasRevoked,
    /// No such token of that user: nothing changed.
    Unknown,
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
    /// token is still rotated.
    ///
    /// With `grace`, the rotation keeps `grace.sealed_successor` beside the
    /// old token (rotated at `grace.at`), and a replay of a token rotated at
    /// or after `grace.covered_since` whose successor is still current is
    /// `Repeated` with what its rotation kept. Without `grace` nothing is
    /// kept and no replay is `Repeated`.
    ///
    /// Of two concurrent calls with the same `old_jti`, at most one returns
    /// `Rotated`; with `grace` the other returns `Repeated` (or `Replayed`
    /// outside the window), without it it may see `Refused` rather than
    /// `Replayed`. Errors: `Unexpected`.
    async fn rotate(
        &self,
        old_jti: &str,
        user_id: UserId,
        new: NewRefreshToken,
        grace: Option<GraceRotation>,
    ) -> Result<Rotation, RepositoryError>;

    /// Revokes the token `jti` of `user_id` with every current token of its
    /// family (a logout, an RFC 7009 revocation), in one statement, and
    /// says what the token was. Errors: `Unexpected`.
    async fn revoke_token(&self, jti: &str, user_id: UserId) -> Result<TokenRevocation, RepositoryError>;

    /// Forgets the sealed pairs kept for the grace window by rotations before
    /// `before` (Unix seconds), at most `limit` rows per call (the oldest
    /// first, by an index whose leading column is that time), and returns how
    /// many; the caller calls again until a call returns fewer than `limit` or
    /// the service is stopping (see the application's `purge` module). Errors:
    /// `Unexpected`.
    async fn forget_sealed(&self, before: i64, limit: u32) -> Result<u64, RepositoryError>;

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

    /// Deletes the tokens that expired before `before` (Unix seconds), rotated
    /// or not, at most `limit` rows per call (the oldest first, by an index
    /// whose leading column is that time), and returns how many; the caller
    /// calls again until a call returns fewer than `limit` or the service is
    /// stopping (see the application's `purge` module). Errors: `Unexpected`.
    async fn purge_expired(&self, before: i64, limit: u32) -> Result<u64, RepositoryError>;
}
