//! The storage ports' contract: one test suite, run against every storage
//! adapter.
//!
//! A test is an `async fn name<B: Backend>()` in `tests/contract/`; the
//! [`contract!`] macro instantiates each one for [`Postgres`] (a fresh
//! database on 127.0.0.1:5432, or `TEST_DATABASE_URL`: a missing server
//! fails the suite, never skips it) and for [`Sqlite`] (a fresh file in a
//! temporary directory). Both adapters must pass the same assertions.

use std::sync::Arc;

use async_trait::async_trait;
use credencial_domain::{UserData, UserId, Username};
use credencial_ports::account::{AccessLog, GrantRepository, OwnEntryRepository, TaxIdValidationStore};
use credencial_ports::{
    AccountAdminStore, AuditTrail, AuthorizationCodeStore, HostUserRecords, HostUserStore, LoginFailureLog,
    LoginHistory, NewUser, OAuthClientRepository, PoolStatus, ProfileRepository, ReadinessProbe, RefreshTokenStore,
    SnapshotStore, UserDirectory, UserRepository,
};

mod postgres;
mod sqlite;

pub use postgres::Postgres;
pub use sqlite::Sqlite;

/// Which engine a backend runs on, for the few statements a test must
/// write in each engine's own SQL (back-dating a row, say).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// PostgreSQL.
    Postgres,
    /// SQLite.
    Sqlite,
}

