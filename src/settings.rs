//! Typed settings, loaded in layers: defaults, then an optional TOML file,
//! then `SERVICE_*` environment variables and `DATABASE_URL` (the
//! environment wins). Every problem is reported with the setting's name.

use std::path::{Path, PathBuf};

use config::{Config, Environment, File, FileFormat, Source};
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Deserializer};

use crate::startup::Mode;

mod checks;
mod providers;

pub use providers::{ProviderSettings, GOVBR_SCOPES, OIDC_SCOPES};

/// Longest window of the brute-force limits (a day).
pub const MAX_THROTTLE_WINDOW_SECS: u32 = 24 * 60 * 60;

/// Default database of the service.
pub use crate::storage::DEFAULT_DATABASE_URL;

/// Largest `access_log_retention_days` (100 years): times stay in range.
pub const MAX_ACCESS_LOG_RETENTION_DAYS: u32 = 36_500;

/// Largest `purge_batch_rows`: one batch must stay short.
pub const MAX_PURGE_BATCH_ROWS: u32 = 100_000;

/// Largest `mail_retention_days` (ten years).
pub const MAX_MAIL_RETENTION_DAYS: i64 = 3_650;

/// Largest `smtp_timeout_secs` (five minutes): a stuck relay must not hold
/// the sender's claim past its lease.
pub const MAX_SMTP_TIMEOUT_SECS: u64 = 300;

/// Largest `purge_start_delay_secs` (a day): the purge must run some day.
pub const MAX_PURGE_START_DELAY_SECS: u64 = 24 * 60 * 60;

/// Largest `shutdown_timeout_secs` (one hour): a stop must end.
pub const MAX_SHUTDOWN_TIMEOUT_SECS: u64 = 60 * 60;

/// Longest concurrent-refresh grace window accepted: a longer one would let
/// a copied refresh token be used for minutes without ending the session.
pub const MAX_REFRESH_GRACE_SECS: i64 = 5 * 60;

