//! The token service: pair, refresh, verify, and reading user data with an
//! access token (the consume routes).

use std::sync::Arc;

use credencial_domain::admin::LoginVia;
use credencial_domain::throttle::{ClientAddress, Subject};
use credencial_domain::{
    Claims, Cpf, EndpointAllowList, PasswordStamp, TokenCodec, TokenError, TokenLifetimes, TokenType, UserData, UserId,
    Username,
};
use credencial_ports::{Clock, NewRefreshToken, RefreshTokenStore, Rotation, UserDataSource, UserRepository};
use secrecy::SecretString;
use serde::Serialize;

use crate::error::ServiceError;
use crate::hashing::PasswordHasher;
use crate::metrics::{LoginForm, Metrics, TokenKind, Upstream};
use crate::throttle::LoginThrottle;

/// Body of a successful `pair`.
#[derive(Clone, Serialize)]
pub struct TokenPair {
    /// Access token.
    pub access: String,
    /// Refresh token.
    pub refresh: String,
    /// The username as stored.
    pub username: String,
}

/// Body of a successful `refresh`: a new access and a new refresh token.
#[derive(Clone, Serialize)]
pub struct RefreshedPair {
    /// New access token.
    pub access: String,
    /// New refresh token; the one presented is rotated out.
    pub refresh: String,
}

/// A user whose username and password were checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthenticatedUser {
    /// Primary key.
    pub id: UserId,
    /// The username as stored.
    pub username: String,
    /// The password was set by an administrator and must be changed
    /// before the account is used.
    pub must_change_password: bool,
}

impl std::fmt::Debug for TokenPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenPair").field("username", &self.username).finish_non_exhaustive()
    }
}

impl std::fmt::Debug for RefreshedPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RefreshedPair").finish_non_exhaustive()
    }
}

/// Settings of the token service.
#[derive(Debug, Clone, Default)]
pub struct TokenServiceConfig {
    /// Token lifetimes.
    pub lifetimes: TokenLifetimes,
    /// Paths the consume routes may read from the upstream.
    pub endpoints: EndpointAllowList,
}

/// Issues, rotates and verifies tokens; reads user data for token holders.
pub struct TokenService {
    codec: Arc<TokenCodec>,
    users: Arc<dyn UserRepository>,
    refresh_tokens: Arc<dyn RefreshTokenStore>,
    user_data: Arc<dyn UserDataSource>,
    clock: Arc<dyn Clock>,
    hasher: PasswordHasher,
    config: TokenServiceConfig,
    throttle: LoginThrottle,
    metrics: Metrics,
}

impl std::fmt::Debug for TokenService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenService").field("codec", &self.codec).field("config", &self.config).finish_non_exhaustive()
    }
}

impl TokenService {
    /// A service over the given ports.
    pub fn new(
        codec: Arc<TokenCodec>,
        users: Arc<dyn UserRepository>,
        refresh_tokens: Arc<dyn RefreshTokenStore>,
        user_data: Arc<dyn UserDataSource>,
        clock: Arc<dyn Clock>,
        hasher: PasswordHasher,
        config: TokenServiceConfig,
    ) -> Self {
        Self {
            codec,
            users,
            refresh_tokens,
            user_data,
            clock,
            hasher,
            config,
            throttle: LoginThrottle::default(),
            metrics: Metrics::disabled(),
        }
    }

    /// The same service, counting logins, issued tokens, refresh replays
    /// and upstream calls in `metrics` (and the OAuth2 service's, which
    /// signs through it).
    pub fn with_metrics(mut self, metrics: Metrics) -> Self {
        self.metrics = metrics;
        self
    }

    /// Where the token use cases count.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The same service with brute-force limits on its credential checks
    /// (and on the client secrets the OAuth2 service checks through it).
    pub fn with_throttle(mut self, throttle: LoginThrottle) -> Self {
        self.throttle = throttle;
        self
    }

    /// The brute-force limits.
    pub fn throttle(&self) -> &LoginThrottle {
        &self.throttle
    }

