//! The browser session: logging in by any method, opening, resuming and
//! ending sessions, and the anti-forgery tokens of the forms that belong to
//! a session or lead to one. The OAuth, account, administration and
//! client-component pages all reach sessions here.
//!
//! A session is a stored record ([`credencial_ports::SessionStore`]); the
//! cookie holds its random id, the store its hash
//! ([`credencial_domain::session`]). Resuming costs one round trip and
//! checks the account is active; logging out, a password change, staff's
//! "end all" and deactivation delete records, which ends those sessions on
//! every instance at once.

use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;

use credencial_domain::admin::LoginVia;
use credencial_domain::assurance::{decide, AccountPolicy, Decision, Proof};
use credencial_domain::federation::{Assurance, Demand};
use credencial_domain::form_token::{form_token, form_token_matches, FormPurpose};
use credencial_domain::oauth::random_token_text;
use credencial_domain::session::{
    approximate_address, device_summary, AuthMethod, SessionLimits, SessionToken, TOUCH_INTERVAL_SECS,
};
use credencial_domain::throttle::ClientAddress;
use credencial_domain::{Redacted, UserId};
use credencial_ports::{Clock, LoginHistory, NewSession, SessionEntry, SessionStore};
use rand::RngCore;
use secrecy::SecretString;

use crate::credentials::CredentialCheck;
use crate::error::ServiceError;
use crate::metrics::SessionEnd;
use crate::metrics::{LoginForm, LoginMethod, LoginOutcome, Metrics};
use crate::passkey::PasskeyService;
use crate::second_factor::SecondFactorService;
use crate::security_log::SecurityLog;
use credencial_domain::security_event::SecurityEventKind;

/// How recent an authentication must be for a sensitive change (ending
/// other sessions, changing the e-mail) to go without the password asked
/// again: 5 minutes.
pub const REAUTH_SECS: i64 = 5 * 60;

/// How long a session waiting for the second factor lives: 5 minutes.
pub const PENDING_SECS: i64 = 5 * 60;

/// The most sessions `/conta/sessoes/` lists (a person with more sees the
/// most recently active; "end all others" ends them all).
pub const LISTED_SESSIONS: u32 = 50;

/// A person's live session, as a request resumed it. `Debug` does not show
/// the session's id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginSession {
    /// The logged-in user.
    pub user_id: UserId,
    /// The session's record id (named on `/conta/sessoes/`).
    pub id: i64,
    /// The cookie's id: the key of the session's form tokens.
    pub(crate) key: Redacted<String>,
    /// The account's password was set by an administrator: until it is
    /// changed, the pages send the person to `/conta/senha/`.
    pub must_change_password: bool,
    /// When the person last authenticated (Unix seconds): the ID token's
    /// `auth_time`, what `max_age` is measured from.
    pub auth_time: i64,
    /// How (`amr` values, space-separated).
    pub amr: String,
    /// The authentication context class reached (`acr`).
    pub acr: String,
    /// The password was right and the account has a second factor: only
    /// the second-factor page accepts this session.
    pub second_factor_pending: bool,
    /// The name the pages greet the person by (empty when the session was
    /// just opened: the next page reads it).
    pub display_name: String,
}

impl LoginSession {
    /// A session of `user_id` with record id `id` whose cookie holds `key`
    /// (what [`SessionService::resume`] answers; for callers that hold a
    /// session from elsewhere, and tests).
    pub fn new(user_id: UserId, id: i64, key: String, auth_time: i64, amr: &str, acr: &str) -> Self {
        Self {
            user_id,
            id,
            key: Redacted(key),
            must_change_password: false,
            auth_time,
            amr: amr.to_owned(),
            acr: acr.to_owned(),
            second_factor_pending: false,
            display_name: String::new(),
        }
    }

    /// The session's id as applications see it (ID tokens' and logout
    /// tokens' `sid`).
    pub fn sid(&self) -> String {
        credencial_domain::session::sid_of_cookie(&self.key)
    }

