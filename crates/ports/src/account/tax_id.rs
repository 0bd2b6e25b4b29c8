//! Tax-id validation: the attempts, the validated flag and the CPF it
//! freezes.

use async_trait::async_trait;
use credencial_domain::{Cpf, UserId};

use crate::error::RepositoryError;

/// Outcome of a CPF change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpfChange {
    /// The CPF is now the new one (or already was).
    Changed,
    /// Refused: the account is validated, its CPF cannot change.
    Validated,
    /// There is no such user.
    NotFound,
}

/// Storage of the tax-id validation of accounts.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait TaxIdValidationStore: Send + Sync + 'static {
    /// The times (Unix seconds, oldest first) of the user's validation
    /// attempts after `since`. Errors: `Unexpected`.
    async fn attempts_since(&self, user: UserId, since: i64) -> Result<Vec<i64>, RepositoryError>;

    /// Records an attempt at `now` unless the user already made `max`
    /// attempts after `since`: `Ok(true)` when recorded, `Ok(false)` when
    /// the limit was reached (nothing recorded) or the user does not exist.
    /// Attempts of one user are serialised, so concurrent calls on any
    /// instance never record more than `max` in the window.
    /// Errors: `Unexpected`.
    async fn record_attempt(&self, user: UserId, now: i64, since: i64, max: u32) -> Result<bool, RepositoryError>;

    /// Marks the user's registration as validated through the tax id
    /// (`receita_federal` is answered from then on), provided the user's CPF
    /// is still `checked`, the one whose record was compared; `Ok(false)`
    /// when there is no such user or the CPF changed meanwhile (nothing
    /// changed). Errors: `Unexpected`.
    async fn set_validated(&self, user: UserId, checked: &Cpf) -> Result<bool, RepositoryError>;

    /// Sets the user's CPF unless the account is validated (then
    /// [`CpfChange::Validated`], nothing changed; the database refuses it
    /// too). Errors: `Conflict` when another account has that CPF,
    /// `Unexpected` otherwise.
    async fn change_cpf(&self, user: UserId, cpf: &Cpf) -> Result<CpfChange, RepositoryError>;

    /// Deletes attempts made before `before` (Unix seconds), which no longer
    /// count, at most `limit` rows per call (the oldest first, by an index
    /// whose leading column is that time), and returns how many; the caller
    /// calls again until a call returns fewer than `limit` or the service is
    /// stopping (see the application's `purge` module). Errors: `Unexpected`.
    async fn purge_attempts_before(&self, before: i64, limit: u32) -> Result<u64, RepositoryError>;
}