    /// Whether `secret` matches a client's stored `hash` and the client may
    /// use a secret at all (`eligible`), for the OAuth2 token endpoint: on
    /// the same hashing slots and under the same limits as passwords, so
    /// that the address limit holds across `pair` and `/oauth/token/`.
    /// Errors: as [`LoginThrottle::verify`].
    pub(crate) async fn check_client_secret(
        &self,
        from: Option<ClientAddress>,
        hash: Option<String>,
        secret: SecretString,
        eligible: bool,
    ) -> Result<bool, ServiceError> {
        self.throttle.verify(&self.hasher, Subject::ClientSecret, from, hash, secret, eligible).await
    }

    /// The codec, for callers that verify tokens themselves.
    pub fn codec(&self) -> &TokenCodec {
        &self.codec
    }

    /// The token lifetimes.
    pub fn lifetimes(&self) -> TokenLifetimes {
        self.config.lifetimes
    }

    /// Checks a username (or a CPF, with or without punctuation) and a
    /// password (on the hashing threads) sent from `from`. Unknown users,
    /// wrong passwords and inactive accounts all answer
    /// `InvalidCredentials` after the same hashing work (one look-up either
    /// way), and count as failures against the login typed (a CPF by its
    /// digits) and the address; while either is limited, every attempt
    /// answers `Throttled` without hashing. Used by `pair`, the login form
    /// of `/oauth/authorize/` and the account's login form.
    pub async fn check_credentials(
        &self,
        username: &str,
        password: SecretString,
        from: Option<ClientAddress>,
    ) -> Result<AuthenticatedUser, ServiceError> {
        Ok(self.check_login(username, password, from).await?.0)
    }

    /// [`check_credentials`](Self::check_credentials), with the stamp of
    /// the password hash the check passed against (what a login session
    /// carries).
    pub(crate) async fn check_login(
        &self,
        username: &str,
        password: SecretString,
        from: Option<ClientAddress>,
    ) -> Result<(AuthenticatedUser, PasswordStamp), ServiceError> {
        // Text that is a CPF finds the account by CPF (unless a username is
        // exactly that text). A username that cannot exist (empty, too
        // long, control characters such as NUL, which PostgreSQL refuses in
        // text) is never looked up, but costs the same hashing work as any
        // other miss.
        let cpf = Cpf::parse(username).ok();
        let found = match (&cpf, Username::parse(username)) {
            (Some(cpf), _) => self.users.find_credentials_for_cpf(cpf, username).await?,
            (None, Ok(valid)) => self.users.find_credentials(valid.as_str()).await?,
            (None, Err(_)) => None,
        };
        // The failures of a CPF count under its digits, however it was
        // punctuated.
        let subject = Subject::Username(cpf.as_ref().map_or(username, Cpf::as_str));
        let (hash, account) = match found {
            Some(c) => (Some(c.password_hash.clone()), Some(c)),
            None => (None, None),
        };
        let eligible = account.as_ref().is_some_and(|a| a.is_active);
        let valid = self.throttle.verify(&self.hasher, subject, from, hash, password, eligible).await?;
        match account {
            Some(a) if valid => {
                let stamp = PasswordStamp::of(&a.password_hash);
                let user =
                    AuthenticatedUser { id: a.id, username: a.username, must_change_password: a.must_change_password };
                Ok((user, stamp))
            }
            _ => Err(ServiceError::InvalidCredentials),
        }
    }

    /// Whether the account `user` exists, is active, and still has the
    /// password whose stamp a login session carries (`stamp`): a session
    /// opened before the password changed is over. `Some(must change the
    /// password)` when it is current. Errors: `Storage`.
    pub(crate) async fn session_is_current(&self, user: UserId, stamp: &str) -> Result<Option<bool>, ServiceError> {
        let found = self.users.find_credentials_by_id(user).await?;
        Ok(found
            .filter(|c| c.is_active && PasswordStamp::of(&c.password_hash).matches(stamp))
            .map(|c| c.must_change_password))
    }

    /// The hashing threads (for the account's use cases that set passwords).
    pub(crate) fn hasher(&self) -> &PasswordHasher {
        &self.hasher
    }

    /// Whether the user with `id` exists and is active. Errors: `Storage`.
    pub async fn is_active_user(&self, id: UserId) -> Result<bool, ServiceError> {
        Ok(self.users.find_active_user_data(id).await?.is_some())
    }

