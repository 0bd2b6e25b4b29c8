//! Confirmed addresses (issue 24, item 4): a link sent to an address proves
//! the person receives mail there.
//!
//! - **Confirming the account's address**: a link goes out at sign-up and
//!   when the person (or staff) asks again ("reenviar"); valid a day, once;
//!   using it marks the address confirmed while it is still the account's.
//! - **Changing the address**: the new address gets a link (a day, once;
//!   a newer request replaces it) and the account keeps its address until
//!   the link is used. Then, in one transaction, the new address is set
//!   (confirmed), the links mailed to the old one die, and the old address
//!   gets a mail with a link that undoes the change for 7 days.
//! - **Undoing a change**: the old address is put back (confirmed: the
//!   link was opened from it), every link of the account dies, and every
//!   session and refresh token ends (whoever changed it may hold one).
//!
//! What a confirmed address changes: `email_verified` in the userinfo
//! answer and the ID token, and the account page's state.

use std::sync::Arc;

use credencial_domain::account::EmailAddress;
use credencial_domain::mail::{LinkPurpose, LinkState};
use credencial_domain::security_event::SecurityEventKind;
use credencial_domain::session::{device_summary, SessionToken};
use credencial_domain::UserId;
use credencial_ports::{
    AddressSwitch, ChangeRequest, Clock, Confirmation, MailStore, NewLink, RefreshTokenStore, StoredLink, Switched,
    UserRepository,
};

use crate::error::ServiceError;
use crate::mail::{MailContent, MailRenderer};
use crate::metrics::SessionEnd;
use crate::session::{Origin, SessionService};

/// Where a confirmation link points (`<public URL>/conta/email/confirmar/<token>/`).
pub const CONFIRM_PATH: &str = "/conta/email/confirmar/";
/// Where an undo link points (`<public URL>/conta/email/desfazer/<token>/`).
pub const UNDO_PATH: &str = "/conta/email/desfazer/";
/// The least time between two confirmation links of one account (and
/// between two change requests).
pub const CONFIRM_QUIET_SECS: i64 = 60;

/// The ports the service works through.
pub struct ConfirmationPorts {
    /// The accounts.
    pub users: Arc<dyn UserRepository>,
    /// The links and the outbox.
    pub mail: Arc<dyn MailStore>,
    /// The mails' words.
    pub renderer: Arc<dyn MailRenderer>,
    /// Refresh tokens (revoked by an undo).
    pub refresh_tokens: Arc<dyn RefreshTokenStore>,
    /// Now.
    pub clock: Arc<dyn Clock>,
}

/// Sends and takes address-confirmation, change and undo links.
pub struct EmailConfirmationService {
    ports: ConfirmationPorts,
    sessions: Arc<SessionService>,
    public_url: String,
}

impl std::fmt::Debug for EmailConfirmationService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmailConfirmationService").field("public_url", &self.public_url).finish_non_exhaustive()
    }
}

/// What a request to send a link did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    /// A link is on its way.
    Sent,
    /// The address is confirmed already.
    AlreadyConfirmed,
    /// One was sent less than [`CONFIRM_QUIET_SECS`] ago, or three are
    /// still live: nothing new was sent.
    TooSoon,
    /// The account has no address (or is gone).
    NoAddress,
}

/// What using an undo link did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Undone {
    /// The old address is back; every session and refresh token ended.
    Restored,
    /// Another account took the old address meanwhile: nothing changed.
    Taken,
    /// No such live link.
    NoLink,
}

impl EmailConfirmationService {
    /// Links mailed through `ports` starting with `public_url` (never a
    /// request's `Host`); events recorded and sessions ended through
    /// `sessions`.
    pub fn new(ports: ConfirmationPorts, sessions: Arc<SessionService>, public_url: &str) -> Self {
        Self { ports, sessions, public_url: public_url.trim_end_matches('/').to_owned() }
    }

    /// A new link token and its URL under `path`.
    fn new_link(&self, path: &str) -> (SessionToken, String) {
        let token = SessionToken::generate();
        let url = format!("{}{path}{}/", self.public_url, token.expose());
        (token, url)
    }

    /// The stored form of `token`, a link of `user` for `purpose` carrying
    /// `email`, issued at `now` (address links carry no password stamp).
    fn address_link(token: &SessionToken, user: UserId, purpose: LinkPurpose, now: i64, email: String) -> NewLink {
        let state = LinkState { purpose, stamp: String::new(), expires_at: now + purpose.lifetime_secs(), email };
        NewLink { token_hash: token.hash(), user, state }
    }

