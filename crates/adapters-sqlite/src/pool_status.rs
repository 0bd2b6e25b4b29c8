//! How busy the connection pools are, for the metrics on SQLite ([`credencial_ports::PoolStatus`]).
//!
//! TODO(issue 15): the port's implementation is being written; until then
//! the type exists so the composition root and the contract suite compile.

use crate::SqliteDb;

/// How busy the connection pools are, for the metrics, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqlitePoolStatus {
    #[allow(dead_code)]
    db: SqliteDb,
}

impl SqlitePoolStatus {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}