    /// Logs a user in from `from`. Unknown usernames, wrong passwords and
    /// inactive accounts all answer `InvalidCredentials` after the same
    /// hashing work; `Throttled` while the username or address is limited
    /// (see [`check_credentials`](Self::check_credentials));
    /// `PasswordChangeRequired` for right credentials of an account whose
    /// password an administrator set (it is changed at `/conta/senha/`
    /// first). The login is recorded in the history with the refresh
    /// token, in the same statement.
    pub async fn pair(
        &self,
        username: &str,
        password: SecretString,
        from: Option<ClientAddress>,
    ) -> Result<TokenPair, ServiceError> {
        let checked = self.check_credentials(username, password, from).await;
        self.metrics.login(LoginForm::Pair, &checked);
        let account = checked?;
        if account.must_change_password {
            return Err(ServiceError::PasswordChangeRequired);
        }
        let now = self.clock.now();
        let access =
            self.sign(&Claims::new(TokenType::Access, account.id.0, now, self.config.lifetimes.access_secs))?;
        let refresh_claims = Claims::new(TokenType::Refresh, account.id.0, now, self.config.lifetimes.refresh_secs);
        let refresh = self.sign(&refresh_claims)?;
        // A login starts a family of its own, named after its first token.
        self.refresh_tokens.record_login(new_refresh(&refresh_claims), &refresh_claims.jti, LoginVia::Pair).await?;
        self.metrics.tokens_issued(TokenKind::Access, 1);
        self.metrics.tokens_issued(TokenKind::Refresh, 1);
        Ok(TokenPair { access, refresh, username: account.username })
    }

    /// Exchanges a current refresh token for a new access and refresh token;
    /// the presented one can never be used again, on any instance. An OAuth2
    /// refresh token (one with an `aud` or a `client_id`) is refused as of
    /// the wrong type: it is renewed at `/oauth/token/`, where its scopes
    /// and client are kept; here it would buy an unscoped token.
    pub async fn refresh(&self, refresh_token: &str) -> Result<RefreshedPair, ServiceError> {
        let now = self.clock.now();
        let old = self.codec.decode_first_party(refresh_token, TokenType::Refresh, now)?;
        let access = self.sign(&Claims::new(TokenType::Access, old.user_id, now, self.config.lifetimes.access_secs))?;
        let next = Claims::new(TokenType::Refresh, old.user_id, now, self.config.lifetimes.refresh_secs);
        let refresh = self.sign(&next)?;
        let rotation = self.refresh_tokens.rotate(&old.jti, UserId(old.user_id), new_refresh(&next)).await?;
        if !rotated_or_revoked(self.refresh_tokens.as_ref(), rotation, UserId(old.user_id), &self.metrics).await? {
            return Err(TokenError::Revoked.into());
        }
        self.metrics.tokens_issued(TokenKind::Access, 1);
        self.metrics.tokens_issued(TokenKind::Refresh, 1);
        Ok(RefreshedPair { access, refresh })
    }

    /// Checks a first-party access or refresh token. An access token is
    /// checked locally only; a refresh token must also still be current. A
    /// login session token (of `/oauth/authorize/`) and every token issued
    /// to a client application (access or refresh, with an `aud` or a
    /// `client_id`) are refused as of the wrong type: a service that logs
    /// its users in by checking tokens here must never accept a token a
    /// user granted to a third-party application.
    pub async fn verify(&self, token: &str) -> Result<(), ServiceError> {
        let claims = self.codec.decode(token, self.clock.now())?;
        if !claims.is_first_party() {
            return Err(TokenError::WrongType.into());
        }
        match claims.token_type {
            TokenType::Access => Ok(()),
            TokenType::Refresh if self.refresh_tokens.is_current(&claims.jti).await? => Ok(()),
            TokenType::Refresh => Err(TokenError::Revoked.into()),
            TokenType::Session => Err(TokenError::WrongType.into()),
        }
    }

    /// Deletes the records of refresh tokens that expired more than a
    /// minute (plus the codec's leeway) ago, rotated or not, and returns how
    /// many; the binary runs it periodically. Such a token is refused by its
    /// `exp` before its record is read, so its record serves no purpose.
    /// Errors: `Storage`.
    pub async fn purge_expired_refresh_tokens(&self) -> Result<u64, ServiceError> {
        let before = self.clock.now().saturating_sub(self.codec.leeway_secs()).saturating_sub(60);
        Ok(self.refresh_tokens.purge_expired(before).await?)
    }

