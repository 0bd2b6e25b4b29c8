//! Logging in through an upstream identity provider (gov.br, or any
//! OpenID provider): starting the code flow, finishing it on the callback,
//! and what the login then does to accounts — sign in, link, confirm a link
//! with the account's password, or create an account — by the rules of
//! [`credencial_domain::federation::linking`]; and the person's links.
//!
//! What a login in progress needs (the provider, `nonce`, PKCE verifier,
//! where to go next) is kept server-side as a ceremony under the SHA-256
//! of the `state` sent ([`PasskeyStore`]'s ceremonies: any instance can
//! finish it, once, within [`LOGIN_SECS`]); the browser carries only the
//! `state`, in the URL and in a cookie the callback must bring back too.
//! The same store keeps, for the life of a session an upstream's login
//! opened, which upstream it was and that login's ID token, for the
//! session's logout through the upstream
//! ([`credencial_domain::federation::logout`]).

use std::fmt;
use std::sync::Arc;

use credencial_domain::account::registration::EmailAddress;
use credencial_domain::admin::LoginVia;
use credencial_domain::assurance::{Proof, UpstreamProof, UpstreamTrust, MULTIPLE_FACTORS};
use credencial_domain::federation::browser_binding::login_key;
use credencial_domain::federation::claims::ClaimsError;
use credencial_domain::federation::linking::{decide, LinkDecision, LinkKey, LinkRefusal};
use credencial_domain::federation::logout::upstream_session_key;
use credencial_domain::federation::methods::FEDERATED;
use credencial_domain::federation::{ProviderKind, Reliability, ReliabilityLevel, Seal, UpstreamIdentity};
use credencial_domain::security_event::SecurityEventKind;
use credencial_domain::session::SessionToken;
use credencial_domain::user::{UserData, Username};
use credencial_domain::{Redacted, UserId};
use credencial_ports::account::TaxIdValidationStore;
use credencial_ports::{
    Ceremony, Clock, FederatedLinkStore, FederationError, IdentityProvider, LinkConflict, LinkRecord, NewProviderLink,
    NewUser, PasskeyStore, Unlinked,
};
use serde::{Deserialize, Serialize};

use crate::error::ServiceError;
use crate::session::{Origin, SessionService, SignedSession};

/// How long a login may stay at the provider (and a link wait for the
/// account's password) before it must start again: 10 minutes.
pub const LOGIN_SECS: i64 = 10 * 60;

/// The path below the public URL a provider sends the browser back to:
/// `/conta/entrar/externo/{id}/retorno/`.
pub fn return_path(provider: &str) -> String {
    format!("/conta/entrar/externo/{provider}/retorno/")
}

/// One upstream provider as the service uses it.
pub struct UpstreamProvider {
    /// Its id in the settings, the URLs and the stored links.
    pub id: String,
    /// The name people see ("gov.br").
    pub name: String,
    /// Which rules its tokens follow.
    pub kind: ProviderKind,
    /// What a standard provider's logins find accounts by (gov.br's: the
    /// CPF, always).
    pub link_key: LinkKey,
    /// Whether its logins stand in for this service's second factor.
    pub trust: UpstreamTrust,
    /// The provider itself.
    pub identity: Arc<dyn IdentityProvider>,
}

impl fmt::Debug for UpstreamProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UpstreamProvider").field("id", &self.id).field("kind", &self.kind).finish_non_exhaustive()
    }
}

/// A login started: where to send the browser, and the browser binding
/// the callback must present (the caller keeps it in an `HttpOnly`
/// cookie). The binding is not the `state`: a callback URL (which carries
/// the `state`) seen by someone else is useless without the cookie of the
/// browser that started the login (RFC 9700 §4.5). `Debug` shows neither.
pub struct StartedLogin {
    /// The provider's authorization URL.
    pub url: Redacted<String>,
    /// 256 random bits that only this browser holds; the login in progress
    /// keeps their SHA-256.
    pub binding: Redacted<String>,
}

