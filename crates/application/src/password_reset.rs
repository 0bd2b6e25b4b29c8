//! "Esqueci minha senha": a person who forgot their password asks for a
//! link by mail and sets a new password through it.
//!
//! - **The request answers the same whatever was typed.** The address's
//!   limit is checked and counted in the request; finding the account,
//!   issuing the link and writing its mail happen after the answer, in a
//!   task of their own, so neither the answer nor its time tells whether
//!   an account matched.
//! - **A link works once, for 30 minutes, under the password it was
//!   issued with** ([`LinkState::check`]): it is taken when used, a newer
//!   link supersedes it, and any change of the password kills it. One
//!   account is sent at most one link every [`QUIET_SECS`].
//! - **A reset never bypasses the second factor**: an account with one is
//!   asked for a code (authenticator or recovery code) before the new
//!   password is set, under the login form's limits.
//! - **Afterwards every session and refresh token of the account ends**,
//!   the security activity shows it, and the account's address is told.

use std::sync::Arc;

use credencial_domain::account::FieldErrors;
use credencial_domain::admin::directory::{DirectoryKey, UNUSABLE_PASSWORD_PREFIX};
use credencial_domain::mail::{LinkPurpose, LinkRefusal, LinkState};
use credencial_domain::security_event::SecurityEventKind;
use credencial_domain::session::{device_summary, SessionToken};
use credencial_domain::{check_new_password, AccountIdentifiers, Cpf, PasswordStamp, UserId, Username};
use credencial_ports::{Clock, MailStore, NewLink, RefreshTokenStore, UserCredentials, UserDirectory, UserRepository};
use secrecy::{ExposeSecret, SecretString};

use crate::account_edit::replace_password;
use crate::error::ServiceError;
use crate::mail::{MailContent, MailRenderer};
use crate::second_factor::SecondFactorService;
use crate::session::{Origin, SessionService};
use crate::tokens::TokenService;

/// Where the request form and the links live (`<public URL>/conta/recuperar/<token>/`).
pub const RECOVER_PATH: &str = "/conta/recuperar/";
/// The least time between two links sent to one account.
pub const QUIET_SECS: i64 = 120;

/// Message of a missing second-factor code.
pub const MSG_CODIGO_FALTANDO: &str = "Informe o código do aplicativo autenticador ou um código de recuperação.";
/// Message of a wrong second-factor code.
pub const MSG_CODIGO_INVALIDO: &str = "Código inválido. Confira o aplicativo e tente de novo.";

/// Why a link cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkProblem {
    /// No such link: never issued, already used, or deleted when the
    /// account's address changed.
    Unknown,
    /// Its 30 minutes are over.
    Expired,
    /// The password changed after it was sent.
    PasswordChanged,
}

/// A link that works, as its page needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsableLink {
    /// The account's username (shown, and the password manager's hint).
    pub username: String,
    /// Whether the account has a second factor (the form asks for a code).
    pub needs_factor: bool,
    user: UserId,
    account: AccountIds,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct AccountIds {
    cpf: String,
    email: String,
    name: String,
}

/// How a reset ended (its failures are `Err`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResetOutcome {
    /// The new password is set; every session and refresh token ended.
    Done {
        /// The account's username (for the login form).
        username: String,
    },
    /// Nothing changed: these fields were refused (`password`, `codigo`).
    Refused(FieldErrors),
    /// The link cannot be used.
    Link(LinkProblem),
}

/// The collaborators of [`PasswordResetService`].
pub struct PasswordResetPorts {
    /// The accounts.
    pub users: Arc<dyn UserRepository>,
    /// Finds an account by CPF or e-mail.
    pub directory: Arc<dyn UserDirectory>,
    /// The links and the outbox.
    pub mail: Arc<dyn MailStore>,
    /// Renders the mails.
    pub renderer: Arc<dyn MailRenderer>,
    /// Refresh tokens (revoked after a reset).
    pub refresh_tokens: Arc<dyn RefreshTokenStore>,
    /// The time.
    pub clock: Arc<dyn Clock>,
}

/// "Esqueci minha senha".
pub struct PasswordResetService {
    ports: PasswordResetPorts,
    tokens: Arc<TokenService>,
    sessions: Arc<SessionService>,
    factors: Option<Arc<SecondFactorService>>,
    /// The configured public URL, without a trailing slash.
    public_url: String,
}

impl std::fmt::Debug for PasswordResetService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PasswordResetService").field("public_url", &self.public_url).finish_non_exhaustive()
    }
}

