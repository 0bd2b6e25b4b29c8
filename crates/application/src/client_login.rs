//! The client component's login: a host application sends its user to an
//! OAuth2 provider, gets the user back with a code, reads the profile and
//! writes it onto the host user record with the attribute map.
//!
//! - [`ClientLoginService::begin`]: a fresh authorization request (state,
//!   PKCE verifier) and a `next` that stays on this site;
//! - [`ClientLoginService::complete`]: checks the returned `state` against
//!   the one kept (constant time), exchanges the code, fetches the profile,
//!   maps it, and gets-or-creates the host user in one atomic statement;
//! - [`ClientLoginService::record`]: the host user row, column by column;
//! - the cookie values of the login in progress and of the host session,
//!   signed with an HMAC key and carrying their expiry;
//! - with back-channel logout on ([`ClientLoginService::with_backchannel_logout`]):
//!   logins ask for `openid` and keep the ID token's `sub` and `sid` in the
//!   host session; [`ClientLoginService::receive_logout`] takes the
//!   provider's logout tokens, and a host session the provider ended is
//!   refused ([`ClientLoginService::open_session`]: one read by key).
//!
//! Nothing here logs a code, a token, a state or a profile value.

use std::sync::Arc;

use credencial_domain::attr_map::UserMapping;
use credencial_domain::client_login::{safe_next, secrets_match, SignedPurpose, ValueSigner};
use credencial_domain::host_table::{HostValue, LoginWrites, TableName};
use credencial_domain::oauth::backchannel_logout::check_logout_token;
use credencial_domain::Redacted;
use credencial_ports::{
    AuthorizationStart, Clock, HostLogout, HostSessionEnds, HostUserError, HostUserRecords, HostUserStore,
    ProviderClient, ProviderError, RecordColumn,
};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::error::ServiceError;

/// How long a login may take between `begin` and the callback (seconds).
pub const PENDING_LOGIN_SECS: i64 = 10 * 60;

/// Why a login at the client component did not succeed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ClientLoginError {
    /// The callback's `state` is missing or is not the one this browser
    /// started with (a forged or stale callback, or no login in progress).
    #[error("the returned state does not match the login in progress")]
    StateMismatch,
    /// The user refused consent (`error=access_denied`).
    #[error("the user denied access")]
    Denied,
    /// The provider could not be reached, timed out, or answered something
    /// unexpected; the text is for the log.
    #[error("the provider is unavailable: {0}")]
    ProviderDown(String),
    /// The provider refused (an RFC 6749 error for the code, another
    /// `error` in the callback, or a refused access token); the text is the
    /// error code, for the log.
    #[error("the provider refused: {0}")]
    Refused(String),
    /// The host user exists and is inactive: the login is refused.
    #[error("the host user is inactive")]
    Inactive,
    /// The profile has no usable value for the lookup column (the text
    /// names the column).
    #[error("the profile has no usable value for the lookup column {0}")]
    MissingLookup(String),
    /// The person has no host user and the host does not create users
    /// (`create_users` off): only existing host users may log in.
    #[error("the person has no host user, and logins do not create users")]
    NotRegistered,
    /// A logout token the receiver refuses (it does not verify, a claim is
    /// wrong, or it was taken before); the text says which, for the answer.
    #[error("the logout token is refused: {0}")]
    LogoutToken(String),
}

/// The answer to [`ClientLoginService::begin`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginStart {
    /// Where to send the browser, and the state and verifier to keep.
    pub authorization: AuthorizationStart,
    /// Where to go after the login: the asked-for path if it stays on this
    /// site, else the default.
    pub next: String,
}

/// What the provider's redirect brought back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallbackResult {
    /// `code=…`: the user approved.
    Code(String),
    /// `error=…`: the RFC 6749 error code (e.g. `access_denied`).
    Error(String),
}

/// A completed login: the host user and its lookup value, and, with
/// back-channel logout on, the provider's session it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostLogin {
    /// The host user row's `id`.
    pub id: i64,
    /// The lookup column's value (personal data: never logged).
    pub lookup_value: Redacted<String>,
    /// The provider's `sub` for the person, when an ID token came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub: Option<String>,
    /// The provider's session (`sid`), when the ID token named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sid: Option<String>,
    /// When the host session started (Unix seconds).
    #[serde(default)]
    pub at: i64,
}

/// The back-channel logout receiver's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackchannelSettings {
    /// The provider's issuer identifier (a logout token's `iss`).
    pub issuer: String,
    /// This host's client id at the provider (a logout token's `aud`).
    pub client_id: String,
}

/// The login in progress, kept in a signed cookie between `begin` and the
/// callback. `Debug` shows only `next`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingLogin {
    /// The `state` sent to the provider.
    pub state: Redacted<String>,
    /// The PKCE verifier.
    pub pkce_verifier: Redacted<String>,
    /// Where to go afterwards (already checked).
    pub next: String,
}

