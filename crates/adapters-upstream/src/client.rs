//! The process-wide HTTP client and validated upstream base URLs.

use std::path::PathBuf;
use std::time::Duration;

use credencial_domain::UpstreamPath;
use thiserror::Error;
use url::Url;

/// Hosts that are never reached through a proxy: the loopback addresses and
/// names (a proxy elsewhere cannot reach this machine's loopback anyway).
pub const LOOPBACK_NO_PROXY: &str = "127.0.0.0/8,::1,localhost";

/// How the shared client reaches the outside: which certificates it trusts
/// beyond the operating system's store, and through which proxy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutboundConfig {
    /// A PEM bundle whose certificates are added to the trusted roots
    /// (e.g. an institution's internal or ICP-Brasil chain).
    pub ca_file: Option<PathBuf>,
    /// The proxy every upstream call goes through, if any.
    pub proxy: Option<ProxyConfig>,
}

/// An outbound HTTP(S) forward proxy.
#[derive(Clone, PartialEq, Eq)]
pub struct ProxyConfig {
    /// `http://host:port` or `https://host:port` (credentials allowed; never logged).
    pub url: Url,
    /// `NO_PROXY`-style exclusions: host names (matching their subdomains
    /// too), IP addresses or CIDR ranges. Loopback ([`LOOPBACK_NO_PROXY`])
    /// is always excluded.
    pub no_proxy: Vec<String>,
}

impl std::fmt::Debug for ProxyConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may carry the proxy's password.
        f.debug_struct("ProxyConfig")
            .field("host", &self.url.host_str())
            .field("port", &self.url.port_or_known_default())
            .field("no_proxy", &self.no_proxy)
            .finish()
    }
}

/// The outbound configuration cannot be used; each variant names what is wrong.
#[derive(Debug, Error)]
pub enum OutboundError {
    /// The CA bundle cannot be read, or holds no usable certificate.
    #[error("CA bundle {path}: {reason}")]
    CaFile {
        /// The file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The proxy URL is not an http(s) URL with a host.
    #[error("{0}")]
    Proxy(String),
    /// reqwest refused the configuration (e.g. the operating system's trust
    /// store could not be read).
    #[error("cannot build the HTTP client: {0}")]
    Build(String),
}

impl ProxyConfig {
    /// Parses a proxy URL and a comma-separated exclusion list.
    pub fn parse(url: &str, no_proxy: &str) -> Result<Self, OutboundError> {
        // The parser's messages never repeat the URL (it may hold a password).
        let url = Url::parse(url.trim()).map_err(|e| OutboundError::Proxy(format!("not an absolute URL: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
            return Err(OutboundError::Proxy("must be an http:// or https:// URL with a host".into()));
        }
        if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
            return Err(OutboundError::Proxy("must be scheme://host:port only (no path or query)".into()));
        }
        let no_proxy = no_proxy.split(',').map(str::trim).filter(|e| !e.is_empty()).map(str::to_owned).collect();
        Ok(Self { url, no_proxy })
    }
}

/// The pooled client every upstream adapter shares, trusting the operating
/// system's store and going through no proxy. See [`http_client_with`].
pub fn http_client() -> Result<reqwest::Client, OutboundError> {
    http_client_with(&OutboundConfig::default())
}

/// The pooled client every upstream adapter shares. It never follows
/// redirects (a redirect could carry a bearer token to another host),
/// trusts the operating system's certificate store plus `config.ca_file`,
/// and uses `config.proxy` only: `HTTP(S)_PROXY`/`NO_PROXY` in the
/// environment are ignored, and loopback is never proxied.
pub fn http_client_with(config: &OutboundConfig) -> Result<reqwest::Client, OutboundError> {
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        // Environment proxies would be another host than the configured
        // upstream seeing the bearer tokens and API keys: only ours count.
        .no_proxy()
        .connect_timeout(Duration::from_secs(3))
        .pool_idle_timeout(Duration::from_secs(90))
        .user_agent(concat!("credencial/", env!("CARGO_PKG_VERSION")));
    if let Some(path) = &config.ca_file {
        for certificate in read_ca_file(path)? {
            builder = builder.add_root_certificate(certificate);
        }
    }
    if let Some(proxy) = &config.proxy {
        let mut exclusions = vec![LOOPBACK_NO_PROXY.to_owned()];
        exclusions.extend(proxy.no_proxy.iter().cloned());
        let proxy = reqwest::Proxy::all(proxy.url.as_str())
            .map_err(|e| OutboundError::Proxy(e.to_string()))?
            .no_proxy(reqwest::NoProxy::from_string(&exclusions.join(",")));
        builder = builder.proxy(proxy);
    }
    builder.build().map_err(|e| match &config.ca_file {
        // rustls checks each added certificate here.
        Some(path) => OutboundError::CaFile { path: path.display().to_string(), reason: error_chain(&e) },
        None => OutboundError::Build(error_chain(&e)),
    })
}

/// The certificates of a PEM bundle; an unreadable file, a malformed PEM
/// block or a file without any certificate is an error.
fn read_ca_file(path: &std::path::Path) -> Result<Vec<reqwest::Certificate>, OutboundError> {
    let problem = |reason: String| OutboundError::CaFile { path: path.display().to_string(), reason };
    let pem = std::fs::read(path).map_err(|e| problem(format!("cannot read it: {e}")))?;
    let certificates = reqwest::Certificate::from_pem_bundle(&pem)
        .map_err(|e| problem(format!("not a PEM bundle: {}", error_chain(&e))))?;
    if certificates.is_empty() {
        return Err(problem("holds no PEM certificate (-----BEGIN CERTIFICATE-----)".into()));
    }
    Ok(certificates)
}

/// `e` and its sources, joined by ": ".
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut current = e.source();
    while let Some(source) = current {
        text.push_str(": ");
        text.push_str(&source.to_string());
        current = source.source();
    }
    text
}

/// A configured upstream base URL is unusable.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BaseUrlError {
    /// Not an absolute URL.
    #[error("not an absolute URL: {0}")]
    Parse(String),
    /// Scheme other than http/https, or credentials, query or fragment in it.
    #[error("must be an http(s) URL without credentials, query or fragment")]
    Unsupported,
}