/// Every setting of the service. Keys are the same in the TOML file and,
/// upper-cased with the `SERVICE_` prefix, in the environment.
#[derive(Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// Address to listen on (`SERVICE_BIND`).
    pub bind: String,
    /// PostgreSQL URL (`DATABASE_URL`); may hold a password, never printed.
    pub database_url: SecretString,
    /// Largest number of database connections per instance.
    pub database_max_connections: u32,
    /// Signing algorithm: HS256, RS256 or ES256 (`SERVICE_JWT_ALGORITHM`).
    pub jwt_algorithm: String,
    /// HS256 secret, at least 32 bytes (`SERVICE_JWT_SECRET`).
    pub jwt_secret: Option<SecretString>,
    /// PEM private key for RS256/ES256 (`SERVICE_JWT_PRIVATE_KEY_FILE`).
    pub jwt_private_key_file: Option<PathBuf>,
    /// PEM public key for RS256/ES256 (`SERVICE_JWT_PUBLIC_KEY_FILE`).
    pub jwt_public_key_file: Option<PathBuf>,
    /// Seconds a token is still accepted after `exp`.
    pub jwt_leeway_secs: i64,
    /// PEM public keys of the RS256/ES256 keys the current one replaced
    /// (`SERVICE_JWT_PREVIOUS_PUBLIC_KEY_FILES`, comma-separated): tokens
    /// they signed verify until they expire, and they are published.
    #[serde(deserialize_with = "string_list")]
    pub jwt_previous_public_key_files: Vec<String>,
    /// Algorithm of the key that signs ID tokens: RS256 (default) or ES256.
    pub oidc_signing_algorithm: String,
    /// PEM private key that signs ID tokens (`SERVICE_OIDC_SIGNING_KEY_FILE`;
    /// `credencial keys generate` writes one). Unset: the demo makes one
    /// per run; `serve` uses the RS256/ES256 JWT key, or has no OpenID
    /// Connect with HS256.
    pub oidc_signing_key_file: Option<PathBuf>,
    /// The key that seals TOTP secrets at rest: a file holding 32 random
    /// bytes in base64 (`head -c 32 /dev/urandom | base64`). Unset: the
    /// demo makes `second_factor.key` in its working directory (kept for
    /// the next run); `serve` offers no second factor.
    pub second_factor_key_file: Option<PathBuf>,
    /// Passkeys (WebAuthn): the origin people open the pages at
    /// (`https://id.example.gov.br`), whose host name is the relying party
    /// id. Unset: `issuer_url`'s origin when its host is a name; in the
    /// demo, `http://localhost:<port>` (WebAuthn takes no IP address).
    /// Passkeys need second factors (`second_factor_key_file`).
    pub passkey_origin: Option<String>,
    /// PEM public keys of previous ID-token keys (comma-separated).
    #[serde(deserialize_with = "string_list")]
    pub oidc_previous_public_key_files: Vec<String>,
    /// Access-token lifetime in seconds.
    pub access_token_lifetime_secs: i64,
    /// Refresh-token lifetime in seconds.
    pub refresh_token_lifetime_secs: i64,
    /// How long after a rotation the rotated refresh token may be presented
    /// again and answer the same new pair instead of revoking its family
    /// (two tabs refreshing at once); 0 disables the window.
    pub refresh_grace_secs: i64,
    /// A browser session ends after this many seconds without a request
    /// (the inactivity limit).
    pub session_idle_secs: i64,
    /// A browser session ends this many seconds after its login, however
    /// active (the absolute limit).
    pub session_absolute_secs: i64,
    /// OpenID Connect: the issuer identifier, the service's public base URL
    /// (`https://…`, or `http://` on a loopback host; no query or
    /// fragment). ID tokens carry it as `iss`, the discovery document is
    /// below it. Unset: OpenID Connect is off in `serve`; the demo uses its
    /// own address.
    pub issuer_url: Option<String>,
    /// `Secure` attribute of the provider's cookies: `true` always, `false`
    /// never, unset: when the request came over https (as the connection or
    /// a proxy's `Forwarded`/`X-Forwarded-Proto` says).
    pub cookie_secure: Option<bool>,
    /// Whether staff must pass a second factor before any panel page:
    /// unset, on whenever the service offers second factors
    /// (`second_factor_key_file`, or the demo's own key)… except in the
    /// demo, where it is off unless set. `true` without second factors
    /// stops the start.
    pub staff_second_factor: Option<bool>,
    /// Whether anyone may create an account at `/conta/cadastro/`: unset,
    /// on in `demo` and off in `serve`.
    pub signup_enabled: Option<bool>,
    /// Outbound mail: the SMTP relay (`SERVICE_SMTP_URL`):
    /// `smtps://user:password@host:465` (TLS), `smtp://host:587?tls=required`
    /// (STARTTLS) or `smtp://localhost:25` (plain, to this machine only).
    /// Unset: `serve` sends no mail and offers no password recovery; the
    /// demo delivers every mail to its sandbox mailbox (`/_sandbox/email/`).
    pub smtp_url: Option<SecretString>,
    /// The sender of every mail, `Nome <endereco@dominio>` (required with
    /// `smtp_url`).
    pub mail_from: Option<String>,
    /// How long one SMTP conversation may take, in seconds.
    pub smtp_timeout_secs: u64,
    /// PEM bundle trusted for the relay's certificate besides the
    /// operating system's store.
    pub smtp_ca_file: Option<PathBuf>,
    /// Days delivered mail stays in the outbox before the purge deletes it.
    pub mail_retention_days: i64,
    /// The public base URL that links in mails start with
    /// (`https://id.example.gov.br`), never taken from a request. Unset:
    /// `issuer_url`; the demo uses its own address.
    pub public_url: Option<String>,
    /// Where the JWT sub-application is mounted.
    pub token_prefix: String,
    /// Base URL of the upstream user-data resource (required by `serve`).
    pub upstream_base_url: Option<String>,
    /// Time-out of a call to the user-data resource, in milliseconds.
    pub upstream_timeout_ms: u64,
    /// Paths the consume routes may request (first one is the default).
    #[serde(deserialize_with = "string_list")]
    pub upstream_endpoints: Vec<String>,
    /// Largest upstream answer accepted, in bytes.
    pub upstream_max_body_bytes: usize,
    /// PEM bundle of certificates trusted for upstream calls in addition to
    /// the operating system's store (`SERVICE_UPSTREAM_CA_FILE`).
    pub upstream_ca_file: Option<PathBuf>,
    /// Forward proxy for every upstream call, `http://host:port` or
    /// `https://host:port` (`SERVICE_UPSTREAM_PROXY`); unset: direct calls.
    /// Loopback is never proxied; `HTTP_PROXY` & co. are ignored.
    pub upstream_proxy: Option<SecretString>,
    /// Hosts called directly despite `upstream_proxy`: names (and their
    /// subdomains), IP addresses or CIDR ranges, comma-separated.
    #[serde(deserialize_with = "string_list")]
    pub upstream_no_proxy: Vec<String>,
    /// Tax-authority base URL (`receita_federal`); demo: the sandbox.
    pub receita_base_url: Option<String>,
    /// Time-out of one tax-authority call, in milliseconds.
    pub receita_timeout_ms: u64,
    /// Bearer credential for the tax authority (never logged).
    pub receita_api_key: Option<SecretString>,
    /// CNES base URL (`cnes`); demo: the sandbox.
    pub cnes_base_url: Option<String>,
    /// Time-out of one CNES call, in milliseconds.
    pub cnes_timeout_ms: u64,
    /// Bearer credential for CNES (never logged).
    pub cnes_api_key: Option<SecretString>,
    /// CDP base URL (`cursos_cdp`); demo: the sandbox.
    pub cdp_base_url: Option<String>,
    /// Time-out of one CDP call, in milliseconds.
    pub cdp_timeout_ms: u64,
    /// Bearer credential for CDP (never logged).
    pub cdp_api_key: Option<SecretString>,
    /// How long `receita_federal` data is cached (default 5 years).
    pub receita_cache_secs: u64,
    /// How long `cnes` data is cached (default 7 days).
    pub cnes_cache_secs: u64,
    /// How long `cursos_cdp` data is cached (default 24 hours).
    pub cdp_cache_secs: u64,
    /// Fresh scope entries kept in process in front of PostgreSQL.
    pub scope_cache_memory_entries: usize,
    /// Days an entry of the access report (who read a person's data) is
    /// kept before the periodic purge deletes it (default 1,825: 5 years).
    pub access_log_retention_days: u32,
    /// Rows one statement of the periodic purge deletes at most (default
    /// 2,000; 1 to 100,000): the purge yields between batches, and a stop
    /// waits for one batch at most.
    pub purge_batch_rows: u32,
    /// Seconds the service serves before its first purge pass (default
    /// 300; at most 86,400): a restart is not slowed by a backlog.
    pub purge_start_delay_secs: u64,
    /// PBKDF2 iterations for new password hashes.
    pub password_iterations: u32,
    /// Passwords hashed at once (default: cores − 1, at least 1).
    pub hashing_threads: Option<usize>,
    /// Failed passwords per username within the window before answers are
    /// 429 (0: no limit).
    pub login_throttle_username_failures: u32,
    /// Failed credential checks per client address within the window
    /// before answers are 429 (0: no limit).
    pub login_throttle_address_failures: u32,
    /// Length of the brute-force limits' window, in seconds (1 to 86,400).
    pub login_throttle_window_secs: u32,
    /// A header naming the client address, set by a trusted reverse proxy
    /// (e.g. `X-Forwarded-For`, whose last value is used); unset: the TCP
    /// peer. Only safe when the service cannot be reached past the proxy.
    pub client_address_header: Option<String>,
    /// HTTP worker threads (default: one per core).
    pub workers: Option<usize>,
    /// On SIGTERM/SIGINT, seconds in-flight requests may take to finish
    /// before their connections are closed.
    pub shutdown_timeout_secs: u64,
    /// Log format: `text` or `json`.
    pub log_format: String,
    /// Serve `POST /_noop/` (the benchmark's baseline).
    pub bench_noop_route: bool,
    /// Record metrics and serve `GET /metrics` (Prometheus text format) on
    /// the main port: unset, on in `demo` and off in `serve`.
    pub metrics_enabled: Option<bool>,
    /// Serve `GET /metrics` on this address instead of the main port
    /// (e.g. `127.0.0.1:9100`); setting it turns the metrics on.
    pub metrics_bind: Option<String>,
    /// Client component: `{column: profile_field}` as JSON text
    /// (`SERVICE_USER_ATTR_MAP`); in TOML also a table.
    #[serde(deserialize_with = "json_object_text")]
    pub user_attr_map: String,
    /// Client component: the host user column of the get-or-create lookup.
    pub user_lookup_field: String,
    /// Client component: the scopes to request (`dados_publicos` is added).
    #[serde(deserialize_with = "string_list")]
    pub scopes: Vec<String>,
    /// Client component: the provider's base URL for the server-to-server
    /// calls (`/oauth/token/`, `/api/perfil/dados/`); setting it enables the
    /// client component in `serve` (demo: this service itself).
    pub provider_base_url: Option<String>,
    /// Client component: the provider's base URL as browsers reach it (the
    /// authorize page); default: `provider_base_url`.
    pub provider_public_url: Option<String>,
    /// Client component: this host application's OAuth2 client id.
    pub provider_client_id: Option<String>,
    /// Client component: its client secret (never logged).
    pub provider_client_secret: Option<SecretString>,
    /// Client component: the redirect URI registered for the client (this
    /// service's `/auth/callback/`).
    pub provider_redirect_uri: Option<String>,
    /// Client component: time-out of one provider call, in milliseconds.
    pub provider_timeout_ms: u64,
    /// Client component: the host user table the mapping writes.
    pub user_table: String,
    /// Upstream identity providers people may log in through ("Entrar com
    /// gov.br", or any OpenID provider): `[[providers]]` tables in the
    /// file, a JSON array in `SERVICE_PROVIDERS` (docs/configuration.md).
    #[serde(deserialize_with = "providers::provider_list")]
    pub providers: Vec<ProviderSettings>,
    /// The gov.br level from which a login through gov.br counts as a
    /// validated registration (`receita_federal`): `bronze`, `prata`
    /// (default) or `ouro`.
    pub govbr_validated_level: String,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            bind: "127.0.0.1:8000".into(),
            database_url: SecretString::from(DEFAULT_DATABASE_URL),
            database_max_connections: 10,
            jwt_algorithm: "HS256".into(),
            jwt_secret: None,
            jwt_private_key_file: None,
            jwt_public_key_file: None,
            jwt_leeway_secs: 0,
            jwt_previous_public_key_files: Vec::new(),
            oidc_signing_algorithm: "RS256".into(),
            oidc_signing_key_file: None,
            second_factor_key_file: None,
            passkey_origin: None,
            oidc_previous_public_key_files: Vec::new(),
            access_token_lifetime_secs: 5 * 60,
            refresh_token_lifetime_secs: 24 * 60 * 60,
            refresh_grace_secs: credencial_domain::refresh_grace::DEFAULT_REFRESH_GRACE_SECS,
            session_idle_secs: credencial_domain::session::DEFAULT_IDLE_SECS,
            session_absolute_secs: credencial_domain::session::DEFAULT_ABSOLUTE_SECS,
            issuer_url: None,
            cookie_secure: None,
            signup_enabled: None,
            smtp_url: None,
            mail_from: None,
            smtp_timeout_secs: credencial_adapters_upstream::DEFAULT_SMTP_TIMEOUT.as_secs(),
            smtp_ca_file: None,
            mail_retention_days: credencial_application::mail::DEFAULT_MAIL_RETENTION_DAYS,
            public_url: None,
            staff_second_factor: None,
            token_prefix: credencial_app_actix::jwt::DEFAULT_PREFIX.into(),
            upstream_base_url: None,
            upstream_timeout_ms: 5_000,
            upstream_endpoints: vec![credencial_domain::endpoint::DEFAULT_ENDPOINT.into()],
            upstream_max_body_bytes: 1024 * 1024,
            upstream_ca_file: None,
            upstream_proxy: None,
            upstream_no_proxy: Vec::new(),
            receita_base_url: None,
            receita_timeout_ms: 3_000,
            receita_api_key: None,
            cnes_base_url: None,
            cnes_timeout_ms: 3_000,
            cnes_api_key: None,
            cdp_base_url: None,
            cdp_timeout_ms: 3_000,
            cdp_api_key: None,
            receita_cache_secs: cache_default(credencial_domain::Scope::ReceitaFederal),
            cnes_cache_secs: cache_default(credencial_domain::Scope::Cnes),
            cdp_cache_secs: cache_default(credencial_domain::Scope::CursosCdp),
            scope_cache_memory_entries: 10_000,
            access_log_retention_days: credencial_domain::account::DEFAULT_ACCESS_LOG_RETENTION_DAYS,
            purge_batch_rows: credencial_application::purge::DEFAULT_PURGE_BATCH_ROWS,
            purge_start_delay_secs: credencial_application::purge::DEFAULT_PURGE_START_DELAY_SECS,
            password_iterations: credencial_domain::password::DEFAULT_ITERATIONS,
            hashing_threads: None,
            login_throttle_username_failures: 5,
            login_throttle_address_failures: 20,
            login_throttle_window_secs: 300,
            client_address_header: None,
            workers: None,
            shutdown_timeout_secs: credencial_app_actix::server::DEFAULT_SHUTDOWN_TIMEOUT_SECS,
            log_format: "text".into(),
            bench_noop_route: false,
            metrics_enabled: None,
            metrics_bind: None,
            user_attr_map: credencial_domain::attr_map::DEFAULT_ATTR_MAP.into(),
            user_lookup_field: credencial_domain::attr_map::DEFAULT_LOOKUP_FIELD.into(),
            scopes: credencial_domain::attr_map::DEFAULT_SCOPES.iter().map(|s| s.name().to_owned()).collect(),
            provider_base_url: None,
            provider_public_url: None,
            provider_client_id: None,
            provider_client_secret: None,
            provider_redirect_uri: None,
            provider_timeout_ms: 3_000,
            user_table: "host_users".into(),
            providers: Vec::new(),
            govbr_validated_level: credencial_domain::federation::ReliabilityLevel::Prata.name().into(),
        }
    }
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("bind", &self.bind)
            .field("jwt_algorithm", &self.jwt_algorithm)
            .field("upstream_base_url", &self.upstream_base_url)
            .finish_non_exhaustive()
    }
}