    /// The anti-forgery token of the account and panel pages' forms, keyed
    /// by this session's id: a form rendered for one session never passes
    /// in another, and a page of another site cannot read it.
    pub fn account_form_token(&self) -> String {
        form_token(&self.key, FormPurpose::Account, &[])
    }

    /// Whether `presented` is this session's account form token (compared
    /// in constant time).
    pub fn account_form_token_matches(&self, presented: &str) -> bool {
        form_token_matches(&self.key, FormPurpose::Account, &[], presented)
    }

    /// Whether the session may pass a second factor now: it waits for one
    /// after the password, or it was opened by the password alone and a
    /// page or an application asks for more (step-up).
    pub fn needs_second_factor(&self) -> bool {
        self.second_factor_pending || !self.assurance().second_factor
    }

    /// How the person proved who they are in this session (the one
    /// assurance model, read from the stored `amr` and `acr`).
    pub fn proof(&self) -> Proof {
        Proof::from_stored(&self.amr, &self.acr, self.auth_time)
    }

    /// What the session proves: a second factor (passed here, or at an
    /// upstream trusted for it) and, for a login through gov.br, its level.
    pub fn assurance(&self) -> Assurance {
        self.proof().assurance()
    }
}

/// A session just opened: the session and the id to keep in the cookie.
/// `Debug` does not show the id.
#[derive(Debug, Clone)]
pub struct SignedSession {
    /// The session.
    pub session: LoginSession,
    /// The cookie's value.
    pub token: Redacted<String>,
    /// The cookie's `Max-Age`: the absolute limit.
    pub max_age_secs: i64,
}

/// Where a login comes from, as the person will see it on their session
/// list: the browser's `User-Agent` and the client address (both reduced
/// before they are stored).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    /// The client address the limits count (`None` when unknown).
    pub address: Option<ClientAddress>,
    /// The `User-Agent` header.
    pub user_agent: Option<String>,
}

impl Origin {
    /// The approximate place of the address (a /24 or /48), or empty.
    pub fn place(&self) -> String {
        self.address.map(|a| approximate_address(IpAddr::from(a))).unwrap_or_default()
    }
}

/// The person's sessions and which one is the asking browser's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionList {
    /// Live sessions, the most recently active first.
    pub sessions: Vec<SessionEntry>,
    /// The record id of the session the list was asked from.
    pub current: i64,
}

/// The session use cases.
pub struct SessionService {
    store: Arc<dyn SessionStore>,
    factors: Option<Arc<SecondFactorService>>,
    passkeys: Option<Arc<PasskeyService>>,
    security: Option<Arc<SecurityLog>>,
    credentials: Arc<CredentialCheck>,
    clock: Arc<dyn Clock>,
    limits: SessionLimits,
    logins: Option<Arc<dyn LoginHistory>>,
    metrics: Metrics,
}

impl fmt::Debug for SessionService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionService").field("limits", &self.limits).finish_non_exhaustive()
    }
}

impl SessionService {
    /// Sessions in `store`, with `limits`; passwords are checked by
    /// `credentials` (the token service's: the same limits and hashing
    /// threads as `pair`).
    pub fn new(
        store: Arc<dyn SessionStore>,
        credentials: Arc<CredentialCheck>,
        clock: Arc<dyn Clock>,
        limits: SessionLimits,
    ) -> Self {
        Self {
            store,
            factors: None,
            passkeys: None,
            security: None,
            credentials,
            clock,
            limits,
            logins: None,
            metrics: Metrics::disabled(),
        }
    }

    /// The same service, asking the second factor of accounts that have
    /// one (`factors`) before a login's session is complete.
    pub fn with_second_factors(mut self, factors: Arc<SecondFactorService>) -> Self {
        self.factors = Some(factors);
        self
    }

