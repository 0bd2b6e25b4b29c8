//! The user-management API's tokens: issued per application by a staff
//! user in the panel or an operator at the CLI, shown once, audited; and
//! the application's API access itself (its permissions, and whether it
//! may get OAuth2 tokens for itself with `client_credentials`).

use std::sync::Arc;

use credencial_domain::admin::{Actor, ApiPermissions, AuditAction, AuditTarget, IssuedApiToken};
use credencial_domain::oauth::ClientId;
use credencial_ports::{ApiTokenState, UserDirectory};
use rand::RngCore;
use secrecy::SecretString;

use super::audit_entry;
use crate::error::ServiceError;

/// What [`ApiTokenService::set_access`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiAccessChange {
    /// Stored and audited.
    Saved,
    /// There is no such application; nothing was written.
    UnknownClient,
    /// `client_credentials` was asked for a public client (which cannot
    /// prove who it is); nothing was written.
    PublicClient,
}

/// Issues API tokens and tells which an application has.
pub struct ApiTokenService {
    directory: Arc<dyn UserDirectory>,
}

impl std::fmt::Debug for ApiTokenService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiTokenService").finish_non_exhaustive()
    }
}

impl ApiTokenService {
    /// A service storing tokens in `directory`.
    pub fn new(directory: Arc<dyn UserDirectory>) -> Self {
        Self { directory }
    }

    /// The API access of `client` (its permissions, whether it has a
    /// token); `Ok(None)` when there is no such application. Errors:
    /// `Storage`.
    pub async fn state(&self, client: &ClientId) -> Result<Option<ApiTokenState>, ServiceError> {
        Ok(self.directory.api_token_state(client).await?)
    }

    /// Issues a new API token for `client` with `permissions`, as `actor`,
    /// replacing the old one at once; the token is answered once and only
    /// its digest is stored. The audit entry records the permissions, never
    /// the token. `Ok(None)` (nothing written) when there is no such
    /// application. Errors: `Storage` (nothing written).
    pub async fn issue(
        &self,
        actor: &Actor,
        client: &ClientId,
        permissions: ApiPermissions,
    ) -> Result<Option<SecretString>, ServiceError> {
        let mut lookup = [0u8; 8];
        let mut secret = [0u8; 32];
        let mut rng = rand::rngs::OsRng;
        rng.fill_bytes(&mut lookup);
        rng.fill_bytes(&mut secret);
        let token = IssuedApiToken::from_random(lookup, secret);
        let entry = audit_entry(actor, AuditAction::ClientApiToken, AuditTarget::Client(client.clone()))
            .with("api_permissions", permissions.to_string())
            .with("api_token", credencial_domain::admin::audit::SECRET_SET);
        let stored = self.directory.set_api_token(client, token.lookup(), token.digest(), permissions, &entry).await?;
        if !stored {
            return Ok(None);
        }
        tracing::info!(client = client.as_str(), permissions = %permissions, "API token issued");
        Ok(Some(SecretString::from(token.text().to_owned())))
    }

    /// Sets the API permissions of `client` (what its static token and its
    /// own tokens may do) and whether it may get tokens for itself with
    /// `client_credentials` (confidential clients only), as `actor`,
    /// audited with both values. Errors: `Storage` (nothing written).
    pub async fn set_access(
        &self,
        actor: &Actor,
        client: &ClientId,
        permissions: ApiPermissions,
        client_credentials: bool,
    ) -> Result<ApiAccessChange, ServiceError> {
        let Some(state) = self.directory.api_token_state(client).await? else {
            return Ok(ApiAccessChange::UnknownClient);
        };
        if client_credentials && !state.confidential {
            return Ok(ApiAccessChange::PublicClient);
        }
        let entry = audit_entry(actor, AuditAction::ClientApiAccess, AuditTarget::Client(client.clone()))
            .with("api_permissions", permissions.to_string())
            .with("client_credentials", if client_credentials { "sim" } else { "não" });
        if !self.directory.set_api_access(client, permissions, client_credentials, &entry).await? {
            return Ok(ApiAccessChange::UnknownClient);
        }
        tracing::info!(client = client.as_str(), permissions = %permissions, client_credentials, "API access changed");
        Ok(ApiAccessChange::Saved)
    }
}

#[cfg(test)]
mod tests {
    use credencial_domain::admin::{ApiPermission, PresentedApiToken};
    use credencial_ports::{MockUserDirectory, RepositoryError};
    use secrecy::ExposeSecret;

    use super::*;

    fn client() -> ClientId {
        ClientId::parse("demo-host").expect("valid")
    }