impl PasswordResetService {
    /// Resets over `ports`, hashing and limiting through `tokens`, ending
    /// sessions through `sessions`, checking codes through `factors`; links
    /// start with `public_url` (the configured one, never a request's).
    pub fn new(
        ports: PasswordResetPorts,
        tokens: Arc<TokenService>,
        sessions: Arc<SessionService>,
        factors: Option<Arc<SecondFactorService>>,
        public_url: &str,
    ) -> Self {
        Self { ports, tokens, sessions, factors, public_url: public_url.trim_end_matches('/').to_owned() }
    }

    /// Asks for a link for the account `typed` names (CPF, username or
    /// e-mail), from `origin`. Answers as soon as the address's limit is
    /// checked and counted; the rest runs in a task of its own (see the
    /// module's documentation). Errors: `Throttled` while the address is
    /// limited; `Storage`.
    pub async fn request(self: &Arc<Self>, typed: &str, origin: &Origin) -> Result<(), ServiceError> {
        let throttle = self.tokens.throttle();
        throttle.check_address(origin.address).await?;
        throttle.record_address_failure(origin.address).await?;
        let (service, typed, origin) = (Arc::clone(self), typed.trim().to_owned(), origin.clone());
        tokio::spawn(async move {
            match service.issue(&typed, &origin).await {
                Ok(true) => tracing::info!("password reset link issued"),
                Ok(false) => tracing::info!("password reset asked: no link issued"),
                Err(e) => tracing::warn!(error = %e, "password reset link not issued"),
            }
        });
        Ok(())
    }

    /// Issues a link for the account `typed` names, when there is an
    /// active one with an address and none was sent in the last
    /// [`QUIET_SECS`]: whether one was. Errors: `Storage`, `Internal`.
    pub async fn issue(&self, typed: &str, origin: &Origin) -> Result<bool, ServiceError> {
        let Some(credentials) = self.find(typed).await? else { return Ok(false) };
        if !credentials.is_active || credentials.password_hash.starts_with(UNUSABLE_PASSWORD_PREFIX) {
            return Ok(false);
        }
        let Some(account) = self.ports.users.find_summary_by_id(credentials.id).await? else { return Ok(false) };
        if account.email.trim().is_empty() {
            return Ok(false);
        }
        let now = self.ports.clock.now();
        let token = SessionToken::generate();
        let purpose = LinkPurpose::PasswordReset;
        let link = format!("{}{RECOVER_PATH}{}/", self.public_url, token.expose());
        let content = MailContent::PasswordReset {
            name: account.name.clone(),
            link,
            minutes: purpose.lifetime_secs() / 60,
            at: now,
            device: device_summary(origin.user_agent.as_deref()),
            place: origin.place(),
        };
        let mail = self.ports.renderer.render(&account.email, &content).map_err(ServiceError::Internal)?;
        let state = LinkState {
            purpose,
            stamp: PasswordStamp::of(&credentials.password_hash).as_str().to_owned(),
            expires_at: now + purpose.lifetime_secs(),
            email: String::new(),
        };
        let new = NewLink { token_hash: token.hash(), user: credentials.id, state };
        Ok(self.ports.mail.issue_link(&new, &mail, now, QUIET_SECS).await?)
    }

    /// The account `typed` names: a CPF, an e-mail address or a username.
    async fn find(&self, typed: &str) -> Result<Option<UserCredentials>, ServiceError> {
        if let Ok(cpf) = Cpf::parse(typed) {
            return Ok(self.ports.users.find_credentials_for_cpf(&cpf, typed).await?);
        }
        if typed.contains('@') {
            let Some(key) = DirectoryKey::parse(typed) else { return Ok(None) };
            let Some(found) = self.ports.directory.find_user(&key).await? else { return Ok(None) };
            return Ok(self.ports.users.find_credentials(&found.username).await?);
        }
        match Username::parse(typed) {
            Ok(name) => Ok(self.ports.users.find_credentials(name.as_str()).await?),
            Err(_) => Ok(None),
        }
    }

    /// Whether the link `token` (its text, from the URL) can be used.
    /// Errors: `Storage`.
    pub async fn open(&self, token: &str) -> Result<Result<UsableLink, LinkProblem>, ServiceError> {
        let Some(token) = SessionToken::from_cookie(token) else { return Ok(Err(LinkProblem::Unknown)) };
        let Some(link) = self.ports.mail.find_link(&token.hash()).await? else { return Ok(Err(LinkProblem::Unknown)) };
        if link.state.purpose != LinkPurpose::PasswordReset {
            return Ok(Err(LinkProblem::Unknown));
        }
        let credentials = self.ports.users.find_credentials_by_id(link.user).await?.filter(|c| c.is_active);
        let account = self.ports.users.find_summary_by_id(link.user).await?;
        let (Some(credentials), Some(account)) = (credentials, account) else { return Ok(Err(LinkProblem::Unknown)) };
        if let Err(refusal) = link.state.check(self.ports.clock.now(), &PasswordStamp::of(&credentials.password_hash)) {
            return Ok(Err(problem(refusal)));
        }
        let needs_factor = match &self.factors {
            Some(factors) => factors.has_factor(link.user).await?,
            None => false,
        };
        Ok(Ok(UsableLink {
            username: credentials.username,
            needs_factor,
            user: link.user,
            account: AccountIds { cpf: account.cpf.unwrap_or_default(), email: account.email, name: account.name },
        }))
    }

