//! Second factors of an account: enrolling a TOTP app (a pending secret,
//! confirmed by a first code), the recovery codes shown once when the first
//! factor is enrolled (regenerable: the old set dies), checking a code at
//! login (each TOTP step once per account; each recovery code once; wrong
//! codes count toward the password's limits), and removing them.
//!
//! TOTP secrets are sealed at rest with the key of the setting
//! `second_factor_key` ([`credencial_domain::second_factor::SealingKey`]) and
//! never logged.

use std::fmt;
use std::sync::Arc;

use credencial_domain::assurance::AccountPolicy;
use credencial_domain::second_factor::{generate_recovery_codes, recovery_code_hash, SealingKey, TotpSecret};
use credencial_domain::session::AuthMethod;
use credencial_domain::throttle::{ClientAddress, Subject};
use credencial_domain::{Redacted, UserId};
use credencial_ports::{Clock, SecondFactorStore};

use crate::app_passwords::AppPasswordService;
use crate::credentials::CredentialCheck;
use crate::error::ServiceError;
use crate::security_log::SecurityLog;
use credencial_domain::security_event::SecurityEventKind;

/// A TOTP enrolment in progress: what the page shows to set the app up.
#[derive(Debug, Clone)]
pub struct TotpEnrolment {
    /// The `otpauth://` URI (the QR code's content).
    pub uri: Redacted<String>,
    /// The secret as typed into an app (base32, in groups of four).
    pub secret_text: Redacted<String>,
}

/// What a factor's state is, for the security page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FactorState {
    /// A confirmed TOTP app.
    pub totp: bool,
    /// Unused recovery codes.
    pub recovery_codes_left: u64,
}

/// The second factor use cases.
pub struct SecondFactorService {
    store: Arc<dyn SecondFactorStore>,
    key: SealingKey,
    credentials: Arc<CredentialCheck>,
    clock: Arc<dyn Clock>,
    issuer: String,
    security: Option<Arc<SecurityLog>>,
    app_passwords: Option<Arc<AppPasswordService>>,
}

impl fmt::Debug for SecondFactorService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecondFactorService").field("issuer", &self.issuer).finish_non_exhaustive()
    }
}

impl SecondFactorService {
    /// Factors in `store`, TOTP secrets sealed with `key`, codes checked
    /// under `credentials`' limits; authenticator apps list the account
    /// under `issuer`.
    pub fn new(
        store: Arc<dyn SecondFactorStore>,
        key: SealingKey,
        credentials: Arc<CredentialCheck>,
        clock: Arc<dyn Clock>,
        issuer: &str,
    ) -> Self {
        Self { store, key, credentials, clock, issuer: issuer.replace(':', " "), security: None, app_passwords: None }
    }

    /// The same service, recording every change of factors in the
    /// person's security activity.
    pub fn with_security_log(mut self, log: Arc<SecurityLog>) -> Self {
        self.security = Some(log);
        self
    }

    /// The same service, offering application passwords (for programs
    /// that cannot ask for a code) beside the factors.
    pub fn with_app_passwords(mut self, app_passwords: Arc<AppPasswordService>) -> Self {
        self.app_passwords = Some(app_passwords);
        self
    }

    /// The application passwords, when offered.
    pub fn app_passwords(&self) -> Option<&Arc<AppPasswordService>> {
        self.app_passwords.as_ref()
    }

    /// Records a change of `user`'s factors (`kind`, with `detail`) in the
    /// security activity, when the service keeps one. Errors: `Storage`.
    pub async fn record(&self, user: UserId, kind: SecurityEventKind, detail: &str) -> Result<(), ServiceError> {
        match &self.security {
            Some(log) => log.record(user, kind, detail, None).await,
            None => Ok(()),
        }
    }

    /// The credential check (re-authentication before a change).
    pub fn credentials(&self) -> &CredentialCheck {
        &self.credentials
    }

    /// Whether `user` has a second factor (a confirmed TOTP or a
    /// passkey). One round trip. Errors: `Storage`.
    pub async fn has_factor(&self, user: UserId) -> Result<bool, ServiceError> {
        Ok(self.store.has_factor(user).await?)
    }

