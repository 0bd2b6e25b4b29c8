//! The storage engine, chosen by `database_url`'s scheme: `sqlite://` (the
//! embedded default, one file) or `postgres://` (a server, for more than
//! one instance). Everything above this module sees only the ports.

use std::sync::Arc;
use std::time::Duration;

use credencial_adapters_postgres as pg;
use credencial_adapters_sqlite as sqlite;
use credencial_ports::account::{AccessLog, GrantRepository, OwnEntryRepository, TaxIdValidationStore};
use credencial_ports::DataTransfer;
use credencial_ports::{
    AccountAdminStore, AppPasswordStore, AuditTrail, AuthorizationCodeStore, FederatedLinkStore, HostSessionEnds,
    HostUserRecords, HostUserStore, LoginFailureLog, LoginHistory, LogoutDeliveries, MailStore, OAuthClientRepository,
    PasskeyStore, PoolStatus, ProfileRepository, ReadinessProbe, RefreshTokenStore, SchemaStatus, SecondFactorStore,
    SecurityEvents, SessionStore, SnapshotStore, UserDirectory, UserRepository,
};

pub use sqlite::InstanceLock;

/// The URL used when `database_url` is not set: a file in the working
/// directory.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://credencial.db";

/// The engines `database_url` may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// `sqlite://path`: the embedded store.
    Sqlite,
    /// `postgres://…` or `postgresql://…`.
    Postgres,
}

impl Engine {
    /// The engine `url` names, with a message that says which schemes work.
    pub fn of(url: &str) -> Result<Self, String> {
        let scheme = url.split_once(':').map(|(scheme, _)| scheme.to_ascii_lowercase()).unwrap_or_default();
        if scheme == sqlite::SCHEME {
            Ok(Self::Sqlite)
        } else if pg::SCHEMES.contains(&scheme.as_str()) {
            Ok(Self::Postgres)
        } else if scheme.is_empty() || scheme.contains('/') {
            Err("expected sqlite://path/to/file.db or postgres://user@host:port/database".into())
        } else {
            Err(format!("unsupported database URL scheme `{scheme}`: use sqlite:// or postgres://"))
        }
    }

    /// Checks `url` for its engine without connecting.
    pub fn check(url: &str) -> Result<Self, String> {
        let engine = Self::of(url)?;
        match engine {
            Self::Sqlite => sqlite::parse_url(url).map(|_| engine).map_err(|e| e.to_string()),
            Self::Postgres => pg::parse_url(url).map(|_| engine).map_err(|e| e.to_string()),
        }
    }
}

/// An open database of either engine.
#[derive(Debug, Clone)]
pub enum Database {
    /// A PostgreSQL connection pool.
    Postgres(pg::PgPool),
    /// The SQLite file's writer and readers.
    Sqlite(sqlite::SqliteDb),
}

impl Database {
    /// Creates what `url` names if it does not exist yet (the PostgreSQL
    /// database, or the SQLite file with mode 0600); returns whether it
    /// did.
    pub async fn create_if_missing(url: &str) -> anyhow::Result<bool> {
        Ok(match Engine::check(url).map_err(anyhow::Error::msg)? {
            Engine::Postgres => pg::ensure_database_exists(url).await?,
            Engine::Sqlite => sqlite::ensure_file(&sqlite::parse_url(url)?)?,
        })
    }

    /// Opens `url`: a pool of at most `max_connections` on PostgreSQL; on
    /// SQLite the writer and as many readers. An unreachable server or an
    /// unopenable file is reported at once.
    pub async fn connect(url: &str, max_connections: u32, acquire_timeout: Duration) -> anyhow::Result<Self> {
        Ok(match Engine::check(url).map_err(anyhow::Error::msg)? {
            Engine::Postgres => Self::Postgres(pg::connect(url, max_connections, acquire_timeout).await?),
            Engine::Sqlite => Self::Sqlite(sqlite::connect(url, max_connections, acquire_timeout).await?),
        })
    }

    /// The engine.
    pub fn engine(&self) -> Engine {
        match self {
            Self::Postgres(_) => Engine::Postgres,
            Self::Sqlite(_) => Engine::Sqlite,
        }
    }

    /// What the log says the service stores in: `SQLite file <absolute
    /// path>`, or `PostgreSQL` (never the URL: it may hold a password).
    pub fn describe(&self) -> String {
        match self {
            Self::Postgres(_) => "PostgreSQL".to_owned(),
            Self::Sqlite(db) => {
                let path = db.path().canonicalize().unwrap_or_else(|_| db.path().to_owned());
                format!("SQLite file {}", path.display())
            }
        }
    }

