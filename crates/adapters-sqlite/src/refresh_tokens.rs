//! Refresh-token state: rotation, replay, revocation, the grace window on SQLite ([`credencial_ports::RefreshTokenStore`]).
//!
//! TODO(issue 15): the port's implementation is being written; until then
//! the type exists so the composition root and the contract suite compile.

use crate::SqliteDb;

/// Refresh-token state: rotation, replay, revocation, the grace window, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteRefreshTokenStore {
    #[allow(dead_code)]
    db: SqliteDb,
}

impl SqliteRefreshTokenStore {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}
