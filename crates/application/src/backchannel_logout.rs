//! OpenID Connect Back-Channel Logout 1.0, the provider's side: the
//! background [`LogoutSender`] that posts the logout tokens a session's end
//! queued ([`credencial_ports::SessionStore`] queues them in the same
//! transaction) to the applications that listen.
//!
//! A round claims a small batch of due deliveries (each claimed by one
//! sender, on any instance), signs each token with the ID-token key (typed
//! `logout+jwt`, §2.4) and posts them together. A delivery the application took or refused is
//! forgotten; one that found it unavailable waits longer each time
//! ([`retry_delay_secs`]) and is given up a day after its session ended.
//! The token's `jti` is the same at every try, so an application that
//! missed our record of its answer and gets it twice ignores the second.

use std::sync::Arc;

use credencial_domain::oauth::backchannel_logout::{
    retry_delay_secs, LogoutFacts, LogoutTokenClaims, GIVE_UP_AFTER_SECS,
};
use credencial_domain::oauth::discovery::IssuerUrl;
use credencial_ports::{ClaimedLogout, Clock, LogoutDeliveries, LogoutPostError, LogoutPoster};
use secrecy::{ExposeSecret, SecretString};

use crate::error::ServiceError;
use crate::metrics::Metrics;
use crate::tokens::TokenIssuer;

/// How many deliveries one round claims.
pub const LOGOUT_BATCH: u32 = 20;
/// How long a claim holds a delivery: longer than a round of posts that
/// each time out (they go together).
pub const LOGOUT_LEASE_SECS: i64 = 60;

/// What one round of [`LogoutSender::send_due`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogoutRound {
    /// Deliveries claimed.
    pub claimed: usize,
    /// Taken by the application.
    pub delivered: usize,
    /// To be tried again.
    pub retried: usize,
    /// Refused by the application, given up after a day, or for an
    /// application that no longer listens.
    pub dropped: usize,
}

/// Posts the logout tokens sessions' ends queued.
pub struct LogoutSender {
    deliveries: Arc<dyn LogoutDeliveries>,
    poster: Arc<dyn LogoutPoster>,
    tokens: Arc<TokenIssuer>,
    issuer: IssuerUrl,
    clock: Arc<dyn Clock>,
    metrics: Metrics,
}

impl std::fmt::Debug for LogoutSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogoutSender").field("issuer", &self.issuer.as_str()).finish_non_exhaustive()
    }
}

impl LogoutSender {
    /// Posts `deliveries` through `poster`, the tokens signed by `tokens`'
    /// ID-token key as `issuer`.
    pub fn new(
        deliveries: Arc<dyn LogoutDeliveries>,
        poster: Arc<dyn LogoutPoster>,
        tokens: Arc<TokenIssuer>,
        issuer: IssuerUrl,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self { deliveries, poster, tokens, issuer, clock, metrics: Metrics::disabled() }
    }

    /// Counts deliveries in `metrics`.
    pub fn with_metrics(mut self, metrics: Metrics) -> Self {
        self.metrics = metrics;
        self
    }

    /// One round: claims up to [`LOGOUT_BATCH`] due deliveries and posts
    /// them together, unless `stopping` says the service is stopping (then
    /// nothing is claimed). Errors: `Storage`; `Internal` when a token
    /// cannot be signed (the claimed deliveries come back after their
    /// lease).
    pub async fn send_due(&self, stopping: &(impl Fn() -> bool + Sync)) -> Result<LogoutRound, ServiceError> {
        if stopping() {
            return Ok(LogoutRound::default());
        }
        let now = self.clock.now();
        let claimed = self.deliveries.claim(now, now + LOGOUT_LEASE_SECS, LOGOUT_BATCH).await?;
        let mut round = LogoutRound { claimed: claimed.len(), ..LogoutRound::default() };
        let mut posts = Vec::new();
        for delivery in &claimed {
            match &delivery.uri {
                Some(uri) => posts.push((delivery, uri.as_str(), self.token(delivery, now)?)),
                // The application stopped listening since.
                None => self.drop_delivery(delivery, None, &mut round).await?,
            }
        }
        let outcomes = futures_util::future::join_all(
            posts.iter().map(|(_, uri, token)| self.poster.post(uri, token.expose_secret())),
        )
        .await;
        for ((delivery, _, _), outcome) in posts.iter().zip(outcomes) {
            self.record(delivery, outcome, &mut round).await?;
        }
        Ok(round)
    }

    /// The signed logout token of `delivery`, issued `now`.
    fn token(&self, delivery: &ClaimedLogout, now: i64) -> Result<SecretString, ServiceError> {
        let claims = LogoutTokenClaims::new(LogoutFacts {
            issuer: self.issuer.as_str(),
            client_id: &delivery.client_id,
            user: delivery.user,
            sid: &delivery.sid,
            delivery: delivery.id,
            now,
        });
        Ok(self.tokens.sign_logout_token(&claims)?.into())
    }

    /// Records the outcome of one post of `delivery`.
    async fn record(
        &self,
        delivery: &ClaimedLogout,
        outcome: Result<(), LogoutPostError>,
        round: &mut LogoutRound,
    ) -> Result<(), ServiceError> {
        let now = self.clock.now();
        let client = delivery.client_id.as_str();
        match outcome {
            Ok(()) => {
                self.deliveries.finish(delivery.id, delivery.lease).await?;
                self.metrics.logout_delivery("delivered");
                round.delivered += 1;
                tracing::info!(client_id = client, delivery = delivery.id, "logout token delivered");
            }
            Err(LogoutPostError::Refused(why)) => {
                // The application's answer names nobody: it may be logged.
                tracing::warn!(
                    client_id = client,
                    delivery = delivery.id,
                    why,
                    "the application refused a logout token"
                );
                self.drop_delivery(delivery, Some("refused"), round).await?;
            }
            Err(LogoutPostError::Unavailable(why)) if now - delivery.created_at >= GIVE_UP_AFTER_SECS => {
                tracing::warn!(client_id = client, delivery = delivery.id, why, "logout token given up after a day");
                self.drop_delivery(delivery, Some("given_up"), round).await?;
            }
            Err(LogoutPostError::Unavailable(why)) => {
                let at = now + retry_delay_secs(delivery.attempts);
                self.deliveries.retry(delivery.id, delivery.lease, at).await?;
                self.metrics.logout_delivery("retried");
                round.retried += 1;
                tracing::info!(
                    client_id = client,
                    delivery = delivery.id,
                    why,
                    retry_at = at,
                    "application unavailable; the logout token waits"
                );
            }
        }
        Ok(())
    }

    /// Forgets `delivery` undelivered, counted as `outcome` (`None`: the
    /// application stopped listening; nothing was tried).
    async fn drop_delivery(
        &self,
        delivery: &ClaimedLogout,
        outcome: Option<&'static str>,
        round: &mut LogoutRound,
    ) -> Result<(), ServiceError> {
        self.deliveries.finish(delivery.id, delivery.lease).await?;
        if let Some(outcome) = outcome {
            self.metrics.logout_delivery(outcome);
        }
        round.dropped += 1;
        Ok(())
    }
}