    /// Sets `new` as the password of the account of `link` (what [`open`]
    /// found for `token`), after the second factor's `code` when the
    /// account has one, from `origin`; then ends every session and refresh
    /// token of it, records the change and tells the account's address.
    /// The link is taken once here, and checked again after it is taken.
    /// Errors: `Throttled` while the account or the address is limited (a
    /// wrong code counts, as at the login); `Storage`, `Internal`.
    ///
    /// [`open`]: Self::open
    pub async fn complete(
        &self,
        link: &UsableLink,
        token: &str,
        new: SecretString,
        code: &str,
        origin: &Origin,
    ) -> Result<ResetOutcome, ServiceError> {
        let ids = AccountIdentifiers {
            username: &link.username,
            cpf: &link.account.cpf,
            email: &link.account.email,
            name: &link.account.name,
        };
        let mut errors = FieldErrors::new();
        if let Err(e) = check_new_password(new.expose_secret(), ids) {
            errors.push("password", e.mensagem());
            return Ok(ResetOutcome::Refused(errors));
        }
        if let (true, Some(factors)) = (link.needs_factor, &self.factors) {
            if code.trim().is_empty() {
                errors.push("codigo", MSG_CODIGO_FALTANDO);
                return Ok(ResetOutcome::Refused(errors));
            }
            if factors.verify(link.user, code.trim(), origin.address).await?.is_none() {
                errors.push("codigo", MSG_CODIGO_INVALIDO);
                return Ok(ResetOutcome::Refused(errors));
            }
        }
        let hash = self.tokens.credentials().hasher().hash(new).await?;
        // Taken once: of two submissions of one link, one sets the password.
        let Some(token) = SessionToken::from_cookie(token) else { return Ok(ResetOutcome::Link(LinkProblem::Unknown)) };
        let Some(taken) = self.ports.mail.take_link(&token.hash(), LinkPurpose::PasswordReset).await? else {
            return Ok(ResetOutcome::Link(LinkProblem::Unknown));
        };
        // The password may have changed while the code was checked.
        let credentials = self.ports.users.find_credentials_by_id(taken.user).await?.filter(|c| c.is_active);
        let Some(credentials) = credentials else { return Ok(ResetOutcome::Link(LinkProblem::Unknown)) };
        if let Err(refusal) = taken.state.check(self.ports.clock.now(), &PasswordStamp::of(&credentials.password_hash))
        {
            return Ok(ResetOutcome::Link(problem(refusal)));
        }
        self.sessions.record_event(taken.user, SecurityEventKind::PasswordRecovered, "", Some(origin)).await?;
        let revoked =
            replace_password(&*self.ports.users, &*self.ports.refresh_tokens, &self.sessions, taken.user, &hash)
                .await?;
        tracing::info!(user = taken.user.0, revoked, "password reset through a mailed link; every session ended");
        self.tell(link, origin).await;
        Ok(ResetOutcome::Done { username: link.username.clone() })
    }

    /// Writes the notice of a reset to the account's address. A failure is
    /// logged: the password is already set.
    async fn tell(&self, link: &UsableLink, origin: &Origin) {
        let content = MailContent::PasswordResetDone {
            name: link.account.name.clone(),
            at: self.ports.clock.now(),
            device: device_summary(origin.user_agent.as_deref()),
            place: origin.place(),
            recover_link: format!("{}{RECOVER_PATH}", self.public_url),
        };
        let written = match self.ports.renderer.render(&link.account.email, &content) {
            Ok(mail) => self.ports.mail.enqueue(&mail, self.ports.clock.now()).await.map_err(|e| e.to_string()),
            Err(e) => Err(e),
        };
        if let Err(e) = written {
            tracing::warn!(user = link.user.0, error = %e, "the notice of a password reset was not written");
        }
    }
}

fn problem(refusal: LinkRefusal) -> LinkProblem {
    match refusal {
        LinkRefusal::Expired => LinkProblem::Expired,
        LinkRefusal::Superseded => LinkProblem::PasswordChanged,
    }
}
