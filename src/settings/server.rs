//! How the service listens, logs and stops: the address, workers, metrics, the
//! client address behind a proxy, cookies and where the JWT sub-application is
//! mounted.

use serde::{Deserialize, Serialize};

use crate::startup::Mode;

/// How the service listens, logs and stops: the address, workers, metrics, the
/// client address behind a proxy, cookies and where the JWT sub-application is
/// mounted.
#[derive(Clone, Deserialize, Serialize)]
#[serde(default)]
pub struct ServerSettings {
    /// Address to listen on (`SERVICE_BIND`).
    pub bind: String,
    /// HTTP worker threads (default: one per core).
    pub workers: Option<usize>,
    /// On SIGTERM/SIGINT, seconds in-flight requests may take to finish
    /// before their connections are closed.
    pub shutdown_timeout_secs: u64,
    /// Log format: `text` or `json`.
    #[serde(with = "super::text")]
    pub log_format: LogFormat,
    /// Serve `POST /_noop/` (the benchmark's baseline).
    pub bench_noop_route: bool,
    /// Record metrics and serve `GET /metrics` (Prometheus text format) on
    /// the main port: unset, on in `demo` and off in `serve`.
    pub metrics_enabled: Option<bool>,
    /// Serve `GET /metrics` on this address instead of the main port
    /// (e.g. `127.0.0.1:9100`); setting it turns the metrics on.
    pub metrics_bind: Option<String>,
    /// A header naming the client address, set by a trusted reverse proxy
    /// (e.g. `X-Forwarded-For`, whose last value is used); unset: the TCP
    /// peer. Only safe when the service cannot be reached past the proxy.
    pub client_address_header: Option<String>,
    /// `Secure` attribute of the provider's cookies: `true` always, `false`
    /// never, unset: when the request came over https (as the connection or
    /// a proxy's `Forwarded`/`X-Forwarded-Proto` says).
    pub cookie_secure: Option<bool>,
    /// Where the JWT sub-application is mounted.
    pub token_prefix: String,
}

impl Default for ServerSettings {
    fn default() -> Self {
        Self {
            bind: "127.0.0.1:8000".into(),
            workers: None,
            shutdown_timeout_secs: credencial_app_actix::server::DEFAULT_SHUTDOWN_TIMEOUT_SECS,
            log_format: LogFormat::Text,
            bench_noop_route: false,
            metrics_enabled: None,
            metrics_bind: None,
            client_address_header: None,
            cookie_secure: None,
            token_prefix: credencial_app_actix::jwt::DEFAULT_PREFIX.into(),
        }
    }
}

/// The shape of log lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// `<timestamp> <LEVEL> <message> name=value …`.
    Text,
    /// One JSON object per line.
    Json,
}

impl super::text::SettingText for LogFormat {
    fn from_text(text: &str) -> Result<Self, String> {
        match text {
            "text" => Ok(Self::Text),
            "json" => Ok(Self::Json),
            _ => Err("must be \"text\" or \"json\"".to_owned()),
        }
    }
    fn to_text(&self) -> String {
        self.name().to_owned()
    }
}

impl LogFormat {
    /// The format's name, as the setting writes it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Json => "json",
        }
    }
}

impl ServerSettings {
    /// Where the brute-force limits read the client address from.
    pub fn client_address_source(&self) -> Result<credencial_app_actix::ClientAddressSource, super::SettingsError> {
        let header = match self.client_address_header.as_deref().map(str::trim) {
            None | Some("") => None,
            // RFC 7239's `Forwarded: for=…;proto=…` is not a list of bare
            // addresses: it would never parse, and every request would
            // silently count as the proxy's.
            Some(name) if name.eq_ignore_ascii_case("forwarded") => return Err(super::SettingsError::about(
                "client_address_header",
                "Forwarded is not supported; name a header that holds addresses, such as X-Forwarded-For or X-Real-IP",
            )),
            Some(name) => Some(
                actix_web::http::header::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|_| super::SettingsError::about("client_address_header", "is not a valid header name"))?,
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
}
