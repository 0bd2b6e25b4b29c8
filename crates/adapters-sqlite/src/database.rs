//! Opening the database file, guarding it against a second instance, and
//! migrating.
//!
//! Two files, two pools: the database file, and beside it the access log's
//! (`<file>-access-log`, attached as [`ACCESS_LOG_SCHEMA`] on every
//! connection, so that the profile read's appends commit to a WAL of their
//! own and leave the main file's readers' page caches warm). A single
//! writer connection, so the service's own writes queue in memory instead
//! of meeting SQLite's file lock, and a small pool of read-only
//! connections, which WAL lets read while the writer writes. Every
//! connection turns foreign keys on and waits up to [`BUSY_TIMEOUT`] for a
//! lock another process (a CLI command) holds.

use std::fs::{File, OpenOptions};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;

use credencial_ports::error::root_cause;
use credencial_ports::{SchemaStatus, WriterActivity};
use futures_util::future::BoxFuture;
use sqlx::error::BoxDynError;
use sqlx::migrate::{Migration, MigrationSource, Migrator};
use sqlx::pool::PoolConnectionMetadata;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqliteConnection;
use sqlx::{Sqlite, SqlitePool, Transaction};
use thiserror::Error;

use crate::group_commit::GroupCommit;

/// The embedded migrations of the workspace's `migrations/sqlite/` folder.
pub static MIGRATOR: Migrator = sqlx::migrate!("../../migrations/sqlite");

/// The URL scheme this adapter opens.
pub const SCHEME: &str = "sqlite";

/// The schema name the access log's file is attached under on every
/// connection. Statements name the table `access_log` unqualified: SQLite
/// looks it up in `main` first, where it stays until [`migrate`] has moved
/// it.
pub const ACCESS_LOG_SCHEMA: &str = "access";

/// The file that holds the access log of the database file `path`: the
/// same name with `-access-log` after it, beside it (as SQLite's own
/// `-wal` and `-shm`), so that a copy of `credencial.db*` takes both.
pub fn access_log_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push("-access-log");
    PathBuf::from(name)
}

/// The schema that holds `table`: [`ACCESS_LOG_SCHEMA`] for the access
/// log, `main` for every other table (for what names it explicitly, such
/// as each file's own `sqlite_sequence`).
pub(crate) fn schema_of(table: &str) -> &'static str {
    if table == "access_log" {
        ACCESS_LOG_SCHEMA
    } else {
        "main"
    }
}

/// Raises the AUTOINCREMENT counter of `table` (in its own file's
/// `sqlite_sequence`) to at least `high`, so that no id up to `high` is
/// given again.
pub(crate) async fn raise_sequence(conn: &mut SqliteConnection, table: &str, high: i64) -> Result<(), sqlx::Error> {
    let schema = schema_of(table);
    sqlx::query(&format!("UPDATE {schema}.sqlite_sequence SET seq = max(seq, ?2) WHERE name = ?1"))
        .bind(table)
        .bind(high)
        .execute(&mut *conn)
        .await?;
    sqlx::query(&format!(
        "INSERT INTO {schema}.sqlite_sequence (name, seq) SELECT ?1, ?2 \
         WHERE ?2 > 0 AND NOT EXISTS (SELECT 1 FROM {schema}.sqlite_sequence WHERE name = ?1)"
    ))
    .bind(table)
    .bind(high)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// How long a statement waits for a lock held by another process before
/// it fails (SQLite's busy timeout).
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Failure to open, lock or migrate the database file.
#[derive(Debug, Error)]
pub enum DatabaseError {
    /// The URL is not a SQLite URL this adapter opens.
    #[error("not a valid SQLite URL: {0}")]
    BadUrl(String),
    /// The file could not be created or opened.
    #[error("cannot open the SQLite database {path}: {cause}")]
    Open {
        /// The database file.
        path: String,
        /// The innermost error reported.
        cause: String,
    },
    /// The file does not exist (only `demo` and `migrate` create it).
    #[error("the SQLite database {0} does not exist: `credencial migrate` creates it")]
    Missing(String),
    /// Another instance serves the same file.
    #[error(
        "another credencial instance is serving {0} (one SQLite file serves one instance; \
         to run several instances, use PostgreSQL: DATABASE_URL=postgres://…)"
    )]
    InUse(String),
    /// A query of the start-up checks failed.
    #[error("reading the database failed: {0}")]
    Query(String),
    /// A migration failed.
    #[error("migrating the database failed: {0}")]
    Migrate(String),
    /// The access log's file has no access log, though the database's was
    /// moved there: the file was lost or replaced.
    #[error(
        "the access log's file {0} holds no access log, though this database keeps it there: restore the file \
         from the backup taken with the database (README: SQLite); to go on with an empty access log instead, \
         see docs/configuration.md (Database)"
    )]
    AccessLogMissing(String),
    /// A database not yet migrated finds an access log beside it: one left
    /// by an earlier database of the same name.
    #[error(
        "{0} holds the access log of an earlier database of the same name: move it away (or remove it and its \
         -wal and -shm) before creating a new database"
    )]
    ForeignAccessLog(String),
}

