//! The error every storage port returns.

use thiserror::Error;

/// What can go wrong behind a storage port.
#[derive(Debug, Clone, Error)]
pub enum RepositoryError {
    /// A unique value (e.g. a username) is already taken.
    #[error("conflict: {0}")]
    Conflict(String),
    /// The storage could not be reached or answered unexpectedly; the text is
    /// for the log, never for a client.
    #[error("storage error: {0}")]
    Unexpected(String),
}

/// The innermost error of `e`'s chain, as text: what a storage adapter
/// reports of a driver error ("Connection refused (os error 111)" rather
/// than "error communicating with database: …").
pub fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut current = e;
    while let Some(source) = current.source() {
        current = source;
    }
    current.to_string()
}
