//! The user-management API's storage: the applications' API tokens and the
//! users the API reads and pre-registers.

use async_trait::async_trait;
use credencial_domain::account::UniqueField;
use credencial_domain::admin::{
    ApiPermissions, ApiTokenDigest, DirectoryKey, DirectoryUser, NewAuditEntry, Page, PreRegistration,
};
use credencial_domain::oauth::ClientId;
use credencial_domain::Cpf;

use crate::error::RepositoryError;

/// The application an API token's lookup part names, with what checks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiClientAccess {
    /// The application.
    pub client_id: ClientId,
    /// The stored digest of its token's secret part.
    pub digest: ApiTokenDigest,
    /// What its token may do.
    pub permissions: ApiPermissions,
}

/// An application's API access as the panel shows it (never the token),
/// and as the token endpoint and the user-management API check an
/// application's own (`client_credentials`) tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiTokenState {
    /// The application's name.
    pub name: String,
    /// Its API permissions: what its static token and its own
    /// `client_credentials` tokens may do.
    pub permissions: ApiPermissions,
    /// Whether a token was issued.
    pub has_token: bool,
    /// Whether it may get tokens for itself (`client_credentials`).
    pub client_credentials: bool,
    /// Whether it is a confidential client (only those may be allowed
    /// `client_credentials`).
    pub confidential: bool,
    /// Whether it is active (a deactivated application's tokens are
    /// refused).
    pub is_active: bool,
}

/// What [`UserDirectory::pre_register`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreRegistered {
    /// A pre-registered account was created (and its audit entry appended).
    Created(DirectoryUser),
    /// An account with the CPF exists already; nothing was written.
    Existing(DirectoryUser),
    /// Nothing was written: another account (without the CPF) has these
    /// values (the e-mail address, or the CPF as its username).
    Taken(Vec<UniqueField>),
}

/// Storage behind the user-management API.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait UserDirectory: Send + Sync + 'static {
    /// The application whose API token has the lookup part `lookup` (one
    /// indexed read); `Ok(None)` when none has. Errors: `Unexpected`.
    async fn find_api_client(&self, lookup: &str) -> Result<Option<ApiClientAccess>, RepositoryError>;

    /// The API access of `client_id`; `Ok(None)` when there is no such
    /// application. Errors: `Unexpected`.
    async fn api_token_state(&self, client_id: &ClientId) -> Result<Option<ApiTokenState>, RepositoryError>;

    /// Replaces the API token of `client_id` (its lookup part and digest)
    /// and its permissions, and appends `audit`, in one transaction;
    /// `Ok(false)` (nothing written) when there is no such application.
    /// Errors: `Unexpected`.
    async fn set_api_token(
        &self,
        client_id: &ClientId,
        lookup: &str,
        digest: &ApiTokenDigest,
        permissions: ApiPermissions,
        audit: &NewAuditEntry,
    ) -> Result<bool, RepositoryError>;

    /// Sets the API permissions of `client_id` and whether it may get
    /// tokens for itself (`client_credentials`; the caller allows it for
    /// confidential clients only, and storage refuses it for others), and
    /// appends `audit`, in one transaction; `Ok(false)` (nothing written)
    /// when there is no such application. Errors: `Unexpected`.
    async fn set_api_access(
        &self,
        client_id: &ClientId,
        permissions: ApiPermissions,
        client_credentials: bool,
        audit: &NewAuditEntry,
    ) -> Result<bool, RepositoryError>;

    /// The user `key` names (a CPF, or an e-mail address ignoring case);
    /// `Ok(None)` when none. Errors: `Unexpected`.
    async fn find_user(&self, key: &DirectoryKey) -> Result<Option<DirectoryUser>, RepositoryError>;

    /// Page `page` of the users whose CPF is among `cpfs`, ordered by CPF.
    /// Errors: `Unexpected`.
    async fn list_by_cpfs(&self, cpfs: &[Cpf], page: Page) -> Result<Vec<DirectoryUser>, RepositoryError>;

    /// Creates the pre-registered account of `user` (username: its CPF;
    /// password: `unusable_password`, which starts with `!`) and appends
    /// `audit` in the same transaction, unless an account has the CPF
    /// (answered as it is) or another one the e-mail address or the CPF as
    /// username. Of concurrent pre-registrations of one CPF exactly one
    /// creates. Errors: `Unexpected`.
    async fn pre_register(
        &self,
        user: &PreRegistration,
        unusable_password: &str,
        audit: &NewAuditEntry,
    ) -> Result<PreRegistered, RepositoryError>;
}
