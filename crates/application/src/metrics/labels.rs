//! The label values of the metrics: each a fixed list, so that no client
//! input and no personal data can become a label.

use credencial_domain::admin::LoginVia;
use credencial_domain::session::AuthMethod;
use credencial_domain::Scope;
use credencial_ports::UpstreamError;

use crate::error::ServiceError;

/// Where a credential check happened (label `form`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoginForm {
    /// `POST /api/token/pair/`.
    Pair,
    /// The login step of `/oauth/authorize/`.
    OAuth,
    /// The account's login form, `/conta/entrar/`.
    Account,
    /// A client secret at `/oauth/token/`.
    ClientSecret,
    /// A second factor's code after the password (`/conta/entrar/verificar/`).
    SecondFactor,
}

impl LoginForm {
    pub(super) const ALL: [Self; 5] = [Self::Pair, Self::OAuth, Self::Account, Self::ClientSecret, Self::SecondFactor];

    /// The label value.
    pub fn label(self) -> &'static str {
        match self {
            Self::Pair => "pair",
            Self::OAuth => "oauth",
            Self::Account => "account",
            Self::ClientSecret => "client_secret",
            Self::SecondFactor => "second_factor",
        }
    }
}

impl From<LoginVia> for LoginForm {
    fn from(via: LoginVia) -> Self {
        match via {
            LoginVia::Pair => Self::Pair,
            LoginVia::OAuth => Self::OAuth,
            LoginVia::Account => Self::Account,
        }
    }
}

/// How a person proved who they are at a browser login (label `method`):
/// the password, an authenticator app's code, a recovery code, a passkey.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoginMethod {
    /// The password (the login form).
    Password,
    /// An authenticator app's code.
    Totp,
    /// A recovery code.
    RecoveryCode,
    /// A passkey (alone or as the second factor).
    Passkey,
    /// An upstream identity provider (gov.br, or another OpenID provider).
    Federated,
    /// An application password (at `pair`).
    AppPassword,
}

impl LoginMethod {
    pub(super) const ALL: [Self; 6] =
        [Self::Password, Self::Totp, Self::RecoveryCode, Self::Passkey, Self::Federated, Self::AppPassword];

    /// The label value.
    pub fn label(self) -> &'static str {
        match self {
            Self::Password => "password",
            Self::Totp => "totp",
            Self::RecoveryCode => "recovery_code",
            Self::Passkey => "passkey",
            Self::Federated => "federated",
            Self::AppPassword => "app_password",
        }
    }
}

impl From<AuthMethod> for LoginMethod {
    fn from(method: AuthMethod) -> Self {
        match method {
            AuthMethod::Password => Self::Password,
            AuthMethod::Totp => Self::Totp,
            AuthMethod::RecoveryCode => Self::RecoveryCode,
            AuthMethod::Passkey | AuthMethod::SyncedPasskey => Self::Passkey,
            AuthMethod::AppPassword => Self::AppPassword,
        }
    }
}

/// How a credential check ended (label `outcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoginOutcome {
    /// The credentials were right.
    Succeeded,
    /// Unknown user, wrong password or secret, inactive account.
    Failed,
    /// Refused by the brute-force limits before any hashing.
    Throttled,
}

impl LoginOutcome {
    pub(super) const ALL: [Self; 3] = [Self::Succeeded, Self::Failed, Self::Throttled];

    /// The label value.
    pub fn label(self) -> &'static str {
        match self {
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::Throttled => "throttled",
        }
    }

    /// The outcome of a credential check that answered `result`; `None`
    /// for an error of the service itself (storage, hashing pool), which
    /// says nothing about the credentials.
    pub fn of<T>(result: &Result<T, ServiceError>) -> Option<Self> {
        match result {
            Ok(_) => Some(Self::Succeeded),
            Err(ServiceError::InvalidCredentials) => Some(Self::Failed),
            Err(ServiceError::Throttled { .. }) => Some(Self::Throttled),
            Err(_) => None,
        }
    }

    /// The outcome of a check that answered whether a secret matched
    /// (`Ok(false)`: it did not); `None` as in [`of`](Self::of).
    pub fn of_check(result: &Result<bool, ServiceError>) -> Option<Self> {
        match result {
            Ok(false) => Some(Self::Failed),
            other => Self::of(other),
        }
    }
}