/// A fresh, migrated database of one engine and every storage port on it.
#[async_trait]
pub trait Backend: Send + Sync + Sized + 'static {
    /// The engine.
    const ENGINE: Engine;

    /// A new database, migrated, for one test.
    async fn fresh() -> Self;

    /// The migration of this engine that adds `users.email_key` (the
    /// schema before it is the previous release's).
    const EMAIL_KEY_MIGRATION: i64;

    /// A new database migrated up to, not including, `version`: the schema
    /// a previous release left, for a test of an upgrade.
    async fn before(version: i64) -> Self;

    /// Applies the pending migrations as `credencial migrate` does.
    /// Errors: the message `migrate` would print.
    async fn migrate(&self) -> Result<(), String>;

    /// Runs one statement of the engine's SQL that returns nothing (test
    /// set-up: back-dating, corrupting, counting is [`Backend::count`]).
    async fn execute(&self, sql: &str);

    /// Runs one statement of the engine's SQL that the test expects the
    /// database may refuse (a trigger, a check): `Err` with the database's
    /// message when it does.
    async fn try_execute(&self, sql: &str) -> Result<(), String>;

    /// The single integer `sql` answers (e.g. `SELECT count(*) FROM t`).
    async fn count(&self, sql: &str) -> i64;

    /// [`UserRepository`].
    fn users(&self) -> Arc<dyn UserRepository>;
    /// [`ProfileRepository`].
    fn profiles(&self) -> Arc<dyn ProfileRepository>;
    /// [`SnapshotStore`].
    fn snapshots(&self) -> Arc<dyn SnapshotStore>;
    /// [`RefreshTokenStore`].
    fn refresh_tokens(&self) -> Arc<dyn RefreshTokenStore>;
    /// [`OAuthClientRepository`].
    fn clients(&self) -> Arc<dyn OAuthClientRepository>;
    /// [`AuthorizationCodeStore`].
    fn codes(&self) -> Arc<dyn AuthorizationCodeStore>;
    /// [`LoginFailureLog`].
    fn login_failures(&self) -> Arc<dyn LoginFailureLog>;
    /// [`ReadinessProbe`].
    fn readiness(&self) -> Arc<dyn ReadinessProbe>;
    /// [`PoolStatus`].
    fn pool_status(&self) -> Arc<dyn PoolStatus>;
    /// [`AuditTrail`].
    fn audit(&self) -> Arc<dyn AuditTrail>;
    /// [`AccountAdminStore`].
    fn account_admin(&self) -> Arc<dyn AccountAdminStore>;
    /// [`credencial_ports::FederatedLinkStore`].
    fn federated_links(&self) -> Arc<dyn credencial_ports::FederatedLinkStore>;
    /// [`credencial_ports::SecurityEvents`].
    fn security_events(&self) -> Arc<dyn credencial_ports::SecurityEvents>;
    /// [`credencial_ports::MailStore`].
    fn mail(&self) -> Arc<dyn credencial_ports::MailStore>;
    /// [`credencial_ports::PasskeyStore`].
    fn passkeys(&self) -> Arc<dyn credencial_ports::PasskeyStore>;
    /// [`credencial_ports::SecondFactorStore`].
    fn second_factors(&self) -> Arc<dyn credencial_ports::SecondFactorStore>;
    /// [`credencial_ports::AppPasswordStore`].
    fn app_passwords(&self) -> Arc<dyn credencial_ports::AppPasswordStore>;
    /// [`credencial_ports::SessionStore`].
    fn sessions(&self) -> Arc<dyn credencial_ports::SessionStore>;
    /// [`credencial_ports::HostSessionEnds`].
    fn host_session_ends(&self) -> Arc<dyn credencial_ports::HostSessionEnds>;
    /// [`credencial_ports::LogoutDeliveries`].
    fn logout_deliveries(&self) -> Arc<dyn credencial_ports::LogoutDeliveries>;
    /// [`LoginHistory`].
    fn login_history(&self) -> Arc<dyn LoginHistory>;
    /// [`UserDirectory`].
    fn directory(&self) -> Arc<dyn UserDirectory>;
    /// [`HostUserStore`].
    fn host_users(&self) -> Arc<dyn HostUserStore>;
    /// [`HostUserRecords`].
    fn host_user_records(&self) -> Arc<dyn HostUserRecords>;
    /// [`GrantRepository`].
    fn grants(&self) -> Arc<dyn GrantRepository>;
    /// [`OwnEntryRepository`].
    fn own_entries(&self) -> Arc<dyn OwnEntryRepository>;
    /// [`AccessLog`].
    fn access_log(&self) -> Arc<dyn AccessLog>;
    /// [`TaxIdValidationStore`].
    fn tax_id(&self) -> Arc<dyn TaxIdValidationStore>;
    /// [`credencial_ports::DataTransfer`].
    fn transfer(&self) -> Arc<dyn credencial_ports::DataTransfer>;

    /// [`UserRepository`] and [`AccountAdminStore`] on a second handle on
    /// the same database, as another instance or a CLI command beside the
    /// service opens it (PostgreSQL: a pool of its own; SQLite: a writer
    /// and readers of their own, so that two writers meet at the file's
    /// lock), for the tests of concurrent changes.
    async fn second_handle(&self) -> (Arc<dyn UserRepository>, Arc<dyn AccountAdminStore>);

    /// Creates an active user `name` (e-mail `<name>@example.gov.br`, name
    /// `Full <name>`, an unusable password hash) and returns its id.
    async fn create_user(&self, name: &str) -> UserId {
        self.users()
            .create(NewUser {
                username: Username::parse(name).expect("username"),
                password_hash: "pbkdf2_sha256$1$s$h".into(),
                is_active: true,
                data: UserData { email: format!("{name}@example.gov.br"), ..UserData::default() },
                name: format!("Full {name}"),
                cpf: None,
            })
            .await
            .expect("user")
    }
}

/// Instantiates contract tests for both engines: `contract!(a, b)` in a
/// test module defines `postgres::a`, `postgres::b`, `sqlite::a` and
/// `sqlite::b`, each on a multi-threaded runtime (the concurrency tests
/// need one).
#[macro_export]
macro_rules! contract {
    ($($test:ident),* $(,)?) => {
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $test() {
                    super::$test::<$crate::Postgres>().await
                }
            )*
        }
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $test() {
                    super::$test::<$crate::Sqlite>().await
                }
            )*
        }
    };
}
