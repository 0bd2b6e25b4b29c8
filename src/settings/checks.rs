//! What is wrong with settings that deserialized: values out of range,
//! unusable URLs, keys and files, and what a mode requires. Every problem
//! is collected, none stops the others from being found.

use credencial_adapters_upstream::{check_client_id, check_redirect_uri};
use secrecy::ExposeSecret;

use super::{
    outbound_error, Settings, SettingsError, MAX_ACCESS_LOG_RETENTION_DAYS, MAX_MAIL_RETENTION_DAYS,
    MAX_PURGE_BATCH_ROWS, MAX_PURGE_START_DELAY_SECS, MAX_REFRESH_GRACE_SECS, MAX_SHUTDOWN_TIMEOUT_SECS,
    MAX_SMTP_TIMEOUT_SECS, MAX_THROTTLE_WINDOW_SECS,
};
use crate::startup::Mode;

impl Settings {
    /// Every problem of the settings, in the order of the fields: values
    /// that are well-typed but out of range, unusable URLs, keys, key
    /// files and CA bundle, and, for `mode`, what it requires to be set.
    /// Reads the files the settings name; writes nothing.
    pub fn problems(&self, mode: Option<Mode>) -> Vec<SettingsError> {
        let mut problems = Vec::new();
        if let Err(e) = crate::storage::Engine::check(self.database_url()) {
            problems.push(SettingsError::about("database_url", e));
        }
        problems.extend(self.range_problems());
        problems.extend(self.key_problems(mode));
        problems.extend(self.upstream_problems(mode));
        problems.extend(self.federation.provider_problems());
        problems.extend(self.branding.problems());
        problems
    }

