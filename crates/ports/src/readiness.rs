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

/// How a database's applied migrations compare with the ones a build
/// embeds (each storage adapter embeds its own engine's).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SchemaStatus {
    /// Migrations of this build not (successfully) applied: `migrate` applies them.
    pub pending: Vec<i64>,
    /// Migrations applied to the database that this build does not know (a
    /// newer release migrated it).
    pub unknown: Vec<i64>,
}

impl SchemaStatus {
    /// Compares the `applied` versions with the `known` ones.
    pub fn compare(applied: &[i64], known: &[i64]) -> Self {
        Self {
            pending: known.iter().copied().filter(|v| !applied.contains(v)).collect(),
            unknown: applied.iter().copied().filter(|v| !known.contains(v)).collect(),
        }
    }

    /// Whether the schema is exactly what this build expects.
    pub fn is_current(&self) -> bool {
        self.pending.is_empty() && self.unknown.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::SchemaStatus;

    #[test]
    fn pending_and_unknown_versions_are_told_apart() {
        let status = SchemaStatus::compare(&[1, 2, 9], &[1, 2, 3]);
        assert_eq!(status, SchemaStatus { pending: vec![3], unknown: vec![9] });
        assert!(!status.is_current());
        assert!(SchemaStatus::compare(&[1, 2], &[1, 2]).is_current());
    }
}
