//! Account administration on SQLite ([`credencial_ports::AccountAdminStore`]).
//!
//! TODO(issue 15): the port's implementation is being written; until then
//! the type exists so the composition root and the contract suite compile.

use crate::SqliteDb;

/// Account administration, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteAccountAdminStore {
    #[allow(dead_code)]
    db: SqliteDb,
}

impl SqliteAccountAdminStore {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}

/// Recent successful logins, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteLoginHistory {
    #[allow(dead_code)]
    db: SqliteDb,
}

impl SqliteLoginHistory {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}
