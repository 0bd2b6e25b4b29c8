//! A fresh, migrated database file per test, in a directory of its own that
//! is removed when the test ends.

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
    /// Creates and migrates a database file in a new temporary directory.
    ///
    /// # Panics
    /// When the temporary directory cannot be written.
    pub async fn new() -> Self {
        let db = Self::new_unmigrated().await;
        migrate(&db.db).await.expect("migrate test database");
        db
    }

    /// Creates an empty database file: no migration applied.
    ///
    /// # Panics
    /// When the temporary directory cannot be written.
    pub async fn new_unmigrated() -> Self {
        let dir = std::env::temp_dir().join(format!("credencial-test-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).expect("create the test database's directory");
        let url = format!("sqlite://{}", dir.join("credencial.db").display());
        crate::ensure_file(&dir.join("credencial.db")).expect("create the test database");
        let db = connect(&url, 4, std::time::Duration::from_secs(10)).await.expect("open test database");
        Self { db, url, dir }
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
