//! Readiness: whether the service can do its work right now (its database
//! answers), as `/readyz` reports it to a load balancer.

use async_trait::async_trait;

use crate::error::RepositoryError;

/// Checks that the storage the service depends on answers.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait ReadinessProbe: Send + Sync + 'static {
    /// `Ok(())` when the database answered a trivial query within the
    /// probe's own time bound; `Err(RepositoryError::Unexpected)` with the
    /// reason (for the log, never for a client) when it did not. Never waits
    /// longer than that bound, whatever the state of the connection pool.
    async fn check(&self) -> Result<(), RepositoryError>;
}
