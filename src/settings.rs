//! Typed settings, loaded in layers: defaults, then an optional TOML file,
//! then `SERVICE_*` environment variables and `DATABASE_URL` (the
//! environment wins). Every problem is reported with the setting's name.

use std::path::Path;

use config::{Config, Environment, File, FileFormat, Source};
use secrecy::ExposeSecret;

use crate::startup::Mode;

mod branding;
mod checks;
mod client;
mod federation;
mod lists;
mod login;
mod mail;
mod providers;
mod registries;
mod server;
mod storage;
mod text;
mod tokens;

pub use branding::BrandingSettings;
pub use client::ClientSettings;
pub use federation::FederationSettings;
pub use login::LoginSettings;
pub use mail::MailSettings;
pub use providers::{ProviderSettings, GOVBR_SCOPES, OIDC_SCOPES};
pub use registries::RegistrySettings;
pub use server::{LogFormat, ServerSettings};
pub use storage::StorageSettings;
pub use tokens::TokenSettings;

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

/// Every setting of the service, in sections. A key is the same in the
/// TOML file and, upper-cased with the `SERVICE_` prefix, in the
/// environment (`DATABASE_URL` for the database); the file stays flat, so
/// that a key reads the same in both places, and each section takes its
/// own keys. Values with a meaning (algorithms, URLs, levels, table names)
/// are parsed by the loader, once: start-up only wires them.
#[derive(Clone, Default)]
pub struct Settings {
    /// Listening, workers, logs, metrics, cookies, the client address.
    pub server: ServerSettings,
    /// The database and the periodic purge.
    pub storage: StorageSettings,
    /// Signing keys, token lifetimes, the OpenID Connect issuer.
    pub tokens: TokenSettings,
    /// Sessions, second factors, passkeys, sign-up, hashing, brute-force limits.
    pub login: LoginSettings,
    /// The user-data resource, the registries, their caches, outbound calls.
    pub registries: RegistrySettings,
    /// Upstream identity providers (gov.br, OpenID providers).
    pub federation: FederationSettings,
    /// Outbound mail.
    pub mail: MailSettings,
    /// The client component.
    pub client: ClientSettings,
    /// The institution's identity on pages and mails.
    pub branding: BrandingSettings,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("bind", &self.server.bind)
            .field("jwt_algorithm", &self.tokens.jwt_algorithm.to_string())
            .field("upstream_base_url", &self.registries.upstream_base_url.as_ref().map(ToString::to_string))
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
    use serde_aux::serde_introspection::serde_introspect;
    static NAMES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        [
            serde_introspect::<ServerSettings>(),
            serde_introspect::<StorageSettings>(),
            serde_introspect::<TokenSettings>(),
            serde_introspect::<LoginSettings>(),
            serde_introspect::<RegistrySettings>(),
            serde_introspect::<FederationSettings>(),
            serde_introspect::<MailSettings>(),
            serde_introspect::<ClientSettings>(),
            serde_introspect::<BrandingSettings>(),
        ]
        .concat()
    })
}

/// The defaults of every setting as the documentation states them, by key
/// (secrets and the providers, which have no default to state, are left
/// out; an unset default is `null`).
pub fn default_values() -> serde_json::Map<String, serde_json::Value> {
    let d = Settings::default();
    let sections = [
        serde_json::to_value(&d.server),
        serde_json::to_value(&d.storage),
        serde_json::to_value(&d.tokens),
        serde_json::to_value(&d.login),
        serde_json::to_value(&d.registries),
        serde_json::to_value(&d.federation),
        serde_json::to_value(&d.mail),
        serde_json::to_value(&d.client),
        serde_json::to_value(&d.branding),
    ];
    let mut values = serde_json::Map::new();
    for section in sections {
        if let Ok(serde_json::Value::Object(fields)) = section {
            values.extend(fields);
        }
    }
    values
}

impl Settings {
    /// Every section, each from its own keys of `config`.
    fn from_config(config: &Config) -> Result<Self, config::ConfigError> {
        Ok(Self {
            server: config.clone().try_deserialize()?,
            storage: config.clone().try_deserialize()?,
            tokens: config.clone().try_deserialize()?,
            login: config.clone().try_deserialize()?,
            registries: config.clone().try_deserialize()?,
            federation: config.clone().try_deserialize()?,
            mail: config.clone().try_deserialize()?,
            client: config.clone().try_deserialize()?,
            branding: config.clone().try_deserialize()?,
        })
    }
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
                .and_then(|c| Settings::from_config(&c));
            match alone {
                Ok(_) => good = good.set_override(key.as_str(), value).map_err(|e| describe(&e))?,
                Err(e) => problems.push(SettingsError::about(&key, e)),
            }
        }
        let settings = good.build().and_then(|c| Settings::from_config(&c)).map_err(|e| describe(&e))?;
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

    /// The database URL as text (for connecting only).
    pub fn database_url(&self) -> &str {
        self.storage.database_url.expose_secret()
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