/// What kind of token was signed (label `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// A first-party access token (`pair`, `refresh`).
    Access,
    /// A first-party refresh token.
    Refresh,
    /// An OpenID Connect ID token.
    IdToken,
    /// An access token issued to a client application (`/oauth/token/`).
    OAuthAccess,
    /// A refresh token issued to a client application.
    OAuthRefresh,
    /// An application's own access token (`client_credentials`).
    OAuthMachine,
}

impl TokenKind {
    pub(super) const ALL: [Self; 6] =
        [Self::Access, Self::Refresh, Self::IdToken, Self::OAuthAccess, Self::OAuthRefresh, Self::OAuthMachine];

    /// The label value.
    pub fn label(self) -> &'static str {
        match self {
            Self::Access => "access",
            Self::Refresh => "refresh",
            Self::IdToken => "id_token",
            Self::OAuthAccess => "oauth_access",
            Self::OAuthRefresh => "oauth_refresh",
            Self::OAuthMachine => "oauth_machine",
        }
    }
}

/// An upstream service (label `upstream`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upstream {
    /// The tax authority (`receita_federal`).
    ReceitaFederal,
    /// The health-establishment registry (`cnes`).
    Cnes,
    /// The community-of-practice platform (`cursos_cdp`).
    CursosCdp,
    /// The user-data resource of the consume routes (`user-info`, `rh/eu`).
    UserData,
}

impl Upstream {
    pub(super) const ALL: [Self; 4] = [Self::ReceitaFederal, Self::Cnes, Self::CursosCdp, Self::UserData];

    /// The label value (a registry's scope name, or `user_data`).
    pub fn label(self) -> &'static str {
        match self {
            Self::ReceitaFederal => "receita_federal",
            Self::Cnes => "cnes",
            Self::CursosCdp => "cursos_cdp",
            Self::UserData => "user_data",
        }
    }

    /// The registry behind an upstream scope; `None` for a scope of our own.
    pub fn of_scope(scope: Scope) -> Option<Self> {
        match scope {
            Scope::ReceitaFederal => Some(Self::ReceitaFederal),
            Scope::Cnes => Some(Self::Cnes),
            Scope::CursosCdp => Some(Self::CursosCdp),
            _ => None,
        }
    }
}

/// How an upstream call ended (label `outcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpstreamOutcome {
    /// A usable answer.
    Ok,
    /// A registry has no record of the person (404 with a JSON body).
    NotFound,
    /// The upstream refused our credentials or denied access (401/403).
    Refused,
    /// No complete answer within the time-out.
    Timeout,
    /// Unreachable, 5xx or another status, or an answer not as contracted.
    Error,
}

impl UpstreamOutcome {
    pub(super) const ALL: [Self; 5] = [Self::Ok, Self::NotFound, Self::Refused, Self::Timeout, Self::Error];

    /// The label value.
    pub fn label(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::NotFound => "not_found",
            Self::Refused => "refused",
            Self::Timeout => "timeout",
            Self::Error => "error",
        }
    }

    /// The outcome of a call that answered `result`.
    pub fn of<T>(result: &Result<T, UpstreamError>) -> Self {
        match result {
            Ok(_) => Self::Ok,
            Err(UpstreamError::NotFound) => Self::NotFound,
            Err(UpstreamError::Unauthorized | UpstreamError::Forbidden) => Self::Refused,
            Err(UpstreamError::Timeout) => Self::Timeout,
            Err(UpstreamError::BadResponse(_)) => Self::Error,
        }
    }
}

/// What was done about a rotated refresh token presented again (label
/// `outcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayOutcome {
    /// A replay: its family was revoked.
    Revoked,
    /// Within the grace window, its successor still current (two tabs
    /// refreshing at once): the same pair was answered, nothing revoked.
    Grace,
}

impl ReplayOutcome {
    pub(super) const ALL: [Self; 2] = [Self::Revoked, Self::Grace];

    /// The label value.
    pub fn label(self) -> &'static str {
        match self {
            Self::Revoked => "revoked",
            Self::Grace => "grace",
        }
    }
}

