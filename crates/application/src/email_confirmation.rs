//! Confirmed addresses (issue 24, item 4): a link sent to the account's
//! address proves the person receives mail there. Sent at sign-up, after
//! every change of address, and when the person asks again ("reenviar");
//! valid a day, once; confirming marks the address confirmed only while it
//! is still the one the link went to (a change of address clears the mark
//! and deletes the links sent to the old one).
//!
//! What a confirmed address changes: `email_verified` in the userinfo
//! answer, and the account page's state.

use std::sync::Arc;

use credencial_domain::mail::{LinkPurpose, LinkState};
use credencial_domain::session::SessionToken;
use credencial_domain::UserId;
use credencial_ports::{Clock, Confirmation, MailStore, NewLink, UserRepository};

use crate::error::ServiceError;
use crate::mail::{MailContent, MailRenderer};

/// Where a confirmation link points (`<public URL>/conta/email/confirmar/<token>/`).
pub const CONFIRM_PATH: &str = "/conta/email/confirmar/";
/// The least time between two confirmation links of one account.
pub const CONFIRM_QUIET_SECS: i64 = 60;

/// Sends and takes address-confirmation links.
pub struct EmailConfirmationService {
    users: Arc<dyn UserRepository>,
    mail: Arc<dyn MailStore>,
    renderer: Arc<dyn MailRenderer>,
    clock: Arc<dyn Clock>,
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

impl EmailConfirmationService {
    /// Links mailed through `mail` with `renderer`'s templates, starting
    /// with `public_url` (never a request's `Host`).
    pub fn new(
        users: Arc<dyn UserRepository>,
        mail: Arc<dyn MailStore>,
        renderer: Arc<dyn MailRenderer>,
        clock: Arc<dyn Clock>,
        public_url: &str,
    ) -> Self {
        Self { users, mail, renderer, clock, public_url: public_url.trim_end_matches('/').to_owned() }
    }

    /// Sends `user` a link that confirms the account's current address,
    /// unless it is confirmed already. Errors: `Storage`, `Internal`.
    pub async fn send(&self, user: UserId) -> Result<Sent, ServiceError> {
        let Some(account) = self.users.find_summary_by_id(user).await?.filter(|a| a.is_active) else {
            return Ok(Sent::NoAddress);
        };
        if account.email.trim().is_empty() {
            return Ok(Sent::NoAddress);
        }
        if self.mail.email_verified(user).await? {
            return Ok(Sent::AlreadyConfirmed);
        }
        let now = self.clock.now();
        let purpose = LinkPurpose::EmailConfirm;
        let token = SessionToken::generate();
        let content = MailContent::EmailConfirm {
            name: account.name.clone(),
            link: format!("{}{CONFIRM_PATH}{}/", self.public_url, token.expose()),
            hours: purpose.lifetime_secs() / 3600,
            email: account.email.clone(),
        };
        let mail = self.renderer.render(&account.email, &content).map_err(ServiceError::Internal)?;
        let state = LinkState {
            purpose,
            stamp: String::new(),
            expires_at: now + purpose.lifetime_secs(),
            email: account.email.clone(),
        };
        let link = NewLink { token_hash: token.hash(), user, state };
        Ok(if self.mail.issue_link(&link, &mail, now, CONFIRM_QUIET_SECS).await? { Sent::Sent } else { Sent::TooSoon })
    }

    /// A change of `user`'s address: the links sent to the old one die,
    /// and a link goes to the new one. Errors: `Storage`, `Internal`.
    pub async fn address_changed(&self, user: UserId) -> Result<(), ServiceError> {
        self.mail.forget_links(user).await?;
        self.send(user).await?;
        Ok(())
    }

    /// Takes the link `token` (its text, from the URL). Errors: `Storage`.
    pub async fn confirm(&self, token: &str) -> Result<Confirmation, ServiceError> {
        let Some(token) = SessionToken::from_cookie(token) else { return Ok(Confirmation::NoLink) };
        Ok(self.mail.confirm_email(&token.hash(), self.clock.now()).await?)
    }

    /// Whether `user`'s address is confirmed. Errors: `Storage`.
    pub async fn is_confirmed(&self, user: UserId) -> Result<bool, ServiceError> {
        Ok(self.mail.email_verified(user).await?)
    }
}
