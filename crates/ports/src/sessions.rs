//! Browser sessions kept on the server ([`credencial_domain::session`]).

use async_trait::async_trait;
use credencial_domain::UserId;

use crate::RepositoryError;

/// A session to store: who, when, how, from where. Only the hash of its id
/// is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSession {
    /// SHA-256 of the cookie's id.
    pub token_hash: [u8; 32],
    /// The person.
    pub user: UserId,
    /// When it is opened (Unix seconds): its start and first activity.
    pub now: i64,
    /// When it ends at the latest (the absolute limit).
    pub expires_at: i64,
    /// When the person last authenticated (the ID token's `auth_time`).
    pub auth_time: i64,
    /// How (`amr` values, space-separated).
    pub amr: String,
    /// The authentication context class reached (`acr`).
    pub acr: String,
    /// A short browser and system summary.
    pub device: String,
    /// The client's network (a /24 or /48), or empty when unknown.
    pub place: String,
    /// The password was right and the account has a second factor: the
    /// session waits for it.
    pub second_factor_pending: bool,
}

/// A live session found by its id, with what each request needs of its
/// account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResumedSession {
    /// The session's record id (the one `/conta/sessoes/` names).
    pub id: i64,
    /// The person.
    pub user: UserId,
    /// When the person last authenticated.
    pub auth_time: i64,
    /// How (`amr` values, space-separated).
    pub amr: String,
    /// The authentication context class reached.
    pub acr: String,
    /// The account's password was set by an administrator and must be
    /// changed first.
    pub must_change_password: bool,
    /// The session waits for the second factor.
    pub second_factor_pending: bool,
    /// The name the pages greet the person by: the account's usual name,
    /// else its full name, else its username.
    pub display_name: String,
}

/// One of a person's live sessions, as `/conta/sessoes/` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionEntry {
    /// The record id.
    pub id: i64,
    /// When it was opened (Unix seconds).
    pub created_at: i64,
    /// Its last recorded activity (to within a minute).
    pub last_seen_at: i64,
    /// How the person authenticated (`amr` values, space-separated).
    pub amr: String,
    /// The browser and system summary.
    pub device: String,
    /// The client's network.
    pub place: String,
}

/// Where sessions are kept. A session is live while `expires_at > now` and
/// its last activity is at or after the inactivity limit's `idle_since`,
/// and its account is active.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait SessionStore: Send + Sync + 'static {
    /// Stores a new session and returns its record id. Errors:
    /// `Unexpected`.
    async fn create(&self, session: &NewSession) -> Result<i64, RepositoryError>;

    /// The live session whose id hashes to `token_hash`, of an active
    /// account, in one round trip (one statement on PostgreSQL); when its
    /// last activity is before `touch_before`, it becomes `now`. `None`
    /// for an unknown, ended or expired session. Errors: `Unexpected`.
    async fn resume(
        &self,
        token_hash: &[u8; 32],
        now: i64,
        idle_since: i64,
        touch_before: i64,
    ) -> Result<Option<ResumedSession>, RepositoryError>;

    /// Ends the session whose id hashes to `token_hash` (its record is
    /// deleted); whether there was one. Errors: `Unexpected`.
    async fn end(&self, token_hash: &[u8; 32]) -> Result<bool, RepositoryError>;

    /// Records that the person of session `id` authenticated again at
    /// `now` (its `auth_time`). Errors: `Unexpected`.
    async fn reauthenticated(&self, id: i64, now: i64) -> Result<(), RepositoryError>;

    /// Ends the session with record id `id` when it is `user`'s (another
    /// person's id ends nothing); whether it did. Errors: `Unexpected`.
    async fn end_one(&self, user: UserId, id: i64) -> Result<bool, RepositoryError>;

    /// Ends every session of `user` but `except` (a record id), and
    /// returns how many it ended. Errors: `Unexpected`.
    async fn end_all(&self, user: UserId, except: Option<i64>) -> Result<u64, RepositoryError>;

    /// The live sessions of `user` (at most `limit`), the most recently
    /// active first. Errors: `Unexpected`.
    async fn list(
        &self,
        user: UserId,
        now: i64,
        idle_since: i64,
        limit: u32,
    ) -> Result<Vec<SessionEntry>, RepositoryError>;

    /// Deletes sessions whose absolute limit passed before `now` (those
    /// over by inactivity go when that limit passes too), at most `limit`
    /// rows by the expiry's index, and returns how many. Errors:
    /// `Unexpected`.
    async fn purge_expired(&self, now: i64, limit: u32) -> Result<u64, RepositoryError>;
}
