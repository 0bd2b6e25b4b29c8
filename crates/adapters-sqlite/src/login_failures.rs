//! Failed-login windows of the brute-force limits on SQLite ([`credencial_ports::LoginFailureLog`]).
//!
//! TODO(issue 15): the port's implementation is being written; until then
//! the type exists so the composition root and the contract suite compile.

use crate::SqliteDb;

/// Failed-login windows of the brute-force limits, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteLoginFailureLog {
    #[allow(dead_code)]
    db: SqliteDb,
}

impl SqliteLoginFailureLog {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}