impl fmt::Debug for StartedLogin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StartedLogin").finish_non_exhaustive()
    }
}

/// What a finished login tells the person on the next page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkNotice {
    /// The account was linked to the provider now.
    Linked {
        /// Whether the link proved the account's CPF now (it was only
        /// declared before).
        proves_cpf: bool,
    },
    /// A new account was made from the provider's data.
    Created,
}

/// How a brokered login ended well.
#[derive(Debug)]
pub enum FederatedLogin {
    /// A new session; `next` is where to go, `notice` what to say.
    SignedIn {
        /// The session opened.
        signed: SignedSession,
        /// The local page (or `/oauth/authorize/…`) to go to.
        next: String,
        /// What happened to the account, if anything.
        notice: Option<LinkNotice>,
    },
    /// The CPF belongs to an account here: the person logs into it (its
    /// password and factors), then the link is made
    /// ([`FederationService::confirm`]).
    Confirm {
        /// The id of the waiting link (kept in a cookie of the browser).
        token: Redacted<String>,
        /// Whether the link will prove a CPF that was only declared.
        newly_proven: bool,
    },
}

/// A link confirmed by a login into its account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfirmedLink {
    /// Where the login was going (a local page or `/oauth/authorize/…`).
    pub next: String,
    /// The provider's name.
    pub provider: String,
    /// What to tell the person.
    pub notice: LinkNotice,
}

