//! The readiness probe of /readyz on SQLite ([`credencial_ports::ReadinessProbe`]).
//!
//! TODO(issue 15): the port's implementation is being written; until then
//! the type exists so the composition root and the contract suite compile.

use crate::SqliteDb;

/// The readiness probe of /readyz, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteReadinessProbe {
    #[allow(dead_code)]
    db: SqliteDb,
}

impl SqliteReadinessProbe {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}
