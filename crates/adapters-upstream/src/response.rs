//! Reading an upstream answer: status mapping, size cap, JSON only.
//!
//! Shared by every adapter of the crate: [`read_json`] for the user-data
//! resource, [`read_registry_body`] + [`contract_error`] for the registries.

use credencial_ports::UpstreamError;
use futures_util::StreamExt;

/// Maps a transport error to the port's error: time-outs apart.
pub(crate) fn transport_error(e: &reqwest::Error) -> UpstreamError {
    if e.is_timeout() {
        UpstreamError::Timeout
    } else {
        UpstreamError::BadResponse(format!("transport: {e}"))
    }
}

/// Maps a non-2xx status to the port's error: 401 and 403 apart.
fn status_error(status: reqwest::StatusCode) -> Option<UpstreamError> {
    match status.as_u16() {
        200..=299 => None,
        401 => Some(UpstreamError::Unauthorized),
        403 => Some(UpstreamError::Forbidden),
        other => Some(UpstreamError::BadResponse(format!("status {other}"))),
    }
}

/// Reads the whole body, refusing more than `max_bytes` (checked against
/// `Content-Length` first, then while streaming, so a chunked body is cut
/// off too).
pub(crate) async fn read_capped(response: reqwest::Response, max_bytes: usize) -> Result<Vec<u8>, UpstreamError> {
    if response.content_length().is_some_and(|len| len > max_bytes as u64) {
        return Err(UpstreamError::BadResponse("body too large".into()));
    }
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| transport_error(&e))?;
        if body.len() + chunk.len() > max_bytes {
            return Err(UpstreamError::BadResponse("body too large".into()));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Reads a 2xx JSON body of at most `max_bytes`; maps 401/403 and every
/// other status to the port's errors.
pub(crate) async fn read_json(
    response: reqwest::Response,
    max_bytes: usize,
) -> Result<serde_json::Value, UpstreamError> {
    if let Some(e) = status_error(response.status()) {
        return Err(e);
    }
    let body = read_capped(response, max_bytes).await?;
    serde_json::from_slice(&body).map_err(|e| UpstreamError::BadResponse(format!("not JSON: {e}")))
}

/// Reads a registry's 2xx body of at most `max_bytes`, to be decoded by the
/// caller. A 404 whose body is JSON is the registry's "no record"
/// ([`UpstreamError::NotFound`]); a 404 with any other body (a web server's
/// page for a wrong base URL) is a [`UpstreamError::BadResponse`]. Other
/// statuses as in [`read_json`].
pub(crate) async fn read_registry_body(
    response: reqwest::Response,
    max_bytes: usize,
) -> Result<Vec<u8>, UpstreamError> {
    if response.status() == reqwest::StatusCode::NOT_FOUND {
        let body = read_capped(response, max_bytes).await?;
        return Err(match serde_json::from_slice::<serde_json::Value>(&body) {
            Ok(_) => UpstreamError::NotFound,
            Err(_) => UpstreamError::BadResponse("status 404 without a JSON body".into()),
        });
    }
    if let Some(e) = status_error(response.status()) {
        return Err(e);
    }
    read_capped(response, max_bytes).await
}

/// A registry body that could not be decoded into the contract's type. The
/// message gives the kind and the position only: serde's own text may quote
/// the offending value, which is personal data.
pub(crate) fn contract_error(e: &serde_json::Error) -> UpstreamError {
    let what = match e.classify() {
        serde_json::error::Category::Data => "does not match the contract",
        serde_json::error::Category::Io | serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
            "not JSON"
        }
    };
    UpstreamError::BadResponse(format!("{what} (line {}, column {})", e.line(), e.column()))
}
