//! [`UserDataSource`] over HTTP: the upstream user-data resource.

use std::time::Duration;

use async_trait::async_trait;
use credencial_domain::UpstreamPath;
use credencial_ports::{UpstreamError, UserDataSource};

use crate::client::BaseUrl;
use crate::response::{read_json, transport_error};

/// Largest upstream body accepted by default (1 MiB).
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;

/// Reads user data from the configured upstream with the caller's bearer token.
#[derive(Debug, Clone)]
pub struct HttpUserDataSource {
    client: reqwest::Client,
    base: BaseUrl,
    timeout: Duration,
    max_body_bytes: usize,
}

impl HttpUserDataSource {
    /// An adapter on `base` whose calls give up after `timeout` (connecting,
    /// waiting and reading the body included).
    pub fn new(client: reqwest::Client, base: BaseUrl, timeout: Duration) -> Self {
        Self { client, base, timeout, max_body_bytes: DEFAULT_MAX_BODY_BYTES }
    }

    /// Caps the accepted body size.
    pub fn with_max_body_bytes(mut self, max: usize) -> Self {
        self.max_body_bytes = max;
        self
    }
}

#[async_trait]
impl UserDataSource for HttpUserDataSource {
    async fn fetch(&self, path: &UpstreamPath, bearer: &str) -> Result<serde_json::Value, UpstreamError> {
        let url = self.base.join(path);
        if !self.base.same_origin(&url) {
            // Unreachable with a plain path; kept as a last line of defence.
            return Err(UpstreamError::BadResponse("refused: not the upstream origin".into()));
        }
        // reqwest's per-request time-out covers connecting, the headers and
        // reading the whole body.
        let call = async {
            let response = self
                .client
                .get(url)
                .bearer_auth(bearer)
                .header(reqwest::header::ACCEPT, "application/json")
                .timeout(self.timeout)
                .send()
                .await
                .map_err(|e| transport_error(&e))?;
            read_json(response, self.max_body_bytes).await
        };
        let result = call.await;
        if let Err(e) = &result {
            tracing::warn!(error = %e, path = path.as_str(), "user-data upstream call failed");
        }
        result
    }
}
