//! The profile service's own data and its durable cache of upstream data.

use async_trait::async_trait;
use credencial_domain::oauth::userinfo::UserIdentity;
use credencial_domain::profile::{AcademicDegree, Experience, OwnProfile};
use credencial_domain::{Scope, UserId};

use crate::account::AccessLogEntry;
use crate::error::RepositoryError;

/// What a client's read of a person's data found
/// ([`ProfileRepository::read_for_client`]: the own profile;
/// [`ProfileRepository::identity_for_client`]: the userinfo claims' data).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientRead<T = OwnProfile> {
    /// The person still grants the client access: their data, and the
    /// access-log entry is written.
    Answered(T),
    /// The person revoked the client's access (or never granted it):
    /// nothing was read or logged.
    NotGranted,
    /// The user does not exist or is inactive: nothing was logged.
    UnknownUser,
}

/// The user's own profile data in the service's database.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait ProfileRepository: Send + Sync + 'static {
    /// Everything the profile answer needs from our own tables, read in one
    /// round trip whatever the lengths of the lists; `Ok(None)` when the
    /// user does not exist or is inactive. Errors: `Unexpected`.
    async fn own_profile(&self, user: UserId) -> Result<Option<OwnProfile>, RepositoryError>;

    /// The profile read of a client (`POST /api/perfil/dados/`): checks
    /// that `entry.user` still has a grant for `entry.client`, reads what
    /// [`own_profile`](Self::own_profile) reads, and appends `entry` to the
    /// access log — the entry is written exactly when the profile is
    /// returned (`Answered`), atomically with the grant check, so a
    /// concurrent revocation either comes first (`NotGranted`) or after
    /// both (PostgreSQL: one statement; SQLite: a read, then a conditional
    /// append on the writer). Errors: `Unexpected` (also when the entry
    /// cannot be written; then nothing is returned and the read must not be
    /// answered).
    async fn read_for_client(&self, entry: &AccessLogEntry) -> Result<ClientRead, RepositoryError>;

    /// The userinfo read of a client (`/oauth/userinfo/`), under the same
    /// rules as
    /// [`read_for_client`](Self::read_for_client) (grant check, the entry
    /// written exactly when the data is returned), reading only what the
    /// userinfo claims need. Errors: `Unexpected` (also when the entry
    /// cannot be written; then nothing is returned).
    async fn identity_for_client(&self, entry: &AccessLogEntry) -> Result<ClientRead<UserIdentity>, RepositoryError>;

    /// Sets the public avatar URL and whether the tax-id validation was
    /// done. Errors: `Unexpected`.
    async fn set_profile(&self, user: UserId, avatar: &str, receita_validated: bool) -> Result<(), RepositoryError>;

    /// Adds an experience registered by the user. Errors: `Unexpected`
    /// (e.g. a datetime that is not ISO 8601).
    async fn add_experience(&self, user: UserId, experience: Experience) -> Result<(), RepositoryError>;

    /// Adds an academic degree. Errors: `Unexpected`.
    async fn add_degree(&self, user: UserId, degree: AcademicDegree) -> Result<(), RepositoryError>;

    /// Adds `experiences` taken from CNES bonds, exactly once per user: the
    /// first call inserts them and returns `Ok(true)`; every later call (on
    /// any instance, also concurrently) inserts nothing and returns
    /// `Ok(false)`. Errors: `Unexpected` (and then nothing is inserted).
    async fn supplement_from_cnes(&self, user: UserId, experiences: Vec<Experience>) -> Result<bool, RepositoryError>;
}

/// A cached upstream payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// The scope it answers.
    pub scope: Scope,
    /// The scope's JSON payload, as it goes into the answer.
    pub payload: serde_json::Value,
    /// When it was fetched (Unix seconds).
    pub fetched_at: i64,
    /// When it stops being fresh (Unix seconds); a stale snapshot is still
    /// served when the upstream fails.
    pub expires_at: i64,
}

/// The columns of a stored snapshot, as every storage adapter selects them,
/// in this order: `scope`, `payload` (JSON text), `fetched_at`,
/// `expires_at` (Unix seconds).
pub type SnapshotColumns = (String, String, i64, i64);

impl Snapshot {
    /// The snapshot a storage adapter read back as [`SnapshotColumns`];
    /// `None` for a scope this build does not know (left out of the
    /// answer, as if never stored). Errors: `Unexpected` for a payload that
    /// is not JSON.
    pub fn from_columns(columns: SnapshotColumns) -> Option<Result<Self, RepositoryError>> {
        let (scope, payload, fetched_at, expires_at) = columns;
        let scope = scope.parse::<Scope>().ok()?;
        Some(
            serde_json::from_str(&payload)
                .map(|payload| Self { scope, payload, fetched_at, expires_at })
                .map_err(|e| RepositoryError::Unexpected(e.to_string())),
        )
    }
}

/// Durable cache of upstream scope data, shared by every instance.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait SnapshotStore: Send + Sync + 'static {
    /// The stored snapshots (fresh or stale) of `user` for `scopes`, in one
    /// round trip. Errors: `Unexpected`.
    async fn get_many(&self, user: UserId, scopes: &[Scope]) -> Result<Vec<Snapshot>, RepositoryError>;

    /// Stores or replaces the snapshot of (`user`, `snapshot.scope`).
    /// Errors: `Unexpected`.
    async fn put(&self, user: UserId, snapshot: Snapshot) -> Result<(), RepositoryError>;
}
