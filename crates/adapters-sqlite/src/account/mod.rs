//! The person's own account: consent, own entries, the access report and
//! tax-id validation.

pub(crate) mod access_log;
mod entries;
mod grants;
mod tax_id;

pub use access_log::SqliteAccessLog;
pub(crate) use access_log::{append_if_grant_unchanged, append_on as append_access_log_on};
pub use entries::SqliteOwnEntryRepository;
pub use grants::SqliteGrantRepository;
pub use tax_id::SqliteTaxIdValidationStore;
