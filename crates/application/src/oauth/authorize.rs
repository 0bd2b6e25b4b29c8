//! The authorization endpoint's use cases: validate a request, decide
//! whether to show the login form, the consent page or nothing (remembered
//! consent, `prompt`), and issue codes.

use credencial_domain::account::covers;
use credencial_domain::assurance::{decide, AccountPolicy, Decision};
use credencial_domain::federation::{Demand, ReliabilityLevel, Requirement};
use credencial_domain::oauth::oidc::login_is_recent;
use credencial_domain::oauth::{
    random_token_text, validate_authorization_request, AuthorizationParams, AuthorizationRefusal,
    AuthorizationResponse, ClientId, CodeHash, OAuthError, ResponseMode, ValidAuthorization,
};
use credencial_ports::{NewAuthorizationCode, OAuthClient};
use rand::RngCore;

use super::{serving_client, LoginSession, OAuthService};
use crate::error::ServiceError;

/// Where an authorization request goes next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthorizationStep {
    /// Show this error on our own page (HTTP 400) and never redirect: the
    /// client is unknown or the redirect URI is not one of its own.
    Refused(OAuthError),
    /// Send the browser to this URI: the client's redirect URI with a code,
    /// or with an error and the request's `state` (in its query, or in its
    /// fragment with `response_mode=fragment`).
    Redirect(String),
    /// `response_mode=form_post`: a page whose form posts this response (a
    /// code, or an error, and `state`) to the client's redirect URI.
    FormPost(AuthorizationResponse),
    /// A valid request that needs a login first: show the login form.
    LogIn {
        /// The client's registered name.
        client_name: String,
    },
    /// A valid request: ask the (logged-in) user for consent.
    Consent(ConsentPrompt),
    /// A valid request whose application (or whose `acr_values`) requires
    /// a second factor the session has not passed: ask it (or take the
    /// person to enrol one) and come back.
    SecondFactor {
        /// The client's registered name.
        client_name: String,
    },
    /// A valid request whose `acr_values` require a gov.br level the
    /// session has not reached: tell the person which, and where to raise
    /// it, and offer the login through gov.br.
    Level {
        /// The client's registered name.
        client_name: String,
        /// The level required.
        level: ReliabilityLevel,
    },
}

/// What the consent page shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentPrompt {
    /// The client's registered name.
    pub client_name: String,
    /// The validated request: client, redirect URI and the scopes the grant
    /// will carry (requested ∩ enabled for the client, ∪ the required ones).
    pub authorization: ValidAuthorization,
}

/// Either the next step is already decided, or the request is valid.
enum Checked {
    Done(AuthorizationStep),
    Valid(ValidAuthorization, OAuthClient),
}

impl OAuthService {
    /// Validates an authorization request for the client it names: an error
    /// shown to the user (unknown client, bad redirect URI), an error
    /// redirect, or the consent prompt (whatever the session and the stored
    /// consent; see [`authorize`](Self::authorize) for those). Errors:
    /// `Storage`, `Internal`.
    pub async fn start(&self, params: &AuthorizationParams) -> Result<AuthorizationStep, ServiceError> {
        Ok(match self.check(params).await? {
            Checked::Done(step) => step,
            Checked::Valid(authorization, client) => {
                AuthorizationStep::Consent(ConsentPrompt { client_name: client.name, authorization })
            }
        })
    }

