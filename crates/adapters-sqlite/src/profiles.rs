//! Profiles: the user's own data and the profile read on SQLite ([`credencial_ports::ProfileRepository`]).
//!
//! TODO(issue 15): the port's implementation is being written; until then
//! the type exists so the composition root and the contract suite compile.

use crate::SqliteDb;

/// Profiles: the user's own data and the profile read, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteProfileRepository {
    #[allow(dead_code)]
    db: SqliteDb,
}

impl SqliteProfileRepository {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}
