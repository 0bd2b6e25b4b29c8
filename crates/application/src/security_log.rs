//! A person's security activity: what [`SecurityEvents`] keeps, recorded
//! by the session, second-factor, passkey and password use cases, listed
//! on `/conta/seguranca/`, purged after [`SECURITY_EVENTS_DAYS`].
//!
//! A change that cannot be recorded fails (the person must be able to see
//! every change to their factors, password and sessions).

use std::fmt;
use std::sync::Arc;

use credencial_domain::security_event::SecurityEventKind;
use credencial_domain::session::device_summary;
use credencial_domain::UserId;
use credencial_ports::{Clock, SecurityEvent, SecurityEvents};

use crate::error::ServiceError;
use crate::session::Origin;

/// How long events are kept: a year.
pub const SECURITY_EVENTS_DAYS: i64 = 365;
/// The most events the security page lists.
pub const LISTED_EVENTS: u32 = 30;

/// Records and lists security events.
pub struct SecurityLog {
    events: Arc<dyn SecurityEvents>,
    clock: Arc<dyn Clock>,
}

impl fmt::Debug for SecurityLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecurityLog").finish_non_exhaustive()
    }
}

impl SecurityLog {
    /// Events in `events`, stamped by `clock`.
    pub fn new(events: Arc<dyn SecurityEvents>, clock: Arc<dyn Clock>) -> Self {
        Self { events, clock }
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
        Ok(self.events.record(user, &event).await?)
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