    /// Values that are well-typed but out of range, and the client mapping.
    fn range_problems(&self) -> Vec<SettingsError> {
        let mut problems = Vec::new();
        // An hour past `exp` is already far more than clocks disagree by.
        const MAX_JWT_LEEWAY_SECS: i64 = 60 * 60;
        if self.tokens.access_token_lifetime_secs <= 0 {
            problems.push(SettingsError::about("access_token_lifetime_secs", "must be positive"));
        }
        if self.tokens.refresh_grace_secs < 0 {
            problems.push(SettingsError::about("refresh_grace_secs", "must not be negative (0 disables the window)"));
        }
        if self.tokens.refresh_token_lifetime_secs <= 0 {
            problems.push(SettingsError::about("refresh_token_lifetime_secs", "must be positive"));
        }
        if self.tokens.refresh_family_lifetime_secs < self.tokens.refresh_token_lifetime_secs {
            problems.push(SettingsError::about(
                "refresh_family_lifetime_secs",
                "must be at least refresh_token_lifetime_secs",
            ));
        }
        if self.login.session_idle_secs <= 0 || self.login.session_idle_secs > 24 * 60 * 60 {
            problems.push(SettingsError::about("session_idle_secs", "must be 1 to 86400 seconds"));
        }
        if self.login.session_absolute_secs < self.login.session_idle_secs
            || self.login.session_absolute_secs > 7 * 24 * 60 * 60
        {
            problems.push(SettingsError::about(
                "session_absolute_secs",
                "must be at least session_idle_secs and at most 604800 seconds (7 days)",
            ));
        }
        if self.tokens.jwt_leeway_secs < 0 {
            problems.push(SettingsError::about("jwt_leeway_secs", "must not be negative"));
        }
        for (key, value) in [
            ("upstream_timeout_ms", self.registries.upstream_timeout_ms),
            ("receita_timeout_ms", self.registries.receita_timeout_ms),
            ("cnes_timeout_ms", self.registries.cnes_timeout_ms),
            ("cdp_timeout_ms", self.registries.cdp_timeout_ms),
            ("provider_timeout_ms", self.client.provider_timeout_ms),
        ] {
            if value == 0 {
                problems.push(SettingsError::about(key, "must be positive"));
            }
        }
        // Bounded so that time arithmetic and PostgreSQL timestamps cannot
        // overflow; the cache maxima are the contract's.
        const YEAR: i64 = 365 * 24 * 60 * 60;
        for (key, value, max) in [
            ("access_token_lifetime_secs", self.tokens.access_token_lifetime_secs, YEAR),
            ("refresh_token_lifetime_secs", self.tokens.refresh_token_lifetime_secs, YEAR),
            ("refresh_family_lifetime_secs", self.tokens.refresh_family_lifetime_secs, YEAR),
            ("jwt_leeway_secs", self.tokens.jwt_leeway_secs, MAX_JWT_LEEWAY_SECS),
            ("refresh_grace_secs", self.tokens.refresh_grace_secs, MAX_REFRESH_GRACE_SECS),
            ("receita_cache_secs", i64::try_from(self.registries.receita_cache_secs).unwrap_or(i64::MAX), 5 * YEAR),
            ("cnes_cache_secs", i64::try_from(self.registries.cnes_cache_secs).unwrap_or(i64::MAX), 5 * YEAR),
            ("cdp_cache_secs", i64::try_from(self.registries.cdp_cache_secs).unwrap_or(i64::MAX), 5 * YEAR),
        ] {
            if value > max {
                problems.push(SettingsError::about(key, format!("must be at most {max} seconds")));
            }
        }
        if self.server.shutdown_timeout_secs > MAX_SHUTDOWN_TIMEOUT_SECS {
            problems.push(SettingsError::about(
                "shutdown_timeout_secs",
                format!("must be at most {MAX_SHUTDOWN_TIMEOUT_SECS} seconds"),
            ));
        }
        if !(1..=MAX_ACCESS_LOG_RETENTION_DAYS).contains(&self.storage.access_log_retention_days) {
            problems.push(SettingsError::about(
                "access_log_retention_days",
                format!("must be between 1 and {MAX_ACCESS_LOG_RETENTION_DAYS} days"),
            ));
        }
        if !(1..=MAX_PURGE_BATCH_ROWS).contains(&self.storage.purge_batch_rows) {
            problems.push(SettingsError::about(
                "purge_batch_rows",
                format!("must be between 1 and {MAX_PURGE_BATCH_ROWS} rows"),
            ));
        }
        if self.storage.purge_start_delay_secs > MAX_PURGE_START_DELAY_SECS {
            problems.push(SettingsError::about(
                "purge_start_delay_secs",
                format!("must be at most {MAX_PURGE_START_DELAY_SECS} seconds"),
            ));
        }
        if !(1..=MAX_MAIL_RETENTION_DAYS).contains(&self.mail.mail_retention_days) {
            problems.push(SettingsError::about(
                "mail_retention_days",
                format!("must be between 1 and {MAX_MAIL_RETENTION_DAYS} days"),
            ));
        }
        if !(1..=MAX_SMTP_TIMEOUT_SECS).contains(&self.mail.smtp_timeout_secs) {
            problems.push(SettingsError::about(
                "smtp_timeout_secs",
                format!("must be between 1 and {MAX_SMTP_TIMEOUT_SECS} seconds"),
            ));
        }
        if self.mail.smtp_url.is_some() && self.mail.mail_from.as_deref().is_none_or(|f| f.trim().is_empty()) {
            problems.push(SettingsError::about("mail_from", "is required with smtp_url (Nome <endereco@dominio>)"));
        }
        if self.registries.scope_cache_memory_entries == 0 {
            problems.push(SettingsError::about("scope_cache_memory_entries", "must be positive"));
        }
        if self.login.password_iterations == 0
            || self.login.password_iterations > credencial_domain::password::MAX_ITERATIONS
        {
            problems.push(SettingsError::about(
                "password_iterations",
                format!("must be between 1 and {}", credencial_domain::password::MAX_ITERATIONS),
            ));
        }
        if !(1..=MAX_THROTTLE_WINDOW_SECS).contains(&self.login.login_throttle_window_secs) {
            problems.push(SettingsError::about(
                "login_throttle_window_secs",
                format!("must be between 1 and {MAX_THROTTLE_WINDOW_SECS} seconds"),
            ));
        }
        if let Err(e) = self.server.client_address_source() {
            problems.push(e);
        }
        if std::net::ToSocketAddrs::to_socket_addrs(self.server.bind.as_str()).is_err() {
            problems.push(SettingsError::about("bind", "must be an address and port, e.g. 127.0.0.1:8000"));
        }
        // (Port 0 is a free port each time: the same text is two listeners.)
        if let Some(bind) = self.server.metrics_bind.as_deref().map(str::trim).filter(|b| !b.is_empty()) {
            if std::net::ToSocketAddrs::to_socket_addrs(bind).is_err() {
                problems.push(SettingsError::about("metrics_bind", "must be an address and port, e.g. 127.0.0.1:9100"));
            } else if self.server.metrics_enabled == Some(false) {
                problems.push(SettingsError::about(
                    "metrics_bind",
                    "is set but SERVICE_METRICS_ENABLED is false; unset one of them",
                ));
            } else if bind == self.server.bind.trim() && !bind.ends_with(":0") {
                problems.push(SettingsError::about(
                    "metrics_bind",
                    "is the main address (SERVICE_BIND); to serve /metrics there, set SERVICE_METRICS_ENABLED=true instead",
                ));
            }
        }
        if self.server.workers == Some(0) {
            problems.push(SettingsError::about("workers", "must be positive"));
        }
        if self.storage.database_max_connections == 0 {
            problems.push(SettingsError::about("database_max_connections", "must be positive"));
        }
        if let Err(e) = credencial_domain::EndpointAllowList::new(&self.registries.upstream_endpoints) {
            problems.push(SettingsError::about("upstream_endpoints", e));
        }
        if let Err(e) = self.client.user_mapping() {
            problems.push(e);
        }
        if let Err(e) = self.client.login_writes() {
            problems.push(e);
        }
        problems
    }

