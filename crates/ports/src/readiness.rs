//! Readiness: whether the service can do its work right now (its database
//! answers and its schema is current), as `/readyz` reports it to a load
//! balancer.

use async_trait::async_trait;
use thiserror::Error;

/// Why the service cannot do its work right now. The texts are for the log,
/// never for a client.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NotReady {
    /// The database did not answer within the probe's bound, or failed.
    #[error("database unreachable: {0}")]
    Unreachable(String),
    /// The database answers, but migrations this build needs are not applied.
    #[error("schema behind: {0}")]
    SchemaBehind(String),
}

/// Checks that the storage the service depends on answers.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait ReadinessProbe: Send + Sync + 'static {
    /// `Ok(())` when the database answered a trivial query within the
    /// probe's own time bound and holds every migration this build knows;
    /// otherwise why not. Never waits longer than that bound, whatever the
    /// state of the connection pool.
    async fn check(&self) -> Result<(), NotReady>;
}
