//! The append-only log of answered profile reads ("Quem acessou meus dados").

use async_trait::async_trait;
use credencial_domain::account::AccessLogPage;
use credencial_domain::oauth::ClientId;
use credencial_domain::{ScopeSet, UserId};

use crate::error::RepositoryError;

/// One answered `POST /api/perfil/dados/`, to append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessLogEntry {
    /// Whose data was read.
    pub user: UserId,
    /// Which client read it.
    pub client: ClientId,
    /// The scopes actually answered.
    pub scopes: ScopeSet,
    /// When (Unix seconds).
    pub at: i64,
    /// The request's id (as in the service's log).
    pub request_id: String,
}

/// One entry as the access report shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessLogRow {
    /// The client.
    pub client_id: ClientId,
    /// The client's name (its id if the client was deleted since).
    pub client_name: String,
    /// The scopes answered.
    pub scopes: ScopeSet,
    /// When (Unix seconds).
    pub at: i64,
    /// The request's id.
    pub request_id: String,
}

/// The access log: appended to, listed, purged; never updated.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait AccessLog: Send + Sync + 'static {
    /// Appends one entry. Errors: `Unexpected` (then the read must not be
    /// answered; also when the user does not exist).
    async fn append(&self, entry: AccessLogEntry) -> Result<(), RepositoryError>;

    /// One page of the user's entries, newest first, with the client's name,
    /// and how many entries the user has in all. Errors: `Unexpected`.
    async fn list(&self, user: UserId, page: AccessLogPage) -> Result<(Vec<AccessLogRow>, u64), RepositoryError>;

    /// Deletes entries older than `before` (Unix seconds), at most `limit` rows
    /// per call (the oldest first, by an index whose leading column is that
    /// time), and returns how many; the caller calls again until a call returns
    /// fewer than `limit` or the service is stopping (see the application's
    /// `purge` module). Errors: `Unexpected`.
    async fn purge_before(&self, before: i64, limit: u32) -> Result<u64, RepositoryError>;
}
