//! Use cases of the administration. The panel (`/admin/`), the CLI and the
//! user-management API call these services, never the repositories: the
//! rules (CPF check digits, password rules, what a deactivation revokes)
//! and the audit trail live here once.
//!
//! Every change appends an audit entry made by [`audit_entry`], stored by
//! the port in the same transaction as the change.

pub mod accounts;
pub mod api_tokens;
pub mod clients;
pub mod directory;
pub mod staff;

use credencial_domain::admin::{Actor, AuditAction, AuditTarget, NewAuditEntry};

use crate::request_context;

pub use accounts::{
    AccountAdminPorts, AccountAdminService, AccountFields, AccountPage, AccountView, NewAccount, TakenField,
    TemporaryAccountOutcome, TemporaryPassword,
};
pub use api_tokens::{ApiAccessChange, ApiTokenService};
pub use clients::{Changed, ClientAdminService, ClientChanges, CreateOutcome, NewClient};
pub use directory::{ApiCaller, PreRegistrationOutcome, UserDirectoryService};
pub use staff::{AuditPage, StaffService, AUDIT_PAGE_SIZE};

/// An audit entry of `actor` doing `action` to `target`, in the current
/// request (if any): add the changed fields with [`NewAuditEntry::with`].
pub fn audit_entry(actor: &Actor, action: AuditAction, target: AuditTarget) -> NewAuditEntry {
    NewAuditEntry::new(actor.clone(), action, target)
        .in_request(request_context::current().map(|id| id.as_str().to_owned()))
}
