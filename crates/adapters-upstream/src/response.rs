//! Reading an upstream answer: status mapping, size cap, JSON only.

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

/// Reads a 2xx JSON body of at most `max_bytes`; maps 401/403 and every
/// other status to the port's errors.
pub(crate) async fn read_json(
    response: reqwest::Response,
    max_bytes: usize,
) -> Result<serde_json::Value, UpstreamError> {
    let status = response.status();
    match status.as_u16() {
        200..=299 => {}
        401 => return Err(UpstreamError::Unauthorized),
        403 => return Err(UpstreamError::Forbidden),
        other => return Err(UpstreamError::BadResponse(format!("status {other}"))),
    }
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
    serde_json::from_slice(&body).map_err(|e| UpstreamError::BadResponse(format!("not JSON: {e}")))
}
