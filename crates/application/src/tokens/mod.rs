//! The token service: pair, refresh, verify, and reading user data with an
//! access token (the consume routes). Signing and recording go through the
//! one [`TokenIssuer`]; credentials through the one [`CredentialCheck`].

mod blacklist;
pub mod issuer;

use std::sync::Arc;

use credencial_domain::admin::LoginVia;
use credencial_domain::app_password;
use credencial_domain::assurance::{decide, AccountPolicy, Decision, Proof};
use credencial_domain::federation::Demand;
use credencial_domain::refresh_grace::RefreshGrace;
use credencial_domain::session::{AuthMethod, ACR_PASSWORD};
use credencial_domain::throttle::ClientAddress;
use credencial_domain::{
    Claims, EndpointAllowList, Redacted, TokenCodec, TokenError, TokenLifetimes, TokenType, UserData, UserId,
};
use credencial_ports::{Clock, RefreshTokenStore, UserDataSource, UserRepository};
use secrecy::{ExposeSecret, SecretString};
use serde::Serialize;

use crate::app_passwords::AppPasswordService;
pub use crate::credentials::AuthenticatedUser;
use crate::credentials::CredentialCheck;
use crate::error::ServiceError;
use crate::hashing::PasswordHasher;
use crate::metrics::{LoginForm, Metrics, Upstream};
use crate::second_factor::SecondFactorService;
use crate::throttle::LoginThrottle;
pub use issuer::{Audience, IssuedPair, Recording, TokenIssuer};

/// The `amr` a first-party refresh token carries: the proof as this
/// service stores it (its own values: `app` for an application password,
/// `rec` for a recovery code), read back by the refresh. Only this service
/// reads a first-party refresh token's `amr`; applications read theirs in
/// RFC 8176 terms.
fn first_party_amr(proof: &Proof) -> Vec<String> {
    proof.stored_amr().split_ascii_whitespace().map(str::to_owned).collect()
}

/// Body of a successful `pair`.
#[derive(Debug, Clone, Serialize)]
pub struct TokenPair {
    /// Access token.
    pub access: Redacted<String>,
    /// Refresh token.
    pub refresh: Redacted<String>,
    /// The username as stored.
    pub username: String,
}

/// Body of a successful `refresh`: a new access and a new refresh token.
#[derive(Debug, Clone, Serialize)]
pub struct RefreshedPair {
    /// New access token.
    pub access: Redacted<String>,
    /// New refresh token; the one presented is rotated out.
    pub refresh: Redacted<String>,
}

/// Settings of the token service.
#[derive(Debug, Clone, Default)]
pub struct TokenServiceConfig {
    /// Token lifetimes.
    pub lifetimes: TokenLifetimes,
    /// Paths the consume routes may read from the upstream.
    pub endpoints: EndpointAllowList,
    /// The concurrent-refresh grace window (`refresh_grace_secs`).
    pub refresh_grace: RefreshGrace,
}

/// Issues, rotates and verifies tokens; reads user data for token holders.
pub struct TokenService {
    issuer: Arc<TokenIssuer>,
    credentials: Arc<CredentialCheck>,
    users: Arc<dyn UserRepository>,
    user_data: Arc<dyn UserDataSource>,
    factors: Option<Arc<SecondFactorService>>,
    config: TokenServiceConfig,
    metrics: Metrics,
}