    /// Applies every pending migration of the engine's own folder.
    pub async fn migrate(&self) -> anyhow::Result<()> {
        match self {
            Self::Postgres(pool) => pg::migrate(pool).await?,
            Self::Sqlite(db) => sqlite::migrate(db).await?,
        }
        Ok(())
    }

    /// The migrations this build embeds for the engine, oldest first.
    pub fn known_versions(&self) -> Vec<i64> {
        match self {
            Self::Postgres(_) => pg::known_versions(),
            Self::Sqlite(_) => sqlite::known_versions(),
        }
    }

    /// How the database's migrations compare with this build's.
    pub async fn schema_status(&self) -> anyhow::Result<SchemaStatus> {
        Ok(match self {
            Self::Postgres(pool) => pg::schema_status(pool).await?,
            Self::Sqlite(db) => sqlite::schema_status(db).await?,
        })
    }

    /// Closes the pools; every connection finishes first.
    pub async fn close(&self) {
        match self {
            Self::Postgres(pool) => pool.close().await,
            Self::Sqlite(db) => db.close().await,
        }
    }
}

/// Takes the SQLite file's instance lock for a serving process (`serve`,
/// `demo`): a second instance on the same file is refused with a message
/// that points to PostgreSQL. `None` on PostgreSQL, where any number of
/// instances may serve.
pub fn lock_instance(url: &str) -> anyhow::Result<Option<InstanceLock>> {
    Ok(match Engine::check(url).map_err(anyhow::Error::msg)? {
        Engine::Sqlite => Some(sqlite::lock_instance(url)?),
        Engine::Postgres => None,
    })
}

/// Every storage port, on one database.
#[derive(Clone)]
pub struct Storage {
    /// User accounts and credentials.
    pub users: Arc<dyn UserRepository>,
    /// Profiles and the profile read.
    pub profiles: Arc<dyn ProfileRepository>,
    /// Durable scope snapshots.
    pub snapshots: Arc<dyn SnapshotStore>,
    /// Refresh-token state.
    pub refresh_tokens: Arc<dyn RefreshTokenStore>,
    /// Registered OAuth2 clients.
    pub clients: Arc<dyn OAuthClientRepository>,
    /// Authorization codes.
    pub codes: Arc<dyn AuthorizationCodeStore>,
    /// Brute-force windows.
    pub login_failures: Arc<dyn LoginFailureLog>,
    /// The readiness probe.
    pub readiness: Arc<dyn ReadinessProbe>,
    /// The pools' occupation, for the metrics.
    pub pool_status: Arc<dyn PoolStatus>,
    /// The audit trail.
    pub audit: Arc<dyn AuditTrail>,
    /// Account administration.
    pub account_admin: Arc<dyn AccountAdminStore>,
    /// Recent logins.
    pub login_history: Arc<dyn LoginHistory>,
    /// Browser sessions.
    pub sessions: Arc<dyn SessionStore>,
    /// Second factors.
    pub second_factors: Arc<dyn SecondFactorStore>,
    /// Passkeys and their ceremonies.
    pub passkeys: Arc<dyn PasskeyStore>,
    /// Application passwords.
    pub app_passwords: Arc<dyn AppPasswordStore>,
    /// The accounts' links to upstream identity providers.
    pub federated_links: Arc<dyn FederatedLinkStore>,
    /// People's security activity.
    pub security_events: Arc<dyn SecurityEvents>,
    /// The mail outbox and the links mails carry.
    pub mail: Arc<dyn MailStore>,
    /// Back-channel logout's outbox.
    pub logout_deliveries: Arc<dyn LogoutDeliveries>,
    /// The client component's record of back-channel logouts.
    pub host_session_ends: Arc<dyn HostSessionEnds>,
    /// The user-management API's directory.
    pub directory: Arc<dyn UserDirectory>,
    /// The client component's host user table.
    pub host_users: Arc<dyn HostUserStore>,
    /// Host user records, as read back.
    pub host_user_records: Arc<dyn HostUserRecords>,
    /// Remembered consent.
    pub grants: Arc<dyn GrantRepository>,
    /// A person's own entries.
    pub own_entries: Arc<dyn OwnEntryRepository>,
    /// The access report.
    pub access_log: Arc<dyn AccessLog>,
    /// Tax-id validation.
    pub tax_id: Arc<dyn TaxIdValidationStore>,
    /// Whole tables, for `export` and `import`.
    pub transfer: Arc<dyn DataTransfer>,
    /// The database the ports are on.
    pub database: Database,
}

/// Builds [`Storage`] from one adapter crate's types: `$new(x)` wraps each.
macro_rules! storage_on {
    ($handle:expr, $database:expr, { $($field:ident: $ty:path),* $(,)? }) => {
        Storage { $($field: Arc::new(<$ty>::new($handle.clone())),)* database: $database }
    };
}

