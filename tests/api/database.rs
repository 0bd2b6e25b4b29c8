//! The test's database, on the engine this test binary runs on: the `api`
//! target runs the suite on PostgreSQL, `api_sqlite` (the same sources)
//! on SQLite. Tests that are PostgreSQL's by nature (several instances on
//! one database, a server that goes away) ask for it by name.

use std::sync::Once;

/// The storage engines the suite runs on: PostgreSQL at 127.0.0.1:5432 (or
/// `TEST_DATABASE_URL`), a SQLite file in a temporary directory.
pub use credencial::storage::Engine;
use credencial::storage::{Database, Storage};
use credencial_adapters_postgres::testing::TestDatabase as PgTestDatabase;
use credencial_adapters_sqlite::testing::TestDatabase as SqliteTestDatabase;
use sqlx::AnyPool;

tokio::task_local! {
    /// Set while a test that is PostgreSQL's by nature runs.
    static ON_POSTGRES: ();
}

/// Runs `test` with every database it creates on PostgreSQL, in both test
/// binaries: for what only a server does (several instances on one
/// database, a database that goes away under a running service).
pub async fn on_postgres<F: std::future::Future>(test: F) -> F::Output {
    ON_POSTGRES.scope((), test).await
}

/// The engine of this test binary (PostgreSQL inside [`on_postgres`]).
pub fn engine() -> Engine {
    if ON_POSTGRES.try_with(|_| ()).is_ok() {
        Engine::Postgres
    } else if env!("CARGO_CRATE_NAME") == "api_sqlite" {
        Engine::Sqlite
    } else {
        Engine::Postgres
    }
}

enum Inner {
    Postgres(PgTestDatabase),
    Sqlite(SqliteTestDatabase),
}

/// A fresh database for one test, removed when it is dropped.
pub struct TestDatabase {
    /// The database's URL (`postgres://…` or `sqlite://…`).
    pub url: String,
    /// A pool for the tests' own SQL, through sqlx's `Any` driver: `$1`
    /// placeholders work on both engines.
    pub pool: AnyPool,
    inner: Inner,
}

/// The tests' own pool on `url`; on SQLite each connection attaches the
/// access log's file as the service's do, so that `access_log` is found.
async fn any_pool(url: &str) -> AnyPool {
    static DRIVERS: Once = Once::new();
    DRIVERS.call_once(sqlx::any::install_default_drivers);
    let mut options = sqlx::pool::PoolOptions::<sqlx::Any>::new().max_connections(4);
    if let Ok(file) = credencial_adapters_sqlite::parse_url(url) {
        let log = credencial_adapters_sqlite::access_log_path(&file).display().to_string();
        options = options.after_connect(move |conn, _| {
            let log = log.clone();
            Box::pin(async move {
                let attach = format!("ATTACH DATABASE $1 AS {}", credencial_adapters_sqlite::ACCESS_LOG_SCHEMA);
                sqlx::query(&attach).bind(log).execute(conn).await.map(drop)
            })
        });
    }
    options.connect(url).await.expect("the test's own pool")
}

impl TestDatabase {
    /// A migrated database on this binary's engine.
    pub async fn new() -> Self {
        Self::on(engine()).await
    }

    /// A migrated database on `engine`.
    pub async fn on(engine: Engine) -> Self {
        Self::wrap(match engine {
            Engine::Postgres => Inner::Postgres(PgTestDatabase::new().await),
            Engine::Sqlite => Inner::Sqlite(SqliteTestDatabase::new().await),
        })
        .await
    }

    /// An empty database (no migration applied) on this binary's engine.
    pub async fn new_unmigrated() -> Self {
        Self::wrap(match engine() {
            Engine::Postgres => Inner::Postgres(PgTestDatabase::new_unmigrated().await),
            Engine::Sqlite => Inner::Sqlite(SqliteTestDatabase::new_unmigrated().await),
        })
        .await
    }