/// Why a brokered login opens nothing: each is a clear page, never a 500.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FederationFailure {
    /// No provider has that id.
    #[error("no provider has that id")]
    UnknownProvider,
    /// The callback's `state` is not a login in progress (expired, used,
    /// another browser's, another provider's).
    #[error("the login is not in progress in this browser")]
    State,
    /// The provider answered the callback with an error (`access_denied`
    /// when the person cancelled).
    #[error("the provider answered {0}")]
    Answered(String),
    /// The provider could not be used, or its ID token was refused.
    #[error(transparent)]
    Provider(#[from] FederationError),
    /// The ID token verified but lacks what a login needs.
    #[error(transparent)]
    Claims(#[from] ClaimsError),
    /// The linking rules refuse.
    #[error(transparent)]
    Refused(#[from] LinkRefusal),
    /// A value of the account to create or link is another account's.
    #[error(transparent)]
    Conflict(#[from] LinkConflict),
}

/// What the service needs from the rest of the application.
pub struct FederationPorts {
    /// The links.
    pub links: Arc<dyn FederatedLinkStore>,
    /// Where logins in progress are kept (the ceremonies' table).
    pub ceremonies: Arc<dyn PasskeyStore>,
    /// The sessions (and the security activity).
    pub sessions: Arc<SessionService>,
    /// Where a gov.br level at or above the validated level marks the
    /// registration validated.
    pub tax_id: Arc<dyn TaxIdValidationStore>,
    /// The clock.
    pub clock: Arc<dyn Clock>,
}

/// The brokered-login use cases.
pub struct FederationService {
    providers: Vec<UpstreamProvider>,
    ports: FederationPorts,
    public_url: String,
    validated_level: ReliabilityLevel,
}

impl fmt::Debug for FederationService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FederationService").field("providers", &self.providers).finish_non_exhaustive()
    }
}

/// The ceremony purpose of a login at the provider.
const LOGIN: &str = "federated_login";
/// The ceremony purpose of a link waiting for the account's password.
const CONFIRM: &str = "federated_confirm";

/// A login at the provider, as kept.
#[derive(Serialize, Deserialize)]
struct KeptLogin {
    provider: String,
    nonce: String,
    verifier: String,
    next: String,
    via: String,
}

/// The ceremony purpose of the upstream a session came through.
const UPSTREAM_SESSION: &str = "federated_session";

/// The upstream a session came through, as kept for its logout: the
/// provider's id and the ID token of the login.
#[derive(Serialize, Deserialize)]
struct KeptUpstreamSession {
    provider: String,
    id_token: String,
}

/// A link waiting for a login into its account, as kept.
#[derive(Serialize, Deserialize)]
struct KeptLink {
    provider: String,
    subject: String,
    proves_cpf: bool,
    newly_proven: bool,
    level: Option<String>,
    seals: Vec<Seal>,
    next: String,
}

impl FederationService {
    /// A service of `providers`, whose callbacks are below `public_url`;
    /// a gov.br login at `validated_level` or above counts as a validated
    /// registration.
    pub fn new(
        providers: Vec<UpstreamProvider>,
        ports: FederationPorts,
        public_url: &str,
        validated_level: ReliabilityLevel,
    ) -> Self {
        Self { providers, ports, public_url: public_url.trim_end_matches('/').to_owned(), validated_level }
    }

    /// The providers, in the settings' order.
    pub fn providers(&self) -> &[UpstreamProvider] {
        &self.providers
    }

    /// The provider with `id`.
    pub fn provider(&self, id: &str) -> Option<&UpstreamProvider> {
        self.providers.iter().find(|p| p.id == id)
    }

    /// The level that counts as a validated registration.
    pub fn validated_level(&self) -> ReliabilityLevel {
        self.validated_level
    }

    /// The redirect URI registered at provider `id`.
    pub fn redirect_uri(&self, id: &str) -> String {
        format!("{}{}", self.public_url, return_path(id))
    }

    /// Starts a login at provider `id` from the login form `via`, to go to
    /// `next` afterwards (a local path the caller checked). Errors: the
    /// failure when the provider is unknown or cannot be reached;
    /// `Storage`.
    pub async fn start(
        &self,
        id: &str,
        via: LoginVia,
        next: &str,
    ) -> Result<Result<StartedLogin, FederationFailure>, ServiceError> {
        let Some(provider) = self.provider(id) else { return Ok(Err(FederationFailure::UnknownProvider)) };
        let started = match provider.identity.start(&self.redirect_uri(id)).await {
            Ok(started) => started,
            Err(e) => {
                tracing::warn!(provider = id, error = %e, "an upstream login could not start");
                return Ok(Err(e.into()));
            }
        };
        let Some(state) = SessionToken::from_cookie(&started.state) else {
            return Err(ServiceError::Internal("the provider adapter made a state of another shape".into()));
        };
        let binding = SessionToken::generate();
        let kept = KeptLogin {
            provider: id.to_owned(),
            nonce: started.nonce.0.clone(),
            verifier: started.pkce_verifier.0.clone(),
            next: next.to_owned(),
            via: via.code().to_owned(),
        };
        self.keep(login_key(state.expose(), binding.expose()), None, LOGIN, &kept).await?;
        Ok(Ok(StartedLogin { url: Redacted(started.url), binding: Redacted(binding.expose().to_owned()) }))
    }

    /// Finishes the login the provider `id` sent back with `state` and
    /// `code` (or the provider's `error`), from `origin`, in the browser
    /// that presents `binding` (its cookie): the login in progress is taken
    /// once by its `state` and that binding together
    /// ([`login_key`]: without the binding nothing is found, and nothing
    /// is used up); then the ID token is redeemed and verified, and the
    /// linking rules decide. Errors: `Storage`, `Internal`.
    pub async fn finish(
        &self,
        id: &str,
        state: &str,
        binding: &str,
        answer: Result<&str, &str>,
        origin: &Origin,
    ) -> Result<Result<FederatedLogin, FederationFailure>, ServiceError> {
        let Some(provider) = self.provider(id) else { return Ok(Err(FederationFailure::UnknownProvider)) };
        let Some((None, kept)) = self.take_by_key::<KeptLogin>(login_key(state, binding), LOGIN).await? else {
            tracing::info!(provider = id, "an upstream callback names no login started in this browser");
            return Ok(Err(FederationFailure::State));
        };
        if kept.provider != id {
            return Ok(Err(FederationFailure::State));
        }
        let code = match answer {
            Ok(code) => code,
            Err(error) => return Ok(Err(FederationFailure::Answered(error.to_owned()))),
        };
        let now = self.ports.clock.now();
        let verified =
            match provider.identity.finish(code, &kept.verifier, &kept.nonce, &self.redirect_uri(id), now).await {
                Ok(verified) => verified,
                Err(e) => {
                    tracing::warn!(provider = id, error = %e, "an upstream login was refused");
                    return Ok(Err(e.into()));
                }
            };
        let identity = match UpstreamIdentity::from_claims(provider.kind, &verified.claims) {
            Ok(identity) => identity,
            Err(e) => return Ok(Err(e.into())),
        };
        let via = LoginVia::from_code(&kept.via).unwrap_or(LoginVia::Account);
        let opened = self.decide_and_open(provider, &identity, via, &kept.next, origin).await?;
        if let Ok(FederatedLogin::SignedIn { signed, .. }) = &opened {
            // The session is open: failing to keep this costs only the
            // upstream's logout, never the login.
            if let Err(e) = self.keep_upstream_session(provider, signed, &verified.token).await {
                tracing::warn!(provider = id, error = %e, "the session's upstream was not kept; its logout will be local");
            }
        }
        Ok(opened)
    }

    /// Keeps, for the life of the session `signed` that a login through
    /// `provider` opened, which provider it was and the ID token of that
    /// login: its logout goes through the provider, with the token as
    /// `id_token_hint` ([`logout_url`](Self::logout_url)). Errors:
    /// `Storage`, `Internal`.
    async fn keep_upstream_session(
        &self,
        provider: &UpstreamProvider,
        signed: &SignedSession,
        id_token: &Redacted<String>,
    ) -> Result<(), ServiceError> {
        let kept = KeptUpstreamSession { provider: provider.id.clone(), id_token: id_token.0.clone() };
        let ceremony = Ceremony {
            id_hash: upstream_session_key(&signed.session.sid()),
            user: Some(signed.session.user_id),
            purpose: UPSTREAM_SESSION.to_owned(),
            state: serde_json::to_string(&kept).map_err(|e| ServiceError::Internal(e.to_string()))?,
            expires_at: self.ports.clock.now().saturating_add(signed.max_age_secs),
        };
        self.ports.ceremonies.put_ceremony(&ceremony).await?;
        Ok(())
    }

    /// What the login of `identity` through `provider` does, done.
    async fn decide_and_open(
        &self,
        provider: &UpstreamProvider,
        identity: &UpstreamIdentity,
        via: LoginVia,
        next: &str,
        origin: &Origin,
    ) -> Result<Result<FederatedLogin, FederationFailure>, ServiceError> {
        let now = self.ports.clock.now();
        let reliability = identity.level.as_ref().map(|(level, seals)| Reliability {
            level: *level,
            seals: seals.clone(),
            read_at: now,
        });
        let link_key = if provider.kind == ProviderKind::GovBr { LinkKey::Cpf } else { provider.link_key };
        let cpf = identity.cpf.as_ref().filter(|_| link_key == LinkKey::Cpf);
        let email_key = match link_key {
            LinkKey::VerifiedEmail => identity.verified_email().and_then(EmailAddress::parse).map(|e| e.key()),
            _ => None,
        };
        // Two first logins of one person at once: the loser of the race
        // finds the winner's link on its second look.
        for first in [true, false] {
            let found = self.ports.links.find(&provider.id, &identity.subject, cpf, email_key.as_ref()).await?;
            let decision = match decide(provider.kind, link_key, identity, found) {
                Ok(decision) => decision,
                Err(refusal) => {
                    tracing::info!(provider = %provider.id, %refusal, "an upstream login opens no account");
                    return Ok(Err(refusal.into()));
                }
            };
            let link = |proves_cpf| NewProviderLink {
                provider: &provider.id,
                subject: &identity.subject,
                proves_cpf,
                reliability: reliability.as_ref(),
                now,
            };
            let (user, notice) = match decision {
                LinkDecision::SignIn(user) => {
                    if provider.kind == ProviderKind::GovBr {
                        self.ports.links.record_level(&provider.id, &identity.subject, reliability.as_ref()).await?;
                    }
                    (user, None)
                }
                LinkDecision::Link { user, proves_cpf } => match self.ports.links.link(user, link(proves_cpf)).await? {
                    Ok(()) => {
                        self.linked(user, provider, origin).await?;
                        (user, Some(LinkNotice::Linked { proves_cpf: false }))
                    }
                    // Another login got there first: look again.
                    Err(_) if first => continue,
                    Err(conflict) => return Ok(Err(conflict.into())),
                },
                LinkDecision::ConfirmLink { user, proves_cpf, newly_proven } => {
                    let kept = KeptLink {
                        provider: provider.id.clone(),
                        subject: identity.subject.clone(),
                        proves_cpf,
                        newly_proven,
                        level: reliability.as_ref().map(|r| r.level.name().to_owned()),
                        seals: reliability.as_ref().map(|r| r.seals.clone()).unwrap_or_default(),
                        next: next.to_owned(),
                    };
                    let token = SessionToken::generate();
                    self.keep(token.hash(), Some(user), CONFIRM, &kept).await?;
                    let token = Redacted(token.expose().to_owned());
                    return Ok(Ok(FederatedLogin::Confirm { token, newly_proven }));
                }
                LinkDecision::Create => {
                    let proves_cpf = provider.kind == ProviderKind::GovBr;
                    let mut created =
                        self.ports.links.create_linked(new_account(identity, true)?, link(proves_cpf)).await?;
                    if created == Err(LinkConflict::EmailTaken) {
                        // gov.br's address is another account's here: the
                        // new account goes without one.
                        created =
                            self.ports.links.create_linked(new_account(identity, false)?, link(proves_cpf)).await?;
                    }
                    match created {
                        Ok(user) => {
                            tracing::info!(provider = %provider.id, user = user.0, "account created from an upstream login");
                            self.linked(user, provider, origin).await?;
                            (user, Some(LinkNotice::Created))
                        }
                        // A first login of the same person at once (its
                        // account, or its CPF or username): look again.
                        Err(_) if first => continue,
                        Err(conflict) => return Ok(Err(conflict.into())),
                    }
                }
            };
            if provider.kind == ProviderKind::GovBr {
                self.validate_by_level(user, &identity.subject, reliability.as_ref().map(|r| r.level)).await?;
            }
            let proof = Proof::federated(upstream_proof(identity, provider.trust), now);
            let signed = self.ports.sessions.open_federated(user, via, &proof, &provider.name, origin).await?;
            return Ok(Ok(FederatedLogin::SignedIn { signed, next: next.to_owned(), notice }));
        }
        Ok(Err(LinkConflict::SubjectLinked.into()))
    }

    /// Makes the link waiting under `token` (kept in the browser that
    /// logged in through the provider), now that `session`'s person logged
    /// into its account — password and second factor — from `origin`.
    /// Errors: `Invalid` when no link waits under `token` (expired, used)
    /// or it waits for another account (the waiting link is dropped);
    /// `Storage`, `Internal`.
    pub async fn confirm(
        &self,
        token: &str,
        session: &crate::session::LoginSession,
        origin: &Origin,
    ) -> Result<ConfirmedLink, ServiceError> {
        let gone = || ServiceError::Invalid("o vínculo expirou ou já foi feito; entre de novo pelo provedor".into());
        if session.second_factor_pending {
            return Err(ServiceError::Invalid("conclua a entrada na conta antes do vínculo".into()));
        }
        let (owner, kept) = self.take::<KeptLink>(token, CONFIRM).await?.ok_or_else(gone)?;
        if owner != Some(session.user_id) {
            return Err(ServiceError::Invalid(
                "a conta em que você entrou não é a que tem este CPF; o vínculo não foi feito".into(),
            ));
        }
        let provider = self.provider(&kept.provider).ok_or_else(gone)?;
        let now = self.ports.clock.now();
        let reliability = kept.level.as_deref().and_then(ReliabilityLevel::from_name).map(|level| Reliability {
            level,
            seals: kept.seals.clone(),
            read_at: now,
        });
        let link = NewProviderLink {
            provider: &kept.provider,
            subject: &kept.subject,
            proves_cpf: kept.proves_cpf,
            reliability: reliability.as_ref(),
            now,
        };
        if self.ports.links.link(session.user_id, link).await?.is_err() {
            return Err(ServiceError::Invalid(format!(
                "esta conta já está vinculada a {}, ou essa conta {} já está vinculada a outra",
                provider.name, provider.name
            )));
        }
        self.linked(session.user_id, provider, origin).await?;
        if provider.kind == ProviderKind::GovBr {
            self.validate_by_level(session.user_id, &kept.subject, reliability.as_ref().map(|r| r.level)).await?;
        }
        Ok(ConfirmedLink {
            next: kept.next,
            provider: provider.name.clone(),
            notice: LinkNotice::Linked { proves_cpf: kept.newly_proven },
        })
    }

    /// The links of `user`, with each provider's name (a link to a
    /// provider no longer configured is named by its id).
    pub async fn links_of(&self, user: UserId) -> Result<Vec<(String, LinkRecord)>, ServiceError> {
        let links = self.ports.links.links_of(user).await?;
        Ok(links
            .into_iter()
            .map(|link| {
                let name = self.provider(&link.provider).map_or_else(|| link.provider.clone(), |p| p.name.clone());
                (name, link)
            })
            .collect())
    }

    /// Unlinks provider `id` from `user` (from `origin`), when another way
    /// to log in remains (`has_password`, or another link): whether a link
    /// went. Errors: `Invalid` when it is the only way left; `Storage`.
    pub async fn unlink(
        &self,
        user: UserId,
        id: &str,
        has_password: bool,
        origin: &Origin,
    ) -> Result<bool, ServiceError> {
        match self.ports.links.unlink(user, id, has_password).await? {
            Unlinked::NotLinked => Ok(false),
            Unlinked::LastWayIn => Err(ServiceError::Invalid(
                "este é o único jeito de entrar na sua conta: defina uma senha antes de desfazer o vínculo".into(),
            )),
            Unlinked::Removed => {
                let name = self.provider(id).map_or(id, |p| p.name.as_str());
                self.ports.sessions.record_event(user, SecurityEventKind::ProviderUnlinked, name, Some(origin)).await?;
                tracing::info!(user = user.0, provider = id, "provider unlinked");
                Ok(true)
            }
        }
    }

    /// Where the browser goes when `session` ends (called before it is
    /// ended on the server): the logout of the upstream the session came
    /// through, which comes back to `back` (a path below the public URL,
    /// registered at the upstream as a `post_logout_redirect_uri`) — its
    /// `end_session_endpoint` with the login's ID token as
    /// `id_token_hint`, or the logout page its settings name (gov.br's).
    /// A session opened through gov.br before upstream sessions were kept
    /// is known by its `acr` (a gov.br level) and goes through gov.br
    /// without a hint. `None` for a session of no upstream, for an
    /// upstream without a logout, or when the upstream's logout URL or
    /// what was kept cannot be had now: the local logout stands (and the
    /// failure is logged).
    pub async fn logout_url(&self, session: &crate::session::LoginSession, back: &str) -> Option<String> {
        let (provider, hint) = match self.take_upstream_session(session).await {
            Some(kept) => (self.provider(&kept.provider)?, Some(kept.id_token)),
            None => {
                session.assurance().level?;
                (self.providers.iter().find(|p| p.kind == ProviderKind::GovBr)?, None)
            }
        };
        match provider.identity.logout_url(&format!("{}{back}", self.public_url), hint.as_deref()).await {
            Ok(url) => url,
            Err(e) => {
                tracing::warn!(provider = %provider.id, error = %e, "the upstream's logout URL is not available; local logout only");
                None
            }
        }
    }

    /// Carries what [`keep_upstream_session`](Self::keep_upstream_session)
    /// kept for `from` (a session waiting for its second factor) over to
    /// `to`, the session that replaced it once the factor passed: its
    /// logout still goes through the upstream. A failure is logged: the
    /// login stands, and its logout is then local.
    pub async fn carry_upstream_session(&self, from: &crate::session::LoginSession, to: &SignedSession) {
        let key = upstream_session_key(&from.sid());
        let taken = match self.ports.ceremonies.take_ceremony(&key, self.ports.clock.now()).await {
            Ok(Some(ceremony)) if ceremony.purpose == UPSTREAM_SESSION && ceremony.user == Some(from.user_id) => {
                ceremony
            }
            Ok(_) => return,
            Err(e) => {
                tracing::warn!(error = %e, "the session's upstream could not be read; its logout will be local");
                return;
            }
        };
        let carried = Ceremony {
            id_hash: upstream_session_key(&to.session.sid()),
            expires_at: self.ports.clock.now().saturating_add(to.max_age_secs),
            ..taken
        };
        if let Err(e) = self.ports.ceremonies.put_ceremony(&carried).await {
            tracing::warn!(error = %e, "the session's upstream was not carried over; its logout will be local");
        }
    }

    /// Takes what [`keep_upstream_session`](Self::keep_upstream_session)
    /// kept for `session`, if anything (a storage failure is logged and
    /// counts as nothing: the local logout must not wait on it).
    async fn take_upstream_session(&self, session: &crate::session::LoginSession) -> Option<KeptUpstreamSession> {
        let key = upstream_session_key(&session.sid());
        let ceremony = match self.ports.ceremonies.take_ceremony(&key, self.ports.clock.now()).await {
            Ok(ceremony) => ceremony?,
            Err(e) => {
                tracing::warn!(error = %e, "the session's upstream could not be read; local logout only");
                return None;
            }
        };
        if ceremony.purpose != UPSTREAM_SESSION || ceremony.user != Some(session.user_id) {
            return None;
        }
        serde_json::from_str(&ceremony.state).ok()
    }

    /// Marks `user`'s registration validated when gov.br, which proved the
    /// CPF `subject`, read `level` at or above the validated level (and
    /// the account's CPF is still that one). A lower level changes
    /// nothing: a validation is never taken back by a login.
    async fn validate_by_level(
        &self,
        user: UserId,
        subject: &str,
        level: Option<ReliabilityLevel>,
    ) -> Result<(), ServiceError> {
        let Some(level) = level.filter(|level| level.validates(self.validated_level)) else { return Ok(()) };
        let Ok(cpf) = credencial_domain::Cpf::parse(subject) else { return Ok(()) };
        self.ports.tax_id.set_validated(user, &cpf).await?;
        tracing::debug!(user = user.0, level = level.name(), "registration valid by a gov.br level");
        Ok(())
    }

    /// Records the link of `user` to `provider` in the security activity.
    async fn linked(&self, user: UserId, provider: &UpstreamProvider, origin: &Origin) -> Result<(), ServiceError> {
        tracing::info!(user = user.0, provider = %provider.id, "account linked to a provider");
        self.ports.sessions.record_event(user, SecurityEventKind::ProviderLinked, &provider.name, Some(origin)).await
    }

    /// Keeps `state` as a ceremony of `purpose` under `id_hash`.
    async fn keep(
        &self,
        id_hash: [u8; 32],
        user: Option<UserId>,
        purpose: &str,
        state: &impl Serialize,
    ) -> Result<(), ServiceError> {
        let ceremony = Ceremony {
            id_hash,
            user,
            purpose: purpose.to_owned(),
            state: serde_json::to_string(state).map_err(|e| ServiceError::Internal(e.to_string()))?,
            expires_at: self.ports.clock.now().saturating_add(LOGIN_SECS),
        };
        self.ports.ceremonies.put_ceremony(&ceremony).await?;
        Ok(())
    }

    /// Takes (deletes) the ceremony of `purpose` named by `id`: the
    /// account it is bound to, if any, and what it kept; `None` when there
    /// is none (expired, used, never made, another purpose's).
    async fn take<T: serde::de::DeserializeOwned>(
        &self,
        id: &str,
        purpose: &str,
    ) -> Result<Option<(Option<UserId>, T)>, ServiceError> {
        let Some(id) = SessionToken::from_cookie(id) else { return Ok(None) };
        self.take_by_key(id.hash(), purpose).await
    }

    /// [`take`](Self::take), by the key the ceremony was kept under.
    async fn take_by_key<T: serde::de::DeserializeOwned>(
        &self,
        key: [u8; 32],
        purpose: &str,
    ) -> Result<Option<(Option<UserId>, T)>, ServiceError> {
        let Some(ceremony) = self.ports.ceremonies.take_ceremony(&key, self.ports.clock.now()).await? else {
            return Ok(None);
        };
        if ceremony.purpose != purpose {
            return Ok(None);
        }
        let kept = serde_json::from_str(&ceremony.state).map_err(|e| ServiceError::Internal(e.to_string()))?;
        Ok(Some((ceremony.user, kept)))
    }
}

/// What a login of `identity` proved, as the one assurance model keeps it:
/// the upstream's mapped methods, its gov.br level, and whether it stands
/// in for a second factor here (the provider's `trust` applied to what the
/// upstream proved).
pub fn upstream_proof(identity: &UpstreamIdentity, trust: UpstreamTrust) -> UpstreamProof {
    UpstreamProof {
        methods: identity.amr.iter().copied().filter(|m| *m != FEDERATED && *m != MULTIPLE_FACTORS).collect(),
        level: identity.level.as_ref().map(|(level, _)| *level),
        second_factor: trust.counts(identity.second_factor),
    }
}

/// The account a first login of `identity` creates: named as the upstream
/// says, with its verified address, its CPF (the username, as for a
/// pre-registered account; else a random one) and no password (one can be
/// set later through "Esqueci minha senha").
fn new_account(identity: &UpstreamIdentity, with_email: bool) -> Result<NewUser, ServiceError> {
    let name = identity.name.clone().unwrap_or_default();
    let username = match &identity.cpf {
        Some(cpf) => cpf.as_str().to_owned(),
        None => format!("externo-{}", &SessionToken::generate().expose()[..16]),
    };
    let username = Username::parse(&username).map_err(|e| ServiceError::Internal(e.to_string()))?;
    let email = identity.verified_email().filter(|_| with_email).unwrap_or_default().to_owned();
    let nome_usual = name.split_whitespace().next().unwrap_or_default().to_owned();
    Ok(NewUser {
        username,
        password_hash: NO_PASSWORD.to_owned(),
        is_active: true,
        data: UserData { email, nome_usual, ..UserData::default() },
        name,
        cpf: identity.cpf.clone(),
    })
}

/// The password hash of an account made by an upstream login: no password
/// verifies against it (an unusable hash); a sign-up never claims such an
/// account (it has a link).
pub const NO_PASSWORD: &str = "!federated";
