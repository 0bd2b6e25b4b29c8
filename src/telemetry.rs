//! Logging, initialised once per process.

use tracing_subscriber::{fmt, EnvFilter};

/// Installs the global subscriber: `RUST_LOG` (default `info`) filters,
/// `json` picks JSON lines (for production), anything else readable text.
pub fn init(format: &str) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,actix_server=warn"));
    let builder = fmt().with_env_filter(filter).with_target(false);
    let result = if format == "json" { builder.json().flatten_event(true).try_init() } else { builder.try_init() };
    // A second call (tests) keeps the first subscriber.
    drop(result);
}
