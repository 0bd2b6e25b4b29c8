//! The audit trail: an append-only record of every administrative change.
//!
//! Ports whose writes must be audited take the [`NewAuditEntry`] with the
//! write and append it in the same transaction (see
//! [`crate::UserRepository::set_staff`]): a change is never stored without
//! its entry, nor an entry without its change.

use async_trait::async_trait;
use credencial_domain::admin::{AuditEntry, AuditFilter, NewAuditEntry, Page};

use crate::error::RepositoryError;

/// The audit trail: appended to and listed, never updated or deleted.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait AuditTrail: Send + Sync + 'static {
    /// Appends `entry` on its own (for an audited action that changes
    /// nothing stored, e.g. a read of the user-management API). Errors:
    /// `Unexpected` (the action must then fail).
    async fn append(&self, entry: &NewAuditEntry) -> Result<(), RepositoryError>;

    /// One page of the entries `filter` selects, newest first, and how many
    /// it selects in all. Errors: `Unexpected`.
    async fn list(&self, filter: &AuditFilter, page: Page) -> Result<(Vec<AuditEntry>, u64), RepositoryError>;
}
