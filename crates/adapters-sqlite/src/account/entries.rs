//! A person's own experiences and degrees on SQLite ([`credencial_ports::OwnEntryRepository`]).
//!
//! TODO(issue 15): the port's implementation is being written; until then
//! the type exists so the composition root and the contract suite compile.

use crate::SqliteDb;

/// A person's own experiences and degrees, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteOwnEntryRepository {
    #[allow(dead_code)]
    db: SqliteDb,
}

impl SqliteOwnEntryRepository {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}
