//! Remembered consent: which scopes a person granted to which client.

use async_trait::async_trait;
use credencial_domain::oauth::ClientId;
use credencial_domain::{ScopeSet, UserId};

use crate::error::RepositoryError;

/// One stored grant, as the authorized-applications page lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantSummary {
    /// The client.
    pub client_id: ClientId,
    /// The client's display name.
    pub client_name: String,
    /// The approved scopes (the required ones count as granted whether or
    /// not they are stored).
    pub scopes: ScopeSet,
    /// When the person first consented (Unix seconds).
    pub first_granted_at: i64,
    /// When the grant was last widened or used (Unix seconds).
    pub last_used_at: i64,
}

/// Stored grants: user × client → scopes, first granted, last used.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait GrantRepository: Send + Sync + 'static {
    /// Stores that `user` approved `approved` for `client` at `now` (Unix
    /// seconds) and returns the grant's scopes afterwards: a first grant is
    /// created; an existing one becomes the union (never narrower) and its
    /// last use is `now`. One statement: concurrent widenings, on any
    /// instance, all end up in the union. Errors: `Unexpected` (also when
    /// the user or the client does not exist).
    async fn widen(
        &self,
        user: UserId,
        client: &ClientId,
        approved: ScopeSet,
        now: i64,
    ) -> Result<ScopeSet, RepositoryError>;

    /// The scopes `user` granted to `client`; `Ok(None)` when there is no
    /// grant. Errors: `Unexpected`.
    async fn granted_scopes(&self, user: UserId, client: &ClientId) -> Result<Option<ScopeSet>, RepositoryError>;

    /// Whether `user` has a grant for `client` (one primary-key probe; the
    /// profile read folds the same condition into its statement).
    /// Errors: `Unexpected`.
    async fn is_granted(&self, user: UserId, client: &ClientId) -> Result<bool, RepositoryError>;

    /// Records a use of the grant at `now` (an authorization that skipped
    /// the consent page); `Ok(false)` when there is no grant.
    /// Errors: `Unexpected`.
    async fn mark_used(&self, user: UserId, client: &ClientId, now: i64) -> Result<bool, RepositoryError>;

    /// The user's grants with each client's name, most recently used first.
    /// Errors: `Unexpected`.
    async fn list(&self, user: UserId) -> Result<Vec<GrantSummary>, RepositoryError>;

    /// Revokes the grant of `user` for `client`: deletes it and, in the same
    /// transaction, revokes every current refresh token of the families that
    /// `client` holds for `user` (those started by its authorization codes).
    /// `Ok(false)` when there was no grant (tokens are revoked anyway).
    /// Errors: `Unexpected` (and then nothing changed).
    async fn revoke(&self, user: UserId, client: &ClientId) -> Result<bool, RepositoryError>;
}
