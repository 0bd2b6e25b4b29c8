//! Second factors kept per account ([`credencial_domain::second_factor`]):
//! a TOTP secret (sealed) with the last step used, and recovery codes (as
//! hashes).

use async_trait::async_trait;
use credencial_domain::UserId;

use crate::RepositoryError;

/// An account's TOTP as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TotpRecord {
    /// The sealed secret.
    pub sealed_secret: Vec<u8>,
    /// Whether enrolment was confirmed with a code (an unconfirmed secret
    /// is no factor yet).
    pub confirmed: bool,
    /// The last step a code was accepted for.
    pub last_step: Option<i64>,
}

/// Where second factors are kept.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait SecondFactorStore: Send + Sync + 'static {
    /// `user`'s TOTP, confirmed or pending. Errors: `Unexpected`.
    async fn totp(&self, user: UserId) -> Result<Option<TotpRecord>, RepositoryError>;

    /// Stores a pending (unconfirmed) secret for `user`, replacing a
    /// pending one; `false` (nothing stored) when a confirmed one exists.
    /// Errors: `Unexpected`.
    async fn begin_totp(&self, user: UserId, sealed_secret: &[u8]) -> Result<bool, RepositoryError>;

    /// Confirms `user`'s pending secret at `now` with a code of `step`
    /// (which becomes the last step used); `false` when there is no
    /// pending secret. Errors: `Unexpected`.
    async fn confirm_totp(&self, user: UserId, step: i64, now: i64) -> Result<bool, RepositoryError>;

    /// Records `step` as used by `user`'s confirmed TOTP, atomically, only
    /// when it is later than the last step used: `true` for exactly one of
    /// concurrent uses of one step. Errors: `Unexpected`.
    async fn use_totp_step(&self, user: UserId, step: i64) -> Result<bool, RepositoryError>;

    /// Deletes `user`'s TOTP; whether there was one. Errors: `Unexpected`.
    async fn remove_totp(&self, user: UserId) -> Result<bool, RepositoryError>;

    /// Replaces `user`'s recovery codes with `hashes`, in one transaction
    /// (the old set dies). Errors: `Unexpected`.
    async fn replace_recovery_codes(&self, user: UserId, hashes: &[[u8; 32]]) -> Result<(), RepositoryError>;

    /// Uses up `user`'s recovery code with `hash` (deletes it): `true` for
    /// exactly one of concurrent uses. Errors: `Unexpected`.
    async fn use_recovery_code(&self, user: UserId, hash: &[u8; 32]) -> Result<bool, RepositoryError>;

    /// How many unused recovery codes `user` has. Errors: `Unexpected`.
    async fn recovery_codes_left(&self, user: UserId) -> Result<u64, RepositoryError>;

    /// Deletes every factor of `user` (TOTP and recovery codes), in one
    /// transaction; whether there was any. Errors: `Unexpected`.
    async fn remove_all(&self, user: UserId) -> Result<bool, RepositoryError>;
}