    /// The authorization request `params` as the browser of `session` (if
    /// any) sends it: after validation ([`start`](Self::start)'s errors),
    /// - without a session, or with `prompt=login`: the login form;
    /// - when the person's stored consent for the client covers every scope
    ///   the request would grant (and no `prompt=consent`): no page — a code
    ///   is issued at once, as [`approve`](Self::approve) does, and the
    ///   grant's last use is recorded;
    /// - otherwise the consent page;
    /// - with `prompt=none`, instead of a page, `error=login_required` or
    ///   `error=consent_required` goes to the redirect URI with `state`.
    ///
    /// Errors: `UnknownUser` when a code would be issued but the session's
    /// user is gone or inactive (`prompt=none`: `login_required` instead);
    /// `Storage`, `Internal`.
    pub async fn authorize(
        &self,
        session: Option<&LoginSession>,
        params: &AuthorizationParams,
    ) -> Result<AuthorizationStep, ServiceError> {
        let (authorization, client) = match self.check(params).await? {
            Checked::Done(step) => return Ok(step),
            Checked::Valid(authorization, client) => (authorization, client),
        };
        let prompt = authorization.prompt;
        let refuse = |error: OAuthError| error_response(&authorization, &error);
        let now = self.clock.now();
        let recent = |s: &&LoginSession| login_is_recent(s.auth_time, authorization.max_age, now);
        let session = session.filter(|_| !prompt.forces_login()).filter(recent);
        let Some(session) = session else {
            if prompt.forbids_pages() {
                return refuse(OAuthError::LoginRequired);
            }
            return Ok(AuthorizationStep::LogIn { client_name: client.name });
        };
        if let Some(requirement) = unmet(&demand(&client, params), session) {
            if prompt.forbids_pages() {
                return refuse(OAuthError::LoginRequired);
            }
            return Ok(step_up(requirement, client.name));
        }
        let user = session.user_id;
        if !prompt.forces_consent() {
            let granted = self.grants.granted_scopes(user, &client.client_id).await?;
            if granted.is_some_and(|granted| covers(granted, authorization.scopes)) {
                if !self.tokens.is_active_user(user).await? {
                    return if prompt.forbids_pages() {
                        refuse(OAuthError::LoginRequired)
                    } else {
                        Err(ServiceError::UnknownUser)
                    };
                }
                self.grants.mark_used(user, &client.client_id, self.clock.now()).await?;
                tracing::info!(client_id = %client.client_id, user = user.0, "consent remembered: no consent page");
                return self.issue_code(session, authorization, demand(&client, params)).await;
            }
        }
        if prompt.forbids_pages() {
            return refuse(OAuthError::ConsentRequired);
        }
        Ok(AuthorizationStep::Consent(ConsentPrompt { client_name: client.name, authorization }))
    }

    /// The user of `session` approves the request: validates it again (the
    /// client may have changed since the page was shown), stores the
    /// consent (a first grant, or the old one widened to the union), issues
    /// a code (256 random bits; only its SHA-256 is stored, with the grant,
    /// for 60 s), runs the CNES supplementation (best effort) and answers
    /// the redirect with `code` and `state`. Errors: `UnknownUser` when the
    /// session's user is gone or inactive; `Storage`, `Internal`.
    pub async fn approve(
        &self,
        session: &LoginSession,
        params: &AuthorizationParams,
    ) -> Result<AuthorizationStep, ServiceError> {
        let (authorization, client) = match self.check(params).await? {
            Checked::Done(step) => return Ok(step),
            Checked::Valid(authorization, client) => (authorization, client),
        };
        if let Some(requirement) = unmet(&demand(&client, params), session) {
            return Ok(step_up(requirement, client.name));
        }
        let user = session.user_id;
        if !self.tokens.is_active_user(user).await? {
            return Err(ServiceError::UnknownUser);
        }
        let granted = self.grants.widen(user, &client.client_id, authorization.scopes, self.clock.now()).await?;
        tracing::info!(client_id = %client.client_id, user = user.0, scope = %granted.to_scope_string(), "consent stored");
        self.issue_code(session, authorization, demand(&client, params)).await
    }

    /// The user refuses the request: after validating it again, the redirect
    /// carries `error=access_denied` and `state`. The stored consent, if
    /// any, stays as it was. Errors: `Storage`, `Internal`.
    pub async fn deny(&self, params: &AuthorizationParams) -> Result<AuthorizationStep, ServiceError> {
        match self.check(params).await? {
            Checked::Done(step) => Ok(step),
            Checked::Valid(authorization, _) => error_response(&authorization, &OAuthError::AccessDenied),
        }
    }

