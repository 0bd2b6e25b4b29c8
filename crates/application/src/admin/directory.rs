//! The user-management API (compatible with the Sabiá API): a host
//! application, authenticated by its static API token or by its own OAuth2
//! token (`client_credentials`), reads users and pre-registers them.
//!
//! A token that is missing, malformed or wrong is refused and counts as one
//! failure of the caller's address under the login form's per-address
//! limit; while the address is limited every call from it is refused
//! before the token is looked at. A known token without the permission a
//! call needs is refused (and the refusal audited). Every answered call
//! appends an audit entry with the application as actor and the CPF
//! masked.

use std::sync::Arc;

use credencial_domain::account::{FieldErrors, UniqueField};
use credencial_domain::admin::directory::{DIRECTORY_PAGE_SIZE, MAX_LISTED_CPFS, UNUSABLE_PASSWORD_PREFIX};
use credencial_domain::admin::{
    Actor, ApiPermission, ApiPermissions, AuditAction, AuditTarget, DirectoryKey, DirectoryUser, Page, PreRegistration,
    PreRegistrationForm, PresentedApiToken,
};
use credencial_domain::oauth::{remaining_permissions, ClientId};
use credencial_domain::throttle::ClientAddress;
use credencial_domain::Cpf;
use credencial_ports::{AuditTrail, PreRegistered, UserDirectory};
use rand::distributions::{Alphanumeric, DistString};

use super::audit_entry;
use crate::error::ServiceError;
use crate::throttle::LoginThrottle;
use crate::tokens::TokenIssuer;

/// An application whose API token was accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiCaller {
    /// The application.
    pub client_id: ClientId,
    /// What its token may do.
    pub permissions: ApiPermissions,
}

impl ApiCaller {
    fn actor(&self) -> Actor {
        Actor::Application(self.client_id.clone())
    }
}

/// How a pre-registration ended (its failures are `Err`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreRegistrationOutcome {
    /// The account was created.
    Created(DirectoryUser),
    /// An account with the CPF exists; it is answered as it is.
    Existing(DirectoryUser),
    /// The form was refused (nothing written): these fields.
    Invalid(FieldErrors),
}

/// DRF's message for a wrong or missing token (the clients of the
/// original service read it).
pub const MSG_INVALID_TOKEN: &str = "Invalid token.";

/// The user-management API's use cases.
pub struct UserDirectoryService {
    directory: Arc<dyn UserDirectory>,
    trail: Arc<dyn AuditTrail>,
    throttle: LoginThrottle,
    /// Verifies the applications' own OAuth2 tokens; without it only
    /// static API tokens are accepted.
    machine_tokens: Option<Arc<TokenIssuer>>,
}

impl std::fmt::Debug for UserDirectoryService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserDirectoryService").finish_non_exhaustive()
    }
}

impl UserDirectoryService {
    /// A service over `directory`, auditing in `trail`, counting wrong
    /// tokens under `throttle`'s per-address limit.
    pub fn new(directory: Arc<dyn UserDirectory>, trail: Arc<dyn AuditTrail>, throttle: LoginThrottle) -> Self {
        Self { directory, trail, throttle, machine_tokens: None }
    }

    /// The service that also accepts the applications' own OAuth2 tokens
    /// (`client_credentials`), verified by `issuer`.
    pub fn with_machine_tokens(mut self, issuer: Arc<TokenIssuer>) -> Self {
        self.machine_tokens = Some(issuer);
        self
    }

    /// The application whose API token is `token` (the text after
    /// `Token `), called from `from`. Errors: `Throttled` while the address
    /// is limited (the token is not looked at); `InvalidCredentials` for a
    /// missing, malformed or wrong token, or the token of a deactivated
    /// application (one failure recorded for the address); `Storage`.
    pub async fn authenticate(
        &self,
        token: Option<&str>,
        from: Option<ClientAddress>,
    ) -> Result<ApiCaller, ServiceError> {
        self.throttle.check_address(from).await?;
        let presented = token.and_then(PresentedApiToken::parse);
        let access = match &presented {
            Some(p) => self.directory.find_api_client(p.lookup()).await?,
            None => None,
        };
        let accepted = presented.as_ref().is_some_and(|p| p.matches(access.as_ref().map(|a| &a.digest)));
        match access {
            Some(access) if accepted => Ok(ApiCaller { client_id: access.client_id, permissions: access.permissions }),
            _ => self.refuse_token(from).await,
        }
    }