    /// The same service, also logging in by passkey (alone, or as the
    /// second factor).
    pub fn with_passkeys(mut self, passkeys: Arc<PasskeyService>) -> Self {
        self.passkeys = Some(passkeys);
        self
    }

    /// The same service, recording logins and the ending of other
    /// sessions in the person's security activity.
    pub fn with_security_log(mut self, log: Arc<SecurityLog>) -> Self {
        self.security = Some(log);
        self
    }

    /// The security activity, when the service keeps one.
    pub fn security_log(&self) -> Option<&Arc<SecurityLog>> {
        self.security.as_ref()
    }

    /// Records `kind` for `user` (with `detail`, from `origin` when known)
    /// in the security activity, when the service keeps one. Errors:
    /// `Storage` (the caller fails: the event must be visible to the
    /// person).
    pub async fn record_event(
        &self,
        user: UserId,
        kind: SecurityEventKind,
        detail: &str,
        origin: Option<&Origin>,
    ) -> Result<(), ServiceError> {
        match &self.security {
            Some(log) => log.record(user, kind, detail, origin).await,
            None => Ok(()),
        }
    }

    /// Records a completed login of `user` that proved `proof` from
    /// `origin`.
    async fn record_login(&self, user: UserId, proof: &Proof, origin: &Origin) -> Result<(), ServiceError> {
        self.record_event(user, SecurityEventKind::Login, &proof.stored_amr(), Some(origin)).await
    }

    /// The account's own bar (the one rule's [`AccountPolicy`]): whether
    /// it has a second factor. Without second factors offered, none.
    /// Errors: `Storage`.
    pub async fn account_policy(&self, user: UserId) -> Result<AccountPolicy, ServiceError> {
        SecondFactorService::account_policy(self.factors.as_deref(), user).await
    }

    /// Whether a login of `user` that proved `proof` must wait for a
    /// second factor before its session opens: the one rule, with the
    /// account's policy and no application (an application's own demand is
    /// asked where its request is served). Errors: `Storage`.
    async fn waits_for_factor(&self, user: UserId, proof: &Proof) -> Result<bool, ServiceError> {
        let account = self.account_policy(user).await?;
        Ok(decide(proof, account, &Demand::default()) == Decision::AddFactor)
    }

    /// The credential checks (the login form's limits).
    pub fn credentials(&self) -> &Arc<CredentialCheck> {
        &self.credentials
    }

    /// The passkeys, when the service offers them.
    pub fn passkeys(&self) -> Option<&Arc<PasskeyService>> {
        self.passkeys.as_ref()
    }

    /// The same service, counting logins and ended sessions on `metrics`.
    pub fn with_metrics(mut self, metrics: Metrics) -> Self {
        self.metrics = metrics;
        self
    }

    /// The same service, recording every login in `logins` (the panel's
    /// recent logins).
    pub fn with_login_history(mut self, logins: Arc<dyn LoginHistory>) -> Self {
        self.logins = Some(logins);
        self
    }

    /// The limits sessions are opened and resumed with.
    pub fn limits(&self) -> SessionLimits {
        self.limits
    }

    fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    // ------------------------------------------------------------ login

    /// Checks a login form's username (or CPF) and password sent from
    /// `origin` (the token service's rule: unknown user, wrong password and
    /// inactive account cost the same and answer `InvalidCredentials`; the
    /// same brute-force limits as `pair`, `Throttled`) and opens a new
    /// session (never the browser's old one). The login is recorded in the
    /// history, when the service has one: a failure to record it is logged
    /// and does not fail the login.
    pub async fn log_in(
        &self,
        via: LoginVia,
        username: &str,
        password: SecretString,
        origin: &Origin,
    ) -> Result<SignedSession, ServiceError> {
        let checked = self.credentials.check_login(username, password, origin.address).await;
        self.metrics().login(LoginForm::from(via), &checked);
        if let Some(outcome) = LoginOutcome::of(&checked) {
            self.metrics().login_method(LoginMethod::Password, outcome);
        }
        let (user, _) = checked?;
        let proof = Proof::local(AuthMethod::Password, self.clock.now());
        let pending = self.waits_for_factor(user.id, &proof).await?;
        if !pending {
            self.record_login(user.id, &proof, origin).await?;
        }
        let mut signed = self.open_with(user.id, &proof, origin, pending).await?;
        signed.session.must_change_password = user.must_change_password;
        if let Some(logins) = &self.logins {
            if let Err(e) = logins.record(user.id, via).await {
                tracing::warn!(error = %e, user = user.id.0, "recording a login in the history failed");
            }
        }
        tracing::info!(user = user.id.0, via = via.code(), "login session opened");
        Ok(signed)
    }