impl std::fmt::Debug for TokenService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenService")
            .field("issuer", &self.issuer)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl TokenService {
    /// A service over the given ports: its issuer signs with `codec` and
    /// records in `refresh_tokens`; its credential check reads `users` on
    /// `hasher`'s threads (without limits until
    /// [`with_throttle`](Self::with_throttle)).
    pub fn new(
        codec: Arc<TokenCodec>,
        users: Arc<dyn UserRepository>,
        refresh_tokens: Arc<dyn RefreshTokenStore>,
        user_data: Arc<dyn UserDataSource>,
        clock: Arc<dyn Clock>,
        hasher: PasswordHasher,
        config: TokenServiceConfig,
    ) -> Self {
        let issuer =
            TokenIssuer::new(codec, refresh_tokens, clock, config.lifetimes).with_refresh_grace(config.refresh_grace);
        let credentials = CredentialCheck::new(Arc::clone(&users), hasher, LoginThrottle::default());
        Self {
            issuer: Arc::new(issuer),
            credentials: Arc::new(credentials),
            users,
            user_data,
            factors: None,
            config,
            metrics: Metrics::disabled(),
        }
    }

    /// The same service, holding `pair` and every first-party refresh to
    /// the bar of accounts with a second factor (`factors`: built over this
    /// service's credential check, after [`with_throttle`](Self::with_throttle)).
    pub fn with_second_factors(mut self, factors: Arc<SecondFactorService>) -> Self {
        self.factors = Some(factors);
        self
    }

    /// The application passwords, when the service offers them (through
    /// its second factors).
    fn app_passwords(&self) -> Option<&Arc<AppPasswordService>> {
        self.factors.as_ref().and_then(|f| f.app_passwords())
    }

    /// The account's own bar for the one rule: whether it has a second
    /// factor (none when the service offers none). Errors: `Storage`.
    pub(crate) async fn account_policy(&self, user: UserId) -> Result<AccountPolicy, ServiceError> {
        SecondFactorService::account_policy(self.factors.as_deref(), user).await
    }

    /// The same service, counting logins and upstream calls in `metrics`,
    /// and its issuer the tokens it issues and the refresh replays (the
    /// OAuth2 service counts through it too).
    pub fn with_metrics(mut self, metrics: Metrics) -> Self {
        let issuer = TokenIssuer::clone(&self.issuer);
        self.issuer = Arc::new(issuer.with_metrics(metrics.clone()));
        self.metrics = metrics;
        self
    }

    /// Where the token and login use cases count.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The same service with brute-force limits on its credential checks
    /// (and on the client secrets the OAuth2 service checks through it).
    pub fn with_throttle(mut self, throttle: LoginThrottle) -> Self {
        let check = CredentialCheck::new(Arc::clone(&self.users), self.credentials.hasher().clone(), throttle);
        self.credentials = Arc::new(check);
        self
    }

    /// The same service, whose issuer also signs OpenID Connect ID tokens
    /// with `codec` (the provider's asymmetric key).
    pub fn with_id_token_codec(mut self, codec: Arc<TokenCodec>) -> Self {
        let issuer = TokenIssuer::clone(&self.issuer);
        self.issuer = Arc::new(issuer.with_id_token_codec(codec));
        self
    }

    /// The same service, whose issuer names `issuer` (the OpenID Connect
    /// issuer) as the `iss` of the tokens it issues to applications.
    pub fn with_client_token_issuer(mut self, issuer: &credencial_domain::oauth::discovery::IssuerUrl) -> Self {
        let tokens = TokenIssuer::clone(&self.issuer);
        self.issuer = Arc::new(tokens.with_client_token_issuer(issuer));
        self
    }

    /// The one token issuer (shared with the OAuth2 provider).
    pub fn issuer(&self) -> &Arc<TokenIssuer> {
        &self.issuer
    }

    /// The one credential check (shared with the login forms and the
    /// OAuth2 client authentication).
    pub fn credentials(&self) -> &Arc<CredentialCheck> {
        &self.credentials
    }

    /// The brute-force limits.
    pub fn throttle(&self) -> &LoginThrottle {
        self.credentials.throttle()
    }

    /// The codec, for callers that verify tokens themselves.
    pub fn codec(&self) -> &TokenCodec {
        self.issuer.codec()
    }

    /// The token lifetimes (the issuer's: it signs with them).
    pub fn lifetimes(&self) -> TokenLifetimes {
        self.issuer.lifetimes()
    }

    /// Checks a username (or a CPF) and a password sent from `from`: the
    /// credential check's rule ([`CredentialCheck::check_credentials`]).
    /// Used by `pair`, the login form of `/oauth/authorize/` and the
    /// account's login form.
    pub async fn check_credentials(
        &self,
        username: &str,
        password: SecretString,
        from: Option<ClientAddress>,
    ) -> Result<AuthenticatedUser, ServiceError> {
        self.credentials.check_credentials(username, password, from).await
    }

    /// Whether the user with `id` exists and is active. Errors: `Storage`.
    pub async fn is_active_user(&self, id: UserId) -> Result<bool, ServiceError> {
        self.credentials.is_active_user(id).await
    }

    /// Logs a user in from `from`. Unknown usernames, wrong passwords and
    /// inactive accounts all answer `InvalidCredentials` after the same
    /// hashing work; `Throttled` while the username or address is limited
    /// (see [`check_credentials`](Self::check_credentials));
    /// `PasswordChangeRequired` for right credentials of an account whose
    /// password an administrator set (it is changed at `/conta/senha/`
    /// first).
    ///
    /// The one rule decides whether the password is enough: an account
    /// with a second factor answers `SecondFactorRequired` for the password
    /// alone, and takes `otp` (an app's current code or a recovery code)
    /// in the same request; a wrong code is `SecondFactorInvalid` (counted
    /// in the codes' own budget). A `password` of an application
    /// password's shape is checked against the account's application
    /// passwords instead of its password (under the same limits: a wrong
    /// one is a wrong password), and meets the bar of an account with a
    /// factor without a code; its refresh family ends when it is revoked. The login is recorded in the history with
    /// the refresh token, in the same statement; the refresh token carries
    /// the login's methods, which every refresh checks again.
    pub async fn pair(
        &self,
        username: &str,
        password: SecretString,
        otp: Option<&str>,
        from: Option<ClientAddress>,
    ) -> Result<TokenPair, ServiceError> {
        // A text of an application password's shape is checked against
        // the account's application passwords, never its password.
        let app_passwords = self.app_passwords().filter(|_| app_password::has_shape(password.expose_secret()));
        let (checked, app_password) = match app_passwords {
            Some(apps) => match apps.login(username, &password, from).await {
                Ok((account, id)) => (Ok(account), Some(id)),
                Err(e) => (Err(e), None),
            },
            None => (self.check_credentials(username, password, from).await, None),
        };
        self.metrics.login(LoginForm::Pair, &checked);
        let account = checked?;
        if account.must_change_password {
            return Err(ServiceError::PasswordChangeRequired);
        }
        let method = if app_password.is_some() { AuthMethod::AppPassword } else { AuthMethod::Password };
        let mut proof = Proof::local(method, self.issuer.now());
        let policy = self.account_policy(account.id).await?;
        if decide(&proof, policy, &Demand::default()) == Decision::AddFactor {
            let (Some(factors), Some(code)) = (&self.factors, otp.filter(|c| !c.trim().is_empty())) else {
                return Err(ServiceError::SecondFactorRequired);
            };
            match factors.verify(account.id, code.trim(), from).await? {
                Some(method) => proof = proof.with_factor(method, self.issuer.now()),
                None => return Err(ServiceError::SecondFactorInvalid),
            }
        }
        let amr = first_party_amr(&proof);
        let audience = Audience::FirstParty { amr: &amr, app_password };
        let issued = self.issuer.issue_pair(account.id, audience, Recording::Login(LoginVia::Pair)).await?;
        Ok(TokenPair { access: issued.access, refresh: issued.refresh, username: account.username })
    }

    /// Exchanges a current refresh token for a new access and refresh token;
    /// the presented one can never be used again, on any instance. An OAuth2
    /// refresh token (one with an `aud` or a `client_id`) is refused as of
    /// the wrong type: it is renewed at `/oauth/token/`, where its scopes
    /// and client are kept; here it would buy an unscoped token.
    ///
    /// Every refresh asks the one rule again, with the login's methods the
    /// token carries and the account's policy now: a family opened by the
    /// password alone ends once the account has a second factor
    /// (`SecondFactorRequired`: log in again with the code). No rotation
    /// goes past the family's absolute lifetime (`InvalidToken(Expired)`).
    pub async fn refresh(&self, refresh_token: &str) -> Result<RefreshedPair, ServiceError> {
        let old = self.issuer.decode_first_party(refresh_token, TokenType::Refresh)?;
        let user = old.person()?;
        let stored = old.amr.as_deref().unwrap_or_default().join(" ");
        let proof = Proof::from_stored(&stored, ACR_PASSWORD, old.family_started());
        let policy = match proof.account_policy_matters() {
            true => self.account_policy(user).await?,
            false => AccountPolicy::default(),
        };
        if decide(&proof, policy, &Demand::default()) != Decision::In {
            return Err(ServiceError::SecondFactorRequired);
        }
        // A family opened with an application password ends when it is
        // revoked (or when application passwords are no longer offered).
        if let Some(id) = old.app_password {
            let live = match self.app_passwords() {
                Some(apps) => apps.is_live(user, id).await?,
                None => false,
            };
            if !live {
                return Err(TokenError::Revoked.into());
            }
        }
        let amr = first_party_amr(&proof);
        let rotate =
            Recording::Rotate { old_jti: &old.jti, old_token: refresh_token, family_started: old.family_started() };
        let audience = Audience::FirstParty { amr: &amr, app_password: old.app_password };
        let issued = self.issuer.issue_pair(user, audience, rotate).await?;
        Ok(RefreshedPair { access: issued.access, refresh: issued.refresh })
    }

    /// Checks a first-party access or refresh token. An access token is
    /// checked locally only; a refresh token must also still be current. A
    /// login session token (of `/oauth/authorize/`) and every token issued
    /// to a client application (access or refresh, with an `aud` or a
    /// `client_id`) are refused as of the wrong type: a service that logs
    /// its users in by checking tokens here must never accept a token a
    /// user granted to a third-party application.
    pub async fn verify(&self, token: &str) -> Result<(), ServiceError> {
        let claims = self.issuer.decode_own(token)?;
        if !claims.is_first_party() {
            return Err(TokenError::WrongType.into());
        }
        match claims.token_type {
            TokenType::Access => Ok(()),
            TokenType::Refresh if self.issuer.refresh_tokens().is_current(&claims.jti).await? => Ok(()),
            TokenType::Refresh => Err(TokenError::Revoked.into()),
            TokenType::Session | TokenType::ClientAccess | TokenType::ClientRefresh | TokenType::Machine => {
                Err(TokenError::WrongType.into())
            }
        }
    }

    /// Deletes records of refresh tokens that expired more than a minute
    /// (plus the codec's leeway) ago, rotated or not, at most `limit` rows
    /// (one batch of the [`crate::purge`] loop), and returns how many; the
    /// binary's purge calls it. Such a token is refused by its `exp` before
    /// its record is read, so its record serves no purpose.
    /// Errors: `Storage`.
    pub async fn purge_expired_refresh_tokens(&self, limit: u32) -> Result<u64, ServiceError> {
        let before = self.issuer.now().saturating_sub(self.codec().leeway_secs()).saturating_sub(60);
        Ok(self.issuer.refresh_tokens().purge_expired(before, limit).await?)
    }

    /// Forgets sealed pairs kept for the grace window by rotations whose
    /// window is over (a replay would not read them anyway), at most
    /// `limit` rows (one batch of the [`crate::purge`] loop), and returns
    /// how many; the binary's purge calls it. Errors: `Storage`.
    pub async fn forget_expired_sealed_pairs(&self, limit: u32) -> Result<u64, ServiceError> {
        let window_over = self.issuer.now().saturating_sub(self.issuer.refresh_grace().secs());
        Ok(self.issuer.refresh_tokens().forget_sealed(window_over, limit).await?)
    }

    /// Checks a first-party access token locally and returns its claims; a
    /// token issued to a client application is refused as of the wrong type.
    pub fn authenticate(&self, access_token: &str) -> Result<Claims, ServiceError> {
        Ok(self.issuer.decode_first_party(access_token, TokenType::Access)?)
    }

    /// Checks an access token issued to a client application (OAuth2)
    /// locally and returns its claims. A first-party token, or one whose
    /// `aud` is missing or names another client than its `client_id`, is
    /// refused as of the wrong type.
    pub fn authenticate_client_token(&self, access_token: &str) -> Result<Claims, ServiceError> {
        Ok(self.issuer.decode_client(access_token, TokenType::ClientAccess)?)
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
        if !self.is_active_user(claims.person()?).await? {
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
        self.users.find_active_user_data(claims.person()?).await?.ok_or(ServiceError::UnknownUser)
    }

    /// Hashes a password for a new account on the hashing threads.
    pub async fn hash_password(&self, password: SecretString) -> Result<String, ServiceError> {
        self.credentials.hasher().hash(password).await
    }
}
