//! Second factors kept per account ([`credencial_domain::second_factor`]):
//! a TOTP secret (sealed) with the last step used, passkeys, and recovery
//! codes (as hashes); and the WebAuthn ceremonies in progress.

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

    /// Whether `user` has a second factor: a confirmed TOTP or a passkey.
    /// One statement. Errors: `Unexpected`.
    async fn has_factor(&self, user: UserId) -> Result<bool, RepositoryError>;

    /// Deletes every factor of `user` (TOTP, passkeys and recovery codes),
    /// in one transaction; whether there was any. Errors: `Unexpected`.
    async fn remove_all(&self, user: UserId) -> Result<bool, RepositoryError>;
}

/// A passkey as stored: the `webauthn-rs` credential (`data`, its JSON:
/// public key, counter, flags) and what the security page shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PasskeyRecord {
    /// The record's id (named on the security page).
    pub id: i64,
    /// Whose it is.
    pub user: UserId,
    /// The credential id the authenticator gave (unique across accounts).
    pub credential_id: Vec<u8>,
    /// The WebAuthn user handle of the account (the same for all of its
    /// passkeys: a random UUID, never the account's id or name).
    pub user_handle: Vec<u8>,
    /// The name the person gave it.
    pub name: String,
    /// The credential, as `webauthn-rs` serialises it.
    pub data: String,
    /// When it was registered (Unix seconds).
    pub created_at: i64,
    /// When it was last used to log in (Unix seconds).
    pub last_used_at: Option<i64>,
}

/// A passkey to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPasskey {
    /// Whose it is.
    pub user: UserId,
    /// The credential id.
    pub credential_id: Vec<u8>,
    /// The account's user handle.
    pub user_handle: Vec<u8>,
    /// The name the person gave it.
    pub name: String,
    /// The credential's JSON.
    pub data: String,
    /// Now (Unix seconds).
    pub now: i64,
}

/// A WebAuthn ceremony in progress, kept server-side between the page that
/// starts it and the post that finishes it (any instance can finish it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ceremony {
    /// The SHA-256 of the random id the page carries.
    pub id_hash: [u8; 32],
    /// Whose ceremony it is (`None` for a login by passkey alone: the
    /// authenticator names the account).
    pub user: Option<UserId>,
    /// What it is for (`register`, `login`, `second_factor`).
    pub purpose: String,
    /// The `webauthn-rs` state, as JSON.
    pub state: String,
    /// When it can no longer be finished (Unix seconds).
    pub expires_at: i64,
}

/// Passkeys and their ceremonies.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait PasskeyStore: Send + Sync + 'static {
    /// Stores a passkey when its credential id is new (on any account) and
    /// `user` has fewer than `limit`: whether it was stored. One
    /// statement. Errors: `Unexpected`.
    async fn add_passkey(&self, new: &NewPasskey, limit: u32) -> Result<bool, RepositoryError>;

    /// `user`'s passkeys, oldest first, at most `limit`. Errors:
    /// `Unexpected`.
    async fn passkeys(&self, user: UserId, limit: u32) -> Result<Vec<PasskeyRecord>, RepositoryError>;

    /// The passkey with `credential_id`, on whatever account. Errors:
    /// `Unexpected`.
    async fn passkey_by_credential(&self, credential_id: &[u8]) -> Result<Option<PasskeyRecord>, RepositoryError>;

    /// Records a login with passkey `id` at `now`, with its updated
    /// credential `data` when the counter or flags changed. Errors:
    /// `Unexpected`.
    async fn passkey_used(&self, id: i64, data: Option<String>, now: i64) -> Result<(), RepositoryError>;

    /// Deletes `user`'s passkey `id` (another person's id deletes
    /// nothing): whether there was one. Errors: `Unexpected`.
    async fn remove_passkey(&self, user: UserId, id: i64) -> Result<bool, RepositoryError>;

    /// Keeps a ceremony until it is taken or expires. Errors: `Unexpected`.
    async fn put_ceremony(&self, ceremony: &Ceremony) -> Result<(), RepositoryError>;

    /// Takes (deletes and returns) the ceremony with `id_hash` when it has
    /// not expired at `now`: of concurrent takes exactly one gets it.
    /// Errors: `Unexpected`.
    async fn take_ceremony(&self, id_hash: &[u8; 32], now: i64) -> Result<Option<Ceremony>, RepositoryError>;

    /// Deletes up to `limit` ceremonies expired at `now`: how many. Errors:
    /// `Unexpected`.
    async fn purge_ceremonies(&self, now: i64, limit: u32) -> Result<u64, RepositoryError>;
}