    /// Opens a new session of `user`, who just authenticated by `methods`
    /// from `origin` (a login, a sign-up, a password change). Errors:
    /// `Storage`.
    pub async fn open(
        &self,
        user: UserId,
        methods: &[AuthMethod],
        origin: &Origin,
    ) -> Result<SignedSession, ServiceError> {
        let proof = Proof { local: methods.to_vec(), upstream: None, at: self.clock.now() };
        self.open_with(user, &proof, origin, false).await
    }

    /// Logs in `user`, who authenticated at the upstream provider named
    /// `provider` (`via` the account's or the OAuth login form) and proved
    /// `proof`: a new session, recorded in the security activity (as
    /// `fed:<provider>`) and the history. When the one rule says the
    /// account's bar is not met (an account with a second factor here, and
    /// an upstream login that does not count as one), the session waits
    /// for the factor, as after a password (the login is recorded when it
    /// is passed). Errors: `Storage`.
    pub async fn open_federated(
        &self,
        user: UserId,
        via: LoginVia,
        proof: &Proof,
        provider: &str,
        origin: &Origin,
    ) -> Result<SignedSession, ServiceError> {
        self.metrics().login_method(LoginMethod::Federated, LoginOutcome::Succeeded);
        let pending = self.waits_for_factor(user, proof).await?;
        if !pending {
            let detail = format!("{}:{provider}", credencial_domain::federation::methods::FEDERATED);
            self.record_event(user, SecurityEventKind::Login, &detail, Some(origin)).await?;
        }
        let signed = self.open_with(user, proof, origin, pending).await?;
        if let Some(logins) = &self.logins {
            if let Err(e) = logins.record(user, via).await {
                tracing::warn!(error = %e, user = user.0, "recording a login in the history failed");
            }
        }
        tracing::info!(user = user.0, via = via.code(), "login through an upstream provider; session opened");
        Ok(signed)
    }

    /// Opens a session of `user` that proved `proof` (waiting for the
    /// second factor when `pending`: such a session lives
    /// [`PENDING_SECS`] at most).
    async fn open_with(
        &self,
        user: UserId,
        proof: &Proof,
        origin: &Origin,
        pending: bool,
    ) -> Result<SignedSession, ServiceError> {
        let token = SessionToken::generate();
        let now = self.clock.now();
        let (amr, acr) = (proof.stored_amr(), proof.acr().to_owned());
        let expires_at = if pending { now.saturating_add(PENDING_SECS) } else { self.limits.expires_at(now) };
        let new = NewSession {
            token_hash: token.hash(),
            user,
            now,
            expires_at,
            auth_time: now,
            amr: amr.clone(),
            acr: acr.clone(),
            device: device_summary(origin.user_agent.as_deref()),
            place: origin.place(),
            second_factor_pending: pending,
        };
        let id = self.store.create(&new).await?;
        let session = LoginSession {
            user_id: user,
            id,
            key: Redacted(token.expose().to_owned()),
            must_change_password: false,
            auth_time: now,
            amr,
            acr,
            second_factor_pending: pending,
            display_name: String::new(),
        };
        Ok(SignedSession { session, token: Redacted(token.expose().to_owned()), max_age_secs: expires_at - now })
    }