/// Settings are missing or wrong: one line per problem, each naming its
/// setting.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SettingsError(pub String);

impl SettingsError {
    /// An error about the setting `key` (named as its environment variable).
    pub fn about(key: &str, message: impl std::fmt::Display) -> Self {
        Self(format!("setting {}: {message}", env_name(key)))
    }

    /// `Ok` without problems, else one error listing every problem, one per line.
    fn all(problems: Vec<SettingsError>) -> Result<(), Self> {
        if problems.is_empty() {
            return Ok(());
        }
        Err(Self(problems.into_iter().map(|p| p.0).collect::<Vec<_>>().join("\n")))
    }
}

/// The name of every setting (the keys of the TOML file; upper-cased with
/// `SERVICE_` in the environment), read from the serde description of
/// [`Settings`], so that it cannot drift from the struct.
pub fn setting_names() -> &'static [&'static str] {
    serde_aux::serde_introspection::serde_introspect::<Settings>()
}

/// How sure the nearest-name suggestion must be (Jaro-Winkler similarity).
const SUGGESTION_THRESHOLD: f64 = 0.8;

/// The known setting nearest to `key`, if it is near enough to be a typo.
fn nearest_setting(key: &str) -> Option<&'static str> {
    setting_names()
        .iter()
        .map(|name| (strsim::jaro_winkler(key, name), *name))
        .filter(|(score, _)| *score >= SUGGESTION_THRESHOLD)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, name)| name)
}