/// The database file: one writer connection and a pool of readers.
#[derive(Debug, Clone)]
pub struct SqliteDb {
    writer: SqlitePool,
    writer_use: Arc<WriterUse>,
    readers: SqlitePool,
    group: GroupCommit,
    path: PathBuf,
    log: PathBuf,
}

impl SqliteDb {
    /// The pool of the single writer connection: every statement that
    /// changes the database runs here.
    pub fn writer(&self) -> &SqlitePool {
        &self.writer
    }

    /// The committer of the hot paths' small writes, in groups on the
    /// writer ([`GroupCommit`]).
    pub fn group(&self) -> &GroupCommit {
        &self.group
    }

    /// The pool of read-only connections.
    pub fn readers(&self) -> &SqlitePool {
        &self.readers
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The access log's file ([`access_log_path`]).
    pub fn access_log_file(&self) -> &Path {
        &self.log
    }

    /// A write transaction that takes the file's write lock at once
    /// (`BEGIN IMMEDIATE`): a transaction that reads and then writes never
    /// fails half-way because another process wrote in between.
    pub async fn begin_write(&self) -> Result<Transaction<'static, Sqlite>, sqlx::Error> {
        self.writer.begin_with("BEGIN IMMEDIATE").await
    }

    /// Closes both pools (every connection finishes first).
    pub async fn close(&self) {
        self.writer.close().await;
        self.readers.close().await;
    }
}

/// When the writer connection was last handed out and given back, for
/// [`WriterActivity`]: every write, the group committer's and the others
/// (a code's redemption, a session, the panel's), takes it from its pool.
#[derive(Debug)]
struct WriterUse {
    /// Handed out and not given back yet.
    held: AtomicBool,
    /// When it was last given back, in nanoseconds after `opened`.
    released: AtomicU64,
    opened: Instant,
}

impl WriterUse {
    fn new() -> Self {
        Self { held: AtomicBool::new(false), released: AtomicU64::new(0), opened: Instant::now() }
    }

    fn acquired(&self) {
        self.held.store(true, Ordering::SeqCst);
    }

    fn released(&self) {
        let now = u64::try_from(self.opened.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.released.store(now, Ordering::SeqCst);
        self.held.store(false, Ordering::SeqCst);
    }

    /// Zero while held, else the time since it was given back.
    fn quiet_for(&self) -> Duration {
        if self.held.load(Ordering::SeqCst) {
            return Duration::ZERO;
        }
        let last = Duration::from_nanos(self.released.load(Ordering::SeqCst));
        self.opened.elapsed().saturating_sub(last)
    }
}

/// The writer is quiet when no write waits for a group or holds the
/// connection, for as long as it was last given back. (The one connection
/// lives as long as the pool — no idle time-out, no lifetime — so every use
/// after the first passes through the pool's hooks.)
impl WriterActivity for SqliteDb {
    fn quiet_for(&self) -> Duration {
        if self.group.busy() {
            return Duration::ZERO;
        }
        self.writer_use.quiet_for()
    }
}

/// The file a `sqlite://` URL names, checked without opening it.
///
/// `sqlite://credencial.db` is relative to the working directory,
/// `sqlite:///var/lib/credencial/credencial.db` absolute. In-memory
/// databases are refused: the service's data would vanish at exit.
pub fn parse_url(url: &str) -> Result<PathBuf, DatabaseError> {
    let Some(rest) = url.strip_prefix("sqlite:") else {
        return Err(DatabaseError::BadUrl("expected sqlite://path/to/file.db".into()));
    };
    let path = rest.strip_prefix("//").unwrap_or(rest);
    let path = path.split_once('?').map_or(path, |(path, _)| path);
    if path.is_empty() || path == ":memory:" || path.starts_with("file::memory:") {
        return Err(DatabaseError::BadUrl("name a database file, e.g. sqlite://credencial.db".into()));
    }
    Ok(PathBuf::from(path))
}

fn open_error(path: &Path, e: &(dyn std::error::Error + 'static)) -> DatabaseError {
    DatabaseError::Open { path: path.display().to_string(), cause: root_cause(e) }
}

/// Creates the file (mode 0600: it holds personal data and password
/// hashes) if it does not exist yet; returns whether it did.
pub fn ensure_file(path: &Path) -> Result<bool, DatabaseError> {
    if path.exists() {
        return Ok(false);
    }
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(_) => Ok(true),
        // Created by someone else meanwhile.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(open_error(path, &e)),
    }
}

fn options(path: &Path) -> SqliteConnectOptions {
    SqliteConnectOptions::new()
        .filename(path)
        .foreign_keys(true)
        .busy_timeout(BUSY_TIMEOUT)
        // Every commit durable when it returns (the WAL synced), as on
        // PostgreSQL with `synchronous_commit` on: an answered read's
        // access-log row and a refresh-token rotation survive a power cut.
        // The hot paths' writes share their syncs (`GroupCommit`).
        .synchronous(SqliteSynchronous::Full)
}

/// What every new connection runs: attaches the access log's file `log` as
/// [`ACCESS_LOG_SCHEMA`]; on the writer (`writer`), also puts that file in
/// WAL mode and makes its commits as durable as the main file's.
fn attach_access_log(
    log: String,
    writer: bool,
) -> impl for<'c> Fn(&'c mut SqliteConnection, PoolConnectionMetadata) -> BoxFuture<'c, Result<(), sqlx::Error>>
       + Send
       + Sync
       + 'static {
    move |conn, _| {
        let log = log.clone();
        Box::pin(async move {
            sqlx::query(&format!("ATTACH DATABASE ?1 AS {ACCESS_LOG_SCHEMA}")).bind(log).execute(&mut *conn).await?;
            if writer {
                sqlx::query(&format!("PRAGMA {ACCESS_LOG_SCHEMA}.journal_mode = WAL")).execute(&mut *conn).await?;
                sqlx::query(&format!("PRAGMA {ACCESS_LOG_SCHEMA}.synchronous = FULL")).execute(&mut *conn).await?;
                guard_access_log(conn).await?;
            }
            Ok(())
        })
    }
}

