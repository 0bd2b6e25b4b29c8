//! Connecting, creating the database and migrating.

use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;
use std::time::Duration;

use credencial_ports::error::root_cause;
use credencial_ports::SchemaStatus;
use sqlx::error::BoxDynError;
use sqlx::migrate::{MigrateDatabase, Migration, MigrationSource, Migrator};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{ConnectOptions, Connection, PgConnection, PgPool, Postgres};
use thiserror::Error;

/// The embedded migrations of the `migrations/postgres/` folder.
pub static MIGRATOR: Migrator = sqlx::migrate!("../../migrations/postgres");

/// The URL schemes this adapter connects to.
pub const SCHEMES: [&str; 2] = ["postgres", "postgresql"];

/// Failure to reach, create or migrate the database. The texts never
/// contain the URL's password.
#[derive(Debug, Error)]
pub enum DatabaseError {
    /// The URL's scheme is not one this adapter serves.
    #[error("unsupported database URL scheme `{0}`: use postgres://")]
    UnsupportedScheme(String),
    /// The URL is not a PostgreSQL URL.
    #[error("not a valid PostgreSQL URL: {0}")]
    BadUrl(String),
    /// The server could not be reached or refused us: where, and the
    /// driver's root cause.
    #[error("cannot connect to PostgreSQL at {at}: {cause}")]
    Connect {
        /// `host:port`, or the Unix socket's path.
        at: String,
        /// The innermost error the driver reported.
        cause: String,
    },
    /// A query of the start-up checks failed.
    #[error("reading the database failed: {0}")]
    Query(String),
    /// A migration failed.
    #[error("migrating the database failed: {0}")]
    Migrate(String),
}

/// Checks a database URL without connecting: a `postgres://` or
/// `postgresql://` URL that the driver accepts.
pub fn parse_url(url: &str) -> Result<PgConnectOptions, DatabaseError> {
    let scheme = url.split_once("://").map(|(scheme, _)| scheme).unwrap_or("");
    if scheme.is_empty() || !scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b)) {
        return Err(DatabaseError::BadUrl("expected postgres://user@host:port/database".into()));
    }
    if !SCHEMES.contains(&scheme.to_ascii_lowercase().as_str()) {
        return Err(DatabaseError::UnsupportedScheme(scheme.to_owned()));
    }
    // The driver's messages name the faulty part, never the whole URL.
    PgConnectOptions::from_str(url).map_err(|e| DatabaseError::BadUrl(root_cause(&e)))
}

/// `host:port`, or the socket path, of the server `options` connect to.
fn target(options: &PgConnectOptions) -> String {
    match options.get_socket() {
        Some(socket) => socket.display().to_string(),
        None if options.get_host().contains(':') => format!("[{}]:{}", options.get_host(), options.get_port()),
        None => format!("{}:{}", options.get_host(), options.get_port()),
    }
}

fn connect_error(options: &PgConnectOptions, e: &sqlx::Error) -> DatabaseError {
    let cause = match e {
        // The server's own words (e.g. `database "x" does not exist`).
        sqlx::Error::Database(db) => db.message().to_owned(),
        other => root_cause(other),
    };
    DatabaseError::Connect { at: target(options), cause }
}

/// Creates the database named in `url` if it does not exist yet.
pub async fn ensure_database_exists(url: &str) -> Result<bool, DatabaseError> {
    let options = parse_url(url)?;
    let exists = Postgres::database_exists(url).await.map_err(|e| connect_error(&options, &e))?;
    if !exists {
        Postgres::create_database(url).await.map_err(|e| connect_error(&options, &e))?;
    }
    Ok(!exists)
}

/// One connection, made at once: a refused or unreachable server fails
/// with its address and the driver's root cause, instead of after a pool's
/// acquire time-out. `timeout` bounds a server that accepts and says nothing.
pub async fn connect_once(url: &str, timeout: Duration) -> Result<PgConnection, DatabaseError> {
    let options = parse_url(url)?;
    match tokio::time::timeout(timeout, options.connect()).await {
        Ok(Ok(connection)) => Ok(connection),
        Ok(Err(e)) => Err(connect_error(&options, &e)),
        Err(_) => Err(DatabaseError::Connect {
            at: target(&options),
            cause: format!("no answer within {} ms", timeout.as_millis()),
        }),
    }
}

/// A connection pool of at most `max_connections`, failing after
/// `acquire_timeout` when the database is unreachable. One connection is
/// made first, so that an unreachable database is reported at once (see
/// [`connect_once`]).
pub async fn connect(url: &str, max_connections: u32, acquire_timeout: Duration) -> Result<PgPool, DatabaseError> {
    let options = parse_url(url)?;
    connect_once(url, acquire_timeout).await?.close().await.ok();
    PgPoolOptions::new()
        .max_connections(max_connections)
        // No ping before every checkout: it doubles the round trips of each
        // query. A connection broken by a server restart fails its next
        // query instead (one 503), and is then replaced.
        .test_before_acquire(false)
        .max_lifetime(Duration::from_secs(30 * 60))
        .acquire_timeout(acquire_timeout)
        .connect_with(options.clone())
        .await
        .map_err(|e| connect_error(&options, &e))
}

