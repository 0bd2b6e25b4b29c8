//! What every OAuth2 call of this crate does alike: the client's
//! credentials by HTTP Basic, a capped answer that never follows a
//! redirect, an RFC 6749 refusal's code, and fresh random values with
//! their PKCE challenge.

use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use credencial_domain::oauth::random_token_text;
use credencial_ports::UpstreamError;
use rand::RngCore;
use reqwest::header::ACCEPT;
use reqwest::StatusCode;
use secrecy::{ExposeSecret, SecretString};
use sha2::{Digest, Sha256};
use url::form_urlencoded::byte_serialize;

use crate::response::{read_capped, transport_error};

/// Longest RFC 6749 `error` code taken from a refusal (longer ones are a
/// misbehaving provider).
const MAX_ERROR_CODE_LEN: usize = 64;

/// `request` with `Basic base64(urlencode(id) ":" urlencode(secret))`
/// (RFC 6749 §2.3.1); reqwest marks the header sensitive.
pub(crate) fn with_client_credentials(
    request: reqwest::RequestBuilder,
    client_id: &str,
    client_secret: &SecretString,
) -> reqwest::RequestBuilder {
    let id: String = byte_serialize(client_id.as_bytes()).collect();
    let secret: String = byte_serialize(client_secret.expose_secret().as_bytes()).collect();
    request.basic_auth(id, Some(secret))
}

/// Sends `request` (asking for JSON) within `timeout` and reads the status
/// and the body, at most `max_body_bytes`. A 2xx, 400 or 401 is read (the
/// last two carry RFC 6749 refusals); anything else, a redirect included
/// (it is never followed: it could carry a code, a verifier or a token to
/// another host), is an error without its body.
pub(crate) async fn call(
    request: reqwest::RequestBuilder,
    timeout: Duration,
    max_body_bytes: usize,
) -> Result<(StatusCode, Vec<u8>), UpstreamError> {
    let (client, request) = request.header(ACCEPT, "application/json").timeout(timeout).build_split();
    let request = request.map_err(|e| transport_error(&e.without_url()))?;
    let asked = request.url().clone();
    let response = client.execute(request).await.map_err(|e| transport_error(&e.without_url()))?;
    // Whatever client was given, an answer from elsewhere (a redirect it
    // followed) is not read.
    if response.url() != &asked {
        return Err(UpstreamError::BadResponse("answered from another URL (a redirect)".into()));
    }
    let status = response.status();
    if !status.is_success() && !matches!(status.as_u16(), 400 | 401) {
        return Err(UpstreamError::BadResponse(format!("status {}", status.as_u16())));
    }
    let body = read_capped(response, max_body_bytes).await?;
    Ok((status, body))
}

/// A JSON object body, or `None` (not JSON, or JSON of another shape).
pub(crate) fn json_object(body: &[u8]) -> Option<serde_json::Map<String, serde_json::Value>> {
    match serde_json::from_slice(body) {
        Ok(serde_json::Value::Object(map)) => Some(map),
        _ => None,
    }
}

/// The RFC 6749 §5.2 `error` code of a refusal body, if it is one: an
/// object with `error` made of the characters the RFC allows.
pub(crate) fn refusal_code(body: &[u8]) -> Option<String> {
    let map = json_object(body)?;
    let code = map.get("error")?.as_str()?;
    let ok = !code.is_empty()
        && code.len() <= MAX_ERROR_CODE_LEN
        && code.bytes().all(|b| matches!(b, 0x20..=0x21 | 0x23..=0x5b | 0x5d..=0x7e));
    ok.then(|| code.to_owned())
}

/// 32 fresh random bytes as base64url text (43 characters).
pub(crate) fn random_text() -> String {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    random_token_text(&bytes)
}

/// The S256 challenge of `verifier`: BASE64URL(SHA256(ASCII(verifier))).
pub(crate) fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}