    /// Sends `user` a link that confirms the account's current address,
    /// unless it is confirmed already. Errors: `Storage`, `Internal`.
    pub async fn send(&self, user: UserId) -> Result<Sent, ServiceError> {
        let Some(account) = self.ports.users.find_summary_by_id(user).await?.filter(|a| a.is_active) else {
            return Ok(Sent::NoAddress);
        };
        if account.email.trim().is_empty() {
            return Ok(Sent::NoAddress);
        }
        if self.ports.mail.email_verified(user).await? {
            return Ok(Sent::AlreadyConfirmed);
        }
        let now = self.ports.clock.now();
        let purpose = LinkPurpose::EmailConfirm;
        let (token, link) = self.new_link(CONFIRM_PATH);
        let content = MailContent::EmailConfirm {
            name: account.name.clone(),
            link,
            hours: purpose.lifetime_secs() / 3600,
            email: account.email.clone(),
            change: false,
        };
        let mail = self.ports.renderer.render(&account.email, &content).map_err(ServiceError::Internal)?;
        let link = Self::address_link(&token, user, purpose, now, account.email);
        let issued = self.ports.mail.issue_link(&link, &mail, now, CONFIRM_QUIET_SECS).await?;
        Ok(if issued { Sent::Sent } else { Sent::TooSoon })
    }

    /// A change of `user`'s address (set at once: the account had no
    /// usable one, so there is nothing to protect): the links sent to the
    /// old one die, and a link goes to the new one. Errors: `Storage`,
    /// `Internal`.
    pub async fn address_changed(&self, user: UserId) -> Result<(), ServiceError> {
        self.ports.mail.forget_links(user).await?;
        self.send(user).await?;
        Ok(())
    }

    /// `user` asks to change the account's address to `new` (another than
    /// its current one): a link goes to `new`, and the change takes effect
    /// when it is used. A newer request replaces an older one. Errors:
    /// `UnknownUser` for a gone or inactive account; `Storage`, `Internal`.
    pub async fn request_change(&self, user: UserId, new: &EmailAddress) -> Result<ChangeRequest, ServiceError> {
        let account = self
            .ports
            .users
            .find_summary_by_id(user)
            .await?
            .filter(|a| a.is_active)
            .ok_or(ServiceError::UnknownUser)?;
        let now = self.ports.clock.now();
        let purpose = LinkPurpose::EmailChange;
        let (token, link) = self.new_link(CONFIRM_PATH);
        let content = MailContent::EmailConfirm {
            name: account.name,
            link,
            hours: purpose.lifetime_secs() / 3600,
            email: new.as_str().to_owned(),
            change: true,
        };
        let mail = self.ports.renderer.render(new.as_str(), &content).map_err(ServiceError::Internal)?;
        let link = Self::address_link(&token, user, purpose, now, new.as_str().to_owned());
        let key = new.key();
        Ok(self.ports.mail.request_change(&link, key.as_str(), &mail, now, CONFIRM_QUIET_SECS).await?)
    }

    /// The address `user` asked to change to and has not confirmed yet.
    /// Errors: `Storage`.
    pub async fn pending_change(&self, user: UserId) -> Result<Option<String>, ServiceError> {
        Ok(self.ports.mail.pending_change(user, self.ports.clock.now()).await?)
    }

    /// Drops `user`'s change request: whether there was one. Errors:
    /// `Storage`.
    pub async fn cancel_change(&self, user: UserId) -> Result<bool, ServiceError> {
        Ok(self.ports.mail.cancel_change(user).await? > 0)
    }

    /// The live link whose token hashes to `hash`, of one of `purposes`,
    /// left in place.
    async fn live_link(&self, hash: &[u8; 32], purposes: &[LinkPurpose]) -> Result<Option<StoredLink>, ServiceError> {
        let now = self.ports.clock.now();
        Ok(self
            .ports
            .mail
            .find_link(hash)
            .await?
            .filter(|l| purposes.contains(&l.state.purpose) && l.state.expires_at > now))
    }

