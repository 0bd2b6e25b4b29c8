//! The process-wide HTTP client and validated upstream base URLs.

use std::time::Duration;

use credencial_domain::UpstreamPath;
use thiserror::Error;
use url::Url;

/// The pooled client every upstream adapter shares. It never follows
/// redirects (a redirect could carry a bearer token to another host) and
/// ignores `HTTP(S)_PROXY` for the same reason.
pub fn http_client() -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        // Environment proxies would be another host than the configured
        // upstream seeing the bearer tokens and API keys.
        .no_proxy()
        .connect_timeout(Duration::from_secs(3))
        .pool_idle_timeout(Duration::from_secs(90))
        .user_agent(concat!("credencial/", env!("CARGO_PKG_VERSION")))
        .build()
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