    /// Issues a code for the user of `session` and the validated request
    /// (with the session's login time, for the ID token), runs the CNES
    /// supplementation and answers the redirect with `code` and `state`.
    async fn issue_code(
        &self,
        session: &LoginSession,
        authorization: ValidAuthorization,
        demand: Demand,
    ) -> Result<AuthorizationStep, ServiceError> {
        let user = session.user_id;
        let mut bytes = [0u8; 32];
        rand::thread_rng().fill_bytes(&mut bytes);
        let code = random_token_text(&bytes);
        let scopes = authorization.scopes;
        let client_id: ClientId = authorization.client_id.clone();
        let redirect_uri = authorization.redirect_uri.clone();
        let state = authorization.state.clone();
        let mode = authorization.response_mode;
        let mut grant = authorization.into_grant(user, session.auth_time, self.clock.now());
        // The ID token's `acr`: the first of the request's `acr_values`
        // the session meets, else the session's own.
        grant.acr = Some(demand.acr(session.assurance()).to_owned());
        grant.amr = Some(session.proof().stored_amr());
        // An ID token names its session, and the session remembers the
        // client, to tell it when it ends (back-channel logout).
        grant.sid = scopes.has_openid().then(|| session.sid());
        self.codes
            .store(NewAuthorizationCode { code_hash: CodeHash::of(&code), grant, session: Some(session.id) })
            .await?;
        tracing::info!(client_id = %client_id, user = user.0, scope = %scopes.to_scope_string(), "authorization code issued");
        if let Err(e) = self.profiles.on_authorized(user, scopes).await {
            tracing::warn!(user = user.0, error = %e, "profile supplementation on authorization failed; the authorization goes on");
        }
        respond(AuthorizationResponse::code(&redirect_uri, mode, &code, state.as_deref()))
    }

    async fn check(&self, params: &AuthorizationParams) -> Result<Checked, ServiceError> {
        let client = match params.client_id.as_deref().map(ClientId::parse) {
            Some(Ok(id)) => serving_client(self.clients.as_ref(), &id).await?,
            _ => None,
        };
        match validate_authorization_request(params, client.as_ref().map(OAuthClient::policy)) {
            Ok(valid) if valid.scopes.has_openid() && !self.openid_enabled() => {
                let error =
                    OAuthError::InvalidScope("openid is not available: OpenID Connect is not configured".into());
                Ok(Checked::Done(error_response(&valid, &error)?))
            }
            Ok(valid) => match client {
                Some(client) => Ok(Checked::Valid(valid, client)),
                None => Err(ServiceError::Internal("a request without client validated".into())),
            },
            Err(AuthorizationRefusal::ShowToUser(e)) => Ok(Checked::Done(AuthorizationStep::Refused(e))),
            Err(AuthorizationRefusal::Redirect { redirect_uri, response_mode, state, error }) => Ok(Checked::Done(
                respond(AuthorizationResponse::error(&redirect_uri, response_mode, &error, state.as_deref()))?,
            )),
        }
    }
}

/// What `client` (its settings "exige segundo fator" and "nível mínimo da
/// conta gov.br") and the request's `acr_values` (a second factor, or a
/// gov.br level) ask of a session.
fn demand(client: &OAuthClient, params: &AuthorizationParams) -> Demand {
    Demand::new(client.requires_second_factor, client.minimum_govbr_level, params.acr_values.as_deref())
}

/// What the one rule says `session` lacks for `demand` (the account's bar
/// was applied when the session opened: a session waiting for its factor
/// never reaches here), or none.
fn unmet(demand: &Demand, session: &LoginSession) -> Option<Requirement> {
    match decide(&session.proof(), AccountPolicy::default(), demand) {
        Decision::In => None,
        Decision::AddFactor => Some(Requirement::SecondFactor),
        Decision::Refused(requirement) => Some(requirement),
    }
}

/// The step that asks the person for `requirement`.
fn step_up(requirement: Requirement, client_name: String) -> AuthorizationStep {
    match requirement {
        Requirement::SecondFactor => AuthorizationStep::SecondFactor { client_name },
        Requirement::Level(level) => AuthorizationStep::Level { client_name, level },
    }
}

/// `error` for the validated request, to its redirect URI with its
/// `state`, in its response mode.
fn error_response(authorization: &ValidAuthorization, error: &OAuthError) -> Result<AuthorizationStep, ServiceError> {
    respond(AuthorizationResponse::error(
        &authorization.redirect_uri,
        authorization.response_mode,
        error,
        authorization.state.as_deref(),
    ))
}

/// The step that delivers `response`: a form post, or a redirect.
fn respond(response: AuthorizationResponse) -> Result<AuthorizationStep, ServiceError> {
    match response.mode() {
        ResponseMode::FormPost => Ok(AuthorizationStep::FormPost(response)),
        ResponseMode::Query | ResponseMode::Fragment => response
            .location()
            .map(AuthorizationStep::Redirect)
            .ok_or_else(|| ServiceError::Internal("registered redirect URI is not a URL".into())),
    }
}
