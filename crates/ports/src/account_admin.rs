//! Account administration's storage: the search, one account's record, the
//! audited changes a staff user or an operator makes, and the login
//! history.
//!
//! Every change takes the [`NewAuditEntry`] that records it and appends it
//! in the same transaction: no change is stored without its entry.

use async_trait::async_trait;
use credencial_domain::admin::{AccountQuery, LoginRecord, LoginVia, NewAuditEntry};
use credencial_domain::throttle::ThrottleKey;
use credencial_domain::{UserId, Username};

use crate::error::RepositoryError;
use crate::users::{AccessChange, AccountRecord, NewUser};

/// Storage of the account administration.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait AccountAdminStore: Send + Sync + 'static {
    /// Up to `limit` of the accounts `query` selects that follow the place
    /// `after` in its order (from the first without it), each with its own
    /// place: by username, or for a search by words
    /// ([`AccountFilter::Words`](credencial_domain::admin::AccountFilter::Words))
    /// by matching term and id, the place written by
    /// [`write_term_place`](credencial_domain::admin::write_term_place) (an
    /// account two of whose terms match is there twice); each read from an
    /// index range, in order. And how many rows the query selects, counted
    /// up to [`Tally::count_bound`](credencial_domain::admin::Tally::count_bound).
    /// Errors: `Unexpected`.
    async fn search<'a>(
        &self,
        query: &AccountQuery,
        after: Option<&'a str>,
        limit: u32,
    ) -> Result<(Vec<(String, AccountRecord)>, u64), RepositoryError>;

    /// The account `id`, active or not; `Ok(None)` when there is none.
    /// Errors: `Unexpected`.
    async fn find(&self, id: UserId) -> Result<Option<AccountRecord>, RepositoryError>;

    /// The account named exactly `username`; `Ok(None)` when there is none.
    /// Errors: `Unexpected`.
    async fn find_by_username(&self, username: &Username) -> Result<Option<AccountRecord>, RepositoryError>;

    /// Creates an account (staff when `staff`; its password temporary, to
    /// be changed at the next login, when `temporary`) and appends `audit`,
    /// in one transaction. Errors: `Conflict` naming the taken field
    /// (`"username"`, `"cpf"` or `"email"`) when one is taken (nothing
    /// stored); `Unexpected`.
    async fn create(
        &self,
        user: NewUser,
        staff: bool,
        temporary: bool,
        audit: &NewAuditEntry,
    ) -> Result<UserId, RepositoryError>;

    /// Lets the account `id` log in or not and appends `audit`, in one
    /// transaction. Nothing is stored (nor appended) when there is no such
    /// account (`NotFound`), or when `id` is the last active staff account
    /// and `active` is false (`LastStaff`); the check and the change are
    /// atomic, as for [`crate::UserRepository::set_staff`]. Errors:
    /// `Unexpected`.
    async fn set_active(
        &self,
        id: UserId,
        active: bool,
        audit: &NewAuditEntry,
    ) -> Result<AccessChange, RepositoryError>;

    /// Replaces the password hash of `id`, marks whether it must be changed
    /// at the next login (`temporary`), and appends `audit`, in one
    /// transaction; `Ok(false)` (nothing stored) when there is no such
    /// account. Errors: `Unexpected`.
    async fn set_password(
        &self,
        id: UserId,
        password_hash: &str,
        temporary: bool,
        audit: &NewAuditEntry,
    ) -> Result<bool, RepositoryError>;

    /// Clears the tax-id validation of `id` (its `receita_federal` scope is
    /// answered as for a registration never validated; the CPF may change
    /// again) and appends `audit`, in one transaction; `Ok(false)` (nothing
    /// stored) when there is no such account. Errors: `Unexpected`.
    async fn clear_validation(&self, id: UserId, audit: &NewAuditEntry) -> Result<bool, RepositoryError>;

    /// Forgets the failed logins counted against `keys` (an account's
    /// username keys) and appends `audit`, in one transaction; returns
    /// whether a count was forgotten. Errors: `Unexpected`.
    async fn lift_throttle(&self, keys: &[ThrottleKey], audit: &NewAuditEntry) -> Result<bool, RepositoryError>;
}

/// The history of successful logins (the pair records its own as part of
/// the refresh token it stores: [`crate::RefreshTokenStore::record_login`]).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait LoginHistory: Send + Sync + 'static {
    /// Records a login of `user` through `via`, now. Errors: `Unexpected`.
    async fn record(&self, user: UserId, via: LoginVia) -> Result<(), RepositoryError>;

    /// The `limit` most recent logins of `user`, newest first.
    /// Errors: `Unexpected`.
    async fn recent(&self, user: UserId, limit: u32) -> Result<Vec<LoginRecord>, RepositoryError>;

    /// Deletes logins before `before` (Unix seconds) and, once none of
    /// those is left, logins beyond the `keep` newest of each account:
    /// at most `limit` rows per call in all (the old ones by an index whose
    /// leading column is the time), and returns how many; the caller calls
    /// again until a call returns fewer than `limit` or the service is
    /// stopping (see the application's `purge` module). Errors:
    /// `Unexpected`.
    async fn purge(&self, before: i64, keep: u32, limit: u32) -> Result<u64, RepositoryError>;
}
