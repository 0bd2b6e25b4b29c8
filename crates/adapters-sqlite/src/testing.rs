//! A fresh, migrated database file per test, in a directory of its own that
//! is removed when the test ends (this crate's own tests, the contract
//! suite and the end-to-end tests).

use std::path::PathBuf;

use crate::{connect, migrate, SqliteDb};

/// A database that exists for one test. Dropping it removes its directory.
pub struct TestDatabase {
    /// The database (writer and readers).
    pub db: SqliteDb,
    /// `sqlite://` URL of the file.
    pub url: String,
    dir: PathBuf,
}

impl TestDatabase {
    /// Readers of [`new`](Self::new)'s handle.
    const READERS: u32 = 4;

    /// Creates and migrates a database file in a new temporary directory.
    ///
    /// # Panics
    /// When the temporary directory cannot be written.
    pub async fn new() -> Self {
        Self::with_readers(Self::READERS).await
    }

    /// [`new`](Self::new), with `readers` read-only connections (for tests
    /// that count or exhaust them).
    ///
    /// # Panics
    /// When the temporary directory cannot be written.
    pub async fn with_readers(readers: u32) -> Self {
        let db = Self::unmigrated(readers).await;
        migrate(&db.db).await.expect("migrate test database");
        db
    }

    /// Creates an empty database file: no migration applied.
    ///
    /// # Panics
    /// When the temporary directory cannot be written.
    pub async fn new_unmigrated() -> Self {
        Self::unmigrated(Self::READERS).await
    }

    async fn unmigrated(readers: u32) -> Self {
        let dir = std::env::temp_dir().join(format!("credencial-test-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).expect("create the test database's directory");
        let url = format!("sqlite://{}", dir.join("credencial.db").display());
        crate::ensure_file(&dir.join("credencial.db")).expect("create the test database");
        let db = connect(&url, readers, std::time::Duration::from_secs(10)).await.expect("open test database");
        Self { db, url, dir }
    }

    /// Another handle on the same file (its own writer and readers), as a
    /// CLI command running beside a serving instance opens it.
    ///
    /// # Panics
    /// When the file cannot be opened.
    pub async fn second_handle(&self) -> SqliteDb {
        connect(&self.url, Self::READERS, std::time::Duration::from_secs(10)).await.expect("a second handle")
    }

    /// Records a migration this build does not know, as a newer release
    /// would have applied it.
    pub async fn record_newer_migration(&self) {
        sqlx::query(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
             VALUES (29991231000001, 'from a newer release', 1, x'00', 0)",
        )
        .execute(self.db.writer())
        .await
        .expect("record a newer migration");
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        // The pools' connections close with them; the files go now (an
        // open descriptor of a server under test keeps its inode alive).
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Fixtures of this crate's own tests of the client's profile read.
#[cfg(test)]
pub(crate) mod client_read {
    use credencial_domain::oauth::ClientId;
    use credencial_domain::{ScopeSet, UserId};
    use credencial_ports::account::AccessLogEntry;

    use super::TestDatabase;

    /// The grant [`database`] stores, as stored.
    pub(crate) const GRANT: &str = r#"["cnes","cpf"]"#;

    /// ana (id 1, active, named Ana) grants `demo-host` [`GRANT`].
    pub(crate) async fn database() -> TestDatabase {
        let file = TestDatabase::new().await;
        let grant = format!(
            "INSERT INTO oauth_grants (user_id, client_id, scopes, first_granted_at, last_used_at) \
             VALUES (1, 'demo-host', '{GRANT}', 0, 0)"
        );
        for statement in [
            "INSERT INTO users (id, username, password, name) VALUES (1, 'ana', 'x', 'Ana')",
            "INSERT INTO oauth_clients (client_id, name, confidential, redirect_uris) \
             VALUES ('demo-host', 'Demo', 0, '[\"https://h/cb\"]')",
            &grant,
        ] {
            sqlx::query(statement).execute(file.db.writer()).await.expect(statement);
        }
        file
    }

    /// `demo-host` reads ana's `cnes`.
    pub(crate) fn entry() -> AccessLogEntry {
        AccessLogEntry {
            user: UserId(1),
            client: ClientId::parse("demo-host").expect("client id"),
            scopes: ScopeSet::parse_strict("cnes").expect("scope"),
            at: 1_700_000_000,
            request_id: "req".into(),
        }
    }

    /// How many entries the access log holds.
    pub(crate) async fn logged(file: &TestDatabase) -> i64 {
        sqlx::query_scalar("SELECT count(*) FROM access_log").fetch_one(file.db.readers()).await.expect("count")
    }
}
