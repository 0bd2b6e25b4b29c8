//! A person's security activity: what [`SecurityEvents`] keeps, recorded
//! by the session, second-factor, passkey and password use cases, listed
//! on `/conta/seguranca/`, purged after [`SECURITY_EVENTS_DAYS`].
//!
//! A change that cannot be recorded fails (the person must be able to see
//! every change to their factors, password and sessions). With
//! [`Notices`], the person is also told by mail of every change and of a
//! login from a device not seen among their recent logins (issue 24).

use std::fmt;
use std::sync::Arc;

use credencial_domain::security_event::{notice_for, SecurityEventKind};
use credencial_domain::session::device_summary;
use credencial_domain::UserId;
use credencial_ports::{Clock, MailStore, SecurityEvent, SecurityEvents, UserRepository};

use crate::error::ServiceError;
use crate::mail::{MailContent, MailRenderer};
use crate::session::Origin;

/// How long events are kept: a year.
pub const SECURITY_EVENTS_DAYS: i64 = 365;
/// The most events the security page lists.
pub const LISTED_EVENTS: u32 = 30;

/// Records and lists security events, and tells the person by mail.
pub struct SecurityLog {
    events: Arc<dyn SecurityEvents>,
    clock: Arc<dyn Clock>,
    notices: Option<Notices>,
}

/// What telling a person by mail needs: their address and name, the
/// outbox, the templates and where the links start.
pub struct Notices {
    /// The accounts (address and name).
    pub users: Arc<dyn UserRepository>,
    /// The outbox.
    pub mail: Arc<dyn MailStore>,
    /// The templates.
    pub renderer: Arc<dyn MailRenderer>,
    /// The configured public URL, without a trailing slash.
    pub public_url: String,
}

impl fmt::Debug for SecurityLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecurityLog").finish_non_exhaustive()
    }
}

impl SecurityLog {
    /// Events in `events`, stamped by `clock`.
    pub fn new(events: Arc<dyn SecurityEvents>, clock: Arc<dyn Clock>) -> Self {
        Self { events, clock, notices: None }
    }

    /// The same log, also telling the person by mail
    /// ([`credencial_domain::security_event::notice_for`]).
    pub fn with_notices(mut self, notices: Notices) -> Self {
        self.notices = Some(notices);
        self
    }

    /// Records `kind` for `user`, with `detail` (a login's `amr`, a
    /// passkey's name) and, when known, where it came from (device summary
    /// and approximate place: never the whole address or `User-Agent`).
    /// Errors: `Storage`.
    pub async fn record(
        &self,
        user: UserId,
        kind: SecurityEventKind,
        detail: &str,
        origin: Option<&Origin>,
    ) -> Result<(), ServiceError> {
        let event = SecurityEvent {
            at: self.clock.now(),
            kind: kind.code().to_owned(),
            detail: detail.to_owned(),
            device: origin.map(|o| device_summary(o.user_agent.as_deref())).unwrap_or_default(),
            place: origin.map(Origin::place).unwrap_or_default(),
        };
        let told = match (&self.notices, notice_for(kind, detail)) {
            (Some(_), Some(true)) => self.new_device(user, &event).await?,
            (Some(_), Some(false)) => true,
            _ => false,
        };
        self.events.record(user, &event).await?;
        if told {
            self.tell(user, kind, &event).await?;
        }
        Ok(())
    }

    /// Whether `login` is from a device and place not among the person's
    /// recent logins, when there was an earlier login (an account's first
    /// login is not news).
    async fn new_device(&self, user: UserId, login: &SecurityEvent) -> Result<bool, ServiceError> {
        let recent = self.events.recent(user, LISTED_EVENTS).await?;
        let logins: Vec<&SecurityEvent> = recent.iter().filter(|e| e.kind == login.kind).collect();
        Ok(!logins.is_empty() && !logins.iter().any(|e| e.device == login.device && e.place == login.place))
    }

    /// Writes the notice of `event` to `user`'s address, when the account
    /// has one. Errors: `Storage`, `Internal`.
    async fn tell(&self, user: UserId, kind: SecurityEventKind, event: &SecurityEvent) -> Result<(), ServiceError> {
        let Some(notices) = &self.notices else { return Ok(()) };
        let Some(account) = notices.users.find_summary_by_id(user).await? else { return Ok(()) };
        // (A change of address is told to the old address by its own
        // mail, with the link that undoes it.)
        let to = &account.email;
        if to.trim().is_empty() {
            return Ok(());
        }
        let content = MailContent::security_notice(
            &account.name,
            kind,
            &event.detail,
            event.at,
            &event.device,
            &event.place,
            format!("{}{}", notices.public_url, crate::password_reset::RECOVER_PATH),
        );
        let mail = notices.renderer.render(to, &content).map_err(ServiceError::Internal)?;
        notices.mail.enqueue(&mail, event.at).await?;
        Ok(())
    }

    /// `user`'s [`LISTED_EVENTS`] most recent events, newest first.
    /// Errors: `Storage`.
    pub async fn recent(&self, user: UserId) -> Result<Vec<SecurityEvent>, ServiceError> {
        Ok(self.events.recent(user, LISTED_EVENTS).await?)
    }

    /// Deletes up to `limit` events older than [`SECURITY_EVENTS_DAYS`]:
    /// how many. Errors: `Storage`.
    pub async fn purge(&self, limit: u32) -> Result<u64, ServiceError> {
        let before = self.clock.now().saturating_sub(SECURITY_EVENTS_DAYS * 86_400);
        Ok(self.events.purge(before, limit).await?)
    }
}
