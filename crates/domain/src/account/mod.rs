//! Rules of the citizen's own account ("Minha conta"): the entries a person
//! registers, the tax-id validation, remembered consent (grants) and the
//! access report.

pub mod access_log;
pub mod date;
pub mod entries;
pub mod fields;
pub mod grant;
pub mod registration;
pub mod tax_id;

pub use access_log::{AccessLogPage, ACCESS_LOG_PAGE_SIZE, DEFAULT_ACCESS_LOG_RETENTION_DAYS};
pub use date::IsoDate;
pub use entries::{Entry, EntryForm, EntryId, EntryKind};
pub use fields::{FieldError, FieldErrors};
pub use grant::{covers, effective_scopes, widen};
pub use registration::{AccountDetails, DetailsForm, EmailAddress, Registration, SignupForm, UniqueField};
pub use tax_id::{
    attempt_verdict, names_match, window_start, AttemptVerdict, TaxIdClaim, TaxIdMatch, MAX_VALIDATION_ATTEMPTS,
    VALIDATION_WINDOW_SECS,
};
