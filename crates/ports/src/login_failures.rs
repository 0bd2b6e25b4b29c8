//! Failed credential checks per throttle key, shared by every instance, so
//! that the brute-force limits hold across instances.

use async_trait::async_trait;
use credencial_domain::throttle::{FailureWindow, ThrottleKey};

use crate::error::RepositoryError;

/// Counts failed credential checks per key in fixed windows.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait LoginFailureLog: Send + Sync + 'static {
    /// The stored windows of those of `keys` that have one (ended windows
    /// included; the caller judges them), in no particular order.
    /// Errors: `Unexpected`.
    async fn windows(&self, keys: &[ThrottleKey]) -> Result<Vec<FailureWindow>, RepositoryError>;

    /// Counts one failure on every key of `keys`, atomically per key: a key
    /// without a window, or whose window started `window_ms` or more before
    /// `now_ms`, starts a new window at `now_ms` with one failure; otherwise
    /// its count goes up by one. Concurrent calls, on any number of
    /// instances, never lose a failure. Errors: `Unexpected`.
    async fn record_failure(&self, keys: &[ThrottleKey], now_ms: i64, window_ms: i64) -> Result<(), RepositoryError>;

    /// Forgets the failures of `key` (after a success). Errors: `Unexpected`.
    async fn clear(&self, key: &ThrottleKey) -> Result<(), RepositoryError>;

    /// Deletes the windows that started before `before_ms` and returns how
    /// many. Errors: `Unexpected`.
    async fn purge_started_before(&self, before_ms: i64) -> Result<u64, RepositoryError>;
}