/// The access log's foreign key, which a table cannot have on another
/// file's: a temporary trigger of the writer connection (a temporary
/// trigger may read every attached file) refuses an entry whose account
/// does not exist, as the main file's foreign keys refuse such a row of
/// another table.
const ACCESS_LOG_USER_EXISTS: &str = "CREATE TEMP TRIGGER IF NOT EXISTS access_log_user_exists \
     BEFORE INSERT ON access.access_log WHEN NOT EXISTS (SELECT 1 FROM users WHERE id = NEW.user_id) \
     BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: no account has access_log.user_id'); END";

/// The other half of the foreign key: an account's deletion takes its
/// access-log rows with it (`ON DELETE CASCADE` in the main file; accounts
/// are not deleted by the service today).
const ACCESS_LOG_FOLLOWS_USERS: &str = "CREATE TEMP TRIGGER IF NOT EXISTS access_log_follows_users \
     AFTER DELETE ON main.users BEGIN DELETE FROM access_log WHERE user_id = OLD.id; END";

/// Puts [`ACCESS_LOG_USER_EXISTS`] and [`ACCESS_LOG_FOLLOWS_USERS`] on the
/// writer connection `conn` once the access log's table exists in its
/// file and the accounts' in the main one (a connection opened before
/// [`migrate`] gets them there; one on a file that [`migrate`] will refuse,
/// an access log without accounts, opens without them).
async fn guard_access_log(conn: &mut SqliteConnection) -> Result<(), sqlx::Error> {
    let both: bool = sqlx::query_scalar(&format!(
        "SELECT EXISTS (SELECT 1 FROM {ACCESS_LOG_SCHEMA}.sqlite_schema WHERE type = 'table' AND name = 'access_log') \
            AND EXISTS (SELECT 1 FROM main.sqlite_schema WHERE type = 'table' AND name = 'users')"
    ))
    .fetch_one(&mut *conn)
    .await?;
    if both {
        sqlx::query(ACCESS_LOG_USER_EXISTS).execute(&mut *conn).await?;
        sqlx::query(ACCESS_LOG_FOLLOWS_USERS).execute(&mut *conn).await?;
    }
    Ok(())
}

