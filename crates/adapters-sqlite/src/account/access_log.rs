//! The access report on SQLite ([`credencial_ports::AccessLog`]).
//!
//! TODO(issue 15): the port's implementation is being written; until then
//! the type exists so the composition root and the contract suite compile.

use crate::SqliteDb;

/// The access report, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteAccessLog {
    #[allow(dead_code)]
    db: SqliteDb,
}

impl SqliteAccessLog {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}