/// The problem of a key no setting has, named as it was written (an
/// environment variable, or a key of the file), with the nearest known name.
fn unknown_setting(key: &str, origin: Option<&str>, file: &Path) -> SettingsError {
    let from_file = origin.filter(|o| *o != ENV_ORIGIN).map(|_| file.display());
    let (written, suggestion) = match from_file {
        Some(file) => (format!("{key} in {file}"), nearest_setting(key).map(str::to_owned)),
        None => (format!("SERVICE_{}", key.to_ascii_uppercase()), nearest_setting(key).map(env_name)),
    };
    match suggestion {
        Some(name) => SettingsError(format!("unknown setting {written}; did you mean {name}?")),
        None => SettingsError(format!("unknown setting {written}")),
    }
}

/// The settings file read when none is named.
const DEFAULT_FILE: &str = "credencial.toml";

/// The origin `config` gives values read from the environment.
const ENV_ORIGIN: &str = "the environment";

/// The environment variable of a setting key.
pub fn env_name(key: &str) -> String {
    if key == "database_url" {
        "DATABASE_URL".into()
    } else {
        format!("SERVICE_{}", key.to_ascii_uppercase())
    }
}

impl Settings {
    /// Loads the settings: `file` if given (it must exist), else
    /// `credencial.toml` in the working directory if present; then the
    /// environment. Every problem is reported at once (see [`Self::load_for`]).
    pub fn load(file: Option<&Path>) -> Result<Self, SettingsError> {
        Self::load_for(file, None)
    }

