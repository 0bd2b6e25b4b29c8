//! Connecting, creating the database and migrating.

use std::str::FromStr;
use std::time::Duration;

use sqlx::migrate::{MigrateDatabase, Migrator};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{PgPool, Postgres};
use thiserror::Error;

/// The embedded migrations of the top-level `migrations/` folder.
pub static MIGRATOR: Migrator = sqlx::migrate!("../../migrations");

/// Failure to reach, create or migrate the database. The texts never
/// contain the URL (it may hold a password).
#[derive(Debug, Error)]
pub enum DatabaseError {
    /// The URL is not a PostgreSQL URL.
    #[error("DATABASE_URL is not a valid PostgreSQL URL: {0}")]
    BadUrl(String),
    /// The server could not be reached or refused us.
    #[error("cannot connect to PostgreSQL: {0}")]
    Connect(String),
    /// A migration failed.
    #[error("migrating the database failed: {0}")]
    Migrate(String),
}

/// Creates the database named in `url` if it does not exist yet.
pub async fn ensure_database_exists(url: &str) -> Result<bool, DatabaseError> {
    PgConnectOptions::from_str(url).map_err(|e| DatabaseError::BadUrl(e.to_string()))?;
    let exists = Postgres::database_exists(url).await.map_err(|e| DatabaseError::Connect(e.to_string()))?;
    if !exists {
        Postgres::create_database(url).await.map_err(|e| DatabaseError::Connect(e.to_string()))?;
    }
    Ok(!exists)
}

/// A connection pool of at most `max_connections`, failing after
/// `acquire_timeout` when the database is unreachable.
pub async fn connect(url: &str, max_connections: u32, acquire_timeout: Duration) -> Result<PgPool, DatabaseError> {
    let options = PgConnectOptions::from_str(url).map_err(|e| DatabaseError::BadUrl(e.to_string()))?;
    PgPoolOptions::new()
        .max_connections(max_connections)
        // No ping before every checkout: it doubles the round trips of each
        // query. A connection broken by a server restart fails its next
        // query instead (one 503), and is then replaced.
        .test_before_acquire(false)
        .max_lifetime(Duration::from_secs(30 * 60))
        .acquire_timeout(acquire_timeout)
        .connect_with(options)
        .await
        .map_err(|e| DatabaseError::Connect(e.to_string()))
}

/// Applies every pending migration.
pub async fn migrate(pool: &PgPool) -> Result<(), DatabaseError> {
    MIGRATOR.run(pool).await.map_err(|e| DatabaseError::Migrate(e.to_string()))
}
