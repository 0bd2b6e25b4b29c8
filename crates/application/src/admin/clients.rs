//! Registered applications (OAuth2 clients): list, register, edit, the
//! enabled scopes, PKCE, the second factor and the minimum gov.br level
//! they require of their users, the secret, deactivation. The panel's
//! `/admin/aplicativos/` and the CLI's `credencial client …` call this
//! service; the fields come validated as domain types
//! ([`ClientName`], [`RedirectUris`], [`ClientId`]).
//!
//! Every change is one repository write with its audit entry, stored in
//! the same transaction. A secret is generated here, returned once and
//! stored only as a hash (computed off the async workers); the trail
//! records that it was set, never what it is.

use std::sync::Arc;

use credencial_domain::admin::audit::SECRET_SET;
use credencial_domain::admin::client::only_optional;
use credencial_domain::admin::{
    Actor, AuditAction, AuditTarget, BackchannelLogoutUri, ClientName, NewAuditEntry, PostLogoutRedirectUris,
    RedirectUris,
};
use credencial_domain::federation::ReliabilityLevel;
use credencial_domain::oauth::{random_token_text, ClientId};
use credencial_domain::ScopeSet;
use credencial_ports::{OAuthClient, OAuthClientRepository, OAuthClientUpdate, RepositoryError};
use rand::RngCore;
use secrecy::SecretString;

use super::audit_entry;
use crate::error::ServiceError;
use crate::hashing::PasswordHasher;

/// A new application, its fields validated at the edge.
#[derive(Debug, Clone)]
pub struct NewClient {
    /// Its unique client id.
    pub client_id: ClientId,
    /// The name shown on the consent page.
    pub name: ClientName,
    /// Its exact redirect URIs.
    pub redirect_uris: RedirectUris,
    /// Where RP-initiated logout may send the browser afterwards (possibly
    /// none).
    pub post_logout_redirect_uris: PostLogoutRedirectUris,
    /// Confidential (gets a secret) or public (PKCE instead, no secret).
    pub confidential: bool,
    /// Whether a confidential application must use PKCE too.
    pub require_pkce: bool,
    /// The lowest gov.br level its users must log in with, if any.
    pub minimum_govbr_level: Option<ReliabilityLevel>,
    /// Optional scopes to enable (required ones are dropped: they are
    /// always granted).
    pub scopes: ScopeSet,
}

/// What registering an application did.
#[derive(Debug)]
pub enum CreateOutcome {
    /// Registered; a confidential application's secret, to show once.
    Created {
        /// The stored record.
        client: OAuthClient,
        /// The secret (confidential applications only).
        secret: Option<SecretString>,
    },
    /// The client id is taken: nothing was stored.
    IdTaken,
}

/// Changes to an application; what is `None` (or `false`) stays as it is.
#[derive(Debug, Clone, Default)]
pub struct ClientChanges {
    /// A new name.
    pub name: Option<ClientName>,
    /// Redirect URIs replacing the whole list.
    pub redirect_uris: Option<RedirectUris>,
    /// Post-logout redirect URIs replacing the whole list.
    pub post_logout_redirect_uris: Option<PostLogoutRedirectUris>,
    /// Optional scopes replacing the enabled ones (required ones are
    /// dropped).
    pub scopes: Option<ScopeSet>,
    /// A new PKCE requirement.
    pub require_pkce: Option<bool>,
    /// A new second-factor requirement for the application's users.
    pub requires_second_factor: Option<bool>,
    /// A new minimum gov.br level for the application's users
    /// (`Some(None)`: none).
    pub minimum_govbr_level: Option<Option<ReliabilityLevel>>,
    /// Give a confidential application a new secret (the old one stops
    /// working at once).
    pub rotate_secret: bool,
    /// Deactivate (`false`) or reactivate (`true`).
    pub active: Option<bool>,
    /// A new back-channel logout URI (`Some(None)`: the application is no
    /// longer told when sessions end).
    pub backchannel_logout_uri: Option<Option<BackchannelLogoutUri>>,
}

impl ClientChanges {
    /// Whether nothing would change.
    pub fn is_empty(&self) -> bool {
        self.name.is_none()
            && self.redirect_uris.is_none()
            && self.post_logout_redirect_uris.is_none()
            && self.scopes.is_none()
            && self.require_pkce.is_none()
            && self.requires_second_factor.is_none()
            && self.minimum_govbr_level.is_none()
            && !self.rotate_secret
            && self.active.is_none()
            && self.backchannel_logout_uri.is_none()
    }