/// A signed cookie value and how long it lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealedValue {
    /// The cookie value.
    pub value: Redacted<String>,
    /// Its lifetime in seconds (the cookie's `Max-Age`).
    pub max_age_secs: i64,
}

/// Configuration of the client component's login.
#[derive(Debug, Clone)]
pub struct ClientLoginConfig {
    /// The mapping settings, checked.
    pub mapping: UserMapping,
    /// The host user table.
    pub table: TableName,
    /// What a login writes besides the mapped values, and when (the
    /// client component's options).
    pub writes: LoginWrites,
    /// Lifetime of the host session, in seconds.
    pub session_secs: i64,
    /// Signs the cookie values.
    pub signer: ValueSigner,
}

/// The client component's login use case.
pub struct ClientLoginService {
    provider: Arc<dyn ProviderClient>,
    store: Arc<dyn HostUserStore>,
    records: Arc<dyn HostUserRecords>,
    clock: Arc<dyn Clock>,
    config: ClientLoginConfig,
    backchannel: Option<(Arc<dyn HostSessionEnds>, BackchannelSettings)>,
}

impl std::fmt::Debug for ClientLoginService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientLoginService").field("table", &self.config.table).finish_non_exhaustive()
    }
}

impl ClientLoginService {
    /// The use case over its ports.
    pub fn new(
        provider: Arc<dyn ProviderClient>,
        store: Arc<dyn HostUserStore>,
        records: Arc<dyn HostUserRecords>,
        clock: Arc<dyn Clock>,
        config: ClientLoginConfig,
    ) -> Self {
        Self { provider, store, records, clock, config, backchannel: None }
    }

    /// Receives the provider's back-channel logout tokens, keeping what
    /// they end in `ends`; logins then ask for `openid` (the ID token names
    /// the session a logout token will name).
    pub fn with_backchannel_logout(mut self, ends: Arc<dyn HostSessionEnds>, settings: BackchannelSettings) -> Self {
        self.backchannel = Some((ends, settings));
        self
    }

    /// Whether back-channel logout is received.
    pub fn receives_logouts(&self) -> bool {
        self.backchannel.is_some()
    }

    /// The host user table.
    pub fn table(&self) -> &str {
        self.config.table.as_str()
    }

    /// A fresh authorization request for the configured scopes, and `next`
    /// if it is a path on this site (else the default, `/auth/me/`).
    pub fn begin(&self, next: Option<&str>) -> LoginStart {
        let scopes = self.config.mapping.scopes().scopes().with_openid(self.receives_logouts());
        let authorization = self.provider.start(scopes);
        LoginStart { authorization, next: safe_next(next) }
    }

    /// Completes a login: `expected_state` and `pkce_verifier` are what
    /// `begin` gave (kept by the browser in a signed cookie),
    /// `returned_state` and `result` what the provider's redirect carried.
    /// The state is checked first; nothing is sent to the provider for a
    /// callback that does not match.
    pub async fn complete(
        &self,
        expected_state: &str,
        pkce_verifier: &str,
        returned_state: Option<&str>,
        result: CallbackResult,
    ) -> Result<HostLogin, ServiceError> {
        if !returned_state.is_some_and(|returned| secrets_match(expected_state, returned)) {
            return Err(ClientLoginError::StateMismatch.into());
        }
        let code = match result {
            CallbackResult::Code(code) => code,
            CallbackResult::Error(e) if e == "access_denied" => return Err(ClientLoginError::Denied.into()),
            CallbackResult::Error(e) => return Err(ClientLoginError::Refused(short(&e)).into()),
        };
        let tokens = self.provider.exchange_code(&code, pkce_verifier).await.map_err(provider_error)?;
        let profile = self.provider.fetch_profile(&tokens.access_token).await.map_err(provider_error)?;
        let mapped =
            self.config.mapping.apply(&profile).map_err(|e| ClientLoginError::MissingLookup(e.column.to_string()))?;
        for (column, reason) in mapped.record.skipped() {
            tracing::info!(column = %column, %reason, "host user column skipped");
        }
        let lookup_value = mapped.lookup_value;
        let writes = self.config.writes.writes(mapped.record.into_values(), self.clock.now());
        let outcome = self
            .store
            .write_login(
                &self.config.table,
                &mapped.lookup_column,
                HostValue::Text(lookup_value.clone()),
                writes,
                self.config.writes.create_users,
            )
            .await
            .map_err(|e| match e {
                HostUserError::Inactive => ClientLoginError::Inactive.into(),
                HostUserError::NotRegistered => ClientLoginError::NotRegistered.into(),
                HostUserError::UnusableLookup(column) => ClientLoginError::MissingLookup(column).into(),
                other => ServiceError::Storage(other.to_string()),
            })?;
        tracing::info!(host_user_id = outcome.id, created = outcome.created, "host user logged in");
        let (sub, sid) = tokens.session.map_or((None, None), |s| (Some(s.sub), s.sid));
        Ok(HostLogin { id: outcome.id, lookup_value: Redacted(lookup_value), sub, sid, at: self.clock.now() })
    }

