//! PostgreSQL adapters of the account ports ("Minha conta").

mod access_log;
mod entries;
mod grants;
mod tax_id;

pub use access_log::{PgAccessLog, APPEND as ACCESS_LOG_APPEND};
pub use entries::PgOwnEntryRepository;
pub use grants::{PgGrantRepository, GRANT_EXISTS};
pub use tax_id::PgTaxIdValidationStore;
