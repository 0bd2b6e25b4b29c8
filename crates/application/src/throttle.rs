//! The brute-force limits around a credential check (a password at `pair`
//! and the login form, a client secret at `/oauth/token/`).
//!
//! Order of one check: the limits of the attempt's keys are read first — a
//! limited attempt is refused before any hashing; then the attempt waits for
//! a hashing slot and reads the limits again (failures recorded while it
//! queued count), hashes, and records a failure while still holding the
//! slot. So at most as many guesses as there are hashing slots can slip past
//! a limit in a burst, per instance. A success forgets the failures of the
//! username or client, never those of the address: logging in to one's own
//! account must not reset the counter of an address that guesses others'.

use std::sync::Arc;

use credencial_domain::throttle::{ClientAddress, FailureWindow, KeyKind, Subject, ThrottleKey, ThrottlePolicy};
use credencial_ports::{Clock, LoginFailureLog};
use secrecy::SecretString;

use crate::error::ServiceError;
use crate::hashing::PasswordHasher;

/// The limits and where failures are counted. Cloning shares the log.
#[derive(Clone)]
pub struct LoginThrottle {
    log: Option<Arc<dyn LoginFailureLog>>,
    clock: Option<Arc<dyn Clock>>,
    policy: ThrottlePolicy,
}

impl std::fmt::Debug for LoginThrottle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginThrottle").field("policy", &self.policy).finish_non_exhaustive()
    }
}

impl Default for LoginThrottle {
    /// No limits (nothing is counted).
    fn default() -> Self {
        Self { log: None, clock: None, policy: ThrottlePolicy::DISABLED }
    }
}

impl LoginThrottle {
    /// Limits as `policy` says, failures counted in `log`, time from `clock`.
    pub fn new(log: Arc<dyn LoginFailureLog>, clock: Arc<dyn Clock>, policy: ThrottlePolicy) -> Self {
        Self { log: Some(log), clock: Some(clock), policy }
    }

    /// Whether `password` matches `encoded` and the account is `eligible`
    /// (exists, is active, may use a secret), under the limits of `subject`
    /// and `from`. Errors: `Throttled` when a key is limited (before any
    /// hashing); `Storage` when the failures cannot be read or recorded;
    /// `Internal` when the hashing pool fails.
    pub(crate) async fn verify(
        &self,
        hasher: &PasswordHasher,
        subject: Subject<'_>,
        from: Option<ClientAddress>,
        encoded: Option<String>,
        password: SecretString,
        eligible: bool,
    ) -> Result<bool, ServiceError> {
        let (Some(log), Some(clock)) = (&self.log, &self.clock) else {
            return Ok(hasher.verify(encoded, password).await? && eligible);
        };
        let keys = self.policy.keys(subject, from);
        if keys.is_empty() {
            return Ok(hasher.verify(encoded, password).await? && eligible);
        }
        // Refuse a limited attempt before it queues for a hashing slot…
        self.check(log.as_ref(), clock.as_ref(), &keys).await?;
        let slot = hasher.slot().await?;
        // …and again once it has one: failures of attempts that were hashed
        // while this one waited count.
        let seen = self.check(log.as_ref(), clock.as_ref(), &keys).await?;
        let valid = hasher.verify_in(&slot, encoded, password).await? && eligible;
        if !valid {
            log.record_failure(&keys, clock.now_millis(), self.policy.window_ms()).await?;
            return Ok(false);
        }
        drop(slot);
        let now = clock.now_millis();
        for window in seen.iter().filter(|w| w.key.kind() != KeyKind::Address && !self.policy.has_ended(w, now)) {
            if let Err(e) = log.clear(&window.key).await {
                // The credentials were right; a stale count only delays the
                // next attempt after more failures, so the success stands.
                tracing::warn!(error = %e, "clearing the failures of a successful login failed");
            }
        }
        Ok(true)
    }