/// The migration that adds `users.email_key`: the keys are computed in
/// Rust once it is applied, before the next one makes them unique.
pub const EMAIL_KEY_MIGRATION: i64 = 20261129010000;

/// Applies every pending migration; the e-mail keys are computed after
/// [`EMAIL_KEY_MIGRATION`] (every time: an account that an instance of an
/// older release created meanwhile gets its key). Errors: `Migrate`, with
/// the accounts whose addresses would share a key named.
pub async fn migrate(pool: &PgPool) -> Result<(), DatabaseError> {
    migrate_through(pool, EMAIL_KEY_MIGRATION).await?;
    crate::email_keys::fill(pool).await?;
    MIGRATOR.run(pool).await.map_err(|e| DatabaseError::Migrate(e.to_string()))
}

/// Applies the pending migrations up to `last` (included) and none after:
/// the schema a release of that version left (the first step of
/// [`migrate`], and an upgrade's starting point in tests).
pub async fn migrate_through(pool: &PgPool, last: i64) -> Result<(), DatabaseError> {
    let earlier: Vec<Migration> = MIGRATOR.iter().filter(|m| m.version <= last).cloned().collect();
    let mut migrator = Migrator::new(Migrations(earlier)).await.map_err(|e| DatabaseError::Migrate(e.to_string()))?;
    // Later migrations may already be applied.
    migrator.set_ignore_missing(true);
    migrator.run(pool).await.map_err(|e| DatabaseError::Migrate(e.to_string()))
}

/// Migrations in memory, as a source of a [`Migrator`].
#[derive(Debug)]
struct Migrations(Vec<Migration>);

impl MigrationSource<'static> for Migrations {
    fn resolve(self) -> Pin<Box<dyn Future<Output = Result<Vec<Migration>, BoxDynError>> + Send>> {
        Box::pin(std::future::ready(Ok(self.0)))
    }
}

/// The versions of this build's (up) migrations, oldest first.
pub fn known_versions() -> Vec<i64> {
    MIGRATOR.iter().filter(|m| m.migration_type.is_up_migration()).map(|m| m.version).collect()
}

/// Reads `_sqlx_migrations` (absent: nothing applied) and compares it with
/// [`MIGRATOR`].
pub async fn schema_status(pool: &PgPool) -> Result<SchemaStatus, DatabaseError> {
    let applied: Vec<i64> =
        match sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success ORDER BY version")
            .fetch_all(pool)
            .await
        {
            Ok(versions) => versions,
            Err(sqlx::Error::Database(db)) if db.code().as_deref() == Some(UNDEFINED_TABLE) => Vec::new(),
            Err(e) => return Err(DatabaseError::Query(root_cause(&e))),
        };
    Ok(SchemaStatus::compare(&applied, &known_versions()))
}

/// PostgreSQL's SQLSTATE for "relation does not exist".
pub(crate) const UNDEFINED_TABLE: &str = "42P01";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_postgres_urls_are_accepted_and_other_schemes_are_named() {
        assert!(parse_url("postgres://u:p@db.example:6543/app").is_ok());
        assert!(parse_url("postgresql://u@db.example/app").is_ok());
        for (url, scheme) in [("mysql://u:p@h/db", "mysql"), ("sqlite://data.db", "sqlite"), ("HTTP://h/db", "HTTP")] {
            let e = parse_url(url).expect_err(url).to_string();
            assert_eq!(e, format!("unsupported database URL scheme `{scheme}`: use postgres://"));
        }
    }

    #[test]
    fn a_malformed_url_is_refused_without_printing_it() {
        for url in ["db.example:5432", "postgres://u:s3cret@h:notaport/db", "://u:s3cret@h/db"] {
            let e = parse_url(url).expect_err(url).to_string();
            assert!(e.starts_with("not a valid PostgreSQL URL"), "{e}");
            assert!(!e.contains("s3cret"), "{e}");
        }
    }

    #[tokio::test]
    async fn a_refused_connection_names_the_address_and_the_root_cause_at_once() {
        let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
        let e = connect(&format!("postgres://u:s3cret@127.0.0.1:{closed}/db"), 2, Duration::from_secs(30))
            .await
            .expect_err("nobody listens");
        let e = e.to_string();
        assert!(e.starts_with(&format!("cannot connect to PostgreSQL at 127.0.0.1:{closed}: ")), "{e}");
        // The driver's root cause, not the pool's "timed out" after 30 s.
        assert!(e.contains("Connection refused") && !e.contains("s3cret"), "{e}");
    }
}
