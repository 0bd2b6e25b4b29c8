//! Ports of the citizen's own account ("Minha conta"): own entries,
//! remembered consent (grants), the access report and tax-id validation.

pub mod access_log;
pub mod entries;
pub mod grants;
pub mod tax_id;

pub use access_log::{AccessLog, AccessLogEntry, AccessLogRow};
pub use entries::{OwnEntry, OwnEntryRepository};
pub use grants::{GrantRepository, GrantSummary};
pub use tax_id::{CpfChange, TaxIdValidationStore};

#[cfg(any(test, feature = "mocks"))]
pub use access_log::MockAccessLog;
#[cfg(any(test, feature = "mocks"))]
pub use entries::MockOwnEntryRepository;
#[cfg(any(test, feature = "mocks"))]
pub use grants::MockGrantRepository;
#[cfg(any(test, feature = "mocks"))]
pub use tax_id::MockTaxIdValidationStore;
