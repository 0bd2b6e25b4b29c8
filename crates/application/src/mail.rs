//! Outbound mail: what the use cases ask to send ([`MailContent`], turned
//! into a mail by a [`MailRenderer`] the web layer provides), and the
//! background [`MailSender`] that delivers the outbox.
//!
//! The sender claims a small batch of due mail, hands it to the relay and
//! records each outcome: one mail at a time until the relay takes one,
//! then the rest of the batch at once (each conversation waits on the
//! network, not on us). While the relay is unavailable a round stops at
//! its first failure (the rest is given back untried), so a relay that is
//! down costs one connection attempt per round, and mail waits at most half
//! a minute once it is back ([`retry_delay_secs`]).

use std::sync::Arc;

use credencial_domain::mail::{retry_delay_secs, LinkPurpose, MailKind, OutgoingMail, SendFailure};
use credencial_domain::security_event::SecurityEventKind;
use credencial_ports::{ClaimedMail, Clock, FailedMail, FailedTry, MailError, MailStore, Mailer};

use crate::error::ServiceError;
use crate::metrics::Metrics;

/// What a mail says, before it is rendered: each variant is one template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MailContent {
    /// A link to set a new password.
    PasswordReset {
        /// The person's name, as the account shows it.
        name: String,
        /// The link (from the configured public URL, never a request's
        /// `Host`).
        link: String,
        /// How many minutes the link works.
        minutes: i64,
        /// When it was asked for (Unix seconds).
        at: i64,
        /// The browser and system that asked.
        device: String,
        /// The approximate place it asked from.
        place: String,
    },
    /// The password was set through such a link.
    PasswordResetDone {
        /// The person's name.
        name: String,
        /// When (Unix seconds).
        at: i64,
        /// The browser and system summary.
        device: String,
        /// The approximate place.
        place: String,
        /// Where to start over if it was not them (the public URL's
        /// "Esqueci minha senha" page).
        recover_link: String,
    },
    /// A link that confirms the account's address.
    EmailConfirm {
        /// The person's name.
        name: String,
        /// The link.
        link: String,
        /// How many hours it works.
        hours: i64,
        /// The address it confirms.
        email: String,
        /// Whether it confirms a change to this address (which takes
        /// effect only then), rather than the account's current address.
        change: bool,
    },
    /// To the old address, once a change of address took effect: what
    /// changed, and a link that undoes it.
    EmailUndo {
        /// The person's name.
        name: String,
        /// The link that puts the old address back.
        link: String,
        /// How many days it works.
        days: i64,
        /// The account's new address.
        new_email: String,
        /// When the change was confirmed (Unix seconds).
        at: i64,
        /// The browser and system summary that confirmed it.
        device: String,
        /// The approximate place.
        place: String,
    },
    /// A change to the account's security, or a login from a device not
    /// seen before.
    SecurityNotice {
        /// The person's name.
        name: String,
        /// What happened.
        kind: SecurityEventKind,
        /// The event's detail (a passkey's name, a login's methods).
        detail: String,
        /// When (Unix seconds).
        at: i64,
        /// The browser and system summary, or empty.
        device: String,
        /// The approximate place, or empty.
        place: String,
        /// Where to start over if it was not them.
        recover_link: String,
    },
}

impl MailContent {
    /// A notice of `kind` (with `detail`) for a person named `name`, at
    /// `at` from `device` and `place`; `recover_link` is where to start
    /// over if it was not them.
    #[allow(clippy::too_many_arguments)]
    pub fn security_notice(
        name: &str,
        kind: SecurityEventKind,
        detail: &str,
        at: i64,
        device: &str,
        place: &str,
        recover_link: String,
    ) -> Self {
        Self::SecurityNotice {
            name: name.to_owned(),
            kind,
            detail: detail.to_owned(),
            at,
            device: device.to_owned(),
            place: place.to_owned(),
            recover_link,
        }
    }
}

/// Turns [`MailContent`] into a mail to `to`: the subject, the text and
/// the HTML part, in Portuguese, with the institution's branding.
pub trait MailRenderer: Send + Sync + 'static {
    /// The mail. Errors: the template failed (a fault of ours).
    fn render(&self, to: &str, content: &MailContent) -> Result<OutgoingMail, String>;
}

/// How many mails one round claims.
pub const SEND_BATCH: u32 = 10;
/// How long a claim holds a mail: longer than a batch of conversations
/// that each time out (10 × at most `smtp_timeout_secs`, 20 s by
/// default); a round that runs past it stops and gives the rest back.
pub const CLAIM_LEASE_SECS: i64 = 5 * 60;
/// How long delivered mail is kept, unless configured (days).
pub const DEFAULT_MAIL_RETENTION_DAYS: i64 = 30;

