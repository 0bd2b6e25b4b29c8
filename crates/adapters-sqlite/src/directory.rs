//! The user directory of the user-management API on SQLite ([`credencial_ports::UserDirectory`]).
//!
//! TODO(issue 15): the port's implementation is being written; until then
//! the type exists so the composition root and the contract suite compile.

use crate::SqliteDb;

/// The user directory of the user-management API, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteUserDirectory {
    #[allow(dead_code)]
    db: SqliteDb,
}

impl SqliteUserDirectory {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}
