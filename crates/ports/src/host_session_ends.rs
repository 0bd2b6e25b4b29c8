//! The client component's record of back-channel logouts: which logout
//! tokens it took, and which host sessions the provider said ended.

use async_trait::async_trait;

use crate::RepositoryError;

/// A logout token the receiver took, and what it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostLogout {
    /// The token's `jti`.
    pub jti: String,
    /// Until when the token itself is valid (its `jti` is kept that long).
    pub token_expires_at: i64,
    /// The ended session's `sid`, when named.
    pub sid: Option<String>,
    /// The person whose sessions all ended (`sub`), when named without a
    /// `sid`.
    pub sub: Option<String>,
    /// When (Unix seconds).
    pub now: i64,
    /// Until when the end is kept (a host session's longest life).
    pub keep_until: i64,
}

/// Where the receiver keeps logout tokens taken and host sessions ended.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait HostSessionEnds: Send + Sync + 'static {
    /// Records `logout` in one transaction: `false` (and nothing recorded)
    /// when its `jti` was taken before. Also forgets, in a small bounded
    /// batch, what expired before `logout.now`. Errors: `Unexpected`.
    async fn record(&self, logout: &HostLogout) -> Result<bool, RepositoryError>;

    /// Whether the host session of `sid` (if any) was ended — a `sid` names
    /// one provider session, never reused — or every session of the person
    /// `sub` (if any) was ended at or after `since`, when the host session
    /// started (reads by primary key). Errors: `Unexpected`.
    async fn ended_since<'a>(
        &self,
        sid: Option<&'a str>,
        sub: Option<&'a str>,
        since: i64,
    ) -> Result<bool, RepositoryError>;
}

/// The key an ended session is kept under.
pub fn sid_key(sid: &str) -> String {
    format!("sid:{sid}")
}

/// The key the end of every session of a person is kept under.
pub fn sub_key(sub: &str) -> String {
    format!("sub:{sub}")
}
