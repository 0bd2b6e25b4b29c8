//! [`LogoutPoster`] over HTTP: OpenID Connect Back-Channel Logout §2.5.

use std::time::Duration;

use async_trait::async_trait;
use credencial_ports::{LogoutPostError, LogoutPoster};

/// How long one post may take, connection included.
pub const LOGOUT_POST_TIMEOUT: Duration = Duration::from_secs(5);

/// Posts logout tokens with the shared client (which never follows a
/// redirect: a redirect is a refusal, and the token goes nowhere else).
#[derive(Debug, Clone)]
pub struct HttpLogoutPoster {
    http: reqwest::Client,
}

impl HttpLogoutPoster {
    /// A poster on `http` (see [`crate::http_client_with`]).
    pub fn new(http: reqwest::Client) -> Self {
        Self { http }
    }
}

#[async_trait]
impl LogoutPoster for HttpLogoutPoster {
    async fn post(&self, uri: &str, logout_token: &str) -> Result<(), LogoutPostError> {
        let answer = self
            .http
            .post(uri)
            .timeout(LOGOUT_POST_TIMEOUT)
            .header(reqwest::header::CACHE_CONTROL, "no-store")
            .form(&[("logout_token", logout_token)])
            .send()
            .await
            // The error names the URL, never the token (a form body).
            .map_err(|e| LogoutPostError::Unavailable(without_url(&e)))?;
        let status = answer.status();
        match status.as_u16() {
            // §2.8: 200 OK (204 is taken too: an answer without a body).
            200..=299 => Ok(()),
            500..=599 | 408 | 429 => Err(LogoutPostError::Unavailable(format!("HTTP {status}"))),
            _ => Err(LogoutPostError::Refused(format!("HTTP {status}"))),
        }
    }
}

/// `e`'s kind, without the URL (the application's address is logged by
/// client id instead).
fn without_url(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "connection failed"
    } else {
        "request failed"
    };
    kind.to_owned()
}
