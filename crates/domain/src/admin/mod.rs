//! Rules of the administration: who may change what (staff, the CLI, a
//! host application through the user-management API), the audit trail's
//! entries, the pages of administrative lists, the account search, and
//! the user-management API's tokens and user rules.

pub mod accounts;
pub mod api_token;
pub mod audit;
pub mod client;
pub mod directory;
pub mod page;

pub use accounts::{
    search_key, term_place, words_count, write_term_place, AccountFilter, AccountQuery, LoginRecord, LoginVia,
    WordsPrefix, MAX_TERM_CHARS, WORDS_COUNT_WINDOW,
};
pub use api_token::{ApiPermission, ApiPermissions, ApiTokenDigest, IssuedApiToken, PresentedApiToken};
pub use audit::{Actor, AuditAction, AuditEntry, AuditFilter, AuditTarget, NewAuditEntry};
pub use client::{
    BackchannelLogoutUri, ClientName, ClientNameError, PostLogoutRedirectUris, RedirectUris, RedirectUrisError,
};
pub use directory::{DirectoryKey, DirectoryUser, PreRegistration, PreRegistrationForm};
pub use page::{KeysetPage, Page, Tally, COUNT_LIMIT};