    /// Takes the confirmation link `token` (its text, from the URL), used
    /// from `origin`: confirms the account's address, or applies the change
    /// of address it was sent for. Errors: `Storage`, `Internal`.
    pub async fn confirm(&self, token: &str, origin: &Origin) -> Result<Confirmation, ServiceError> {
        let Some(hash) = SessionToken::from_cookie(token).map(|t| t.hash()) else { return Ok(Confirmation::NoLink) };
        let purposes = [LinkPurpose::EmailConfirm, LinkPurpose::EmailChange];
        match self.live_link(&hash, &purposes).await? {
            Some(link) if link.state.purpose == LinkPurpose::EmailChange => self.apply_change(hash, link, origin).await,
            _ => Ok(self.ports.mail.confirm_email(&hash, self.ports.clock.now()).await?),
        }
    }

    /// Applies the change `link` (found by `hash`) asks for, mailing the
    /// old address its undo link.
    async fn apply_change(
        &self,
        hash: [u8; 32],
        link: StoredLink,
        origin: &Origin,
    ) -> Result<Confirmation, ServiceError> {
        let user = link.user;
        let Some(account) = self.ports.users.find_summary_by_id(user).await?.filter(|a| a.is_active) else {
            return Ok(Confirmation::NoLink);
        };
        let Some(new) = EmailAddress::parse(&link.state.email) else { return Ok(Confirmation::NoLink) };
        let now = self.ports.clock.now();
        let purpose = LinkPurpose::EmailUndo;
        let (token, url) = self.new_link(UNDO_PATH);
        let content = MailContent::EmailUndo {
            name: account.name.clone(),
            link: url,
            days: purpose.lifetime_secs() / 86_400,
            new_email: new.as_str().to_owned(),
            at: now,
            device: device_summary(origin.user_agent.as_deref()),
            place: origin.place(),
        };
        let old = account.email.clone();
        let undo = match old.trim().is_empty() {
            true => None,
            false => {
                let mail = self.ports.renderer.render(&old, &content).map_err(ServiceError::Internal)?;
                Some((old.clone(), Self::address_link(&token, user, purpose, now, old.clone()), mail))
            }
        };
        let switch = AddressSwitch {
            token_hash: hash,
            purpose: LinkPurpose::EmailChange,
            user,
            email: new.as_str().to_owned(),
            email_key: new.key().as_str().to_owned(),
            // An account without an address has no old one to check or tell.
            undo,
            now,
        };
        match self.ports.mail.switch_address(&switch).await? {
            Switched::Switched => {
                tracing::info!(user = user.0, "account address changed through its confirmation link");
                self.sessions.record_event(user, SecurityEventKind::EmailChanged, &old, Some(origin)).await?;
                Ok(Confirmation::Changed(user))
            }
            Switched::Taken => Ok(Confirmation::Taken(user)),
            Switched::NoLink => Ok(Confirmation::NoLink),
        }
    }

    /// Takes the undo link `token`, used from `origin`: the old address is
    /// back, and every session and refresh token of the account ends.
    /// Errors: `Storage`.
    pub async fn undo(&self, token: &str, origin: &Origin) -> Result<Undone, ServiceError> {
        let Some(hash) = SessionToken::from_cookie(token).map(|t| t.hash()) else { return Ok(Undone::NoLink) };
        let Some(link) = self.live_link(&hash, &[LinkPurpose::EmailUndo]).await? else { return Ok(Undone::NoLink) };
        let Some(old) = EmailAddress::parse(&link.state.email) else { return Ok(Undone::NoLink) };
        let user = link.user;
        let undone = self.ports.users.find_summary_by_id(user).await?.map(|a| a.email).unwrap_or_default();
        let switch = AddressSwitch {
            token_hash: hash,
            purpose: LinkPurpose::EmailUndo,
            user,
            email: old.as_str().to_owned(),
            email_key: old.key().as_str().to_owned(),
            undo: None,
            now: self.ports.clock.now(),
        };
        match self.ports.mail.switch_address(&switch).await? {
            Switched::Switched => {
                let revoked = self.ports.refresh_tokens.revoke_user(user).await?;
                let ended = self.sessions.end_all(user, None, SessionEnd::EmailUndo).await?;
                tracing::info!(user = user.0, revoked, ended, "change of address undone from the old address");
                self.sessions.record_event(user, SecurityEventKind::EmailChangeUndone, &undone, Some(origin)).await?;
                Ok(Undone::Restored)
            }
            Switched::Taken => Ok(Undone::Taken),
            Switched::NoLink => Ok(Undone::NoLink),
        }
    }

    /// Whether `user`'s address is confirmed. Errors: `Storage`.
    pub async fn is_confirmed(&self, user: UserId) -> Result<bool, ServiceError> {
        Ok(self.ports.mail.email_verified(user).await?)
    }
}
