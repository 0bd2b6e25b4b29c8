//! Readiness: whether the service can do its work right now (its database
//! answers and its schema is current), as `/readyz` reports it to a load
//! balancer.

use std::time::Duration;

use async_trait::async_trait;
use thiserror::Error;

/// How long a probe waits for its answer by default (the `/readyz`
/// contract's bound), whatever the storage.
pub const READINESS_TIMEOUT: Duration = Duration::from_secs(1);

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

/// What a probe's one query came back with, as its adapter classified it:
/// every adapter counts this build's migrations among those the database
/// records as applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeAnswer {
    /// How many of this build's migrations the database records as applied.
    Applied(i64),
    /// The database has no record of migrations at all (never migrated).
    NeverMigrated,
    /// The query failed (the adapter's error text).
    Failed(String),
    /// No answer within the probe's bound.
    NoAnswer(Duration),
}

impl ProbeAnswer {
    /// Whether the service is ready, for a build that knows `known`
    /// migrations: ready when every one is applied (a migration of a newer
    /// release, which the count leaves out, keeps an older instance ready).
    pub fn verdict(self, known: usize) -> Result<(), NotReady> {
        let expected = i64::try_from(known).unwrap_or(i64::MAX);
        match self {
            Self::Applied(applied) if applied == expected => Ok(()),
            Self::Applied(applied) => Err(NotReady::SchemaBehind(format!(
                "{} of {expected} migrations pending",
                expected.saturating_sub(applied)
            ))),
            Self::NeverMigrated => {
                Err(NotReady::SchemaBehind("no migration applied (_sqlx_migrations does not exist)".into()))
            }
            Self::Failed(e) => Err(NotReady::Unreachable(e)),
            Self::NoAnswer(bound) => Err(NotReady::Unreachable(format!("no answer within {} ms", bound.as_millis()))),
        }
    }
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
    use super::*;

    #[test]
    fn pending_and_unknown_versions_are_told_apart() {
        let status = SchemaStatus::compare(&[1, 2, 9], &[1, 2, 3]);
        assert_eq!(status, SchemaStatus { pending: vec![3], unknown: vec![9] });
        assert!(!status.is_current());
        assert!(SchemaStatus::compare(&[1, 2], &[1, 2]).is_current());
    }

    #[test]
    fn every_known_migration_applied_is_ready_and_anything_else_says_why_not() {
        assert_eq!(ProbeAnswer::Applied(3).verdict(3), Ok(()));
        assert_eq!(ProbeAnswer::Applied(2).verdict(3), Err(NotReady::SchemaBehind("1 of 3 migrations pending".into())));
        assert!(matches!(ProbeAnswer::NeverMigrated.verdict(3), Err(NotReady::SchemaBehind(_))));
        assert_eq!(ProbeAnswer::Failed("down".into()).verdict(3), Err(NotReady::Unreachable("down".into())));
        assert_eq!(
            ProbeAnswer::NoAnswer(Duration::from_millis(300)).verdict(3),
            Err(NotReady::Unreachable("no answer within 300 ms".into()))
        );
    }
}