    /// The action the audit trail records: the specific one when only
    /// that changes (scopes, secret, activation), else an update.
    fn action(&self) -> AuditAction {
        let only = |this: bool| {
            this && [
                self.name.is_some(),
                self.redirect_uris.is_some(),
                self.post_logout_redirect_uris.is_some(),
                self.scopes.is_some(),
                self.require_pkce.is_some(),
                self.requires_second_factor.is_some(),
                self.minimum_govbr_level.is_some(),
                self.rotate_secret,
                self.active.is_some(),
                self.backchannel_logout_uri.is_some(),
            ]
            .into_iter()
            .filter(|changed| *changed)
            .count()
                == 1
        };
        match self.active {
            Some(false) if only(true) => AuditAction::ClientDeactivate,
            Some(true) if only(true) => AuditAction::ClientReactivate,
            _ if only(self.scopes.is_some()) => AuditAction::ClientScopes,
            _ if only(self.rotate_secret) => AuditAction::ClientSecretRotate,
            _ => AuditAction::ClientUpdate,
        }
    }
}

/// What a change did: the updated record and, after a rotation, the new
/// secret to show once.
#[derive(Debug)]
pub struct Changed {
    /// The record as stored now.
    pub client: OAuthClient,
    /// The new secret, when it was rotated.
    pub secret: Option<SecretString>,
}

/// The administration of registered applications.
pub struct ClientAdminService {
    clients: Arc<dyn OAuthClientRepository>,
    hasher: PasswordHasher,
}

impl std::fmt::Debug for ClientAdminService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientAdminService").finish_non_exhaustive()
    }
}

impl ClientAdminService {
    /// A service over the client registry, hashing secrets on `hasher`.
    pub fn new(clients: Arc<dyn OAuthClientRepository>, hasher: PasswordHasher) -> Self {
        Self { clients, hasher }
    }

    /// Every application, active or not, by client id. Errors: `Storage`.
    pub async fn list(&self) -> Result<Vec<OAuthClient>, ServiceError> {
        Ok(self.clients.list().await?)
    }

    /// The application `client_id`, active or not; `Ok(None)` when there
    /// is none. Errors: `Storage`.
    pub async fn find(&self, client_id: &ClientId) -> Result<Option<OAuthClient>, ServiceError> {
        Ok(self.clients.find(client_id).await?)
    }

    /// Registers `new`, active, as `actor`; a confidential application
    /// gets a secret, returned once. Errors: `Internal` (hashing),
    /// `Storage` (nothing stored).
    pub async fn create(&self, actor: &Actor, new: NewClient) -> Result<CreateOutcome, ServiceError> {
        let secret = new.confidential.then(generate_client_secret);
        let secret_hash = match &secret {
            Some(secret) => Some(self.hasher.hash(secret.clone()).await?),
            None => None,
        };
        let client = OAuthClient {
            client_id: new.client_id,
            name: new.name.into_string(),
            secret_hash,
            redirect_uris: new.redirect_uris.into_vec(),
            post_logout_redirect_uris: new.post_logout_redirect_uris.into_vec(),
            confidential: new.confidential,
            require_pkce: new.require_pkce,
            requires_second_factor: false,
            minimum_govbr_level: new.minimum_govbr_level,
            enabled_scopes: only_optional(new.scopes),
            is_active: true,
            created_at: 0,
            backchannel_logout_uri: None,
        };
        let mut entry = audit_entry(actor, AuditAction::ClientCreate, AuditTarget::Client(client.client_id.clone()))
            .with("name", &client.name)
            .with("confidential", client.confidential.to_string())
            .with("redirect_uris", client.redirect_uris.join(" "))
            .with("enabled_scopes", client.enabled_scopes.to_scope_string())
            .with("require_pkce", client.require_pkce.to_string());
        if !client.post_logout_redirect_uris.is_empty() {
            entry = entry.with("post_logout_redirect_uris", client.post_logout_redirect_uris.join(" "));
        }
        if let Some(level) = client.minimum_govbr_level {
            entry = entry.with(MINIMUM_LEVEL, level.name());
        }
        if secret.is_some() {
            entry = entry.with("secret", SECRET_SET);
        }
        match self.clients.create(client.clone(), &entry).await {
            Ok(()) => {}
            Err(RepositoryError::Conflict(_)) => return Ok(CreateOutcome::IdTaken),
            Err(e) => return Err(e.into()),
        }
        // The stored time, for the page that shows the new application.
        let client = self.clients.find(&client.client_id).await.ok().flatten().unwrap_or(client);
        Ok(CreateOutcome::Created { client, secret })
    }

