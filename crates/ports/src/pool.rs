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

/// Reports the state of the database connection pool.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait PoolStatus: Send + Sync + 'static {
    /// The pool's connections now; cheap (no I/O, no wait), so it can be
    /// read on every scrape. Never fails.
    fn connections(&self) -> PoolConnections;
}
