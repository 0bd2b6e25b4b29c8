//! Reading host user records on SQLite ([`credencial_ports::HostUserRecords`]).
//!
//! TODO(issue 15): the port's implementation is being written; until then
//! the type exists so the composition root and the contract suite compile.

use crate::SqliteDb;

/// Reading host user records, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteHostUserRecords {
    #[allow(dead_code)]
    db: SqliteDb,
}

impl SqliteHostUserRecords {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}