/// Opens the existing database file of `url` (see [`ensure_file`]): the
/// writer first, which turns WAL on, then `readers` read-only connections.
/// A missing file is an error, so that a command run in the wrong directory
/// does not leave an empty database behind.
pub async fn connect(url: &str, readers: u32, acquire_timeout: Duration) -> Result<SqliteDb, DatabaseError> {
    let path = parse_url(url)?;
    if !path.exists() {
        return Err(DatabaseError::Missing(path.display().to_string()));
    }
    // Beside the file itself, whatever link names it (as SQLite's own
    // -wal, and the instance lock).
    let log_path = access_log_path(&canonical(&path));
    ensure_file(&log_path)?;
    let log = log_path.to_str().ok_or_else(|| DatabaseError::BadUrl("the file's path is not UTF-8".into()))?.to_owned();
    let writer_use = Arc::new(WriterUse::new());
    let (on_acquire, on_release) = (Arc::clone(&writer_use), Arc::clone(&writer_use));
    let writer = SqlitePoolOptions::new()
        .max_connections(1)
        .min_connections(1)
        .max_lifetime(None)
        .idle_timeout(None)
        .acquire_timeout(acquire_timeout)
        .test_before_acquire(false)
        .before_acquire(move |_, _| {
            on_acquire.acquired();
            Box::pin(std::future::ready(Ok(true)))
        })
        .after_release(move |_, _| {
            on_release.released();
            Box::pin(std::future::ready(Ok(true)))
        })
        .after_connect(attach_access_log(log.clone(), true))
        .connect_with(options(&path).journal_mode(SqliteJournalMode::Wal))
        .await
        .map_err(|e| open_error(&path, &e))?;
    let readers = SqlitePoolOptions::new()
        .max_connections(readers.max(1))
        .acquire_timeout(acquire_timeout)
        .test_before_acquire(false)
        .after_connect(attach_access_log(log, false))
        .connect_with(options(&path).read_only(true))
        .await
        .map_err(|e| open_error(&path, &e))?;
    let group = GroupCommit::start(writer.clone());
    Ok(SqliteDb { writer, writer_use, readers, group, path, log: log_path })
}

/// Held while an instance serves a database file: a lock on
/// `<file>.lock` beside it, released when the process ends however it
/// ends (the operating system drops the lock with the file handle).
#[derive(Debug)]
pub struct InstanceLock {
    _file: File,
}

/// Takes the instance lock of the database file of `url`, or says that
/// another instance holds it. Commands that run beside a serving instance
/// (`user`, `client`, `audit`, `export`) do not take it; `serve`, `demo`,
/// `migrate` and `import` do. The lock file is named after the file's
/// canonical path, so a symbolic link to the file (or to its directory)
/// finds the same lock.
pub fn lock_instance(url: &str) -> Result<InstanceLock, DatabaseError> {
    let path = canonical(&parse_url(url)?);
    let mut lock_path = path.clone().into_os_string();
    lock_path.push(".lock");
    let lock_path = PathBuf::from(lock_path);
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(&lock_path).map_err(|e| open_error(&lock_path, &e))?;
    match file.try_lock() {
        Ok(()) => Ok(InstanceLock { _file: file }),
        Err(std::fs::TryLockError::WouldBlock) => Err(DatabaseError::InUse(path.display().to_string())),
        Err(std::fs::TryLockError::Error(e)) => Err(open_error(&lock_path, &e)),
    }
}

