//! The upstream user-data resource (default path `/api/rh/eu/`).

use async_trait::async_trait;
use credencial_domain::UpstreamPath;
use thiserror::Error;

/// How a call to an upstream HTTP service failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum UpstreamError {
    /// The upstream refused the credentials (HTTP 401).
    #[error("upstream refused the credentials")]
    Unauthorized,
    /// The upstream denied access (HTTP 403).
    #[error("upstream denied access")]
    Forbidden,
    /// The upstream failed, answered 5xx or an unexpected status, sent a
    /// body that is not JSON or is too large, or could not be reached. The
    /// text is for the log.
    #[error("bad upstream response: {0}")]
    BadResponse(String),
    /// The upstream did not answer within the configured time-out.
    #[error("upstream timed out")]
    Timeout,
    /// A registry has no record of the person asked about (HTTP 404 with a
    /// JSON body, e.g. the tax authority's "unknown CPF"). Only the registry
    /// ports return it; a 404 without a JSON body (a wrong base URL) is a
    /// [`UpstreamError::BadResponse`].
    #[error("upstream has no record of the person")]
    NotFound,
}

/// Reads user data from the configured upstream resource.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait UserDataSource: Send + Sync + 'static {
    /// GETs `path` on the configured upstream base URL with `bearer` as the
    /// bearer token and returns the JSON body of a 2xx answer unchanged.
    /// Never contacts any other host. Errors: see [`UpstreamError`].
    async fn fetch(&self, path: &UpstreamPath, bearer: &str) -> Result<serde_json::Value, UpstreamError>;
}
