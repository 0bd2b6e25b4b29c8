//! The database and the periodic purge of what it keeps.

use secrecy::SecretString;
use serde::{Deserialize, Serialize};

/// The database and the periodic purge of what it keeps.
#[derive(Clone, Deserialize, Serialize)]
#[serde(default)]
pub struct StorageSettings {
    /// PostgreSQL URL (`DATABASE_URL`); may hold a password, never printed.
    #[serde(skip_serializing)]
    pub database_url: SecretString,
    /// Largest number of database connections per instance.
    pub database_max_connections: u32,
    /// Days an entry of the access report (who read a person's data) is
    /// kept before the periodic purge deletes it (default 1,825: 5 years).
    pub access_log_retention_days: u32,
    /// Rows one statement of the periodic purge deletes at most (default
    /// 2,000; 1 to 100,000): the purge yields between batches, and a stop
    /// waits for one batch at most.
    pub purge_batch_rows: u32,
    /// Seconds the service serves before its first purge pass (default
    /// 300; at most 86,400): a restart is not slowed by a backlog.
    pub purge_start_delay_secs: u64,
}

impl Default for StorageSettings {
    fn default() -> Self {
        Self {
            database_url: SecretString::from(crate::storage::DEFAULT_DATABASE_URL),
            database_max_connections: 10,
            access_log_retention_days: credencial_domain::account::DEFAULT_ACCESS_LOG_RETENTION_DAYS,
            purge_batch_rows: credencial_application::purge::DEFAULT_PURGE_BATCH_ROWS,
            purge_start_delay_secs: credencial_application::purge::DEFAULT_PURGE_START_DELAY_SECS,
        }
    }
}
