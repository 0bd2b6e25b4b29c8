//! SQLite implementations of credencial's storage ports (sqlx): the
//! embedded default, one file and no database server.
//!
//! The schema lives in the workspace's `migrations/sqlite/` folder and is
//! embedded into the binary by [`MIGRATOR`]. It means what
//! `migrations/postgres/` means; docs/architecture.md ("Storage") says how
//! the types are kept.

mod database;
mod error;
#[cfg(feature = "test-support")]
pub mod testing;

pub use database::{
    connect, ensure_file, known_versions, lock_instance, migrate, parse_url, schema_status, DatabaseError,
    InstanceLock, SchemaStatus, SqliteDb, BUSY_TIMEOUT, MIGRATOR, SCHEME,
};