/// What one round of [`MailSender::send_due`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SendRound {
    /// Mails claimed.
    pub claimed: usize,
    /// Delivered.
    pub sent: usize,
    /// Failed tries (to be tried again).
    pub retried: usize,
    /// Given up (shown to staff).
    pub gave_up: usize,
}

/// Delivers the outbox, and what staff see and do with it.
pub struct MailSender {
    store: Arc<dyn MailStore>,
    mailer: Arc<dyn Mailer>,
    clock: Arc<dyn Clock>,
    metrics: Metrics,
    retention_days: i64,
}

impl std::fmt::Debug for MailSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MailSender").field("retention_days", &self.retention_days).finish_non_exhaustive()
    }
}

impl MailSender {
    /// Delivers `store`'s mail through `mailer`; delivered mail is purged
    /// after `retention_days`.
    pub fn new(store: Arc<dyn MailStore>, mailer: Arc<dyn Mailer>, clock: Arc<dyn Clock>, retention_days: i64) -> Self {
        Self { store, mailer, clock, metrics: Metrics::disabled(), retention_days }
    }

    /// Counts deliveries in `metrics`.
    pub fn with_metrics(mut self, metrics: Metrics) -> Self {
        self.metrics = metrics;
        self
    }

    /// One round: claims up to [`SEND_BATCH`] due mails and tries each,
    /// unless `stopping` says the service is stopping (the rest is given
    /// back untried). Errors: `Storage`.
    pub async fn send_due(&self, stopping: &(impl Fn() -> bool + Sync)) -> Result<SendRound, ServiceError> {
        let now = self.clock.now();
        let lease = now + CLAIM_LEASE_SECS;
        let claimed = self.store.claim(now, lease, SEND_BATCH).await?;
        let mut round = SendRound { claimed: claimed.len(), ..SendRound::default() };
        // One at a time until the relay takes one (a relay that is down
        // costs one connection per round), then the rest together (a
        // conversation waits on the network far more than on us).
        let mut at = 0;
        while at < claimed.len() {
            let mail = &claimed[at];
            at += 1;
            if let Some(due) = self.not_now(mail, stopping) {
                return self.give_back(&claimed[at - 1..], due, round).await;
            }
            if self.give_up_dead_link(mail, &mut round).await? {
                continue;
            }
            let outcome = self.mailer.send(&mail.mail).await;
            match self.record(mail, outcome, &mut round).await? {
                Some(due) => return self.give_back(&claimed[at..], due, round).await,
                None if round.sent > 0 => break,
                None => {}
            }
        }
        let mut together = Vec::new();
        for (i, mail) in claimed.iter().enumerate().skip(at) {
            if let Some(due) = self.not_now(mail, stopping) {
                let round = self.send_together(&together, round).await?;
                return self.give_back(&claimed[i..], due, round).await;
            }
            if !self.give_up_dead_link(mail, &mut round).await? {
                together.push(mail);
            }
        }
        self.send_together(&together, round).await
    }

    /// When `mail` must wait: the service is stopping, or the claim's lease
    /// is nearly over (another sender may claim the rest); due now.
    fn not_now(&self, mail: &ClaimedMail, stopping: &(impl Fn() -> bool + Sync)) -> Option<i64> {
        let now = self.clock.now();
        (stopping() || now + 30 >= mail.lease).then_some(now)
    }

    /// Gives `mails` back untried, due at `due`.
    async fn give_back(&self, mails: &[ClaimedMail], due: i64, round: SendRound) -> Result<SendRound, ServiceError> {
        for mail in mails {
            self.store.postpone(mail.id, mail.lease, due).await?;
        }
        Ok(round)
    }

    /// Gives up, unsent and with its bodies forgotten, a reset mail whose
    /// link died before it could go: whether it did.
    async fn give_up_dead_link(&self, mail: &ClaimedMail, round: &mut SendRound) -> Result<bool, ServiceError> {
        let now = self.clock.now();
        let kind = mail.mail.kind;
        if kind != MailKind::PasswordReset || now - mail.created_at < LinkPurpose::PasswordReset.lifetime_secs() {
            return Ok(false);
        }
        let failure = FailedTry {
            id: mail.id,
            lease: mail.lease,
            error: "o link expirou antes que a mensagem pudesse ser enviada".to_owned(),
            retry_at: None,
            refused: false,
            forget_body: true,
            now,
        };
        self.store.mark_failed(&failure).await?;
        self.metrics.mail(kind, "failed");
        round.gave_up += 1;
        Ok(true)
    }

