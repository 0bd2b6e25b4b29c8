//! User accounts and their credentials on SQLite ([`credencial_ports::UserRepository`]).
//!
//! TODO(issue 15): the port's implementation is being written; until then
//! the type exists so the composition root and the contract suite compile.

use crate::SqliteDb;

/// User accounts and their credentials, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteUserRepository {
    #[allow(dead_code)]
    db: SqliteDb,
}

impl SqliteUserRepository {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}
