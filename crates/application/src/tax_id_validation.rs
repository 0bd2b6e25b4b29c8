//! Tax-id validation (`/conta/validacao/`): the person types their birth
//! date and mother's name, and they are compared with the tax authority's
//! record of the CPF on file, read through the same port and cache as the
//! `receita_federal` scope. A match marks the account validated, and
//! `receita_federal` is answered from then on. At most
//! [`MAX_VALIDATION_ATTEMPTS`] attempts per account in 24 hours; an attempt
//! the registry could not answer does not count. What was typed is never
//! logged.

use std::sync::Arc;

use credencial_domain::account::{
    attempt_verdict, window_start, AttemptVerdict, TaxIdClaim, TaxIdMatch, MAX_VALIDATION_ATTEMPTS,
};
use credencial_domain::{Cpf, UserId};
use credencial_ports::account::TaxIdValidationStore;
use credencial_ports::{Clock, ProfileRepository};

use crate::error::ServiceError;
use crate::profile::ProfileService;

/// Why a validation did not finish: the CPF on file changed while the
/// registry was asked (the record compared was another CPF's).
pub const ERRO_CPF_MUDOU: &str = "O CPF do cadastro mudou durante a validação.";

/// Where the account stands, before anything is typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValidationState {
    /// Validated already; there is nothing to do.
    Validated,
    /// The account has no (valid) CPF to look the record up by.
    NoCpf,
    /// The attempts of the last 24 hours are used up.
    Limited {
        /// Seconds until the next attempt is allowed (at least 1).
        retry_after_secs: i64,
    },
    /// An attempt may be made.
    Open {
        /// Attempts left in the window, the next one included.
        remaining: u32,
    },
}

/// What became of one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValidationOutcome {
    /// The typed data matched: the account is validated from now on.
    Validated,
    /// The account was validated already; nothing was compared.
    AlreadyValidated,
    /// The account has no (valid) CPF; nothing was compared.
    NoCpf,
    /// Something differs (which is not said); the attempt counted.
    Mismatch {
        /// Attempts left in the window.
        remaining: u32,
    },
    /// Too many attempts in 24 hours; nothing was compared or counted.
    Limited {
        /// Seconds until the next attempt is allowed (at least 1).
        retry_after_secs: i64,
    },
    /// The registry could not be asked (down, not configured, or it does
    /// not know the CPF); nothing changed and the attempt did not count.
    Unavailable {
        /// Why, in Portuguese, for the person (never the registry's data).
        erro: String,
    },
}

/// Use cases of the tax-id validation.
pub struct TaxIdValidationService {
    profiles: Arc<dyn ProfileRepository>,
    store: Arc<dyn TaxIdValidationStore>,
    registry: Arc<ProfileService>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for TaxIdValidationService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaxIdValidationService").finish_non_exhaustive()
    }
}

/// The account as validation sees it.
enum Account {
    Validated,
    NoCpf,
    Pending(Cpf),
}

impl TaxIdValidationService {
    /// A service over the profile repository (validated flag and CPF), the
    /// attempts store, the profile service (the tax record, through the
    /// scope cache) and the clock.
    pub fn new(
        profiles: Arc<dyn ProfileRepository>,
        store: Arc<dyn TaxIdValidationStore>,
        registry: Arc<ProfileService>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self { profiles, store, registry, clock }
    }

    async fn account(&self, user: UserId) -> Result<Account, ServiceError> {
        let own = self.profiles.own_profile(user).await?.ok_or(ServiceError::UnknownUser)?;
        if own.receita_validated {
            return Ok(Account::Validated);
        }
        Ok(match own.cpf.as_deref().and_then(|c| Cpf::parse(c).ok()) {
            Some(cpf) => Account::Pending(cpf),
            None => Account::NoCpf,
        })
    }

    /// Where `user`'s validation stands. Errors: `UnknownUser` (the account
    /// is gone or inactive), `Storage`.
    pub async fn state(&self, user: UserId) -> Result<ValidationState, ServiceError> {
        match self.account(user).await? {
            Account::Validated => Ok(ValidationState::Validated),
            Account::NoCpf => Ok(ValidationState::NoCpf),
            Account::Pending(_) => {
                let now = self.clock.now();
                let attempts = self.store.attempts_since(user, window_start(now)).await?;
                Ok(match attempt_verdict(&attempts, now) {
                    AttemptVerdict::Allowed { remaining } => ValidationState::Open { remaining },
                    AttemptVerdict::Limited { retry_after_secs } => ValidationState::Limited { retry_after_secs },
                })
            }
        }
    }

    /// One attempt: `claim` against the tax authority's record of the CPF
    /// on file. The attempt counts (atomically, so racing attempts never
    /// pass the limit) only once the record is at hand. Errors:
    /// `UnknownUser`, `Storage`.
    pub async fn validate(&self, user: UserId, claim: &TaxIdClaim) -> Result<ValidationOutcome, ServiceError> {
        let cpf = match self.account(user).await? {
            Account::Validated => return Ok(ValidationOutcome::AlreadyValidated),
            Account::NoCpf => return Ok(ValidationOutcome::NoCpf),
            Account::Pending(cpf) => cpf,
        };
        let now = self.clock.now();
        let since = window_start(now);
        let remaining = match attempt_verdict(&self.store.attempts_since(user, since).await?, now) {
            AttemptVerdict::Allowed { remaining } => remaining,
            AttemptVerdict::Limited { retry_after_secs } => return Ok(ValidationOutcome::Limited { retry_after_secs }),
        };
        let record = match self.registry.tax_record(user, &cpf).await {
            Ok(record) => record,
            Err(erro) => {
                tracing::info!(user = user.0, "tax-id validation: the registry could not be asked");
                return Ok(ValidationOutcome::Unavailable { erro });
            }
        };
        if !self.store.record_attempt(user, now, since, MAX_VALIDATION_ATTEMPTS).await? {
            // Racing attempts used the window up meanwhile.
            let retry_after_secs = match attempt_verdict(&self.store.attempts_since(user, since).await?, now) {
                AttemptVerdict::Limited { retry_after_secs } => retry_after_secs,
                AttemptVerdict::Allowed { .. } => 1,
            };
            return Ok(ValidationOutcome::Limited { retry_after_secs });
        }
        match claim.compare(&record) {
            TaxIdMatch::Mismatch => {
                tracing::info!(user = user.0, "tax-id validation: mismatch");
                Ok(ValidationOutcome::Mismatch { remaining: remaining.saturating_sub(1) })
            }
            TaxIdMatch::Match if self.store.set_validated(user, &cpf).await? => {
                tracing::info!(user = user.0, "tax-id validation: validated");
                Ok(ValidationOutcome::Validated)
            }
            TaxIdMatch::Match => Ok(ValidationOutcome::Unavailable { erro: ERRO_CPF_MUDOU.to_owned() }),
        }
    }

    /// Deletes attempts that no longer count (older than the window), at
    /// most `limit` rows (one batch of the [`crate::purge`] loop), and
    /// returns how many; the binary's purge calls it. Errors: `Storage`.
    pub async fn purge_old_attempts(&self, limit: u32) -> Result<u64, ServiceError> {
        Ok(self.store.purge_attempts_before(window_start(self.clock.now()), limit).await?)
    }
}