    /// [`Self::load`] for running in `mode` (`None`: a command that does
    /// not serve), which decides what must be set. Unknown names (with the
    /// nearest known one), values of the wrong type and values out of range
    /// are all collected and reported together, one per line.
    pub fn load_for(file: Option<&Path>, mode: Option<Mode>) -> Result<Self, SettingsError> {
        let mut builder = Config::builder();
        match file {
            Some(path) => {
                builder = builder.add_source(File::from(path).format(FileFormat::Toml).required(true));
            }
            None => {
                builder = builder.add_source(File::new(DEFAULT_FILE, FileFormat::Toml).required(false));
            }
        }
        builder = builder
            .add_source(Environment::with_prefix("SERVICE").prefix_separator("_"))
            .set_override_option("database_url", std::env::var("DATABASE_URL").ok())
            .map_err(|e| SettingsError(e.to_string()))?;
        let config = builder.build().map_err(|e| SettingsError(format!("reading settings: {}", without_source(&e))))?;
        let mut values: Vec<(String, config::Value)> =
            config.collect().map_err(|e| SettingsError(format!("reading settings: {e}")))?.into_iter().collect();
        values.sort_by(|a, b| a.0.cmp(&b.0));

        let mut problems = Vec::new();
        // The database URL has one name in the environment: DATABASE_URL.
        if std::env::var_os("SERVICE_DATABASE_URL").is_some() {
            problems.push(SettingsError("unknown setting SERVICE_DATABASE_URL; did you mean DATABASE_URL?".to_owned()));
        }
        // Each value on its own first, so that one wrong value does not
        // hide the others; then the good ones together.
        let mut good = Config::builder();
        for (key, value) in values {
            if !setting_names().contains(&key.as_str()) {
                problems.push(unknown_setting(&key, value.origin(), file.unwrap_or(Path::new(DEFAULT_FILE))));
                continue;
            }
            let alone = Config::builder()
                .set_override(key.as_str(), value.clone())
                .and_then(|b| b.build())
                .and_then(|c| c.try_deserialize::<Settings>());
            match alone {
                Ok(_) => good = good.set_override(key.as_str(), value).map_err(|e| describe(&e))?,
                Err(e) => problems.push(SettingsError::about(&key, e)),
            }
        }
        let settings: Settings = good.build().and_then(|c| c.try_deserialize()).map_err(|e| describe(&e))?;
        problems.extend(settings.problems(mode));
        SettingsError::all(problems)?;
        Ok(settings)
    }

