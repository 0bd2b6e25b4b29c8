//! How busy the database connection pool is, read when the metrics are
//! scraped (`GET /metrics`): no adapter type crosses this port.

/// The connections of a pool at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PoolConnections {
    /// Connections checked out by a request or task right now.
    pub in_use: u32,
    /// Open connections waiting in the pool.
    pub idle: u32,
    /// The most connections the pool opens.
    pub max: u32,
}

impl PoolConnections {
    /// The state of a pool that has `open` connections, `idle` of them
    /// waiting, and opens at most `max`. The two counts are read one after
    /// the other, so `idle` is clamped to `open`.
    pub fn of(open: u32, idle: usize, max: u32) -> Self {
        let idle = u32::try_from(idle).unwrap_or(u32::MAX).min(open);
        Self { in_use: open - idle, idle, max }
    }
}

impl std::ops::Add for PoolConnections {
    type Output = Self;

    /// Two pools counted as one (a store with a pool per kind of work).
    fn add(self, other: Self) -> Self {
        Self {
            in_use: self.in_use.saturating_add(other.in_use),
            idle: self.idle.saturating_add(other.idle),
            max: self.max.saturating_add(other.max),
        }
    }
}

/// Reports the state of the database connection pool.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait PoolStatus: Send + Sync + 'static {
    /// The pool's connections now; cheap (no I/O, no wait), so it can be
    /// read on every scrape. Never fails.
    fn connections(&self) -> PoolConnections;
}

/// How long the database's one writer has been free of the requests'
/// writes. On an engine with a single writer (SQLite), background work
/// (the purge) waits for a quiet moment before it takes the writer, so
/// that no request queues behind it while requests keep it busy.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait WriterActivity: Send + Sync + 'static {
    /// The time since the last write on the writer finished; zero while
    /// one is queued or being written. Cheap (no I/O), asked every millisecond
    /// while a background task waits.
    fn quiet_for(&self) -> std::time::Duration;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_connections_are_clamped_to_the_open_ones_and_two_pools_add_up() {
        assert_eq!(PoolConnections::of(3, 1, 8), PoolConnections { in_use: 2, idle: 1, max: 8 });
        assert_eq!(PoolConnections::of(2, 5, 8), PoolConnections { in_use: 0, idle: 2, max: 8 }, "read apart");
        let writer = PoolConnections::of(1, 0, 1);
        assert_eq!(writer + PoolConnections::of(4, 3, 4), PoolConnections { in_use: 2, idle: 3, max: 5 });
    }
}