    /// The live session a cookie names: a stored session within both limits
    /// of an active account (its activity recorded, at most once a minute).
    /// `Ok(None)` for none: a cookie of another shape (an old session JWT
    /// included) is never looked up. Errors: `Storage`.
    pub async fn resume(&self, cookie: &str) -> Result<Option<LoginSession>, ServiceError> {
        let Some(token) = SessionToken::from_cookie(cookie) else {
            return Ok(None);
        };
        let now = self.clock.now();
        let found = self
            .store
            .resume(&token.hash(), now, self.limits.idle_since(now), now.saturating_sub(TOUCH_INTERVAL_SECS))
            .await?;
        Ok(found.map(|s| LoginSession {
            user_id: s.user,
            id: s.id,
            key: Redacted(token.expose().to_owned()),
            must_change_password: s.must_change_password,
            auth_time: s.auth_time,
            amr: s.amr,
            acr: s.acr,
            second_factor_pending: s.second_factor_pending,
            display_name: s.display_name,
        }))
    }

    /// Completes the login of `pending` (a session waiting for the second
    /// factor, or one of the password alone stepping up) with `code` sent
    /// from `origin`: on a right code, that session ends and a new one (a
    /// new id) opens, authenticated by the password and the factor; `Ok(None)` for a wrong code (counted as a
    /// wrong password). Errors: `Invalid` when the session is not waiting
    /// or the service has no second factors; `Throttled`; `Storage`.
    pub async fn complete_second_factor(
        &self,
        pending: &LoginSession,
        code: &str,
        origin: &Origin,
    ) -> Result<Option<SignedSession>, ServiceError> {
        let Some(factors) = self.factors.as_ref().filter(|_| pending.needs_second_factor()) else {
            return Err(ServiceError::Invalid("a sessão não espera um segundo fator".into()));
        };
        let outcome = factors.verify(pending.user_id, code, origin.address).await;
        let form = LoginForm::SecondFactor;
        // A wrong code is counted under the method its shape names.
        let shaped = match credencial_domain::second_factor::recovery_code_hash(code) {
            Some(_) => LoginMethod::RecoveryCode,
            None => LoginMethod::Totp,
        };
        if matches!(outcome, Err(ServiceError::Throttled { .. })) {
            self.metrics().login_outcome(form, LoginOutcome::Throttled);
            self.metrics().login_method(shaped, LoginOutcome::Throttled);
        }
        let Some(method) = outcome? else {
            self.metrics().login_outcome(form, LoginOutcome::Failed);
            self.metrics().login_method(shaped, LoginOutcome::Failed);
            return Ok(None);
        };
        self.second_factor_passed(pending, method, origin).await.map(Some)
    }

    /// The session `pending` passed the second factor by `method`: it ends,
    /// and a new one (a new id) opens, authenticated by what `pending`
    /// proved (the password, or an upstream's login) and `method`.
    async fn second_factor_passed(
        &self,
        pending: &LoginSession,
        method: AuthMethod,
        origin: &Origin,
    ) -> Result<SignedSession, ServiceError> {
        self.metrics().login_outcome(LoginForm::SecondFactor, LoginOutcome::Succeeded);
        self.metrics().login_method(LoginMethod::from(method), LoginOutcome::Succeeded);
        let proof = pending.proof().with_factor(method, self.clock.now());
        self.record_login(pending.user_id, &proof, origin).await?;
        if let Some(token) = SessionToken::from_cookie(&pending.key) {
            self.store.end(&token.hash()).await?;
        }
        let mut signed = self.open_with(pending.user_id, &proof, origin, false).await?;
        signed.session.must_change_password = pending.must_change_password;
        tracing::info!(user = pending.user_id.0, method = method.amr(), "second factor passed; session opened");
        Ok(signed)
    }