    /// Checks every setting for any command (see [`Self::problems`]).
    pub fn validate(&self) -> Result<(), SettingsError> {
        SettingsError::all(self.problems(None))
    }

    /// Checks every setting for running in `mode`, including what that mode
    /// requires to be set.
    pub fn validate_for(&self, mode: Mode) -> Result<(), SettingsError> {
        SettingsError::all(self.problems(Some(mode)))
    }

    /// How upstream calls reach the outside: the CA bundle and the proxy.
    pub fn outbound(&self) -> Result<credencial_adapters_upstream::OutboundConfig, SettingsError> {
        Ok(credencial_adapters_upstream::OutboundConfig {
            ca_file: self.upstream_ca_file.clone(),
            proxy: self.proxy()?,
        })
    }

    /// The outbound proxy, if `upstream_proxy` is set (and not empty).
    fn proxy(&self) -> Result<Option<credencial_adapters_upstream::ProxyConfig>, SettingsError> {
        match &self.upstream_proxy {
            Some(url) if !url.expose_secret().trim().is_empty() => {
                credencial_adapters_upstream::ProxyConfig::parse(url.expose_secret(), &self.upstream_no_proxy.join(","))
                    .map(Some)
                    .map_err(|e| SettingsError::about("upstream_proxy", e))
            }
            _ => Ok(None),
        }
    }

