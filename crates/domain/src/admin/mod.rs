//! Rules of the administration: who may change what (staff, the CLI, a
//! host application through the user-management API), the audit trail's
//! entries, the pages of administrative lists, and the account search.

pub mod accounts;
pub mod audit;
pub mod client;
pub mod page;

pub use accounts::{AccountQuery, LoginRecord, LoginVia};
pub use audit::{Actor, AuditAction, AuditEntry, AuditFilter, AuditTarget, NewAuditEntry};
pub use client::{ClientName, ClientNameError, RedirectUris, RedirectUrisError};
pub use page::Page;
