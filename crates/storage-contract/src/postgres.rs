//! The PostgreSQL backend: a fresh database per test.

use std::sync::Arc;

use async_trait::async_trait;
use credencial_adapters_postgres as pg;
use credencial_adapters_postgres::testing::TestDatabase;
use credencial_ports::account::{AccessLog, GrantRepository, OwnEntryRepository, TaxIdValidationStore};
use credencial_ports::{
    AccountAdminStore, AuditTrail, AuthorizationCodeStore, HostUserRecords, HostUserStore, LoginFailureLog,
    LoginHistory, OAuthClientRepository, PoolStatus, ProfileRepository, ReadinessProbe, RefreshTokenStore,
    SnapshotStore, UserDirectory, UserRepository,
};

use crate::{Backend, Engine};

/// PostgreSQL at 127.0.0.1:5432 (or `TEST_DATABASE_URL`).
pub struct Postgres {
    /// The test's database; dropped with it.
    pub database: TestDatabase,
}

#[async_trait]
impl Backend for Postgres {
    const ENGINE: Engine = Engine::Postgres;

    async fn fresh() -> Self {
        Self { database: TestDatabase::new().await }
    }

    const EMAIL_KEY_MIGRATION: i64 = pg::EMAIL_KEY_MIGRATION;

    async fn before(version: i64) -> Self {
        let database = TestDatabase::new_unmigrated().await;
        pg::migrate_through(&database.pool, version - 1).await.expect("the earlier migrations");
        Self { database }
    }

    async fn migrate(&self) -> Result<(), String> {
        pg::migrate(&self.database.pool).await.map_err(|e| e.to_string())
    }

    async fn execute(&self, sql: &str) {
        sqlx::query(sql).execute(&self.database.pool).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    async fn try_execute(&self, sql: &str) -> Result<(), String> {
        sqlx::query(sql).execute(&self.database.pool).await.map(drop).map_err(|e| e.to_string())
    }

    async fn count(&self, sql: &str) -> i64 {
        sqlx::query_scalar(sql).fetch_one(&self.database.pool).await.unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    fn users(&self) -> Arc<dyn UserRepository> {
        Arc::new(pg::PgUserRepository::new(self.database.pool.clone()))
    }

    fn profiles(&self) -> Arc<dyn ProfileRepository> {
        Arc::new(pg::PgProfileRepository::new(self.database.pool.clone()))
    }

    fn snapshots(&self) -> Arc<dyn SnapshotStore> {
        Arc::new(pg::PgSnapshotStore::new(self.database.pool.clone()))
    }

    fn refresh_tokens(&self) -> Arc<dyn RefreshTokenStore> {
        Arc::new(pg::PgRefreshTokenStore::new(self.database.pool.clone()))
    }

    fn clients(&self) -> Arc<dyn OAuthClientRepository> {
        Arc::new(pg::PgOAuthClientRepository::new(self.database.pool.clone()))
    }

    fn codes(&self) -> Arc<dyn AuthorizationCodeStore> {
        Arc::new(pg::PgAuthorizationCodeStore::new(self.database.pool.clone()))
    }

    fn login_failures(&self) -> Arc<dyn LoginFailureLog> {
        Arc::new(pg::PgLoginFailureLog::new(self.database.pool.clone()))
    }

    fn readiness(&self) -> Arc<dyn ReadinessProbe> {
        Arc::new(pg::PgReadinessProbe::new(self.database.pool.clone()))
    }

    fn pool_status(&self) -> Arc<dyn PoolStatus> {
        Arc::new(pg::PgPoolStatus::new(self.database.pool.clone()))
    }

    fn audit(&self) -> Arc<dyn AuditTrail> {
        Arc::new(pg::PgAuditTrail::new(self.database.pool.clone()))
    }

    fn account_admin(&self) -> Arc<dyn AccountAdminStore> {
        Arc::new(pg::PgAccountAdminStore::new(self.database.pool.clone()))
    }

    async fn second_handle(&self) -> (Arc<dyn UserRepository>, Arc<dyn AccountAdminStore>) {
        let pool = sqlx::PgPool::connect(&self.database.url).await.expect("a second pool");
        (Arc::new(pg::PgUserRepository::new(pool.clone())), Arc::new(pg::PgAccountAdminStore::new(pool)))
    }

    fn mail(&self) -> Arc<dyn credencial_ports::MailStore> {
        Arc::new(pg::PgMail::new(self.database.pool.clone()))
    }
    fn federated_links(&self) -> Arc<dyn credencial_ports::FederatedLinkStore> {
        Arc::new(pg::PgFederatedLinks::new(self.database.pool.clone()))
    }

    fn security_events(&self) -> Arc<dyn credencial_ports::SecurityEvents> {
        Arc::new(pg::PgSecurityEvents::new(self.database.pool.clone()))
    }

    fn passkeys(&self) -> Arc<dyn credencial_ports::PasskeyStore> {
        Arc::new(pg::PgSecondFactorStore::new(self.database.pool.clone()))
    }

    fn second_factors(&self) -> Arc<dyn credencial_ports::SecondFactorStore> {
        Arc::new(pg::PgSecondFactorStore::new(self.database.pool.clone()))
    }
    fn app_passwords(&self) -> Arc<dyn credencial_ports::AppPasswordStore> {
        Arc::new(pg::PgSecondFactorStore::new(self.database.pool.clone()))
    }

    fn sessions(&self) -> Arc<dyn credencial_ports::SessionStore> {
        Arc::new(pg::PgSessionStore::new(self.database.pool.clone()))
    }
    fn host_session_ends(&self) -> Arc<dyn credencial_ports::HostSessionEnds> {
        Arc::new(pg::PgHostSessionEnds::new(self.database.pool.clone()))
    }
    fn logout_deliveries(&self) -> Arc<dyn credencial_ports::LogoutDeliveries> {
        Arc::new(pg::PgLogoutDeliveries::new(self.database.pool.clone()))
    }

    fn login_history(&self) -> Arc<dyn LoginHistory> {
        Arc::new(pg::PgLoginHistory::new(self.database.pool.clone()))
    }

    fn directory(&self) -> Arc<dyn UserDirectory> {
        Arc::new(pg::PgUserDirectory::new(self.database.pool.clone()))
    }

    fn host_users(&self) -> Arc<dyn HostUserStore> {
        Arc::new(pg::PgHostUserStore::new(self.database.pool.clone()))
    }

    fn host_user_records(&self) -> Arc<dyn HostUserRecords> {
        Arc::new(pg::PgHostUserRecords::new(self.database.pool.clone()))
    }

    fn grants(&self) -> Arc<dyn GrantRepository> {
        Arc::new(pg::account::PgGrantRepository::new(self.database.pool.clone()))
    }

    fn own_entries(&self) -> Arc<dyn OwnEntryRepository> {
        Arc::new(pg::account::PgOwnEntryRepository::new(self.database.pool.clone()))
    }

    fn access_log(&self) -> Arc<dyn AccessLog> {
        Arc::new(pg::account::PgAccessLog::new(self.database.pool.clone()))
    }

    fn transfer(&self) -> Arc<dyn credencial_ports::DataTransfer> {
        Arc::new(pg::PgDataTransfer::new(self.database.pool.clone()))
    }

    fn tax_id(&self) -> Arc<dyn TaxIdValidationStore> {
        Arc::new(pg::account::PgTaxIdValidationStore::new(self.database.pool.clone()))
    }
}
