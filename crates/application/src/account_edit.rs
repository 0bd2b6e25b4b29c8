//! The person changes their own account: the overview's details (name,
//! e-mail, avatar) and the password (`/conta/senha/`).
//!
//! An e-mail change answers whether an address is taken, so, like the
//! sign-up, it runs under the per-address limit and a taken address counts
//! as a failure of the address. A wrong current password counts against
//! the account's username and the address, as a wrong password at the login
//! form does. A password change revokes every refresh token of the account
//! and, by changing the password stamp, ends every login session opened
//! before it; the browser that changed it gets a new session.

use std::sync::Arc;

use credencial_domain::account::{AccountDetails, EmailAddress, FieldErrors, UniqueField};
use credencial_domain::session::AuthMethod;
use credencial_domain::throttle::Subject;
use credencial_domain::{check_new_password, AccountIdentifiers, UserId, Username};
use credencial_ports::{ChangeRequest, DetailsUpdate, RefreshTokenStore, UserRepository};
use secrecy::{ExposeSecret, SecretString};

use crate::email_confirmation::EmailConfirmationService;
use crate::error::ServiceError;
use crate::metrics::SessionEnd;
use crate::session::{Origin, SessionService, SignedSession};
use crate::tokens::TokenService;
use credencial_domain::security_event::SecurityEventKind;

/// Message of a wrong current password.
pub const MSG_SENHA_ATUAL: &str = "A senha atual não confere.";

/// How a details change ended (its failures are `Err`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DetailsOutcome {
    /// The details were stored.
    Saved,
    /// The name and avatar were stored; the new address takes effect once
    /// confirmed through the link just sent to it.
    ChangePending,
    /// The name and avatar were stored; a change of address was asked for
    /// less than a minute ago, so no link was sent for this one.
    ChangeTooSoon,
    /// Nothing was stored: these fields were refused.
    Refused(FieldErrors),
}

/// How a password change ended (its failures are `Err`).
#[derive(Debug)]
pub enum PasswordOutcome {
    /// The password was changed: every refresh token of the account was
    /// revoked (`revoked` of them) and this new session replaces the
    /// browser's.
    Changed {
        /// The browser's new session.
        session: SignedSession,
        /// How many refresh tokens were revoked.
        revoked: u64,
    },
    /// Nothing was changed: these fields were refused (`password_atual`,
    /// `password`).
    Refused(FieldErrors),
}

/// The account's own changes.
pub struct AccountEditService {
    users: Arc<dyn UserRepository>,
    refresh_tokens: Arc<dyn RefreshTokenStore>,
    tokens: Arc<TokenService>,
    sessions: Arc<SessionService>,
    confirmations: Option<Arc<EmailConfirmationService>>,
}

impl std::fmt::Debug for AccountEditService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccountEditService").finish_non_exhaustive()
    }
}

impl AccountEditService {
    /// A service over the user and refresh-token stores, hashing and
    /// limiting through `tokens` and ending and opening sessions through
    /// `sessions`.
    pub fn new(
        users: Arc<dyn UserRepository>,
        refresh_tokens: Arc<dyn RefreshTokenStore>,
        tokens: Arc<TokenService>,
        sessions: Arc<SessionService>,
    ) -> Self {
        Self { users, refresh_tokens, tokens, sessions, confirmations: None }
    }

    /// The same service, changing an account's address only once the new
    /// one is confirmed through a link sent to it.
    pub fn with_confirmations(mut self, confirmations: Arc<EmailConfirmationService>) -> Self {
        self.confirmations = Some(confirmations);
        self
    }

