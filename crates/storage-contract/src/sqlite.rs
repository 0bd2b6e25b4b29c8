//! The SQLite backend: a fresh database file per test.

use std::sync::Arc;

use async_trait::async_trait;
#[allow(unused_imports)]
use credencial_adapters_sqlite as sqlite;
use credencial_adapters_sqlite::testing::TestDatabase;
use credencial_ports::account::{AccessLog, GrantRepository, OwnEntryRepository, TaxIdValidationStore};
use credencial_ports::{
    AccountAdminStore, AuditTrail, AuthorizationCodeStore, HostUserRecords, HostUserStore, LoginFailureLog,
    LoginHistory, OAuthClientRepository, PoolStatus, ProfileRepository, ReadinessProbe, RefreshTokenStore,
    SnapshotStore, UserDirectory, UserRepository,
};

use crate::{Backend, Engine};

/// A SQLite file in a temporary directory.
pub struct Sqlite {
    /// The test's database; its directory is removed with it.
    pub database: TestDatabase,
}

#[async_trait]
impl Backend for Sqlite {
    const ENGINE: Engine = Engine::Sqlite;

    async fn fresh() -> Self {
        Self { database: TestDatabase::new().await }
    }

    async fn execute(&self, sql: &str) {
        sqlx::query(sql).execute(self.database.db.writer()).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    async fn count(&self, sql: &str) -> i64 {
        sqlx::query_scalar(sql).fetch_one(self.database.db.readers()).await.unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    // TODO(issue 15): drop this override once SqliteUserRepository::create
    // is written (the trait's default creates through the port).
    async fn create_user(&self, name: &str) -> credencial_domain::UserId {
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO users (username, password, email, name) VALUES (?1, 'pbkdf2_sha256$1$s$h', ?2, ?3) RETURNING id",
        )
        .bind(name)
        .bind(format!("{name}@example.gov.br"))
        .bind(format!("Full {name}"))
        .fetch_one(self.database.db.writer())
        .await
        .expect("user");
        credencial_domain::UserId(id)
    }

    // TODO(issue 15): Arc::new(sqlite::SqliteUserRepository::new(self.database.db.clone()))
    fn users(&self) -> Arc<dyn UserRepository> {
        unimplemented!("SQLite UserRepository is being written")
    }

    // TODO(issue 15): Arc::new(sqlite::SqliteProfileRepository::new(self.database.db.clone()))
    fn profiles(&self) -> Arc<dyn ProfileRepository> {
        unimplemented!("SQLite ProfileRepository is being written")
    }

    // TODO(issue 15): Arc::new(sqlite::SqliteSnapshotStore::new(self.database.db.clone()))
    fn snapshots(&self) -> Arc<dyn SnapshotStore> {
        unimplemented!("SQLite SnapshotStore is being written")
    }

    // TODO(issue 15): Arc::new(sqlite::SqliteRefreshTokenStore::new(self.database.db.clone()))
    fn refresh_tokens(&self) -> Arc<dyn RefreshTokenStore> {
        unimplemented!("SQLite RefreshTokenStore is being written")
    }

    // TODO(issue 15): Arc::new(sqlite::SqliteOAuthClientRepository::new(self.database.db.clone()))
    fn clients(&self) -> Arc<dyn OAuthClientRepository> {
        unimplemented!("SQLite OAuthClientRepository is being written")
    }

    // TODO(issue 15): Arc::new(sqlite::SqliteAuthorizationCodeStore::new(self.database.db.clone()))
    fn codes(&self) -> Arc<dyn AuthorizationCodeStore> {
        unimplemented!("SQLite AuthorizationCodeStore is being written")
    }

    // TODO(issue 15): Arc::new(sqlite::SqliteLoginFailureLog::new(self.database.db.clone()))
    fn login_failures(&self) -> Arc<dyn LoginFailureLog> {
        unimplemented!("SQLite LoginFailureLog is being written")
    }

    // TODO(issue 15): Arc::new(sqlite::SqliteReadinessProbe::new(self.database.db.clone()))
    fn readiness(&self) -> Arc<dyn ReadinessProbe> {
        unimplemented!("SQLite ReadinessProbe is being written")
    }

    // TODO(issue 15): Arc::new(sqlite::SqlitePoolStatus::new(self.database.db.clone()))
    fn pool_status(&self) -> Arc<dyn PoolStatus> {
        unimplemented!("SQLite PoolStatus is being written")
    }

    fn audit(&self) -> Arc<dyn AuditTrail> {
        Arc::new(sqlite::SqliteAuditTrail::new(self.database.db.clone()))
    }

    // TODO(issue 15): Arc::new(sqlite::SqliteAccountAdminStore::new(self.database.db.clone()))
    fn account_admin(&self) -> Arc<dyn AccountAdminStore> {
        unimplemented!("SQLite AccountAdminStore is being written")
    }

    // TODO(issue 15): Arc::new(sqlite::SqliteLoginHistory::new(self.database.db.clone()))
    fn login_history(&self) -> Arc<dyn LoginHistory> {
        unimplemented!("SQLite LoginHistory is being written")
    }

    // TODO(issue 15): Arc::new(sqlite::SqliteUserDirectory::new(self.database.db.clone()))
    fn directory(&self) -> Arc<dyn UserDirectory> {
        unimplemented!("SQLite UserDirectory is being written")
    }

    fn host_users(&self) -> Arc<dyn HostUserStore> {
        Arc::new(sqlite::SqliteHostUserStore::new(self.database.db.clone()))
    }

    fn host_user_records(&self) -> Arc<dyn HostUserRecords> {
        Arc::new(sqlite::SqliteHostUserRecords::new(self.database.db.clone()))
    }

    // TODO(issue 15): Arc::new(sqlite::account::SqliteGrantRepository::new(self.database.db.clone()))
    fn grants(&self) -> Arc<dyn GrantRepository> {
        unimplemented!("SQLite GrantRepository is being written")
    }

    // TODO(issue 15): Arc::new(sqlite::account::SqliteOwnEntryRepository::new(self.database.db.clone()))
    fn own_entries(&self) -> Arc<dyn OwnEntryRepository> {
        unimplemented!("SQLite OwnEntryRepository is being written")
    }

    // TODO(issue 15): Arc::new(sqlite::account::SqliteAccessLog::new(self.database.db.clone()))
    fn access_log(&self) -> Arc<dyn AccessLog> {
        unimplemented!("SQLite AccessLog is being written")
    }

    // TODO(issue 15): Arc::new(sqlite::account::SqliteTaxIdValidationStore::new(self.database.db.clone()))
    fn tax_id(&self) -> Arc<dyn TaxIdValidationStore> {
        unimplemented!("SQLite TaxIdValidationStore is being written")
    }
}
