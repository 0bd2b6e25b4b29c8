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

    const EMAIL_KEY_MIGRATION: i64 = sqlite::EMAIL_KEY_MIGRATION;

    async fn before(version: i64) -> Self {
        let database = TestDatabase::new_unmigrated().await;
        sqlite::migrate_through(&database.db, version - 1).await.expect("the earlier migrations");
        Self { database }
    }

    async fn migrate(&self) -> Result<(), String> {
        sqlite::migrate(&self.database.db).await.map_err(|e| e.to_string())
    }

    async fn execute(&self, sql: &str) {
        sqlx::query(sql).execute(self.database.db.writer()).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    async fn try_execute(&self, sql: &str) -> Result<(), String> {
        sqlx::query(sql).execute(self.database.db.writer()).await.map(drop).map_err(|e| e.to_string())
    }

    async fn count(&self, sql: &str) -> i64 {
        sqlx::query_scalar(sql).fetch_one(self.database.db.readers()).await.unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    fn users(&self) -> Arc<dyn UserRepository> {
        Arc::new(sqlite::SqliteUserRepository::new(self.database.db.clone()))
    }

    fn profiles(&self) -> Arc<dyn ProfileRepository> {
        Arc::new(sqlite::SqliteProfileRepository::new(self.database.db.clone()))
    }

    fn snapshots(&self) -> Arc<dyn SnapshotStore> {
        Arc::new(sqlite::SqliteSnapshotStore::new(self.database.db.clone()))
    }

    fn refresh_tokens(&self) -> Arc<dyn RefreshTokenStore> {
        Arc::new(sqlite::SqliteRefreshTokenStore::new(self.database.db.clone()))
    }

    fn clients(&self) -> Arc<dyn OAuthClientRepository> {
        Arc::new(sqlite::SqliteOAuthClientRepository::new(self.database.db.clone()))
    }

    fn codes(&self) -> Arc<dyn AuthorizationCodeStore> {
        Arc::new(sqlite::SqliteAuthorizationCodeStore::new(self.database.db.clone()))
    }

    fn login_failures(&self) -> Arc<dyn LoginFailureLog> {
        Arc::new(sqlite::SqliteLoginFailureLog::new(self.database.db.clone()))
    }

    fn readiness(&self) -> Arc<dyn ReadinessProbe> {
        Arc::new(sqlite::SqliteReadinessProbe::new(self.database.db.clone()))
    }

    fn pool_status(&self) -> Arc<dyn PoolStatus> {
        Arc::new(sqlite::SqlitePoolStatus::new(self.database.db.clone()))
    }

    fn audit(&self) -> Arc<dyn AuditTrail> {
        Arc::new(sqlite::SqliteAuditTrail::new(self.database.db.clone()))
    }

    fn account_admin(&self) -> Arc<dyn AccountAdminStore> {
        Arc::new(sqlite::SqliteAccountAdminStore::new(self.database.db.clone()))
    }

    async fn second_handle(&self) -> (Arc<dyn UserRepository>, Arc<dyn AccountAdminStore>) {
        let db = self.database.second_handle().await;
        (Arc::new(sqlite::SqliteUserRepository::new(db.clone())), Arc::new(sqlite::SqliteAccountAdminStore::new(db)))
    }

    fn mail(&self) -> Arc<dyn credencial_ports::MailStore> {
        Arc::new(sqlite::SqliteMail::new(self.database.db.clone()))
    }
    fn federated_links(&self) -> Arc<dyn credencial_ports::FederatedLinkStore> {
        Arc::new(sqlite::SqliteFederatedLinks::new(self.database.db.clone()))
    }

    fn security_events(&self) -> Arc<dyn credencial_ports::SecurityEvents> {
        Arc::new(sqlite::SqliteSecurityEvents::new(self.database.db.clone()))
    }

    fn passkeys(&self) -> Arc<dyn credencial_ports::PasskeyStore> {
        Arc::new(sqlite::SqliteSecondFactorStore::new(self.database.db.clone()))
    }

    fn second_factors(&self) -> Arc<dyn credencial_ports::SecondFactorStore> {
        Arc::new(sqlite::SqliteSecondFactorStore::new(self.database.db.clone()))
    }
    fn app_passwords(&self) -> Arc<dyn credencial_ports::AppPasswordStore> {
        Arc::new(sqlite::SqliteSecondFactorStore::new(self.database.db.clone()))
    }

    fn sessions(&self) -> Arc<dyn credencial_ports::SessionStore> {
        Arc::new(sqlite::SqliteSessionStore::new(self.database.db.clone()))
    }
    fn host_session_ends(&self) -> Arc<dyn credencial_ports::HostSessionEnds> {
        Arc::new(sqlite::SqliteHostSessionEnds::new(self.database.db.clone()))
    }
    fn logout_deliveries(&self) -> Arc<dyn credencial_ports::LogoutDeliveries> {
        Arc::new(sqlite::SqliteLogoutDeliveries::new(self.database.db.clone()))
    }

    fn login_history(&self) -> Arc<dyn LoginHistory> {
        Arc::new(sqlite::SqliteLoginHistory::new(self.database.db.clone()))
    }

    fn directory(&self) -> Arc<dyn UserDirectory> {
        Arc::new(sqlite::SqliteUserDirectory::new(self.database.db.clone()))
    }

    fn host_users(&self) -> Arc<dyn HostUserStore> {
        Arc::new(sqlite::SqliteHostUserStore::new(self.database.db.clone()))
    }

    fn host_user_records(&self) -> Arc<dyn HostUserRecords> {
        Arc::new(sqlite::SqliteHostUserRecords::new(self.database.db.clone()))
    }

    fn grants(&self) -> Arc<dyn GrantRepository> {
        Arc::new(sqlite::account::SqliteGrantRepository::new(self.database.db.clone()))
    }

    fn own_entries(&self) -> Arc<dyn OwnEntryRepository> {
        Arc::new(sqlite::account::SqliteOwnEntryRepository::new(self.database.db.clone()))
    }

    fn access_log(&self) -> Arc<dyn AccessLog> {
        Arc::new(sqlite::account::SqliteAccessLog::new(self.database.db.clone()))
    }

    fn transfer(&self) -> Arc<dyn credencial_ports::DataTransfer> {
        Arc::new(sqlite::SqliteDataTransfer::new(self.database.db.clone()))
    }

    fn tax_id(&self) -> Arc<dyn TaxIdValidationStore> {
        Arc::new(sqlite::account::SqliteTaxIdValidationStore::new(self.database.db.clone()))
    }
}