    /// Applies `changes` to the application `client_id` as `actor`, in one
    /// write with one audit entry (the changed fields and their new
    /// values; for a secret, only that it was set). `Ok(None)` when there
    /// is no such application (nothing written). Errors: `Invalid` when
    /// nothing would change or a public application's secret is to be
    /// rotated; `Internal` (hashing); `Storage` (nothing changed).
    pub async fn change(
        &self,
        actor: &Actor,
        client_id: &ClientId,
        changes: ClientChanges,
    ) -> Result<Option<Changed>, ServiceError> {
        if changes.is_empty() {
            return Err(ServiceError::Invalid("nothing to change".into()));
        }
        let mut secret = None;
        let mut secret_hash = None;
        if changes.rotate_secret {
            let Some(current) = self.clients.find(client_id).await? else {
                return Ok(None);
            };
            if !current.confidential {
                return Err(ServiceError::Invalid(format!("client {client_id} is public: it has no secret to rotate")));
            }
            let new_secret = generate_client_secret();
            secret_hash = Some(self.hasher.hash(new_secret.clone()).await?);
            secret = Some(new_secret);
        }
        let entry = change_entry(actor, client_id, &changes);
        let update = OAuthClientUpdate {
            name: changes.name.map(ClientName::into_string),
            redirect_uris: changes.redirect_uris.map(RedirectUris::into_vec),
            post_logout_redirect_uris: changes.post_logout_redirect_uris.map(PostLogoutRedirectUris::into_vec),
            enabled_scopes: changes.scopes.map(only_optional),
            require_pkce: changes.require_pkce,
            requires_second_factor: changes.requires_second_factor,
            minimum_govbr_level: changes.minimum_govbr_level,
            secret_hash,
            is_active: changes.active,
            backchannel_logout_uri: changes
                .backchannel_logout_uri
                .map(|uri| uri.map(BackchannelLogoutUri::into_string)),
        };
        let updated = self.clients.update(client_id, update, &entry).await?;
        Ok(updated.map(|client| Changed { client, secret }))
    }
}

/// The audit trail's name of the minimum gov.br level.
const MINIMUM_LEVEL: &str = "minimum_govbr_level";
/// What the trail records when the minimum level is removed.
const NO_LEVEL: &str = "nenhum";
/// The audit trail's name of the back-channel logout URI.
const BACKCHANNEL_LOGOUT_URI: &str = "backchannel_logout_uri";
/// What the trail records when the back-channel logout URI is removed.
const NO_URI: &str = "nenhuma";

/// The audit entry of `changes` to `client_id`.
fn change_entry(actor: &Actor, client_id: &ClientId, changes: &ClientChanges) -> NewAuditEntry {
    let mut entry = audit_entry(actor, changes.action(), AuditTarget::Client(client_id.clone()));
    if let Some(name) = &changes.name {
        entry = entry.with("name", name.as_str());
    }
    if let Some(uris) = &changes.redirect_uris {
        entry = entry.with("redirect_uris", uris.as_slice().join(" "));
    }
    if let Some(uris) = &changes.post_logout_redirect_uris {
        entry = entry.with("post_logout_redirect_uris", uris.as_slice().join(" "));
    }
    if let Some(scopes) = changes.scopes {
        entry = entry.with("enabled_scopes", only_optional(scopes).to_scope_string());
    }
    if let Some(pkce) = changes.require_pkce {
        entry = entry.with("require_pkce", pkce.to_string());
    }
    if let Some(required) = changes.requires_second_factor {
        entry = entry.with("requires_second_factor", required.to_string());
    }
    if let Some(level) = changes.minimum_govbr_level {
        entry = entry.with(MINIMUM_LEVEL, level.map_or(NO_LEVEL, ReliabilityLevel::name));
    }
    if changes.rotate_secret {
        entry = entry.with("secret", SECRET_SET);
    }
    if let Some(active) = changes.active {
        entry = entry.with("is_active", active.to_string());
    }
    if let Some(uri) = &changes.backchannel_logout_uri {
        entry = entry.with(BACKCHANNEL_LOGOUT_URI, uri.as_ref().map_or(NO_URI, BackchannelLogoutUri::as_str));
    }
    entry
}

/// 32 bytes from the thread-local CSPRNG, base64url: 256 bits.
fn generate_client_secret() -> SecretString {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    SecretString::from(random_token_text(&bytes))
}

#[cfg(test)]
mod tests;
