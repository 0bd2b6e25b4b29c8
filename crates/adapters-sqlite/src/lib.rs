//! SQLite implementations of credencial's storage ports (sqlx): the
//! embedded default, one file (and the access log's beside it) and no
//! database server.
//!
//! The schema lives in the workspace's `migrations/sqlite/` folder and is
//! embedded into the binary by [`MIGRATOR`]. It means what
//! `migrations/postgres/` means; docs/architecture.md ("Storage") says how
//! the types are kept.

pub mod account;
mod account_admin;
mod app_passwords;
pub mod audit;
mod database;
mod directory;
mod email_keys;
mod error;
mod federated_links;
pub mod group_commit;
mod host_session_ends;
mod host_user_records;
mod host_users;
mod json;
mod login_failures;
mod logout_deliveries;
mod mail;
mod oauth_clients;
mod oauth_codes;
mod pool_status;
mod profiles;
mod readiness;
mod refresh_tokens;
mod second_factors;
mod security_events;
mod sessions;
mod snapshots;
#[cfg(any(test, feature = "test-support"))]
pub mod testing;
mod transfer;
pub mod user_lookups;
mod users;

pub use account_admin::{SqliteAccountAdminStore, SqliteLoginHistory};
pub use audit::SqliteAuditTrail;
pub use database::{
    access_log_path, connect, ensure_file, known_versions, lock_instance, migrate, migrate_through, parse_url,
    schema_status, DatabaseError, InstanceLock, SqliteDb, ACCESS_LOG_FILE_MIGRATION, ACCESS_LOG_SCHEMA, BUSY_TIMEOUT,
    EMAIL_KEY_MIGRATION, MIGRATOR, SCHEME,
};
pub use directory::SqliteUserDirectory;
pub use federated_links::SqliteFederatedLinks;
pub use host_session_ends::SqliteHostSessionEnds;
pub use host_user_records::SqliteHostUserRecords;
pub use host_users::{SqliteHostTable, SqliteHostUserStore};
pub use login_failures::SqliteLoginFailureLog;
pub use logout_deliveries::SqliteLogoutDeliveries;
pub use mail::SqliteMail;
pub use oauth_clients::SqliteOAuthClientRepository;
pub use oauth_codes::SqliteAuthorizationCodeStore;
pub use pool_status::SqlitePoolStatus;
pub use profiles::SqliteProfileRepository;
pub use readiness::SqliteReadinessProbe;
pub use refresh_tokens::SqliteRefreshTokenStore;
pub use second_factors::SqliteSecondFactorStore;
pub use security_events::SqliteSecurityEvents;
pub use sessions::SqliteSessionStore;
pub use snapshots::SqliteSnapshotStore;
pub use transfer::SqliteDataTransfer;
pub use users::SqliteUserRepository;
