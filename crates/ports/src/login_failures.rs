//! Failed credential checks per throttle key, shared by every instance, so
//! that the brute-force limits hold across instances.

use async_trait::async_trait;
use credencial_domain::throttle::{FailureWindow, ThrottleKey};

use crate::error::RepositoryError;

/// The columns of a stored window, as every storage adapter selects them,
/// in this order: `key`, `failures`, `window_start` (Unix milliseconds).
pub type WindowColumns = (String, i64, i64);

/// The windows of those of `keys` that `rows` hold (a row of a key not
/// asked about is left out), as a storage adapter read them back.
pub fn windows_from_columns(keys: &[ThrottleKey], rows: Vec<WindowColumns>) -> Vec<FailureWindow> {
    rows.into_iter()
        .filter_map(|(text, failures, started_at_ms)| {
            let key = keys.iter().find(|k| k.as_str() == text)?.clone();
            Some(FailureWindow { key, failures: u32::try_from(failures).unwrap_or(0), started_at_ms })
        })
        .collect()
}

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

    /// Deletes windows that started before `before_ms`, at most `limit` rows
    /// per call (the oldest first, by an index whose leading column is that
    /// time), and returns how many; the caller calls again until a call returns
    /// fewer than `limit` or the service is stopping (see the application's
    /// `purge` module). A window locked by a failure being recorded may be
    /// skipped (the next pass takes it), so a short count does not prove none
    /// is left. Errors: `Unexpected`.
    async fn purge_started_before(&self, before_ms: i64, limit: u32) -> Result<u64, RepositoryError>;
}