    /// The signing keys: a secret that is set must be usable, key files
    /// must be readable PEM keys of a pair; `serve` needs a key, the demo
    /// makes a random HS256 secret when none is set.
    fn key_problems(&self, mode: Option<Mode>) -> Vec<SettingsError> {
        let hs256_without_secret =
            self.tokens.jwt_algorithm == credencial_domain::JwtAlgorithm::HS256 && self.tokens.jwt_secret.is_none();
        if hs256_without_secret && mode != Some(Mode::Serve) {
            return Vec::new();
        }
        // The codecs are built as at start-up; each signs and verifies a
        // probe token.
        match crate::keys::codec(self, Mode::Serve) {
            Ok(codec) => {
                crate::keys::id_token_codec(self, Mode::Serve, &std::sync::Arc::new(codec)).err().into_iter().collect()
            }
            Err(e) => vec![e],
        }
    }

    /// The upstream URLs, API keys, provider settings and the outbound
    /// client (CA bundle, proxy); `serve` needs `upstream_base_url`.
    fn upstream_problems(&self, mode: Option<Mode>) -> Vec<SettingsError> {
        use credencial_adapters_upstream::ApiKey;
        let mut problems = Vec::new();
        if self.registries.upstream_base_url.is_none() && mode == Some(Mode::Serve) {
            problems.push(SettingsError::about(
                "upstream_base_url",
                "is not set (the base URL of the user-data resource, e.g. https://suap.example.gov.br)",
            ));
        }
        for (key, value) in [
            ("receita_api_key", &self.registries.receita_api_key),
            ("cnes_api_key", &self.registries.cnes_api_key),
            ("cdp_api_key", &self.registries.cdp_api_key),
        ] {
            if value.as_ref().is_some_and(|k| ApiKey::new(k.expose_secret()).is_err()) {
                problems.push(SettingsError::about(key, "is not a valid header value"));
            }
        }
        if self.client.provider_base_url.is_some() {
            for (key, missing) in [
                ("provider_client_id", self.client.provider_client_id.is_none()),
                ("provider_client_secret", self.client.provider_client_secret.is_none()),
                ("provider_redirect_uri", self.client.provider_redirect_uri.is_none()),
            ] {
                if missing {
                    problems.push(SettingsError::about(key, "is not set (needed with SERVICE_PROVIDER_BASE_URL)"));
                }
            }
        }
        // The values the provider client refuses, refused here first, before
        // `demo` writes anything.
        if let Some(Err(e)) = self.client.provider_client_id.as_deref().map(check_client_id) {
            problems.push(SettingsError::about(e.setting(), e));
        }
        if let Some(Err(e)) = self.client.provider_redirect_uri.as_deref().map(check_redirect_uri) {
            problems.push(SettingsError::about(e.setting(), e));
        }
        // The CA bundle is read even when the proxy is wrong.
        let proxy = self.registries.proxy().unwrap_or_else(|e| {
            problems.push(e);
            None
        });
        let config =
            credencial_adapters_upstream::OutboundConfig { ca_file: self.registries.upstream_ca_file.clone(), proxy };
        if let Err(e) = credencial_adapters_upstream::http_client_with(&config) {
            problems.push(outbound_error(e));
        }
        problems
    }
}