/// `path` with its links resolved: the file's own canonical path if it
/// exists, else its directory's joined with its name, else `path`.
fn canonical(path: &Path) -> PathBuf {
    if let Ok(resolved) = path.canonicalize() {
        return resolved;
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match (parent.canonicalize(), path.file_name()) {
        (Ok(dir), Some(name)) => dir.join(name),
        _ => path.to_owned(),
    }
}

/// The migration that adds `users.email_key`: the keys are computed in
/// Rust once it is applied, before the next one makes them unique.
pub const EMAIL_KEY_MIGRATION: i64 = 20261129010000;

/// The migration that creates the access log's table in its own file
/// ([`access_log_path`]); [`migrate`] moves the rows after it.
pub const ACCESS_LOG_FILE_MIGRATION: i64 = 20261207000001;

/// Applies every pending migration; the e-mail keys are computed after
/// [`EMAIL_KEY_MIGRATION`]. Errors: `Migrate`, with the accounts whose
/// addresses would share a key named.
pub async fn migrate(db: &SqliteDb) -> Result<(), DatabaseError> {
    let query = |e: sqlx::Error| DatabaseError::Query(root_cause(&e));
    if applied_versions(db.writer()).await?.is_empty() && log_tables(db.writer()).await.map_err(query)?.in_file {
        return Err(DatabaseError::ForeignAccessLog(db.log.display().to_string()));
    }
    migrate_through(db, EMAIL_KEY_MIGRATION).await?;
    crate::email_keys::fill(db).await?;
    // The move before any later migration: each finds the table in its file.
    migrate_through(db, ACCESS_LOG_FILE_MIGRATION).await?;
    move_access_log(db).await?;
    MIGRATOR.run(db.writer()).await.map_err(|e| DatabaseError::Migrate(e.to_string()))?;
    let mut writer = db.writer().acquire().await.map_err(|e| DatabaseError::Migrate(root_cause(&e)))?;
    guard_access_log(&mut writer).await.map_err(|e| DatabaseError::Migrate(root_cause(&e)))
}

/// How many access-log rows one step of [`move_access_log`] copies.
const MOVE_BATCH: i64 = 20_000;

/// Moves the access log's rows from the main file's `access_log` (where
/// releases before [`ACCESS_LOG_FILE_MIGRATION`] kept them) to the table
/// that migration created in the access log's file, then drops the old
/// table. In WAL mode a transaction across attached files is atomic per
/// file only, so each step writes one file: copies in batches (rows already
/// there are skipped), then the drop once every row is found in the new
/// table. Stopped at any point, the next `migrate` goes on where it was;
/// until the drop, statements still find the old table first.
async fn move_access_log(db: &SqliteDb) -> Result<(), DatabaseError> {
    let failed =
        |e: sqlx::Error| DatabaseError::Migrate(format!("moving the access log to its file: {}", root_cause(&e)));
    let tables = log_tables(db.writer()).await.map_err(failed)?;
    if !tables.in_file {
        if !tables.in_main {
            return Err(DatabaseError::AccessLogMissing(db.log.display().to_string()));
        }
        // Recorded, but its table not in the file: a power cut between the
        // migration's two commits (the main file's first). Again.
        let sql = MIGRATOR.iter().find(|m| m.version == ACCESS_LOG_FILE_MIGRATION).map(|m| m.sql.clone());
        let sql = sql.ok_or_else(|| DatabaseError::Migrate("the access log's migration is not embedded".into()))?;
        sqlx::raw_sql(&sql).execute(db.writer()).await.map_err(failed)?;
    }
    if !tables.in_main {
        return Ok(());
    }
    let copy = format!(
        "INSERT OR IGNORE INTO {ACCESS_LOG_SCHEMA}.access_log (id, user_id, client_id, scopes, accessed_at, request_id) \
         SELECT id, user_id, client_id, scopes, accessed_at, request_id FROM main.access_log WHERE id > ?1 AND id <= ?2"
    );
    let mut after = 0_i64;
    loop {
        let last: Option<i64> = sqlx::query_scalar(
            "SELECT max(id) FROM (SELECT id FROM main.access_log WHERE id > ?1 ORDER BY id LIMIT ?2)",
        )
        .bind(after)
        .bind(MOVE_BATCH)
        .fetch_one(db.writer())
        .await
        .map_err(failed)?;
        let Some(last) = last else { break };
        sqlx::query(&copy).bind(after).bind(last).execute(db.writer()).await.map_err(failed)?;
        after = last;
    }
    let missing: i64 = sqlx::query_scalar(&format!(
        "SELECT count(*) FROM main.access_log m WHERE NOT EXISTS (SELECT 1 FROM {ACCESS_LOG_SCHEMA}.access_log a WHERE a.id = m.id)"
    ))
    .fetch_one(db.writer())
    .await
    .map_err(failed)?;
    if missing != 0 {
        return Err(DatabaseError::Migrate(format!(
            "moving the access log to its file: {missing} rows were not copied"
        )));
    }
    // The counter of ids given, which also covers rows purged before.
    let high: Option<i64> = sqlx::query_scalar("SELECT seq FROM main.sqlite_sequence WHERE name = 'access_log'")
        .fetch_optional(db.writer())
        .await
        .map_err(failed)?;
    let mut conn = db.writer().acquire().await.map_err(failed)?;
    raise_sequence(&mut conn, "access_log", high.unwrap_or(0)).await.map_err(failed)?;
    drop(conn);
    sqlx::query("DROP TABLE main.access_log").execute(db.writer()).await.map_err(failed)?;
    Ok(())
}

/// Applies the pending migrations up to `last` (included) and none after:
/// the schema a release of that version left (the first step of
/// [`migrate`], and an upgrade's starting point in tests).
pub async fn migrate_through(db: &SqliteDb, last: i64) -> Result<(), DatabaseError> {
    let earlier: Vec<Migration> = MIGRATOR.iter().filter(|m| m.version <= last).cloned().collect();
    let mut migrator = Migrator::new(Migrations(earlier)).await.map_err(|e| DatabaseError::Migrate(e.to_string()))?;
    // Later migrations may already be applied.
    migrator.set_ignore_missing(true);
    migrator.run(db.writer()).await.map_err(|e| DatabaseError::Migrate(e.to_string()))
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

/// Whether `e` says that a table does not exist.
pub(crate) fn is_missing_table(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(db) if db.message().starts_with("no such table"))
}

/// Which files have an `access_log` table.
#[derive(Debug, Clone, Copy)]
struct LogTables {
    /// The main file (releases before [`ACCESS_LOG_FILE_MIGRATION`], or
    /// [`move_access_log`] not finished).
    in_main: bool,
    /// The access log's file.
    in_file: bool,
}

async fn log_tables(pool: &SqlitePool) -> Result<LogTables, sqlx::Error> {
    let (in_main, in_file): (bool, bool) = sqlx::query_as(&format!(
        "SELECT EXISTS (SELECT 1 FROM main.sqlite_schema WHERE type = 'table' AND name = 'access_log'), \
                EXISTS (SELECT 1 FROM {ACCESS_LOG_SCHEMA}.sqlite_schema WHERE type = 'table' AND name = 'access_log')"
    ))
    .fetch_one(pool)
    .await?;
    Ok(LogTables { in_main, in_file })
}

/// The versions `_sqlx_migrations` records as applied (none when the table
/// does not exist yet).
async fn applied_versions(pool: &SqlitePool) -> Result<Vec<i64>, DatabaseError> {
    match sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success ORDER BY version")
        .fetch_all(pool)
        .await
    {
        Ok(versions) => Ok(versions),
        Err(e) if is_missing_table(&e) => Ok(Vec::new()),
        Err(e) => Err(DatabaseError::Query(root_cause(&e))),
    }
}

/// Reads `_sqlx_migrations` (absent: nothing applied) and compares it with
/// [`MIGRATOR`]. [`ACCESS_LOG_FILE_MIGRATION`] counts as pending until its
/// rows have moved ([`migrate`] finishes the move), so that `serve` does not
/// start on a move left half-done; once applied, an access log's file
/// without the table is an error ([`DatabaseError::AccessLogMissing`]).
pub async fn schema_status(db: &SqliteDb) -> Result<SchemaStatus, DatabaseError> {
    let mut applied = applied_versions(db.readers()).await?;
    if applied.contains(&ACCESS_LOG_FILE_MIGRATION) {
        let tables = log_tables(db.readers()).await.map_err(|e| DatabaseError::Query(root_cause(&e)))?;
        if tables.in_main {
            applied.retain(|v| *v != ACCESS_LOG_FILE_MIGRATION);
        } else if !tables.in_file {
            return Err(DatabaseError::AccessLogMissing(db.log.display().to_string()));
        }
    }
    Ok(SchemaStatus::compare(&applied, &known_versions()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_and_absolute_files_are_read_and_memory_is_refused() {
        assert_eq!(parse_url("sqlite://credencial.db").expect("relative"), PathBuf::from("credencial.db"));
        assert_eq!(parse_url("sqlite:credencial.db").expect("short form"), PathBuf::from("credencial.db"));
        assert_eq!(parse_url("sqlite:///var/lib/c/c.db?mode=rwc").expect("absolute"), PathBuf::from("/var/lib/c/c.db"));
        for url in ["sqlite::memory:", "sqlite://", "postgres://h/db", "sqlite://:memory:"] {
            assert!(parse_url(url).is_err(), "{url}");
        }
    }

    #[tokio::test]
    async fn the_file_is_created_private_in_wal_mode_and_a_second_instance_is_refused() {
        let dir = std::env::temp_dir().join(format!("credencial-db-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).expect("dir");
        let url = format!("sqlite://{}", dir.join("c.db").display());
        let missing = connect(&url, 2, Duration::from_secs(5)).await.expect_err("no file yet").to_string();
        assert!(missing.contains("does not exist: `credencial migrate` creates it"), "{missing}");
        assert!(!dir.join("c.db").exists(), "opening never creates the file");
        ensure_file(&dir.join("c.db")).expect("create");
        let db = connect(&url, 2, Duration::from_secs(5)).await.expect("open");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.join("c.db")).expect("file").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let journal: String = sqlx::query_scalar("PRAGMA journal_mode").fetch_one(db.writer()).await.expect("pragma");
        assert_eq!(journal, "wal");
        // The access log's file beside it: as private, in WAL mode too,
        // its commits as durable as the main file's (FULL is 2).
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let log = access_log_path(&dir.join("c.db"));
            assert_eq!(log, dir.join("c.db-access-log"));
            assert_eq!(std::fs::metadata(&log).expect("the log's file").permissions().mode() & 0o777, 0o600);
        }
        let journal: String =
            sqlx::query_scalar("PRAGMA access.journal_mode").fetch_one(db.writer()).await.expect("pragma");
        assert_eq!(journal, "wal");
        for pragma in ["PRAGMA main.synchronous", "PRAGMA access.synchronous"] {
            let sync: i64 = sqlx::query_scalar(pragma).fetch_one(db.writer()).await.expect("pragma");
            assert_eq!(sync, 2, "{pragma}");
        }
        let refused = sqlx::query("CREATE TABLE access.t (x INTEGER)").execute(db.readers()).await;
        assert!(refused.is_err(), "readers are read-only on the log's file too");
        let fk: i64 = sqlx::query_scalar("PRAGMA foreign_keys").fetch_one(db.readers()).await.expect("pragma");
        assert_eq!(fk, 1);
        let refused = sqlx::query("CREATE TABLE t (x INTEGER)").execute(db.readers()).await;
        assert!(refused.is_err(), "readers are read-only");

        let held = lock_instance(&url).expect("first instance");
        let e = lock_instance(&url).expect_err("second instance").to_string();
        assert!(e.contains("another credencial instance") && e.contains("PostgreSQL"), "{e}");
        // Through a link to the directory: the same file, the same lock.
        #[cfg(unix)]
        {
            let link = std::env::temp_dir().join(format!("credencial-link-{}", uuid::Uuid::new_v4().simple()));
            std::os::unix::fs::symlink(&dir, &link).expect("link");
            let linked = format!("sqlite://{}", link.join("c.db").display());
            assert!(lock_instance(&linked).is_err(), "a link does not get a lock of its own");
            let through_link = connect(&linked, 1, Duration::from_secs(5)).await.expect("open through the link");
            let real = dir.canonicalize().expect("the real directory").join("c.db-access-log");
            assert_eq!(through_link.access_log_file(), real, "nor an access log of its own");
            through_link.close().await;
            std::fs::remove_file(&link).ok();
        }
        drop(held);
        lock_instance(&url).expect("free again once the first instance ends");
        assert_eq!(schema_status(&db).await.expect("status").pending, known_versions());
        migrate(&db).await.expect("the schema applies");
        assert!(schema_status(&db).await.expect("status").is_current());
        db.close().await;
        std::fs::remove_dir_all(&dir).ok();
    }

    /// The access-log rows (id, user, client, instant, request id) of
    /// `table`.
    async fn log_rows(db: &SqliteDb, table: &str) -> Vec<(i64, i64, String, i64, String)> {
        sqlx::query_as(&format!("SELECT id, user_id, client_id, accessed_at, request_id FROM {table} ORDER BY id"))
            .fetch_all(db.readers())
            .await
            .expect("log rows")
    }

    #[tokio::test]
    async fn an_upgrade_moves_the_access_log_to_its_file_and_a_move_left_half_done_is_finished() {
        let (dir, _, db) = opened().await;
        // The release before: the log in the main file, three rows, the
        // last one purged since.
        let before = known_versions().into_iter().filter(|v| *v < ACCESS_LOG_FILE_MIGRATION).max().expect("earlier");
        migrate_through(&db, before).await.expect("the earlier schema");
        sqlx::query(
            "INSERT INTO users (username, password, email, email_key, name, created_at) \
             VALUES ('ana', '!', 'ana@exemplo.gov.br', 'ana@exemplo.gov.br', 'Ana', 1800000000)",
        )
        .execute(db.writer())
        .await
        .expect("an account");
        for i in 1..=3 {
            sqlx::query(
                "INSERT INTO main.access_log (user_id, client_id, scopes, accessed_at, request_id) \
                 VALUES (1, 'portal', '[\"cpf\"]', ?1, 'req-' || ?1)",
            )
            .bind(1_800_000_000 + i)
            .execute(db.writer())
            .await
            .expect("a log row");
        }
        sqlx::query("DELETE FROM main.access_log WHERE id = 3").execute(db.writer()).await.expect("purge");
        let old = log_rows(&db, "main.access_log").await;
        assert_eq!(old.len(), 2);

        // The migration applied, the move stopped after one row.
        migrate_through(&db, ACCESS_LOG_FILE_MIGRATION).await.expect("the table in its file");
        sqlx::query("INSERT INTO access.access_log SELECT * FROM main.access_log WHERE id = 1")
            .execute(db.writer())
            .await
            .expect("the first row moved");
        let status = schema_status(&db).await.expect("status");
        assert!(status.pending.contains(&ACCESS_LOG_FILE_MIGRATION), "serve refuses a half-done move: {status:?}");

        migrate(&db).await.expect("the move finishes");
        assert!(schema_status(&db).await.expect("status").is_current());
        assert_eq!(log_rows(&db, "access.access_log").await, old, "every row, as it was");
        assert_eq!(log_rows(&db, "access_log").await, old, "found by its name");
        assert!(!log_tables(db.readers()).await.expect("tables").in_main, "the old table is gone");
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO access_log (user_id, client_id, scopes, accessed_at, request_id) \
             VALUES (1, 'portal', '[\"cpf\"]', 1800000009, 'req-new') RETURNING id",
        )
        .fetch_one(db.writer())
        .await
        .expect("a new row");
        assert_eq!(id, 4, "no id given before is given again, a purged one included");
        migrate(&db).await.expect("a second migrate changes nothing");
        assert_eq!(log_rows(&db, "access_log").await.len(), 3);
        // The foreign key's two halves, across the files.
        let refused = sqlx::query(
            "INSERT INTO access_log (user_id, client_id, scopes, accessed_at, request_id) \
             VALUES (99, 'portal', '[\"cpf\"]', 1800000010, 'req-nobody')",
        )
        .execute(db.writer())
        .await
        .expect_err("no account 99");
        assert!(refused.to_string().contains("FOREIGN KEY"), "{refused}");
        sqlx::query("DELETE FROM users WHERE id = 1").execute(db.writer()).await.expect("delete the account");
        assert!(log_rows(&db, "access_log").await.is_empty(), "its rows went with it");
        db.close().await;
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A new migrated database file in a directory of its own: the
    /// directory, the URL and the handle.
    async fn migrated() -> (PathBuf, String, SqliteDb) {
        let (dir, url, db) = opened().await;
        migrate(&db).await.expect("migrate");
        (dir, url, db)
    }

    /// A new database file, not migrated, in a directory of its own.
    async fn opened() -> (PathBuf, String, SqliteDb) {
        let dir = std::env::temp_dir().join(format!("credencial-db-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).expect("dir");
        let url = format!("sqlite://{}", dir.join("c.db").display());
        ensure_file(&dir.join("c.db")).expect("create");
        let db = connect(&url, 2, Duration::from_secs(5)).await.expect("open");
        (dir, url, db)
    }

    /// Removes the SQLite file `path` and its write-ahead log.
    fn remove_with_wal(path: &Path) {
        for suffix in ["", "-wal", "-shm"] {
            let mut name = path.as_os_str().to_owned();
            name.push(suffix);
            std::fs::remove_file(PathBuf::from(name)).ok();
        }
    }

    #[tokio::test]
    async fn a_lost_access_log_file_stops_the_service_until_it_is_restored_or_given_up() {
        let (dir, url, db) = migrated().await;
        db.close().await;
        remove_with_wal(&dir.join("c.db-access-log"));
        let db = connect(&url, 2, Duration::from_secs(5)).await.expect("open");
        let e = schema_status(&db).await.expect_err("serve would find no access log").to_string();
        assert!(e.contains("c.db-access-log holds no access log") && e.contains("restore the file"), "{e}");
        let e = migrate(&db).await.expect_err("nor does migrate make one up").to_string();
        assert!(e.contains("holds no access log"), "{e}");
        // Given up, as docs/configuration.md says: the migration again.
        sqlx::query("DELETE FROM _sqlx_migrations WHERE version = ?1")
            .bind(ACCESS_LOG_FILE_MIGRATION)
            .execute(db.writer())
            .await
            .expect("forget the migration");
        migrate(&db).await.expect("an empty access log");
        assert!(schema_status(&db).await.expect("status").is_current());
        assert!(log_rows(&db, "access_log").await.is_empty());
        db.close().await;
        std::fs::remove_dir_all(&dir).ok();
    }

    #[tokio::test]
    async fn a_new_database_does_not_take_the_access_log_an_earlier_one_left() {
        let (dir, url, db) = migrated().await;
        db.close().await;
        remove_with_wal(&dir.join("c.db"));
        ensure_file(&dir.join("c.db")).expect("a new file");
        let db = connect(&url, 2, Duration::from_secs(5)).await.expect("open");
        let e = migrate(&db).await.expect_err("refused").to_string();
        assert!(e.contains("c.db-access-log holds the access log of an earlier database"), "{e}");
        db.close().await;
        std::fs::remove_dir_all(&dir).ok();
    }

    #[tokio::test]
    async fn a_migration_whose_log_file_commit_was_lost_is_made_again() {
        let (dir, _, db) = opened().await;
        migrate_through(&db, ACCESS_LOG_FILE_MIGRATION).await.expect("through the access log's migration");
        // The main file's commit (the migration recorded) without the log
        // file's (its table), as a power cut between the two leaves it.
        sqlx::query("DROP TABLE access.access_log").execute(db.writer()).await.expect("the file's part undone");
        assert!(schema_status(&db).await.expect("status").pending.contains(&ACCESS_LOG_FILE_MIGRATION));
        migrate(&db).await.expect("made again");
        assert!(schema_status(&db).await.expect("status").is_current());
        let tables = log_tables(db.readers()).await.expect("tables");
        assert!(tables.in_file && !tables.in_main, "{tables:?}");
        db.close().await;
        std::fs::remove_dir_all(&dir).ok();
    }
}
