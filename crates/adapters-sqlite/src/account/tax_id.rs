//! Tax-id validation attempts and the validated CPF on SQLite ([`credencial_ports::TaxIdValidationStore`]).
//!
//! TODO(issue 15): the port's implementation is being written; until then
//! the type exists so the composition root and the contract suite compile.

use crate::SqliteDb;

/// Tax-id validation attempts and the validated CPF, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteTaxIdValidationStore {
    #[allow(dead_code)]
    db: SqliteDb,
}

impl SqliteTaxIdValidationStore {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}