    /// The application whose own OAuth2 access token (`client_credentials`,
    /// the text after `Bearer `) is `token`, called from `from`, with the
    /// permissions of the token's `scope` that the application still has.
    /// The token must verify with the provider's key pair (none is accepted
    /// without one), be an `oauth_machine` token (a token that speaks for a
    /// person is refused), and its application must still be
    /// active and allowed the grant: the panel's change takes effect at
    /// once, not when the token expires (one primary-key read). Errors: as
    /// [`authenticate`](Self::authenticate).
    pub async fn authenticate_machine(
        &self,
        token: Option<&str>,
        from: Option<ClientAddress>,
    ) -> Result<ApiCaller, ServiceError> {
        self.throttle.check_address(from).await?;
        // Without the provider's key pair a machine token would be signed
        // with the secret every SUAP-side API shares: none is accepted.
        let claims = match (&self.machine_tokens, token) {
            (Some(issuer), Some(token)) if issuer.has_id_token_key() => issuer.decode_client_lane(token).ok(),
            _ => None,
        };
        let client = claims.as_ref().and_then(|c| c.machine_client().ok()).and_then(|c| ClientId::parse(c).ok());
        let state = match &client {
            Some(client) => self.directory.api_token_state(client).await?,
            None => None,
        };
        match (client, claims, state) {
            (Some(client_id), Some(claims), Some(state)) if state.is_active && state.client_credentials => {
                let permissions = remaining_permissions(claims.scope.as_deref(), state.permissions);
                Ok(ApiCaller { client_id, permissions })
            }
            _ => self.refuse_token(from).await,
        }
    }

    /// Refuses a missing or wrong token: one failure for the address.
    async fn refuse_token(&self, from: Option<ClientAddress>) -> Result<ApiCaller, ServiceError> {
        self.throttle.record_address_failure(from).await?;
        tracing::info!("user-management API call refused: missing or wrong token");
        Err(ServiceError::InvalidCredentials)
    }

    /// Refuses (and audits the refusal) unless `caller` has `permission`.
    async fn require(&self, caller: &ApiCaller, permission: ApiPermission) -> Result<(), ServiceError> {
        if caller.permissions.contains(permission) {
            return Ok(());
        }
        let entry = audit_entry(&caller.actor(), AuditAction::ApiRefused, AuditTarget::None)
            .with("permission", permission.name());
        self.trail.append(&entry).await?;
        Err(ServiceError::Forbidden("You do not have permission to perform this action.".into()))
    }

    /// The user `key` names (a CPF or an e-mail address); `Ok(None)` when
    /// none (a key that is neither names none). Needs `users:read`.
    /// Audited as `ApiUserRead`. Errors: `Forbidden`; `Storage`.
    pub async fn get(&self, caller: &ApiCaller, key: &str) -> Result<Option<DirectoryUser>, ServiceError> {
        self.require(caller, ApiPermission::UsersRead).await?;
        let key = DirectoryKey::parse(key);
        let user = match &key {
            Some(key) => self.directory.find_user(key).await?,
            None => None,
        };
        let target = user.as_ref().map_or(AuditTarget::None, |u| AuditTarget::User(u.username.clone()));
        let by = match &key {
            Some(DirectoryKey::Cpf(cpf)) => cpf.masked(),
            Some(DirectoryKey::Email(_)) => "e-mail".into(),
            None => "inválido".into(),
        };
        let entry = audit_entry(&caller.actor(), AuditAction::ApiUserRead, target)
            .with("chave", by)
            .with("encontrado", if user.is_some() { "sim" } else { "não" });
        self.trail.append(&entry).await?;
        Ok(user)
    }

