//! Durable snapshots of upstream scope data on SQLite ([`credencial_ports::SnapshotStore`]).
//!
//! TODO(issue 15): the port's implementation is being written; until then
//! the type exists so the composition root and the contract suite compile.

use crate::SqliteDb;

/// Durable snapshots of upstream scope data, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteSnapshotStore {
    #[allow(dead_code)]
    db: SqliteDb,
}

impl SqliteSnapshotStore {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}