    /// The client component's mapping (`SERVICE_USER_ATTR_MAP`,
    /// `SERVICE_USER_LOOKUP_FIELD`, `SERVICE_SCOPES`), parsed and checked
    /// against each other; errors name those settings.
    pub fn user_mapping(&self) -> Result<credencial_domain::attr_map::UserMapping, SettingsError> {
        use credencial_domain::attr_map::{AttrMap, AttrMapError, ClientScopes, LookupField, UserMapping};
        // The domain names its inputs; the operator reads the settings' names.
        let named = |e: AttrMapError| SettingsError(format!("setting {}", e.message_naming(mapping_setting)));
        let scopes = ClientScopes::parse(&self.scopes).map_err(named)?;
        let map = AttrMap::from_json(&self.user_attr_map).map_err(named)?;
        let lookup = LookupField::parse(&self.user_lookup_field).map_err(named)?;
        UserMapping::new(map, lookup, scopes).map_err(named)
    }

    /// The brute-force limits.
    pub fn throttle_policy(&self) -> credencial_domain::throttle::ThrottlePolicy {
        credencial_domain::throttle::ThrottlePolicy {
            username_failures: self.login_throttle_username_failures,
            address_failures: self.login_throttle_address_failures,
            window_secs: self.login_throttle_window_secs,
        }
    }

    /// Where the brute-force limits read the client address from.
    pub fn client_address_source(&self) -> Result<credencial_app_actix::ClientAddressSource, SettingsError> {
        let header = match self.client_address_header.as_deref().map(str::trim) {
            None | Some("") => None,
            // RFC 7239's `Forwarded: for=…;proto=…` is not a list of bare
            // addresses: it would never parse, and every request would
            // silently count as the proxy's.
            Some(name) if name.eq_ignore_ascii_case("forwarded") => return Err(SettingsError::about(
                "client_address_header",
                "Forwarded is not supported; name a header that holds addresses, such as X-Forwarded-For or X-Real-IP",
            )),
            Some(name) => Some(
                actix_web::http::header::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|_| SettingsError::about("client_address_header", "is not a valid header name"))?,
            ),
        };
        Ok(credencial_app_actix::ClientAddressSource { header })
    }

    /// Whether metrics are recorded in `mode`, and where `/metrics` is
    /// served: `None` when off, `Some(None)` on the main port,
    /// `Some(Some(address))` on a listener of its own.
    pub fn metrics_endpoint(&self, mode: Mode) -> Option<Option<&str>> {
        let bind = self.metrics_bind.as_deref().map(str::trim).filter(|b| !b.is_empty());
        match (self.metrics_enabled, bind) {
            (Some(false), _) => None,
            (_, Some(bind)) => Some(Some(bind)),
            (Some(true), None) => Some(None),
            (None, None) => (mode == Mode::Demo).then_some(None),
        }
    }

    /// The OpenID Connect issuer, if `issuer_url` is set. Errors name the
    /// setting.
    pub fn issuer(&self) -> Result<Option<credencial_domain::oauth::discovery::IssuerUrl>, SettingsError> {
        self.issuer_url
            .as_deref()
            .map(|raw| {
                credencial_domain::oauth::discovery::IssuerUrl::parse(raw)
                    .map_err(|e| SettingsError::about("issuer_url", e))
            })
            .transpose()
    }

    /// The database URL as text (for connecting only).
    pub fn database_url(&self) -> &str {
        self.database_url.expose_secret()
    }
}