    /// The account's own bar for the one assurance rule
    /// ([`credencial_domain::assurance::decide`]) that every way in and
    /// every refresh asks: whether `user` has a second factor, for the
    /// services that may have none offered (`factors` is `None` when the
    /// service offers no second factor: no account has one). Staff's own
    /// policy is applied by the panel's gate. Errors: `Storage`.
    pub async fn account_policy(factors: Option<&Self>, user: UserId) -> Result<AccountPolicy, ServiceError> {
        let has_factor = match factors {
            Some(factors) => factors.has_factor(user).await?,
            None => false,
        };
        Ok(AccountPolicy { has_factor, staff_needs_factor: false })
    }

    /// `user`'s factors. Errors: `Storage`.
    pub async fn state(&self, user: UserId) -> Result<FactorState, ServiceError> {
        let totp = self.store.totp(user).await?.is_some_and(|t| t.confirmed);
        let recovery_codes_left = self.store.recovery_codes_left(user).await?;
        Ok(FactorState { totp, recovery_codes_left })
    }

    /// Starts (or restarts) enrolling a TOTP app for `user`, listed as
    /// `account` (the username): a new pending secret. Errors: `Invalid`
    /// when the account already has a confirmed TOTP; `Storage`.
    pub async fn start_totp(&self, user: UserId, account: &str) -> Result<TotpEnrolment, ServiceError> {
        let secret = TotpSecret::generate();
        if !self.store.begin_totp(user, &self.key.seal(user, &secret)).await? {
            return Err(ServiceError::Invalid("a conta já tem um aplicativo autenticador".into()));
        }
        Ok(self.enrolment(&secret, account))
    }

    /// The pending enrolment of `user` (the page shown again), if any.
    /// Errors: `Storage`; `Internal` when the secret cannot be opened (the
    /// key changed).
    pub async fn pending_totp(&self, user: UserId, account: &str) -> Result<Option<TotpEnrolment>, ServiceError> {
        match self.store.totp(user).await? {
            Some(record) if !record.confirmed => {
                Ok(Some(self.enrolment(&self.open(user, &record.sealed_secret)?, account)))
            }
            _ => Ok(None),
        }
    }

    fn enrolment(&self, secret: &TotpSecret, account: &str) -> TotpEnrolment {
        TotpEnrolment {
            uri: Redacted(secret.otpauth_uri(&self.issuer, account)),
            secret_text: Redacted(secret.base32()),
        }
    }

    fn open(&self, user: UserId, sealed: &[u8]) -> Result<TotpSecret, ServiceError> {
        self.key.open(user, sealed).map_err(|e| ServiceError::Internal(e.to_string()))
    }

    /// Confirms `user`'s pending TOTP with `code` (its step becomes used)
    /// and, as the account's first factor, makes its recovery codes:
    /// `Ok(Some(codes))` to show once; `Ok(None)` for a wrong code (counted
    /// against the account and `from`). Errors: `Invalid` without a pending
    /// enrolment; `Throttled`; `Storage`, `Internal`.
    pub async fn confirm_totp(
        &self,
        user: UserId,
        code: &str,
        from: Option<ClientAddress>,
    ) -> Result<Option<Vec<Redacted<String>>>, ServiceError> {
        let username = self.credentials.username_of(user).await?;
        let subject = Subject::SecondFactorCode(&username);
        self.credentials.throttle().check_subject(subject, from).await?;
        let record = match self.store.totp(user).await? {
            Some(record) if !record.confirmed => record,
            _ => return Err(ServiceError::Invalid("não há um aplicativo autenticador a confirmar".into())),
        };
        let secret = self.open(user, &record.sealed_secret)?;
        let now = self.clock.now();
        let Some(step) = secret.matching_step(code, now, None) else {
            self.credentials.throttle().record_failure(subject, from).await?;
            return Ok(None);
        };
        self.record(user, SecurityEventKind::TotpEnabled, "").await?;
        if !self.store.confirm_totp(user, step, now).await? {
            return Err(ServiceError::Invalid("não há um aplicativo autenticador a confirmar".into()));
        }
        tracing::info!(user = user.0, "TOTP enrolled");
        Ok(Some(self.new_recovery_codes(user).await?))
    }