    /// Completes the login of `pending` (as
    /// [`complete_second_factor`](Self::complete_second_factor)) with one
    /// of the person's passkeys: the browser's `credential` for ceremony
    /// `ceremony`. `Ok(None)` when the passkey's answer does not verify.
    /// Errors: `Invalid` when the session is not waiting, the service has
    /// no passkeys, or the ceremony is gone or another's; `Storage`.
    pub async fn complete_second_factor_with_passkey(
        &self,
        pending: &LoginSession,
        ceremony: &str,
        credential: &str,
        origin: &Origin,
    ) -> Result<Option<SignedSession>, ServiceError> {
        let Some(passkeys) = self.passkeys.as_ref().filter(|_| pending.needs_second_factor()) else {
            return Err(ServiceError::Invalid("a sessão não espera um segundo fator".into()));
        };
        match passkeys.finish_second_factor(pending.user_id, ceremony, credential).await? {
            Some(login) => self.second_factor_passed(pending, login.method, origin).await.map(Some),
            None => {
                self.metrics().login_outcome(LoginForm::SecondFactor, LoginOutcome::Failed);
                self.metrics().login_method(LoginMethod::Passkey, LoginOutcome::Failed);
                Ok(None)
            }
        }
    }

    /// Logs in by a passkey alone (`via` the account's or the OAuth login
    /// form): the browser's `credential` for ceremony `ceremony`. A new
    /// session of the account whose passkey answered, authenticated by it
    /// (two factors in one); `Ok(None)` when the answer does not verify or
    /// the account is inactive (the same answer). Errors: `Invalid` when
    /// the service has no passkeys or the ceremony is gone; `Storage`.
    pub async fn log_in_with_passkey(
        &self,
        via: LoginVia,
        ceremony: &str,
        credential: &str,
        origin: &Origin,
    ) -> Result<Option<SignedSession>, ServiceError> {
        let Some(passkeys) = self.passkeys.as_ref() else {
            return Err(ServiceError::Invalid("este serviço não oferece chaves de acesso".into()));
        };
        let login = match passkeys.finish_login(ceremony, credential).await? {
            Some(login) if self.credentials.is_active_user(login.user).await? => login,
            _ => {
                self.metrics().login_method(LoginMethod::Passkey, LoginOutcome::Failed);
                return Ok(None);
            }
        };
        self.metrics().login_method(LoginMethod::Passkey, LoginOutcome::Succeeded);
        self.record_login(login.user, &Proof::local(login.method, self.clock.now()), origin).await?;
        let signed = self.open(login.user, &[login.method], origin).await?;
        if let Some(logins) = &self.logins {
            if let Err(e) = logins.record(login.user, via).await {
                tracing::warn!(error = %e, user = login.user.0, "recording a login in the history failed");
            }
        }
        tracing::info!(user = login.user.0, via = via.code(), "passkey login; session opened");
        Ok(Some(signed))
    }

    /// Whether `session`'s person authenticated within [`REAUTH_SECS`].
    pub fn recently_authenticated(&self, session: &LoginSession) -> bool {
        self.clock.now().saturating_sub(session.auth_time) <= REAUTH_SECS
    }

    /// Re-authentication: checks `password` of `session`'s person sent
    /// from `from` (the login limits apply; a wrong one counts) and, when
    /// right, records it as the session's latest authentication (its
    /// `auth_time`). Errors: `Throttled`; `Storage`.
    pub async fn reauthenticate(
        &self,
        session: &LoginSession,
        password: SecretString,
        from: Option<ClientAddress>,
    ) -> Result<bool, ServiceError> {
        if !self.credentials.check_password_of(session.user_id, password, from).await? {
            return Ok(false);
        }
        self.store.reauthenticated(session.id, self.clock.now()).await?;
        Ok(true)
    }

    // ----------------------------------------------------------- ending

