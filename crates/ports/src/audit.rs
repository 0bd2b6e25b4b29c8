//! The audit trail: an append-only record of every administrative change.
//!
//! Ports whose writes must be audited take the [`NewAuditEntry`] with the
//! write and append it in the same transaction (see
//! [`crate::UserRepository::set_staff`]): a change is never stored without
//! its entry, nor an entry without its change.

use async_trait::async_trait;
use credencial_domain::admin::{AuditEntry, AuditFilter, NewAuditEntry};

use crate::error::RepositoryError;

/// The audit trail: appended to and listed, never updated or deleted.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait AuditTrail: Send + Sync + 'static {
    /// Appends `entry` on its own (for an audited action that changes
    /// nothing stored, e.g. a read of the user-management API). Errors:
    /// `Unexpected` (the action must then fail).
    async fn append(&self, entry: &NewAuditEntry) -> Result<(), RepositoryError>;

    /// Up to `limit` of the entries `filter` selects older than the entry
    /// `before` (from the newest without it), newest first, through an
    /// index; and how many the filter selects, counted up to
    /// [`Tally::count_bound`](credencial_domain::admin::Tally::count_bound).
    /// Errors: `Unexpected`.
    async fn list(
        &self,
        filter: &AuditFilter,
        before: Option<i64>,
        limit: u32,
    ) -> Result<(Vec<AuditEntry>, u64), RepositoryError>;
}
