//! Client authentication at the token endpoint (RFC 6749 §2.3.1):
//! `client_secret_basic`, `client_secret_post` and public clients.

use super::*;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use std::fmt;

/// The client credentials a token request presents. `Debug` hides the
/// secret.
#[derive(Clone, PartialEq, Eq)]
pub struct PresentedClient {
    /// The `client_id` (from the Basic credentials or the body).
    pub client_id: String,
    /// The secret, if one was presented.
    pub secret: Option<String>,
}

impl fmt::Debug for PresentedClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PresentedClient")
            .field("client_id", &self.client_id)
            .field("secret", &self.secret.as_ref().map(|_| "[redacted]"))
            .finish()
    }
}

/// The one `error_description` of every client-authentication failure, so
/// that it never tells an unknown client from a wrong secret.
pub const BAD_CLIENT: &str = "client authentication failed";

/// Who a token request says it is (RFC 6749 §2.3.1): HTTP Basic
/// (`client_secret_basic`, id and secret form-urlencoded before base64) or
/// `client_id` and `client_secret` in the body (`client_secret_post`), or
/// for public clients `client_id` alone. Errors: `invalid_client` for an
/// `Authorization` header that is not well-formed Basic or when no client is
/// named; `invalid_request` when both methods are used at once or the
/// body's `client_id` contradicts the header.
pub fn presented_client(
    authorization_header: Option<&str>,
    body_client_id: Option<&str>,
    body_client_secret: Option<&str>,
) -> Result<PresentedClient, OAuthError> {
    let body_id = present(body_client_id);
    let body_secret = present(body_client_secret);
    if let Some(header) = authorization_header {
        let (id, secret) = parse_basic(header).ok_or(OAuthError::InvalidClient(BAD_CLIENT))?;
        if body_secret.is_some() {
            return Err(invalid_request("use one client authentication method, not two"));
        }
        if body_id.is_some_and(|b| b != id) {
            return Err(invalid_request("client_id does not match the Authorization header"));
        }
        return Ok(PresentedClient { client_id: id, secret: Some(secret).filter(|s| !s.is_empty()) });
    }
    let client_id = body_id.ok_or(OAuthError::InvalidClient(BAD_CLIENT))?;
    Ok(PresentedClient { client_id: client_id.to_owned(), secret: body_secret.map(str::to_owned) })
}

/// Decodes `Basic base64(urlencode(id) ":" urlencode(secret))`.
pub(super) fn parse_basic(header: &str) -> Option<(String, String)> {
    let (scheme, encoded) = header.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = STANDARD.decode(encoded.trim()).ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (id, secret) = text.split_once(':')?;
    let id = form_decode(id)?;
    let secret = form_decode(secret)?;
    (!id.is_empty()).then_some((id, secret))
}

/// Decodes one `application/x-www-form-urlencoded` value (`+` is a space).
pub(super) fn form_decode(value: &str) -> Option<String> {
    let mut out = Vec::with_capacity(value.len());
    let mut bytes = value.bytes();
    while let Some(b) = bytes.next() {
        match b {
            b'+' => out.push(b' '),
            b'%' => {
                let hi = (bytes.next()? as char).to_digit(16)?;
                let lo = (bytes.next()? as char).to_digit(16)?;
                out.push(u8::try_from(hi * 16 + lo).ok()?);
            }
            other => out.push(other),
        }
    }
    String::from_utf8(out).ok()
}

/// How a known client must prove who it is at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAuthentication {
    /// Confidential: verify the presented secret against the stored hash
    /// (PBKDF2, off the async workers). A mismatch is `invalid_client`.
    VerifySecret,
    /// Public: identified by `client_id` alone; PKCE stands in for the secret.
    Public,
}

