//! The user-management API's tokens: issued per application by a staff
//! user in the panel or an operator at the CLI, shown once, audited.

use std::sync::Arc;

use credencial_domain::admin::{Actor, ApiPermissions, AuditAction, AuditTarget, IssuedApiToken};
use credencial_domain::oauth::ClientId;
use credencial_ports::{ApiTokenState, UserDirectory};
use rand::RngCore;
use secrecy::SecretString;

use super::audit_entry;
use crate::error::ServiceError;

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
}