    /// Page `page` (from 1; 0 is the first) of the users whose CPF is in
    /// the comma-separated `cpfs`, [`DIRECTORY_PAGE_SIZE`] a page, ordered
    /// by CPF. Entries that are no valid CPF match no one and are skipped.
    /// Needs `users:read`. Audited as `ApiUserList` (how many CPFs were
    /// asked, the page, how many were found). Errors: `Forbidden`;
    /// `Invalid` for more than [`MAX_LISTED_CPFS`] entries; `Storage`.
    pub async fn list(&self, caller: &ApiCaller, cpfs: &str, page: u32) -> Result<Vec<DirectoryUser>, ServiceError> {
        self.require(caller, ApiPermission::UsersRead).await?;
        let asked: Vec<&str> = cpfs.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
        if asked.len() > MAX_LISTED_CPFS {
            return Err(ServiceError::Invalid(format!("Informe no máximo {MAX_LISTED_CPFS} CPFs por consulta.")));
        }
        let mut valid: Vec<Cpf> = asked.iter().filter_map(|raw| Cpf::parse(raw).ok()).collect();
        valid.sort_by(|a, b| a.as_str().cmp(b.as_str()));
        valid.dedup();
        let page = Page::new(page, DIRECTORY_PAGE_SIZE);
        let users = if valid.is_empty() { Vec::new() } else { self.directory.list_by_cpfs(&valid, page).await? };
        let entry = audit_entry(&caller.actor(), AuditAction::ApiUserList, AuditTarget::None)
            .with("cpfs", asked.len().to_string())
            .with("pagina", page.number().to_string())
            .with("encontrados", users.len().to_string());
        self.trail.append(&entry).await?;
        Ok(users)
    }

    /// Pre-registers the person of `form`: an account with no usable
    /// password (the person claims it at sign-up with the same CPF and
    /// e-mail), or the existing account with the CPF. Needs
    /// `users:create`. Audited as `ApiUserCreate` (in the account's
    /// transaction) or `ApiUserExisting`. Errors: `Forbidden`; `Storage`.
    pub async fn create(
        &self,
        caller: &ApiCaller,
        form: PreRegistrationForm<'_>,
    ) -> Result<PreRegistrationOutcome, ServiceError> {
        self.require(caller, ApiPermission::UsersCreate).await?;
        let registration = match PreRegistration::parse(form) {
            Ok(r) => r,
            Err(errors) => return Ok(PreRegistrationOutcome::Invalid(errors)),
        };
        let actor = caller.actor();
        let created =
            audit_entry(&actor, AuditAction::ApiUserCreate, AuditTarget::User(registration.cpf.as_str().into()))
                .with("cpf", registration.cpf.masked())
                .with("email", registration.email.as_str())
                .with("nome", registration.nome.as_str())
                .with("genero", registration.genero.as_str())
                .with("data_de_nascimento", registration.data_de_nascimento.as_str());
        let unusable = format!("{UNUSABLE_PASSWORD_PREFIX}{}", Alphanumeric.sample_string(&mut rand::thread_rng(), 40));
        let mut outcome = self.directory.pre_register(&registration, &unusable, &created).await;
        if matches!(outcome, Err(credencial_ports::RepositoryError::Conflict(_))) {
            // A value was taken and freed between two statements: once more.
            outcome = self.directory.pre_register(&registration, &unusable, &created).await;
        }
        match outcome? {
            PreRegistered::Created(user) => {
                tracing::info!(client = caller.client_id.as_str(), "user pre-registered through the API");
                Ok(PreRegistrationOutcome::Created(user))
            }
            PreRegistered::Existing(user) => {
                let entry = audit_entry(&actor, AuditAction::ApiUserExisting, AuditTarget::User(user.username.clone()))
                    .with("cpf", registration.cpf.masked());
                self.trail.append(&entry).await?;
                Ok(PreRegistrationOutcome::Existing(user))
            }
            PreRegistered::Taken(fields) => {
                let mut errors = FieldErrors::new();
                for field in fields {
                    match field {
                        UniqueField::Email => errors.push("email", UniqueField::Email.taken_message()),
                        UniqueField::Cpf | UniqueField::Username => {
                            errors.push("cpf", "Este CPF é o nome de usuário de outra conta.");
                        }
                    }
                }
                Ok(PreRegistrationOutcome::Invalid(errors))
            }
        }
    }
}

#[cfg(test)]
mod tests;