    /// Ends the session a cookie names (logging out): whether there was
    /// one. Errors: `Storage` (the session may still be live: the caller
    /// says the logout failed).
    pub async fn end(&self, cookie: &str) -> Result<bool, ServiceError> {
        let Some(token) = SessionToken::from_cookie(cookie) else {
            return Ok(false);
        };
        let ended = self.store.end(&token.hash()).await?;
        if ended {
            self.metrics().sessions_ended(SessionEnd::Logout, 1);
        }
        Ok(ended)
    }

    /// Ends `user`'s session with record id `id` (from `/conta/sessoes/`);
    /// `false` when it is not theirs or already over. Errors: `Storage`.
    pub async fn end_one(&self, user: UserId, id: i64) -> Result<bool, ServiceError> {
        let ended = self.store.end_one(user, id).await?;
        if ended {
            self.metrics().sessions_ended(SessionEnd::Person, 1);
        }
        Ok(ended)
    }

    /// Ends every session of `user` but `except` (the asking browser's),
    /// for `cause`, and returns how many ended. Errors: `Storage`.
    pub async fn end_all(&self, user: UserId, except: Option<i64>, cause: SessionEnd) -> Result<u64, ServiceError> {
        // The person's own "end the others" is in their security activity
        // (recorded first: it must not happen unseen).
        if cause == SessionEnd::Person {
            self.record_event(user, SecurityEventKind::OtherSessionsEnded, "", None).await?;
        }
        let ended = self.store.end_all(user, except).await?;
        self.metrics().sessions_ended(cause, ended);
        if ended > 0 {
            tracing::info!(user = user.0, ended, cause = cause.label(), "sessions ended");
        }
        Ok(ended)
    }

    /// The live sessions of `session`'s person, marking `session`.
    /// Errors: `Storage`.
    pub async fn list(&self, session: &LoginSession) -> Result<SessionList, ServiceError> {
        let now = self.clock.now();
        let sessions = self.store.list(session.user_id, now, self.limits.idle_since(now), LISTED_SESSIONS).await?;
        Ok(SessionList { sessions, current: session.id })
    }

    /// Deletes sessions past their absolute limit, at most `limit` rows
    /// (one batch of the [`crate::purge`] loop). Errors: `Storage`.
    pub async fn purge_expired(&self, limit: u32) -> Result<u64, ServiceError> {
        let purged = self.store.purge_expired(self.clock.now(), limit).await?;
        self.metrics().sessions_ended(SessionEnd::Expired, purged);
        Ok(purged)
    }

    // ------------------------------------------------------ form tokens

    /// A fresh random key for a login form's anti-forgery token (kept by
    /// the browser in an HttpOnly cookie: double submit).
    pub fn new_form_key(&self) -> String {
        let mut bytes = [0u8; 32];
        rand::thread_rng().fill_bytes(&mut bytes);
        random_token_text(&bytes)
    }

    /// The login form's anti-forgery token for the cookie key `key`.
    pub fn login_form_token(&self, key: &str) -> String {
        form_token(key, FormPurpose::Login, &[])
    }

    /// Whether `presented` is the login form's token for `key`.
    pub fn login_form_token_matches(&self, key: &str, presented: &str) -> bool {
        form_token_matches(key, FormPurpose::Login, &[], presented)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_form_token_is_bound_to_its_session() {
        let session = |key: &str| LoginSession {
            user_id: UserId(1),
            id: 1,
            key: Redacted(key.to_owned()),
            must_change_password: false,
            auth_time: 0,
            amr: "pwd".into(),
            acr: credencial_domain::session::ACR_PASSWORD.into(),
            second_factor_pending: false,
            display_name: String::new(),
        };
        let a = session("a".repeat(43).as_str());
        let b = session("b".repeat(43).as_str());
        assert!(a.account_form_token_matches(&a.account_form_token()));
        assert!(!b.account_form_token_matches(&a.account_form_token()));
        assert!(!format!("{a:?}").contains(&"a".repeat(43)), "Debug hides the key");
    }
}
