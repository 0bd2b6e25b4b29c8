//! The OAuth2 client registry on SQLite ([`credencial_ports::OAuthClientRepository`]).
//!
//! TODO(issue 15): the port's implementation is being written; until then
//! the type exists so the composition root and the contract suite compile.

use crate::SqliteDb;

/// The OAuth2 client registry, in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteOAuthClientRepository {
    #[allow(dead_code)]
    db: SqliteDb,
}

impl SqliteOAuthClientRepository {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}