    /// Refuses with `Throttled` while `subject` or `from` is limited (a
    /// second factor's code is checked under the same limits as the
    /// password). Errors: `Throttled`; `Storage`.
    pub(crate) async fn check_subject(
        &self,
        subject: Subject<'_>,
        from: Option<ClientAddress>,
    ) -> Result<(), ServiceError> {
        let (Some(log), Some(clock)) = (&self.log, &self.clock) else {
            return Ok(());
        };
        let keys = self.policy.keys(subject, from);
        if !keys.is_empty() {
            self.check(log.as_ref(), clock.as_ref(), &keys).await?;
        }
        Ok(())
    }

    /// Counts one failure against `subject` and `from` (a wrong second
    /// factor code), and says whether it locked the subject's own key (its
    /// budget is spent now: the caller tells the person). Errors: `Storage`.
    pub(crate) async fn record_failure(
        &self,
        subject: Subject<'_>,
        from: Option<ClientAddress>,
    ) -> Result<bool, ServiceError> {
        let (Some(log), Some(clock)) = (&self.log, &self.clock) else {
            return Ok(false);
        };
        let keys = self.policy.keys(subject, from);
        if keys.is_empty() {
            return Ok(false);
        }
        log.record_failure(&keys, clock.now_millis(), self.policy.window_ms()).await?;
        let own: Vec<ThrottleKey> = keys.into_iter().filter(|k| k.kind() != KeyKind::Address).collect();
        if own.is_empty() {
            return Ok(false);
        }
        let now = clock.now_millis();
        let limit = |kind| self.policy.limit(kind);
        Ok(log.windows(&own).await?.iter().any(|w| w.failures == limit(w.key.kind()) && !self.policy.has_ended(w, now)))
    }

    /// Forgets the failures of `subject`'s own key (a right second factor's
    /// code: the budget counts wrong codes in a row), never the address's.
    /// A failure to forget is logged: the success stands.
    pub(crate) async fn record_success(&self, subject: Subject<'_>) {
        let Some(log) = &self.log else { return };
        for key in self.policy.keys(subject, None) {
            if let Err(e) = log.clear(&key).await {
                tracing::warn!(error = %e, "clearing the failures of a right code failed");
            }
        }
    }

    /// Refuses with `Throttled` while the address `from` is limited: a
    /// sign-up or an e-mail change, which answer whether a CPF or an
    /// address is taken, must not find that out faster than the login
    /// form. Errors: `Throttled`; `Storage`.
    pub(crate) async fn check_address(&self, from: Option<ClientAddress>) -> Result<(), ServiceError> {
        self.check_subject(Subject::ClientSecret, from).await
    }

    /// Counts one failure against the address `from` (a sign-up or an
    /// e-mail change that found a value taken). Errors: `Storage`.
    pub(crate) async fn record_address_failure(&self, from: Option<ClientAddress>) -> Result<(), ServiceError> {
        self.record_failure(Subject::ClientSecret, from).await.map(|_| ())
    }

    /// The windows of `keys`; `Throttled` when one of them is limited.
    async fn check(
        &self,
        log: &dyn LoginFailureLog,
        clock: &dyn Clock,
        keys: &[ThrottleKey],
    ) -> Result<Vec<FailureWindow>, ServiceError> {
        let windows = log.windows(keys).await?;
        let now = clock.now_millis();
        match self.policy.retry_after_any(&windows, now) {
            None => Ok(windows),
            Some(retry_after_secs) => {
                // The address is named; a username is not: what was typed
                // into the username field may be a password.
                let limited: Vec<&str> = windows
                    .iter()
                    .filter(|w| self.policy.retry_after_secs(w, now).is_some())
                    .map(|w| if w.key.kind() == KeyKind::Address { w.key.as_str() } else { "username" })
                    .collect();
                tracing::info!(keys = ?limited, retry_after_secs, "credential check refused: too many failures");
                Err(ServiceError::Throttled { retry_after_secs })
            }
        }
    }

    /// Deletes failure windows that have ended, at most `limit` rows (one
    /// batch of the [`crate::purge`] loop), and returns how many; the
    /// binary's purge calls it. Errors: `Storage`.
    pub async fn purge_ended(&self, limit: u32) -> Result<u64, ServiceError> {
        match (&self.log, &self.clock) {
            (Some(log), Some(clock)) => {
                Ok(log.purge_started_before(self.policy.ended_before(clock.now_millis()), limit).await?)
            }
            _ => Ok(0),
        }
    }
}