    /// Checks a first-party access token locally and returns its claims; a
    /// token issued to a client application is refused as of the wrong type.
    pub fn authenticate(&self, access_token: &str) -> Result<Claims, ServiceError> {
        Ok(self.codec.decode_first_party(access_token, TokenType::Access, self.clock.now())?)
    }

    /// Checks an access token issued to a client application (OAuth2)
    /// locally and returns its claims. A first-party token, or one whose
    /// `aud` is missing or names another client than its `client_id`, is
    /// refused as of the wrong type.
    pub fn authenticate_client_token(&self, access_token: &str) -> Result<Claims, ServiceError> {
        let claims = self.codec.decode_typed(access_token, TokenType::Access, self.clock.now())?;
        if claims.client_audience().is_none() {
            return Err(TokenError::WrongType.into());
        }
        Ok(claims)
    }

    /// Reads user data from the upstream for the holder of `access_token`.
    /// The token is checked locally and `endpoint` against the allow-list
    /// before anything is sent upstream. OAuth2 access tokens (with an `aud`
    /// or a `client_id`) are refused as of the wrong type: a client
    /// application reads what its scopes grant at `/api/perfil/dados/`, not
    /// the user's whole record, and its token is never forwarded upstream.
    ///
    /// The token's account must still be active (one primary-key read): a
    /// deactivated account's token is refused at once (`UnknownUser`), not
    /// when it expires.
    pub async fn consume(&self, access_token: &str, endpoint: Option<&str>) -> Result<serde_json::Value, ServiceError> {
        let claims = self.authenticate(access_token)?;
        let path = self.config.endpoints.resolve(endpoint)?;
        if !self.is_active_user(UserId(claims.user_id)).await? {
            return Err(ServiceError::UnknownUser);
        }
        let started = std::time::Instant::now();
        let fetched = self.user_data.fetch(&path, access_token).await;
        self.metrics.upstream_call(Upstream::UserData, started.elapsed(), &fetched);
        Ok(fetched?)
    }

    /// The stored user data of the active user holding `access_token` (what
    /// the demo's sandbox of the user-data resource serves).
    pub async fn own_user_data(&self, access_token: &str) -> Result<UserData, ServiceError> {
        let claims = self.authenticate(access_token)?;
        self.users.find_active_user_data(UserId(claims.user_id)).await?.ok_or(ServiceError::UnknownUser)
    }

    /// Hashes a password for a new account on the hashing threads.
    pub async fn hash_password(&self, password: SecretString) -> Result<String, ServiceError> {
        self.hasher.hash(password).await
    }

    fn sign(&self, claims: &Claims) -> Result<String, ServiceError> {
        self.codec.encode(claims).map_err(|e| ServiceError::Internal(e.to_string()))
    }
}

fn new_refresh(claims: &Claims) -> NewRefreshToken {
    NewRefreshToken { jti: claims.jti.clone(), user_id: UserId(claims.user_id), expires_at: claims.exp }
}

/// Whether `rotation` rotated the presented token. A replay — a token that
/// had already been rotated, presented again — means that two parties hold
/// copies of it: every current token of its family is revoked in `store`,
/// so neither the thief nor the user can go on refreshing (the user logs in
/// again). Used by `/api/token/refresh/` and the OAuth2 `refresh_token`
/// grant; a replay is counted in `metrics`. Errors: `Storage`.
pub(crate) async fn rotated_or_revoked(
    store: &dyn RefreshTokenStore,
    rotation: Rotation,
    user: UserId,
    metrics: &Metrics,
) -> Result<bool, ServiceError> {
    match rotation {
        Rotation::Rotated => Ok(true),
        Rotation::Refused => Ok(false),
        Rotation::Replayed { family } => {
            metrics.refresh_replay();
            let revoked = store.revoke_family(&family).await?;
            tracing::warn!(
                user = user.0,
                revoked,
                "a rotated refresh token was presented again: its family is revoked"
            );
            Ok(false)
        }
    }
}