    /// Sends `mails` at once and records each outcome.
    async fn send_together(&self, mails: &[&ClaimedMail], mut round: SendRound) -> Result<SendRound, ServiceError> {
        let outcomes = futures_util::future::join_all(mails.iter().map(|m| self.mailer.send(&m.mail))).await;
        for (mail, outcome) in mails.iter().zip(outcomes) {
            self.record(mail, outcome, &mut round).await?;
        }
        Ok(round)
    }

    /// Records the outcome of one try of `mail`: `Some(due)` when the relay
    /// was unavailable (when the next try is).
    async fn record(
        &self,
        mail: &ClaimedMail,
        outcome: Result<(), MailError>,
        round: &mut SendRound,
    ) -> Result<Option<i64>, ServiceError> {
        let now = self.clock.now();
        let kind = mail.mail.kind;
        let (failure, error) = match outcome {
            Ok(()) => {
                self.store.mark_sent(mail.id, mail.lease, now).await?;
                self.metrics.mail(kind, "sent");
                round.sent += 1;
                return Ok(None);
            }
            Err(MailError::Unavailable(e)) => (SendFailure::Unavailable, e),
            Err(MailError::Refused(e)) => (SendFailure::Refused, e),
        };
        let refused = failure == SendFailure::Refused;
        let refusals = mail.attempts + u32::from(refused);
        let delay = retry_delay_secs(failure, refusals, now - mail.created_at);
        let failed = FailedTry {
            id: mail.id,
            lease: mail.lease,
            error: truncated(&error),
            retry_at: delay.map(|d| now + d),
            refused,
            forget_body: delay.is_none() && kind == MailKind::PasswordReset,
            now,
        };
        self.store.mark_failed(&failed).await?;
        // The relay's answer may name the recipient: it goes to staff's
        // page, not to the log.
        match delay {
            Some(_) => {
                self.metrics.mail(kind, "retried");
                round.retried += 1;
            }
            None => {
                self.metrics.mail(kind, "failed");
                round.gave_up += 1;
                tracing::warn!(
                    mail = mail.id,
                    kind = kind.code(),
                    refusals,
                    "mail given up: shown to staff in the panel"
                );
            }
        }
        if refused {
            return Ok(None);
        }
        tracing::info!(mail = mail.id, "the mail relay is unavailable; trying again soon");
        Ok(Some(now + delay.unwrap_or(0)))
    }

    /// Mail given up on, newest first, `limit` a page after row `before`.
    /// Errors: `Storage`.
    pub async fn failed(&self, before: Option<i64>, limit: u32) -> Result<Vec<FailedMail>, ServiceError> {
        Ok(self.store.failed(before, limit).await?)
    }

    /// Puts failed mail `id` back in the queue (staff's "tentar de novo"):
    /// whether there was such a mail. Errors: `Storage`.
    pub async fn retry(&self, id: i64) -> Result<bool, ServiceError> {
        Ok(self.store.retry(id, self.clock.now()).await?)
    }

    /// How many mails wait to be sent. Errors: `Storage`.
    pub async fn waiting(&self) -> Result<u64, ServiceError> {
        Ok(self.store.waiting().await?)
    }

    /// One bounded batch of the purge: delivered mail older than the
    /// retention and expired links. Errors: `Storage`.
    pub async fn purge(&self, limit: u32) -> Result<u64, ServiceError> {
        let now = self.clock.now();
        Ok(self.store.purge(now - self.retention_days * 86_400, now, limit).await?)
    }
}