    /// Stores the details of `user` (checked at the edge), sent from
    /// `origin`. When the service sends mail and the account has an
    /// address, a new address is not stored: a link goes to it, and the
    /// change takes effect when the link is used
    /// ([`EmailConfirmationService::confirm`]). Without mail (or without an
    /// address to protect) it is stored at once, unconfirmed, and recorded
    /// in the security activity. Errors: `Throttled` while the address is
    /// limited (nothing is stored); `UnknownUser` when the account is gone
    /// or inactive; `Storage`, `Internal`.
    pub async fn update_details(
        &self,
        user: UserId,
        details: &AccountDetails,
        origin: &Origin,
    ) -> Result<DetailsOutcome, ServiceError> {
        let from = origin.address;
        let throttle = self.tokens.throttle();
        throttle.check_address(from).await?;
        let before = self.users.find_summary_by_id(user).await?.filter(|a| a.is_active);
        let Some(before) = before else { return Err(ServiceError::UnknownUser) };
        let current = EmailAddress::parse(&before.email);
        let new_address = current.as_ref().is_none_or(|c| c.key() != details.email.key());
        if let (true, Some(current), Some(confirmations)) = (new_address, &current, &self.confirmations) {
            // The address stays until the new one is confirmed.
            let change = match confirmations.request_change(user, &details.email).await? {
                ChangeRequest::Taken => {
                    throttle.record_address_failure(from).await?;
                    return Ok(DetailsOutcome::Refused(UniqueField::errors(&[UniqueField::Email])));
                }
                ChangeRequest::Sent => DetailsOutcome::ChangePending,
                ChangeRequest::TooSoon => DetailsOutcome::ChangeTooSoon,
            };
            let kept = AccountDetails { email: current.clone(), ..details.clone() };
            return match self.users.update_details(user, &kept).await? {
                DetailsUpdate::Updated => Ok(change),
                DetailsUpdate::EmailTaken | DetailsUpdate::NotFound => Err(ServiceError::UnknownUser),
            };
        }
        match self.users.update_details(user, details).await? {
            DetailsUpdate::Updated => {
                tracing::info!(user = user.0, "account details changed");
                if new_address {
                    if !before.email.trim().is_empty() {
                        self.sessions
                            .record_event(user, SecurityEventKind::EmailChanged, &before.email, Some(origin))
                            .await?;
                    }
                    // Links mailed to the old address must not outlive it;
                    // the new one is asked to confirm.
                    if let Some(confirmations) = &self.confirmations {
                        confirmations.address_changed(user).await?;
                    }
                }
                Ok(DetailsOutcome::Saved)
            }
            DetailsUpdate::EmailTaken => {
                throttle.record_address_failure(from).await?;
                Ok(DetailsOutcome::Refused(UniqueField::errors(&[UniqueField::Email])))
            }
            DetailsUpdate::NotFound => Err(ServiceError::UnknownUser),
        }
    }

    /// Replaces the password of `user` with `new` (which must pass the
    /// password rules for the account's identifiers) after checking
    /// `current`, sent from `origin`; then revokes every refresh token of
    /// the account, ends every session of it and opens a new one. Errors: `Throttled` while the
    /// account's username or the address is limited (before any hashing);
    /// `UnknownUser` when the account is gone or inactive; `Storage`,
    /// `Internal`.
    pub async fn change_password(
        &self,
        user: UserId,
        current: SecretString,
        new: SecretString,
        origin: &Origin,
    ) -> Result<PasswordOutcome, ServiceError> {
        let from = origin.address;
        let account = self.users.find_summary_by_id(user).await?.filter(|a| a.is_active);
        let credentials = self.users.find_credentials_by_id(user).await?.filter(|c| c.is_active);
        let (Some(account), Some(credentials)) = (account, credentials) else {
            return Err(ServiceError::UnknownUser);
        };
        let ids = AccountIdentifiers {
            username: &account.username,
            cpf: account.cpf.as_deref().unwrap_or(""),
            email: &account.email,
            name: &account.name,
        };
        let mut errors = FieldErrors::new();
        if let Err(e) = check_new_password(new.expose_secret(), ids) {
            errors.push("password", e.mensagem());
            return Ok(PasswordOutcome::Refused(errors));
        }
        let throttle = self.tokens.throttle();
        let hasher = self.tokens.credentials().hasher();
        // The account's one count (see `CredentialCheck::check_login`).
        let name = Username::parse(&credentials.username).ok();
        let subject = name.as_ref().map_or(Subject::Unknown(&credentials.username), Subject::Account);
        let stored = Some(credentials.password_hash.into_inner());
        if !throttle.verify(hasher, subject, from, stored, current, true).await? {
            errors.push("password_atual", MSG_SENHA_ATUAL);
            return Ok(PasswordOutcome::Refused(errors));
        }
        let hash = hasher.hash(new).await?;
        self.sessions.record_event(user, SecurityEventKind::PasswordChanged, "", Some(origin)).await?;
        let revoked = replace_password(&*self.users, &*self.refresh_tokens, &self.sessions, user, &hash).await?;
        tracing::info!(user = user.0, revoked, "password changed by its owner; other sessions ended");
        let session = self.sessions.open(user, &[AuthMethod::Password], origin).await?;
        Ok(PasswordOutcome::Changed { session, revoked })
    }
}

/// Stores `hash` as `user`'s password and ends what the old one opened:
/// every refresh token and every session (the asking browser's too). They
/// end before the new hash is stored (should storing it fail, the person
/// only logs in again, and may simply retry) and again after it (a login
/// with the old password in between opened what the first pass missed).
/// How many refresh tokens were revoked. Errors: `UnknownUser` when the
/// account is gone; `Storage`.
pub(crate) async fn replace_password(
    users: &dyn UserRepository,
    refresh_tokens: &dyn RefreshTokenStore,
    sessions: &SessionService,
    user: UserId,
    hash: &str,
) -> Result<u64, ServiceError> {
    let before = refresh_tokens.revoke_user(user).await?;
    sessions.end_all(user, None, SessionEnd::PasswordChange).await?;
    if !users.set_password_hash(user, hash).await? {
        return Err(ServiceError::UnknownUser);
    }
    let after = refresh_tokens.revoke_user(user).await?;
    sessions.end_all(user, None, SessionEnd::PasswordChange).await?;
    Ok(before + after)
}
