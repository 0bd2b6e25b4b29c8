//! Outbound mail: what the use cases ask to send ([`MailContent`], turned
//! into a mail by a [`MailRenderer`] the web layer provides), and the
//! background [`MailSender`] that delivers the outbox.
//!
//! The sender claims a small batch of due mail, hands each to the relay
//! and records the outcome. While the relay is unavailable it stops at the
//! first failure of a batch (the rest is given back untried), so a relay
//! that is down costs one connection attempt per round, and mail waits at
//! most half a minute once it is back ([`retry_delay_secs`]).

use std::sync::Arc;

use credencial_domain::mail::{retry_delay_secs, OutgoingMail, SendFailure};
use credencial_ports::{Clock, FailedMail, MailError, MailStore, Mailer};

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
}

/// Turns [`MailContent`] into a mail to `to`: the subject, the text and
/// the HTML part, in Portuguese, with the institution's branding.
pub trait MailRenderer: Send + Sync + 'static {
    /// The mail. Errors: the template failed (a fault of ours).
    fn render(&self, to: &str, content: &MailContent) -> Result<OutgoingMail, String>;
}

/// How many mails one round claims.
pub const SEND_BATCH: u32 = 20;
/// How long a claim holds a mail: longer than a batch of conversations
/// that each time out.
pub const CLAIM_LEASE_SECS: i64 = 15 * 60;
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
        let claimed = self.store.claim(now, now + CLAIM_LEASE_SECS, SEND_BATCH).await?;
        let mut round = SendRound { claimed: claimed.len(), ..SendRound::default() };
        let mut give_back_from = None;
        for (at, mail) in claimed.iter().enumerate() {
            if stopping() {
                give_back_from = Some((at, self.clock.now()));
                break;
            }
            let outcome = self.mailer.send(&mail.mail).await;
            let now = self.clock.now();
            let (failure, error) = match outcome {
                Ok(()) => {
                    self.store.mark_sent(mail.id, now).await?;
                    self.metrics.mail(mail.mail.kind, "sent");
                    round.sent += 1;
                    continue;
                }
                Err(MailError::Unavailable(e)) => (SendFailure::Unavailable, e),
                Err(MailError::Refused(e)) => (SendFailure::Refused, e),
            };
            let attempts = mail.attempts + 1;
            let delay = retry_delay_secs(failure, attempts, now - mail.created_at);
            let error = truncated(&error);
            self.store.mark_failed(mail.id, &error, delay.map(|d| now + d), now).await?;
            match delay {
                Some(_) => {
                    self.metrics.mail(mail.mail.kind, "retried");
                    round.retried += 1;
                }
                None => {
                    self.metrics.mail(mail.mail.kind, "failed");
                    round.gave_up += 1;
                    tracing::warn!(mail = mail.id, kind = mail.mail.kind.code(), attempts, error = %error,
                        "mail given up: shown to staff in the panel");
                }
            }
            if failure == SendFailure::Unavailable {
                tracing::info!(mail = mail.id, error = %error, "the mail relay is unavailable; trying again soon");
                give_back_from = Some((at + 1, now + delay.unwrap_or(0)));
                break;
            }
        }
        if let Some((from, due)) = give_back_from {
            for mail in &claimed[from..] {
                self.store.postpone(mail.id, due).await?;
            }
        }
        Ok(round)
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
    use credencial_domain::mail::MailKind;
    use credencial_domain::Redacted;
    use credencial_ports::{ClaimedMail, MockClock, MockMailStore, MockMailer};
    use mockall::predicate::eq;

    fn claimed(id: i64, attempts: u32) -> ClaimedMail {
        ClaimedMail {
            id,
            mail: OutgoingMail {
                to: Redacted(format!("p{id}@example.org")),
                subject: "s".into(),
                text: Redacted("t".into()),
                html: Redacted("h".into()),
                kind: MailKind::PasswordReset,
            },
            attempts,
            created_at: 1_000,
        }
    }

    fn clock_at(now: i64) -> Arc<MockClock> {
        let mut clock = MockClock::new();
        clock.expect_now().return_const(now);
        Arc::new(clock)
    }

    fn sender(store: MockMailStore, mailer: MockMailer) -> MailSender {
        MailSender::new(Arc::new(store), Arc::new(mailer), clock_at(2_000), 30)
    }

    #[tokio::test]
    async fn delivered_mail_is_marked_sent_and_a_refusal_is_retried_later() {
        let mut store = MockMailStore::new();
        store
            .expect_claim()
            .with(eq(2_000), eq(2_000 + CLAIM_LEASE_SECS), eq(SEND_BATCH))
            .returning(|_, _, _| Ok(vec![claimed(1, 0), claimed(2, 2)]));
        store.expect_mark_sent().with(eq(1), eq(2_000)).times(1).returning(|_, _| Ok(()));
        // Third refusal: four minutes later.
        store
            .expect_mark_failed()
            .withf(|id, error, retry_at, now| {
                *id == 2 && error.contains("550") && *retry_at == Some(2_240) && *now == 2_000
            })
            .times(1)
            .returning(|_, _, _, _| Ok(()));
        let mut mailer = MockMailer::new();
        mailer.expect_send().times(2).returning(|m| match m.to.as_str() {
            "p1@example.org" => Ok(()),
            _ => Err(MailError::Refused("550 no such user".into())),
        });
        let round = sender(store, mailer).send_due(&|| false).await.expect("round");
        assert_eq!(round, SendRound { claimed: 2, sent: 1, retried: 1, gave_up: 0 });
    }

    #[tokio::test]
    async fn an_unavailable_relay_stops_the_round_and_gives_the_rest_back_untried() {
        let mut store = MockMailStore::new();
        store.expect_claim().returning(|_, _, _| Ok(vec![claimed(1, 0), claimed(2, 0), claimed(3, 0)]));
        store
            .expect_mark_failed()
            .withf(|id, _, retry_at, _| *id == 1 && *retry_at == Some(2_005))
            .times(1)
            .returning(|_, _, _, _| Ok(()));
        store.expect_postpone().with(eq(2), eq(2_005)).times(1).returning(|_, _| Ok(()));
        store.expect_postpone().with(eq(3), eq(2_005)).times(1).returning(|_, _| Ok(()));
        let mut mailer = MockMailer::new();
        mailer.expect_send().times(1).returning(|_| Err(MailError::Unavailable("connection refused".into())));
        let round = sender(store, mailer).send_due(&|| false).await.expect("round");
        assert_eq!(round, SendRound { claimed: 3, sent: 0, retried: 1, gave_up: 0 });
    }

    #[tokio::test]
    async fn the_last_refusal_gives_up_and_a_stop_gives_everything_back() {
        let mut store = MockMailStore::new();
        store.expect_claim().returning(|_, _, _| Ok(vec![claimed(1, 7)]));
        store
            .expect_mark_failed()
            .withf(|id, _, retry_at, _| *id == 1 && retry_at.is_none())
            .times(1)
            .returning(|_, _, _, _| Ok(()));
        let mut mailer = MockMailer::new();
        mailer.expect_send().returning(|_| Err(MailError::Refused("550".into())));
        let round = sender(store, mailer).send_due(&|| false).await.expect("round");
        assert_eq!(round.gave_up, 1);

        let mut store = MockMailStore::new();
        store.expect_claim().returning(|_, _, _| Ok(vec![claimed(1, 0), claimed(2, 0)]));
        store.expect_postpone().times(2).returning(|_, _| Ok(()));
        let mut mailer = MockMailer::new();
        mailer.expect_send().never();
        let round = sender(store, mailer).send_due(&|| true).await.expect("round");
        assert_eq!((round.claimed, round.sent), (2, 0));
    }

    #[test]
    fn a_long_relay_answer_is_cut() {
        assert_eq!(truncated("curto"), "curto");
        let long = "é".repeat(600);
        assert_eq!(truncated(&long).chars().count(), 501);
    }
}