/// Why browser sessions ended (label `cause`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionEnd {
    /// The person logged out.
    Logout,
    /// The person ended it at `/conta/sessoes/` (one, or all others).
    Person,
    /// The password changed (by its owner or an administrator).
    PasswordChange,
    /// Staff ended them (panel or CLI), or deactivated the account.
    Staff,
    /// Over by time, deleted by the purge.
    Expired,
    /// A change of address was undone from the old address (whoever changed
    /// it may hold a session).
    EmailUndo,
}

impl SessionEnd {
    pub(super) const ALL: [Self; 6] =
        [Self::Logout, Self::Person, Self::PasswordChange, Self::Staff, Self::Expired, Self::EmailUndo];

    /// The label value.
    pub fn label(self) -> &'static str {
        match self {
            Self::Logout => "logout",
            Self::Person => "person",
            Self::PasswordChange => "password_change",
            Self::Staff => "staff",
            Self::Expired => "expired",
            Self::EmailUndo => "email_undo",
        }
    }
}

/// What the scope cache answered a look-up with (label `result`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheResult {
    /// Fresh data, from memory or from the store.
    Hit,
    /// No fresh data: the upstream was asked (its answer, or an `erro`).
    Miss,
    /// No fresh data and the upstream failed: the stale data was served.
    Stale,
}

impl CacheResult {
    pub(super) const ALL: [Self; 3] = [Self::Hit, Self::Miss, Self::Stale];

    /// The label value.
    pub fn label(self) -> &'static str {
        match self {
            Self::Hit => "hit",
            Self::Miss => "miss",
            Self::Stale => "stale",
        }
    }
}

/// What one step of the periodic purge empties (label `table`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PurgeTable {
    /// Expired authorization codes (`oauth_codes`).
    AuthorizationCodes,
    /// Sealed pairs of rotations whose grace window is over
    /// (`refresh_tokens.successor_sealed`, set to null).
    SealedPairs,
    /// Expired refresh-token records (`refresh_tokens`).
    RefreshTokens,
    /// Ended failure windows of the brute-force limits (`login_failures`).
    LoginFailures,
    /// Old entries of the login history (`user_logins`).
    LoginHistory,
    /// Tax-id validation attempts out of their window (`tax_id_attempts`).
    TaxIdAttempts,
    /// Access-log entries past their retention (`access_log`).
    AccessLog,
    /// Browser sessions past their absolute limit (`sessions`).
    Sessions,
    /// Passkey ceremonies never finished (`webauthn_ceremonies`).
    PasskeyCeremonies,
    /// Security activity older than a year (`security_events`).
    SecurityEvents,
    /// Delivered mail past its retention and expired mail links
    /// (`mail_outbox`, `mail_links`).
    Mail,
}

impl PurgeTable {
    /// Every step, in the order a pass runs them.
    pub const ALL: [Self; 11] = [
        Self::AuthorizationCodes,
        Self::SealedPairs,
        Self::RefreshTokens,
        Self::LoginFailures,
        Self::LoginHistory,
        Self::TaxIdAttempts,
        Self::AccessLog,
        Self::Sessions,
        Self::PasskeyCeremonies,
        Self::SecurityEvents,
        Self::Mail,
    ];

    /// The label value.
    pub fn label(self) -> &'static str {
        match self {
            Self::AuthorizationCodes => "oauth_codes",
            Self::SealedPairs => "sealed_pairs",
            Self::RefreshTokens => "refresh_tokens",
            Self::LoginFailures => "login_failures",
            Self::LoginHistory => "user_logins",
            Self::TaxIdAttempts => "tax_id_attempts",
            Self::AccessLog => "access_log",
            Self::Sessions => "sessions",
            Self::PasskeyCeremonies => "webauthn_ceremonies",
            Self::SecurityEvents => "security_events",
            Self::Mail => "mail_outbox",
        }
    }
}

/// The methods that get a label of their own; any other is `other`, so a
/// client cannot make up series.
const METHODS: [&str; 7] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

/// The `method` label of a request method.
pub fn method_label(method: &str) -> &'static str {
    METHODS.iter().find(|m| **m == method).copied().unwrap_or("other")
}
