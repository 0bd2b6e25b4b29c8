//! Rules of the administration: who may change what (staff, the CLI, a
//! host application through the user-management API), the audit trail's
//! entries, and the pages of administrative lists.

pub mod audit;
pub mod client;
pub mod page;

pub use audit::{Actor, AuditAction, AuditEntry, AuditFilter, AuditTarget, NewAuditEntry};
pub use client::{ClientName, ClientNameError, RedirectUris, RedirectUrisError};
pub use page::Page;