    /// Every column of the host user `id`, in table order (`None` values are
    /// SQL `NULL`); `None` when the row is gone.
    pub async fn record(&self, id: i64) -> Result<Option<Vec<RecordColumn>>, ServiceError> {
        self.records.fetch(&self.config.table, id).await.map_err(|e| ServiceError::Storage(e.to_string()))
    }

    /// The cookie value of a login in progress.
    pub fn seal_pending(&self, pending: &PendingLogin) -> SealedValue {
        self.seal(SignedPurpose::PendingLogin, pending, PENDING_LOGIN_SECS)
    }

    /// The login in progress a cookie value holds, if it is genuine and
    /// not expired.
    pub fn open_pending(&self, value: &str) -> Option<PendingLogin> {
        self.config.signer.open(SignedPurpose::PendingLogin, value, self.clock.now())
    }

    /// The cookie value of a host session.
    pub fn seal_session(&self, login: &HostLogin) -> SealedValue {
        self.seal(SignedPurpose::HostSession, login, self.config.session_secs)
    }

    /// The host session a cookie value holds, if it is genuine, not
    /// expired and, with back-channel logout on, not ended by the provider
    /// (its `sid` ended, or every session of its `sub` ended since it
    /// started).
    /// Errors: `Storage`.
    pub async fn open_session(&self, value: &str) -> Result<Option<HostLogin>, ServiceError> {
        let Some(login) = self.config.signer.open::<HostLogin>(SignedPurpose::HostSession, value, self.clock.now())
        else {
            return Ok(None);
        };
        let Some((ends, _)) = &self.backchannel else { return Ok(Some(login)) };
        if login.sid.is_none() && login.sub.is_none() {
            return Ok(Some(login));
        }
        let ended = ends
            .ended_since(login.sid.as_deref(), login.sub.as_deref(), login.at)
            .await
            .map_err(|e| ServiceError::Storage(e.to_string()))?;
        Ok((!ended).then_some(login))
    }

    /// Takes a back-channel logout token (OpenID Connect Back-Channel
    /// Logout §2.6): its signature verifies with the provider's published
    /// keys, its claims are right for this host, its `jti` was not taken
    /// before; the host sessions it names end. Errors: `LogoutToken`
    /// (refused: 400), `ProviderDown` (the keys cannot be read), `Storage`.
    pub async fn receive_logout(&self, logout_token: &str) -> Result<(), ServiceError> {
        let refused = |why: &str| ServiceError::from(ClientLoginError::LogoutToken(why.to_owned()));
        let Some((ends, settings)) = &self.backchannel else { return Err(refused("not received here")) };
        let payload = match self.provider.logout_token_payload(logout_token).await {
            Ok(payload) => payload,
            Err(ProviderError::Refused(_)) => return Err(refused("the signature does not verify")),
            Err(e) => return Err(provider_error(e)),
        };
        let now = self.clock.now();
        let order = check_logout_token(&payload, &settings.issuer, &settings.client_id, now)
            .map_err(|e| refused(&e.to_string()))?;
        let logout = HostLogout {
            jti: order.jti,
            token_expires_at: order.exp,
            // A token with a sid ends that session; one with a sub alone
            // ends every session of the person.
            sub: order.sub.filter(|_| order.sid.is_none()),
            sid: order.sid,
            now,
            keep_until: now.saturating_add(self.config.session_secs),
        };
        if !ends.record(&logout).await.map_err(|e| ServiceError::Storage(e.to_string()))? {
            return Err(refused("it was received before"));
        }
        tracing::info!(by_sid = logout.sid.is_some(), "host sessions ended by the provider's logout token");
        Ok(())
    }

    fn seal<T: Serialize>(&self, purpose: SignedPurpose, value: &T, max_age_secs: i64) -> SealedValue {
        let exp = self.clock.now().saturating_add(max_age_secs);
        SealedValue { value: Redacted(self.config.signer.seal(purpose, value, exp)), max_age_secs }
    }
}

fn provider_error(e: ProviderError) -> ServiceError {
    match e {
        ProviderError::Refused(code) => ClientLoginError::Refused(short(&code)).into(),
        ProviderError::Upstream(u) => ClientLoginError::ProviderDown(u.to_string()).into(),
    }
}

/// At most 64 characters of a provider-given error code (it ends up in the
/// log).
fn short(text: &str) -> String {
    text.chars().take(64).collect()
}
