//! Back-channel logout's outbox: the logout tokens waiting to be posted to
//! applications. A session's end queues them in the same transaction
//! ([`crate::SessionStore`]); the background sender claims, posts and
//! records them.

use async_trait::async_trait;
use credencial_domain::oauth::ClientId;
use credencial_domain::UserId;

use crate::RepositoryError;

/// A delivery claimed by one sender until `lease`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedLogout {
    /// Its record id.
    pub id: i64,
    /// The application to tell.
    pub client_id: ClientId,
    /// Where the application listens now; `None` when it stopped
    /// listening since (the delivery is dropped).
    pub uri: Option<String>,
    /// The person whose session ended.
    pub user: UserId,
    /// The session's `sid`.
    pub sid: String,
    /// When the session ended (Unix seconds).
    pub created_at: i64,
    /// Failed tries so far.
    pub attempts: u32,
    /// Until when the claim holds (Unix seconds); the records below only
    /// change a delivery still claimed with it.
    pub lease: i64,
}

/// The columns of a claimed delivery, as every storage adapter returns
/// them, in this order: `id`, `client_id`, the client's
/// `backchannel_logout_uri`, `user_id`, `sid`, `created_at`, `attempts`,
/// `due_at` (the lease).
pub type LogoutColumns = (i64, String, Option<String>, i64, String, i64, i32, i64);

impl ClaimedLogout {
    /// The delivery a storage adapter read back as [`LogoutColumns`];
    /// `None` for a client id this build cannot read.
    pub fn from_columns(columns: LogoutColumns) -> Option<Self> {
        let (id, client_id, uri, user, sid, created_at, attempts, lease) = columns;
        Some(Self {
            id,
            client_id: ClientId::parse(&client_id).ok()?,
            uri,
            user: UserId(user),
            sid,
            created_at,
            attempts: u32::try_from(attempts).unwrap_or(0),
            lease,
        })
    }
}

/// The outbox of logout tokens, shared by every instance.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait LogoutDeliveries: Send + Sync + 'static {
    /// Claims up to `limit` deliveries due at `now` (the oldest due first,
    /// by an index), each until `lease`: of any number of concurrent calls,
    /// on any number of instances, each delivery goes to one. Errors:
    /// `Unexpected`.
    async fn claim(&self, now: i64, lease: i64, limit: u32) -> Result<Vec<ClaimedLogout>, RepositoryError>;

    /// Forgets delivery `id` (delivered, refused or given up), if still
    /// claimed with `lease`. Errors: `Unexpected`.
    async fn finish(&self, id: i64, lease: i64) -> Result<(), RepositoryError>;

    /// Records a failed try of delivery `id`, if still claimed with
    /// `lease`: tried again at `at`. Errors: `Unexpected`.
    async fn retry(&self, id: i64, lease: i64, at: i64) -> Result<(), RepositoryError>;
}

/// Why a logout token was not delivered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LogoutPostError {
    /// The application could not be reached, or answered with a server
    /// error: tried again later.
    #[error("the application is unavailable: {0}")]
    Unavailable(String),
    /// The application refused the token (a 4xx, or a redirect, which is
    /// never followed): trying again would not help.
    #[error("the application refused the logout token: {0}")]
    Refused(String),
}

/// Posts logout tokens to applications (OpenID Connect Back-Channel Logout
/// §2.5): `logout_token=` in a form, redirects not followed.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait LogoutPoster: Send + Sync + 'static {
    /// Posts `logout_token` to `uri`. Errors: `Unavailable`, `Refused`.
    async fn post(&self, uri: &str, logout_token: &str) -> Result<(), LogoutPostError>;
}