/// An upstream base URL: scheme, host, port and an optional path prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseUrl(Url);

impl BaseUrl {
    /// Validates a configured base URL.
    pub fn parse(raw: &str) -> Result<Self, BaseUrlError> {
        let url = Url::parse(raw.trim()).map_err(|e| BaseUrlError::Parse(e.to_string()))?;
        let ok = matches!(url.scheme(), "http" | "https")
            && url.host().is_some()
            && url.username().is_empty()
            && url.password().is_none()
            && url.query().is_none()
            && url.fragment().is_none();
        if ok {
            Ok(Self(url))
        } else {
            Err(BaseUrlError::Unsupported)
        }
    }

    /// The URL of `path` below this base. The result always has the base's
    /// scheme, host and port, because `path` is a plain path.
    pub fn join(&self, path: &UpstreamPath) -> Url {
        let mut url = self.0.clone();
        let prefix = url.path().trim_end_matches('/').to_owned();
        url.set_path(&format!("{prefix}{}", path.as_str()));
        url
    }

    /// Whether `url` points at this base's origin.
    pub fn same_origin(&self, url: &Url) -> bool {
        url.origin() == self.0.origin()
    }
}

impl std::fmt::Display for BaseUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joined_paths_stay_below_the_base() {
        let base = BaseUrl::parse("https://suap.example/base/").expect("valid");
        let path = UpstreamPath::parse("/api/rh/eu/").expect("plain");
        let url = base.join(&path);
        assert_eq!(url.as_str(), "https://suap.example/base/api/rh/eu/");
        assert!(base.same_origin(&url));
        let root = BaseUrl::parse("http://127.0.0.1:9000").expect("valid");
        assert_eq!(root.join(&path).as_str(), "http://127.0.0.1:9000/api/rh/eu/");
    }

    #[test]
    fn unusable_base_urls_are_refused() {
        for raw in ["ftp://x/", "http://user:pw@x/", "http://x/?q=1", "http://x/#f", "not a url", "/relative"] {
            assert!(BaseUrl::parse(raw).is_err(), "{raw}");
        }
    }
}
