//! The client component's host user table: start-up check and upsert on SQLite ([`credencial_ports::HostUserStore`]).
//!
//! TODO(issue 15): the port's implementation is being written; until then
//! the type exists so the composition root and the contract suite compile.

use crate::SqliteDb;

/// The client component's host user table: start-up check and upsert, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteHostUserStore {
    #[allow(dead_code)]
    db: SqliteDb,
}

impl SqliteHostUserStore {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}
