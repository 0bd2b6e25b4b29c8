//! The error every storage port returns.

use thiserror::Error;

/// What can go wrong behind a storage port.
#[derive(Debug, Error)]
pub enum RepositoryError {
    /// A unique value (e.g. a username) is already taken.
    #[error("conflict: {0}")]
    Conflict(String),
    /// The storage could not be reached or answered unexpectedly; the text is
    /// for the log, never for a client.
    #[error("storage error: {0}")]
    Unexpected(String),
}