/// What authenticating `client` takes, given whether a secret was
/// presented. Errors: `invalid_client` when a confidential client presents
/// no secret or a public client presents one. (For an unknown `client_id`
/// the caller answers `invalid_client` after spending the same hashing time
/// as a wrong secret.)
pub fn client_authentication(
    client: &ClientPolicy<'_>,
    secret_presented: bool,
) -> Result<ClientAuthentication, OAuthError> {
    match (client.confidential, secret_presented) {
        (true, true) => Ok(ClientAuthentication::VerifySecret),
        (false, false) => Ok(ClientAuthentication::Public),
        _ => Err(OAuthError::InvalidClient(BAD_CLIENT)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::test_support::*;
    use proptest::prelude::*;

    #[test]
    fn basic_credentials_are_form_decoded() {
        // RFC 6749 §2.3.1: id and secret are form-urlencoded, then base64.
        let header = format!("Basic {}", STANDARD.encode("my%3Aapp:s3cr%2Bt+x"));
        let c = presented_client(Some(&header), None, None).expect("basic");
        assert_eq!(c.client_id, "my:app");
        assert_eq!(c.secret.as_deref(), Some("s3cr+t x"));
        let header = format!("basic {}", STANDARD.encode("app:pw"));
        assert_eq!(presented_client(Some(&header), Some("app"), None).expect("basic").client_id, "app");
        assert!(!format!("{c:?}").contains("s3cr"), "Debug hides the secret");
    }

    #[test]
    fn malformed_or_mixed_client_authentication_is_refused() {
        let basic = format!("Basic {}", STANDARD.encode("app:pw"));
        for bad in [
            "Bearer abc",
            "Basic",
            "Basic !!!",
            &format!("Basic {}", STANDARD.encode("no-colon")),
            &format!("Basic {}", STANDARD.encode(":pw")),
        ] {
            assert_eq!(
                presented_client(Some(bad), None, None).map_err(|e| e.error_code()),
                Err("invalid_client"),
                "{bad}"
            );
        }
        assert_eq!(
            presented_client(Some(&basic), None, Some("pw")).map_err(|e| e.error_code()),
            Err("invalid_request")
        );
        assert_eq!(
            presented_client(Some(&basic), Some("other"), None).map_err(|e| e.error_code()),
            Err("invalid_request")
        );
        assert_eq!(presented_client(None, None, Some("pw")).map_err(|e| e.error_code()), Err("invalid_client"));
        assert_eq!(presented_client(None, Some(""), None).map_err(|e| e.error_code()), Err("invalid_client"));
    }

    #[test]
    fn body_credentials_and_public_clients_are_read_from_the_form() {
        let c = presented_client(None, Some("app"), Some("pw")).expect("post");
        assert_eq!((c.client_id.as_str(), c.secret.as_deref()), ("app", Some("pw")));
        let c = presented_client(None, Some("spa"), Some("")).expect("public");
        assert_eq!((c.client_id.as_str(), c.secret), ("spa", None));
    }

    #[test]
    fn confidential_clients_need_a_secret_public_ones_must_not_send_one() {
        let cid = id("app");
        let list = uris(&["https://a.example/cb"]);
        let confidential = policy(&cid, &list, true);
        let public = policy(&cid, &list, false);
        assert_eq!(client_authentication(&confidential, true), Ok(ClientAuthentication::VerifySecret));
        assert_eq!(client_authentication(&confidential, false).map_err(|e| e.error_code()), Err("invalid_client"));
        assert_eq!(client_authentication(&public, false), Ok(ClientAuthentication::Public));
        assert_eq!(client_authentication(&public, true).map_err(|e| e.error_code()), Err("invalid_client"));
    }

    fn form_encode(text: &str) -> String {
        url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
    }

    proptest! {
        #[test]
        fn any_authorization_header_or_body_is_a_client_or_an_oauth_error(
            header in prop::option::of("\\PC{0,60}"),
            id in prop::option::of("\\PC{0,12}"),
            secret in prop::option::of("\\PC{0,12}"),
        ) {
            if let Err(e) = presented_client(header.as_deref(), id.as_deref(), secret.as_deref()) {
                prop_assert!(matches!(e.error_code(), "invalid_client" | "invalid_request"), "{e}");
            }
        }

        #[test]
        fn basic_credentials_round_trip_whatever_they_hold(id in "\\PC{1,20}", secret in "\\PC{0,20}") {
            let raw = format!("{}:{}", form_encode(&id), form_encode(&secret));
            let header = format!("Basic {}", STANDARD.encode(raw));
            let presented = presented_client(Some(&header), None, None).expect("well-formed Basic");
            prop_assert_eq!(presented.client_id, id);
            prop_assert_eq!(presented.secret, Some(secret).filter(|s| !s.is_empty()));
        }

        #[test]
        fn post_credentials_are_taken_as_sent(id in "\\PC{1,20}", secret in "\\PC{1,20}") {
            let presented = presented_client(None, Some(&id), Some(&secret)).expect("client_secret_post");
            prop_assert_eq!((presented.client_id, presented.secret), (id, Some(secret)));
        }
    }
}