/// A settings error without the lines of the file it quotes: a TOML syntax
/// error shows the offending line, which may hold a secret (an unquoted
/// `jwt_secret = …`, a proxy URL with a password). The position and the
/// parser's message stay.
fn without_source(e: &config::ConfigError) -> String {
    let quoted = |line: &str| {
        let rest = line.trim_start().trim_start_matches(|c: char| c.is_ascii_digit());
        rest.trim_start().starts_with('|')
    };
    e.to_string().lines().filter(|line| !quoted(line)).collect::<Vec<_>>().join("; ")
}

/// The environment name of the setting behind a mapping input.
pub fn mapping_setting(input: credencial_domain::attr_map::MappingInput) -> String {
    use credencial_domain::attr_map::MappingInput;
    env_name(match input {
        MappingInput::AttrMap => "user_attr_map",
        MappingInput::LookupField => "user_lookup_field",
        MappingInput::Scopes => "scopes",
    })
}

/// The outbound client's error, named after its setting.
pub fn outbound_error(e: credencial_adapters_upstream::OutboundError) -> SettingsError {
    use credencial_adapters_upstream::OutboundError;
    match e {
        OutboundError::CaFile { .. } => SettingsError::about("upstream_ca_file", e),
        OutboundError::Proxy(_) => SettingsError::about("upstream_proxy", e),
        OutboundError::Build(_) => SettingsError(e.to_string()),
    }
}

fn cache_default(scope: credencial_domain::Scope) -> u64 {
    scope.default_cache_secs().unwrap_or(0)
}

/// Turns a deserialisation error into a message that names the setting.
fn describe(e: &config::ConfigError) -> SettingsError {
    let text = e.to_string();
    // config reports "… for key `jwt_leeway_secs`" or "… `jwt_leeway_secs`".
    let key = text.split('`').nth(1).map(|k| k.trim_start_matches("SERVICE_").to_ascii_lowercase());
    match key {
        Some(k) if !k.is_empty() => SettingsError::about(&k, text),
        _ => SettingsError(format!("invalid settings: {text}")),
    }
}

/// A list written as a TOML array, a JSON array string, or a
/// comma-separated string (environment variables).
fn string_list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        List(Vec<String>),
        Text(String),
    }
    Ok(match Raw::deserialize(d)? {
        Raw::List(v) => v,
        Raw::Text(s) if s.trim_start().starts_with('[') => {
            serde_json::from_str(&s).map_err(serde::de::Error::custom)?
        }
        Raw::Text(s) => s.split(',').map(str::trim).filter(|p| !p.is_empty()).map(str::to_owned).collect(),
    })
}

/// A JSON object kept as JSON text: written as a string (environment
/// variables, TOML) or as a TOML table.
fn json_object_text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Text(String),
        Table(serde_json::Map<String, serde_json::Value>),
    }
    Ok(match Raw::deserialize(d)? {
        Raw::Text(s) => s,
        Raw::Table(m) => serde_json::Value::Object(m).to_string(),
    })
}