/// At most 500 characters of a relay's answer (what staff read).
fn truncated(error: &str) -> String {
    match error.char_indices().nth(500) {
        Some((cut, _)) => format!("{}…", &error[..cut]),
        None => error.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use credencial_domain::Redacted;
    use credencial_ports::{ClaimedMail, MockClock, MockMailStore, MockMailer};
    use mockall::predicate::eq;

    const NOW: i64 = 2_000;
    const LEASE: i64 = NOW + CLAIM_LEASE_SECS;

    fn claimed(id: i64, attempts: u32, kind: MailKind, created_at: i64) -> ClaimedMail {
        ClaimedMail {
            id,
            mail: OutgoingMail {
                to: Redacted(format!("p{id}@example.org")),
                subject: "s".into(),
                text: Redacted("t".into()),
                html: Redacted("h".into()),
                kind,
            },
            attempts,
            created_at,
            lease: LEASE,
        }
    }

    fn notice(id: i64, attempts: u32) -> ClaimedMail {
        claimed(id, attempts, MailKind::SecurityNotice, 1_990)
    }

    fn sender(store: MockMailStore, mailer: MockMailer) -> MailSender {
        let mut clock = MockClock::new();
        clock.expect_now().return_const(NOW);
        MailSender::new(Arc::new(store), Arc::new(mailer), Arc::new(clock), 30)
    }

    #[tokio::test]
    async fn delivered_mail_is_marked_sent_and_a_refusal_is_retried_later() {
        let mut store = MockMailStore::new();
        store
            .expect_claim()
            .with(eq(NOW), eq(LEASE), eq(SEND_BATCH))
            .returning(|_, _, _| Ok(vec![notice(1, 0), notice(2, 2)]));
        store.expect_mark_sent().with(eq(1), eq(LEASE), eq(NOW)).times(1).returning(|_, _, _| Ok(()));
        // Third refusal: four minutes later, counted, the body kept.
        store
            .expect_mark_failed()
            .withf(|f| {
                f.id == 2 && f.error.contains("550") && f.retry_at == Some(NOW + 240) && f.refused && !f.forget_body
            })
            .times(1)
            .returning(|_| Ok(()));
        let mut mailer = MockMailer::new();
        mailer.expect_send().times(2).returning(|m| match m.to.as_str() {
            "p1@example.org" => Ok(()),
            _ => Err(MailError::Refused("550 no such user".into())),
        });
        let round = sender(store, mailer).send_due(&|| false).await.expect("round");
        assert_eq!(round, SendRound { claimed: 2, sent: 1, retried: 1, gave_up: 0 });
    }

    #[tokio::test]
    async fn an_unavailable_relay_stops_the_round_and_gives_the_rest_back_untried_and_uncounted() {
        let mut store = MockMailStore::new();
        store.expect_claim().returning(|_, _, _| Ok(vec![notice(1, 0), notice(2, 0), notice(3, 0)]));
        store
            .expect_mark_failed()
            .withf(|f| f.id == 1 && f.retry_at == Some(NOW + 5) && !f.refused)
            .times(1)
            .returning(|_| Ok(()));
        store.expect_postpone().with(eq(2), eq(LEASE), eq(NOW + 5)).times(1).returning(|_, _, _| Ok(()));
        store.expect_postpone().with(eq(3), eq(LEASE), eq(NOW + 5)).times(1).returning(|_, _, _| Ok(()));
        let mut mailer = MockMailer::new();
        mailer.expect_send().times(1).returning(|_| Err(MailError::Unavailable("connection refused".into())));
        let round = sender(store, mailer).send_due(&|| false).await.expect("round");
        assert_eq!(round, SendRound { claimed: 3, sent: 0, retried: 1, gave_up: 0 });
    }

    #[tokio::test]
    async fn the_last_refusal_gives_up_and_a_stop_gives_everything_back() {
        let mut store = MockMailStore::new();
        store.expect_claim().returning(|_, _, _| Ok(vec![notice(1, MAX_REFUSALS_LEFT)]));
        store
            .expect_mark_failed()
            .withf(|f| f.id == 1 && f.retry_at.is_none() && f.refused)
            .times(1)
            .returning(|_| Ok(()));
        let mut mailer = MockMailer::new();
        mailer.expect_send().returning(|_| Err(MailError::Refused("550".into())));
        let round = sender(store, mailer).send_due(&|| false).await.expect("round");
        assert_eq!(round.gave_up, 1);

        let mut store = MockMailStore::new();
        store.expect_claim().returning(|_, _, _| Ok(vec![notice(1, 0), notice(2, 0)]));
        store.expect_postpone().times(2).returning(|_, _, _| Ok(()));
        let mut mailer = MockMailer::new();
        mailer.expect_send().never();
        let round = sender(store, mailer).send_due(&|| true).await.expect("round");
        assert_eq!((round.claimed, round.sent), (2, 0));
    }

    const MAX_REFUSALS_LEFT: u32 = credencial_domain::mail::MAX_REFUSALS - 1;

    #[tokio::test]
    async fn a_reset_mail_whose_link_died_is_given_up_unsent_and_its_body_forgotten() {
        let mut store = MockMailStore::new();
        let old = NOW - LinkPurpose::PasswordReset.lifetime_secs();
        store.expect_claim().returning(move |_, _, _| Ok(vec![claimed(1, 0, MailKind::PasswordReset, old)]));
        store
            .expect_mark_failed()
            .withf(|f| f.id == 1 && f.retry_at.is_none() && f.forget_body && !f.refused)
            .times(1)
            .returning(|_| Ok(()));
        let mut mailer = MockMailer::new();
        mailer.expect_send().never();
        let round = sender(store, mailer).send_due(&|| false).await.expect("round");
        assert_eq!(round.gave_up, 1);
    }

    #[test]
    fn a_long_relay_answer_is_cut() {
        assert_eq!(truncated("curto"), "curto");
        let long = "é".repeat(600);
        assert_eq!(truncated(&long).chars().count(), 501);
    }
}