    #[tokio::test]
    async fn an_issued_token_is_stored_as_its_digest_and_audited_without_it() {
        let seen = Arc::new(std::sync::Mutex::new(None));
        let mut directory = MockUserDirectory::new();
        let keep = Arc::clone(&seen);
        directory
            .expect_set_api_token()
            .withf(|client, _, _, permissions, entry| {
                client.as_str() == "demo-host"
                    && *permissions == ApiPermissions::NONE.with(ApiPermission::UsersRead)
                    && entry.action == AuditAction::ClientApiToken
                    && entry.target == AuditTarget::Client(ClientId::parse("demo-host").expect("valid"))
                    && entry.changes[0] == ("api_permissions".to_owned(), "users:read".to_owned())
            })
            .times(1)
            .returning(move |_, lookup, digest, _, entry| {
                *keep.lock().expect("lock") = Some((lookup.to_owned(), digest.clone(), entry.clone()));
                Ok(true)
            });
        let service = ApiTokenService::new(Arc::new(directory));
        let actor = Actor::Cli { os_user: "root".into() };
        let token = service
            .issue(&actor, &client(), ApiPermissions::NONE.with(ApiPermission::UsersRead))
            .await
            .expect("issued")
            .expect("client exists");
        let (lookup, digest, entry) = seen.lock().expect("lock").clone().expect("stored");
        let presented = PresentedApiToken::parse(token.expose_secret()).expect("token shape");
        assert_eq!(presented.lookup(), lookup);
        assert!(presented.matches(Some(&digest)));
        assert!(!format!("{entry:?}").contains(token.expose_secret()));
    }

    #[tokio::test]
    async fn an_unknown_application_gets_no_token() {
        let mut directory = MockUserDirectory::new();
        directory.expect_set_api_token().returning(|_, _, _, _, _| Ok(false));
        let service = ApiTokenService::new(Arc::new(directory));
        let issued = service.issue(&Actor::Cli { os_user: "root".into() }, &client(), ApiPermissions::NONE).await;
        assert!(matches!(issued, Ok(None)));
    }

    #[tokio::test]
    async fn a_storage_failure_issues_nothing() {
        let mut directory = MockUserDirectory::new();
        directory.expect_set_api_token().returning(|_, _, _, _, _| Err(RepositoryError::Unexpected("down".into())));
        let service = ApiTokenService::new(Arc::new(directory));
        let issued = service.issue(&Actor::Cli { os_user: "root".into() }, &client(), ApiPermissions::NONE).await;
        assert!(matches!(issued, Err(ServiceError::Storage(_))));
    }

    fn state(confidential: bool) -> ApiTokenState {
        ApiTokenState {
            name: "Demo".into(),
            permissions: ApiPermissions::NONE,
            has_token: false,
            client_credentials: false,
            confidential,
            is_active: true,
        }
    }

    #[tokio::test]
    async fn client_credentials_is_allowed_to_a_confidential_client_and_audited_with_the_permissions() {
        let mut directory = MockUserDirectory::new();
        directory.expect_api_token_state().returning(|_| Ok(Some(state(true))));
        directory
            .expect_set_api_access()
            .withf(|client, permissions, allowed, entry| {
                client.as_str() == "demo-host"
                    && *permissions == ApiPermissions::NONE.with(ApiPermission::UsersRead)
                    && *allowed
                    && entry.action == AuditAction::ClientApiAccess
                    && entry.changes
                        == [
                            ("api_permissions".to_owned(), "users:read".to_owned()),
                            ("client_credentials".to_owned(), "sim".to_owned()),
                        ]
            })
            .times(1)
            .returning(|_, _, _, _| Ok(true));
        let service = ApiTokenService::new(Arc::new(directory));
        let actor = Actor::Cli { os_user: "root".into() };
        let read = ApiPermissions::NONE.with(ApiPermission::UsersRead);
        assert_eq!(service.set_access(&actor, &client(), read, true).await.expect("ok"), ApiAccessChange::Saved);
    }

    #[tokio::test]
    async fn a_public_or_unknown_client_is_not_allowed_client_credentials_and_nothing_is_written() {
        let mut directory = MockUserDirectory::new();
        let mut answers = vec![Some(state(false)), None].into_iter();
        directory.expect_api_token_state().times(2).returning(move |_| Ok(answers.next().flatten()));
        directory.expect_set_api_access().never();
        let service = ApiTokenService::new(Arc::new(directory));
        let actor = Actor::Cli { os_user: "root".into() };
        let read = ApiPermissions::NONE.with(ApiPermission::UsersRead);
        assert_eq!(service.set_access(&actor, &client(), read, true).await.expect("ok"), ApiAccessChange::PublicClient);
        assert_eq!(
            service.set_access(&actor, &client(), read, true).await.expect("ok"),
            ApiAccessChange::UnknownClient
        );
    }
}
