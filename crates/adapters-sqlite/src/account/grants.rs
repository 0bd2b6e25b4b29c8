//! Remembered consent on SQLite ([`credencial_ports::GrantRepository`]).
//!
//! TODO(issue 15): the port's implementation is being written; until then
//! the type exists so the composition root and the contract suite compile.

use crate::SqliteDb;

/// Remembered consent, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteGrantRepository {
    #[allow(dead_code)]
    db: SqliteDb,
}

impl SqliteGrantRepository {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}