impl Storage {
    /// Every port on `database`.
    pub fn on(database: Database) -> Self {
        match &database {
            Database::Postgres(pool) => storage_on!(pool, database.clone(), {
                users: pg::PgUserRepository,
                profiles: pg::PgProfileRepository,
                snapshots: pg::PgSnapshotStore,
                refresh_tokens: pg::PgRefreshTokenStore,
                clients: pg::PgOAuthClientRepository,
                codes: pg::PgAuthorizationCodeStore,
                login_failures: pg::PgLoginFailureLog,
                readiness: pg::PgReadinessProbe,
                pool_status: pg::PgPoolStatus,
                audit: pg::PgAuditTrail,
                account_admin: pg::PgAccountAdminStore,
                login_history: pg::PgLoginHistory,
                sessions: pg::PgSessionStore,
                second_factors: pg::PgSecondFactorStore,
                passkeys: pg::PgSecondFactorStore,
                app_passwords: pg::PgSecondFactorStore,
                federated_links: pg::PgFederatedLinks,
                security_events: pg::PgSecurityEvents,
                mail: pg::PgMail,
                logout_deliveries: pg::PgLogoutDeliveries,
                host_session_ends: pg::PgHostSessionEnds,
                directory: pg::PgUserDirectory,
                host_users: pg::PgHostUserStore,
                host_user_records: pg::PgHostUserRecords,
                grants: pg::account::PgGrantRepository,
                own_entries: pg::account::PgOwnEntryRepository,
                access_log: pg::account::PgAccessLog,
                tax_id: pg::account::PgTaxIdValidationStore,
                transfer: pg::PgDataTransfer,
            }),
            Database::Sqlite(db) => storage_on!(db, database.clone(), {
                users: sqlite::SqliteUserRepository,
                profiles: sqlite::SqliteProfileRepository,
                snapshots: sqlite::SqliteSnapshotStore,
                refresh_tokens: sqlite::SqliteRefreshTokenStore,
                clients: sqlite::SqliteOAuthClientRepository,
                codes: sqlite::SqliteAuthorizationCodeStore,
                login_failures: sqlite::SqliteLoginFailureLog,
                readiness: sqlite::SqliteReadinessProbe,
                pool_status: sqlite::SqlitePoolStatus,
                audit: sqlite::SqliteAuditTrail,
                account_admin: sqlite::SqliteAccountAdminStore,
                login_history: sqlite::SqliteLoginHistory,
                sessions: sqlite::SqliteSessionStore,
                second_factors: sqlite::SqliteSecondFactorStore,
                passkeys: sqlite::SqliteSecondFactorStore,
                app_passwords: sqlite::SqliteSecondFactorStore,
                federated_links: sqlite::SqliteFederatedLinks,
                security_events: sqlite::SqliteSecurityEvents,
                mail: sqlite::SqliteMail,
                logout_deliveries: sqlite::SqliteLogoutDeliveries,
                host_session_ends: sqlite::SqliteHostSessionEnds,
                directory: sqlite::SqliteUserDirectory,
                host_users: sqlite::SqliteHostUserStore,
                host_user_records: sqlite::SqliteHostUserRecords,
                grants: sqlite::account::SqliteGrantRepository,
                own_entries: sqlite::account::SqliteOwnEntryRepository,
                access_log: sqlite::account::SqliteAccessLog,
                tax_id: sqlite::account::SqliteTaxIdValidationStore,
                transfer: sqlite::SqliteDataTransfer,
            }),
        }
    }

    /// Opens `url` and puts every port on it.
    pub async fn connect(url: &str, max_connections: u32, acquire_timeout: Duration) -> anyhow::Result<Self> {
        Ok(Self::on(Database::connect(url, max_connections, acquire_timeout).await?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scheme_picks_the_engine_and_others_are_named() {
        assert_eq!(Engine::check("sqlite://credencial.db"), Ok(Engine::Sqlite));
        assert_eq!(Engine::check("sqlite:///var/lib/credencial/c.db"), Ok(Engine::Sqlite));
        assert_eq!(Engine::check("postgres://u@h/db"), Ok(Engine::Postgres));
        assert_eq!(Engine::check("PostgreSQL://u@h/db"), Ok(Engine::Postgres));
        assert_eq!(
            Engine::check("mysql://u:p@h/db"),
            Err("unsupported database URL scheme `mysql`: use sqlite:// or postgres://".into())
        );
        assert!(Engine::check("sqlite::memory:").is_err(), "an in-memory database would lose everything at exit");
        assert!(Engine::check("db.example:5432").is_err());
    }
}
