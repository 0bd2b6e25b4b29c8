//! A person's security activity ([`credencial_domain::security_event`]):
//! logins and changes to factors, password and sessions, newest first.

use async_trait::async_trait;
use credencial_domain::UserId;

use crate::RepositoryError;

/// An event as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecurityEvent {
    /// When (Unix seconds).
    pub at: i64,
    /// The kind's code.
    pub kind: String,
    /// The login's `amr`, a passkey's name, or empty.
    pub detail: String,
    /// The browser and system summary, or empty.
    pub device: String,
    /// The approximate place (a /24 or /48), or empty.
    pub place: String,
}

/// Where security events are kept.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait SecurityEvents: Send + Sync + 'static {
    /// Appends `event` of `user`. Errors: `Unexpected`.
    async fn record(&self, user: UserId, event: &SecurityEvent) -> Result<(), RepositoryError>;

    /// The `limit` most recent events of `user`, newest first. Errors:
    /// `Unexpected`.
    async fn recent(&self, user: UserId, limit: u32) -> Result<Vec<SecurityEvent>, RepositoryError>;

    /// Deletes up to `limit` events before `before` (Unix seconds), the
    /// oldest first: how many. Errors: `Unexpected`.
    async fn purge(&self, before: i64, limit: u32) -> Result<u64, RepositoryError>;
}
