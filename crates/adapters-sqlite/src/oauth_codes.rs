//! Single-use authorization codes on SQLite ([`credencial_ports::AuthorizationCodeStore`]).
//!
//! TODO(issue 15): the port's implementation is being written; until then
//! the type exists so the composition root and the contract suite compile.

use crate::SqliteDb;

/// Single-use authorization codes, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteAuthorizationCodeStore {
    #[allow(dead_code)]
    db: SqliteDb,
}

impl SqliteAuthorizationCodeStore {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}