    /// The person's new set of recovery codes (the old set dies), recorded
    /// in their security activity, to show once. Errors: `Storage`.
    pub async fn renew_recovery_codes(&self, user: UserId) -> Result<Vec<Redacted<String>>, ServiceError> {
        self.record(user, SecurityEventKind::RecoveryCodesRenewed, "").await?;
        self.new_recovery_codes(user).await
    }

    /// A new set of recovery codes for `user` (the old set dies), to show
    /// once. Errors: `Storage`.
    pub async fn new_recovery_codes(&self, user: UserId) -> Result<Vec<Redacted<String>>, ServiceError> {
        let codes = generate_recovery_codes();
        let hashes: Vec<[u8; 32]> = codes.iter().filter_map(|c| recovery_code_hash(c)).collect();
        self.store.replace_recovery_codes(user, &hashes).await?;
        tracing::info!(user = user.0, "recovery codes (re)generated");
        Ok(codes)
    }

    /// Checks a second factor `code` of `user` sent from `from`: a TOTP
    /// code of a step not used before (the step becomes used: of two
    /// submissions of one code exactly one passes), or an unused recovery
    /// code (used up). `Ok(Some(method))` when it passes; `Ok(None)` when
    /// not. Wrong codes count in the account's own code budget (as many as
    /// the password's limit in its window, in a row: a right code forgets
    /// them, a right password does not) and against `from`; the wrong code
    /// that spends the budget is recorded in the person's security activity
    /// and told by mail. Errors: `Throttled` (before anything is checked);
    /// `UnknownUser`; `Storage`, `Internal`.
    pub async fn verify(
        &self,
        user: UserId,
        code: &str,
        from: Option<ClientAddress>,
    ) -> Result<Option<AuthMethod>, ServiceError> {
        let username = self.credentials.username_of(user).await?;
        let subject = Subject::SecondFactorCode(&username);
        let throttle = self.credentials.throttle();
        throttle.check_subject(subject, from).await?;
        let method = self.check_code(user, code).await?;
        match method {
            Some(_) => throttle.record_success(subject).await,
            None => {
                if throttle.record_failure(subject, from).await? {
                    tracing::warn!(
                        user = user.0,
                        "wrong second-factor codes spent the account's budget: the second step is locked"
                    );
                    self.record(user, SecurityEventKind::SecondFactorLocked, "").await?;
                }
            }
        }
        Ok(method)
    }

    async fn check_code(&self, user: UserId, code: &str) -> Result<Option<AuthMethod>, ServiceError> {
        if let Some(hash) = recovery_code_hash(code) {
            return Ok(self.store.use_recovery_code(user, &hash).await?.then_some(AuthMethod::RecoveryCode));
        }
        let Some(record) = self.store.totp(user).await?.filter(|t| t.confirmed) else {
            return Ok(None);
        };
        let secret = self.open(user, &record.sealed_secret)?;
        match secret.matching_step(code, self.clock.now(), record.last_step) {
            Some(step) => Ok(self.store.use_totp_step(user, step).await?.then_some(AuthMethod::Totp)),
            None => Ok(None),
        }
    }

    /// Turns `user`'s authenticator app off; the recovery codes go too
    /// when no factor is left. Whether there was an app. Errors: `Storage`.
    pub async fn remove_totp(&self, user: UserId) -> Result<bool, ServiceError> {
        self.record(user, SecurityEventKind::TotpDisabled, "").await?;
        let removed = self.store.remove_totp(user).await?;
        if removed {
            tracing::info!(user = user.0, "TOTP removed");
        }
        self.forget_codes_without_factor(user).await?;
        Ok(removed)
    }

    /// Deletes `user`'s recovery codes when no factor is left (they are
    /// the spare of a factor, never one alone). Errors: `Storage`.
    pub async fn forget_codes_without_factor(&self, user: UserId) -> Result<(), ServiceError> {
        if !self.has_factor(user).await? {
            self.store.replace_recovery_codes(user, &[]).await?;
        }
        Ok(())
    }

    /// Removes every second factor of `user` (the TOTP app, the passkeys
    /// and the recovery codes); whether there was any. Errors: `Storage`.
    pub async fn remove_all(&self, user: UserId) -> Result<bool, ServiceError> {
        let removed = self.store.remove_all(user).await?;
        if removed {
            tracing::info!(user = user.0, "second factors removed");
        }
        Ok(removed)
    }
}
