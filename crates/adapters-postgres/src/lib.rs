//! PostgreSQL implementations of credencial's storage ports (sqlx).
//!
//! The schema lives in the workspace's `migrations/postgres/` folder and is
//! embedded into the binary by [`MIGRATOR`].

pub mod access_log_group;
pub mod account;
mod account_admin;
mod app_passwords;
pub mod audit;
mod database;
mod directory;
mod email_keys;
mod error;
mod expiry;
mod federated_links;
mod host_session_ends;
mod host_user_records;
mod host_users;
mod login_failures;
mod logout_deliveries;
mod mail;
mod oauth_clients;
mod oauth_codes;
mod paging;
mod pool_status;
mod profiles;
mod readiness;
mod refresh_tokens;
mod second_factors;
mod security_events;
mod sessions;
mod snapshots;
#[cfg(feature = "test-support")]
pub mod testing;
mod transfer;
pub mod user_lookups;
mod users;

pub use account_admin::{PgAccountAdminStore, PgLoginHistory};
pub use audit::PgAuditTrail;
pub use database::{
    connect, connect_once, ensure_database_exists, known_versions, migrate, migrate_through, parse_url, schema_status,
    DatabaseError, EMAIL_KEY_MIGRATION, MIGRATOR, SCHEMES,
};
pub use directory::PgUserDirectory;
pub use federated_links::PgFederatedLinks;
pub use host_session_ends::PgHostSessionEnds;
pub use host_user_records::PgHostUserRecords;
pub use host_users::{PgHostTable, PgHostUserStore};
pub use login_failures::PgLoginFailureLog;
pub use logout_deliveries::PgLogoutDeliveries;
pub use mail::PgMail;
pub use oauth_clients::PgOAuthClientRepository;
pub use oauth_codes::PgAuthorizationCodeStore;
pub use pool_status::PgPoolStatus;
pub use profiles::PgProfileRepository;
pub use readiness::{PgReadinessProbe, READINESS_TIMEOUT};
pub use refresh_tokens::PgRefreshTokenStore;
pub use second_factors::PgSecondFactorStore;
pub use security_events::PgSecurityEvents;
pub use sessions::PgSessionStore;
pub use snapshots::PgSnapshotStore;
pub use sqlx::PgPool;
pub use transfer::PgDataTransfer;
pub use users::PgUserRepository;