    async fn wrap(inner: Inner) -> Self {
        let url = match &inner {
            Inner::Postgres(db) => db.url.clone(),
            Inner::Sqlite(db) => db.url.clone(),
        };
        Self { pool: any_pool(&url).await, url, inner }
    }

    /// The engine the database runs on.
    pub fn engine(&self) -> Engine {
        match self.inner {
            Inner::Postgres(_) => Engine::Postgres,
            Inner::Sqlite(_) => Engine::Sqlite,
        }
    }

    /// A SQL expression of the text-array column `column` as a JSON array
    /// in text (PostgreSQL keeps `TEXT[]`, SQLite JSON text already), for
    /// reading it with [`json_list`].
    pub fn json_array(&self, column: &str) -> String {
        match self.engine() {
            Engine::Postgres => format!("array_to_json({column})::text"),
            Engine::Sqlite => column.to_owned(),
        }
    }

    /// How many tables the database has (0 before any migration).
    pub async fn table_count(&self) -> i64 {
        let sql = match self.engine() {
            Engine::Postgres => "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'",
            Engine::Sqlite => "SELECT count(*) FROM sqlite_schema WHERE type = 'table'",
        };
        sqlx::query_scalar(sql).fetch_one(&self.pool).await.expect("count tables")
    }

    /// How many rows the schema's tables hold together.
    pub async fn table_rows(&self) -> i64 {
        let sql = credencial_ports::transfer::count_all_rows();
        sqlx::query_scalar(&sql).fetch_one(&self.pool).await.expect("count rows")
    }

    /// Every storage port on this database, for setting up a test through
    /// the ports rather than SQL.
    pub fn storage(&self) -> Storage {
        Storage::on(match &self.inner {
            Inner::Postgres(db) => Database::Postgres(db.pool.clone()),
            Inner::Sqlite(db) => Database::Sqlite(db.db.clone()),
        })
    }

    /// Records a migration this build does not know, as a newer release
    /// would have applied it.
    pub async fn record_newer_migration(&self) {
        match &self.inner {
            Inner::Postgres(db) => db.record_newer_migration().await,
            Inner::Sqlite(db) => db.record_newer_migration().await,
        }
    }

    /// Drops the database under a running server (PostgreSQL only, see
    /// [`on_postgres`]: a file does not go away like a server does).
    ///
    /// # Panics
    /// On SQLite.
    pub async fn drop_now(&self) {
        match &self.inner {
            Inner::Postgres(db) => db.drop_now().await,
            Inner::Sqlite(_) => panic!("drop_now is for PostgreSQL: run the test in on_postgres"),
        }
    }
}

/// The strings of a JSON array in text (see [`TestDatabase::json_array`]).
///
/// # Panics
/// When `text` is not a JSON array of strings.
pub fn json_list(text: &str) -> Vec<String> {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not a JSON array of strings: {text}: {e}"))
}

/// A boolean column as either engine keeps it (PostgreSQL's `boolean`,
/// SQLite's 0/1), read through the `Any` driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flag(pub bool);

impl sqlx::Type<sqlx::Any> for Flag {
    fn type_info() -> sqlx::any::AnyTypeInfo {
        <bool as sqlx::Type<sqlx::Any>>::type_info()
    }

    fn compatible(ty: &sqlx::any::AnyTypeInfo) -> bool {
        <bool as sqlx::Type<sqlx::Any>>::compatible(ty) || <i64 as sqlx::Type<sqlx::Any>>::compatible(ty)
    }
}

impl<'r> sqlx::Decode<'r, sqlx::Any> for Flag {
    fn decode(value: sqlx::any::AnyValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
        match <bool as sqlx::Decode<sqlx::Any>>::decode(value.clone()) {
            Ok(flag) => Ok(Self(flag)),
            Err(_) => <i64 as sqlx::Decode<sqlx::Any>>::decode(value).map(|n| Self(n != 0)),
        }
    }
}
