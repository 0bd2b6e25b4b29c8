//! Redirect URIs: registration (RFC 6749 §3.1.2, RFC 8252 for loopback)
//! and exact matching.

use super::*;
use std::net::IpAddr;
use thiserror::Error;
use url::{Host, Url};

/// Why a redirect URI cannot be registered.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RedirectUriError {
    /// Not an absolute URL (or longer than [`MAX_REDIRECT_URI_LEN`]).
    #[error("redirect URI must be an absolute http(s) URL")]
    NotAbsolute,
    /// A scheme other than `https` or `http`.
    #[error("redirect URI scheme must be https (or http for loopback hosts)")]
    UnsupportedScheme,
    /// `http` for a host that is not loopback, without the explicit allowance.
    #[error("redirect URI must use https unless its host is localhost or a loopback address")]
    InsecureHttp,
    /// Carries a fragment, which RFC 6749 §3.1.2 forbids.
    #[error("redirect URI must not contain a fragment ('#')")]
    Fragment,
    /// Carries a user name or password.
    #[error("redirect URI must not contain user information")]
    UserInfo,
    /// Contains whitespace, a control character or a non-ASCII character
    /// (the stored text must be exactly what clients send).
    #[error("redirect URI must not contain whitespace, control or non-ASCII characters")]
    BadCharacter,
}

/// Checks `raw` for registration as a redirect URI: an absolute `https` URL
/// without fragment or user information, or an `http` URL whose host is
/// `localhost` or a loopback address (any host when `allow_insecure_http`).
/// Returns the URI unchanged: it is stored as given and later compared
/// character by character, never normalised.
pub fn validate_redirect_uri(raw: &str, allow_insecure_http: bool) -> Result<String, RedirectUriError> {
    if raw.len() > MAX_REDIRECT_URI_LEN {
        return Err(RedirectUriError::NotAbsolute);
    }
    if !raw.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(RedirectUriError::BadCharacter);
    }
    if raw.contains('\\') {
        // Parsers read a backslash as '/' in http(s) URLs; browsers may not agree.
        return Err(RedirectUriError::BadCharacter);
    }
    if raw.contains('#') {
        return Err(RedirectUriError::Fragment);
    }
    let url = Url::parse(raw).map_err(|_| RedirectUriError::NotAbsolute)?;
    let secure = match url.scheme() {
        "https" => true,
        "http" => false,
        _ => return Err(RedirectUriError::UnsupportedScheme),
    };
    // `https:host/x` and `https:///host/x` parse, but are not what they look like.
    let authority =
        raw.get(url.scheme().len()..).and_then(|rest| rest.strip_prefix("://")).ok_or(RedirectUriError::NotAbsolute)?;
    if authority.is_empty() || authority.starts_with('/') {
        return Err(RedirectUriError::NotAbsolute);
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(RedirectUriError::UserInfo);
    }
    let host = url.host().ok_or(RedirectUriError::NotAbsolute)?;
    if !secure && !allow_insecure_http && !is_loopback_host(&host) {
        return Err(RedirectUriError::InsecureHttp);
    }
    Ok(raw.to_owned())
}

/// Whether `host` names this machine: `localhost` (any case) or a
/// loopback address. The one rule for where plain `http` is allowed: a
/// redirect URI, the issuer, an upstream provider.
pub fn is_loopback_host(host: &Host<&str>) -> bool {
    match host {
        Host::Domain(name) => name.eq_ignore_ascii_case("localhost"),
        Host::Ipv4(ip) => IpAddr::V4(*ip).is_loopback(),
        Host::Ipv6(ip) => IpAddr::V6(*ip).is_loopback(),
    }
}

/// Whether `requested` is one of the `registered` redirect URIs. Simple
/// string comparison (RFC 6749 §3.1.2.3, RFC 9700 §4.1.3): no prefix, no
/// wildcard, no normalisation, case-sensitive.
pub fn redirect_uri_is_registered(requested: &str, registered: &[String]) -> bool {
    registered.iter().any(|r| r == requested)
}

/// The redirect URI an authorization request resolves to: the one it names,
/// if registered exactly; when it names none, the client's only registered
/// URI. Errors (never redirected): `invalid_request` when the named URI is
/// not registered, or when none is named and the client has several.
pub fn resolve_redirect_uri(requested: Option<&str>, registered: &[String]) -> Result<String, OAuthError> {
    match present(requested) {
        Some(uri) if redirect_uri_is_registered(uri, registered) => Ok(uri.to_owned()),
        Some(_) => Err(invalid_request("redirect_uri does not match a registered redirect URI")),
        None => match registered {
            [only] => Ok(only.clone()),
            _ => Err(invalid_request("redirect_uri is required")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::test_support::*;
    use proptest::prelude::*;

    #[test]
    fn https_redirect_uris_register_unchanged() {
        for ok in [
            "https://app.example.gov.br/callback",
            "https://App.Example.gov.br:8443/cb?tenant=1",
            "https://app.example/",
        ] {
            assert_eq!(validate_redirect_uri(ok, false).as_deref(), Ok(ok), "stored as given");
        }
    }

    #[test]
    fn http_redirect_uris_only_for_loopback_unless_allowed() {
        for ok in ["http://localhost:8080/cb", "http://127.0.0.1/cb", "http://127.3.4.5:9/", "http://[::1]:3000/cb"] {
            assert!(validate_redirect_uri(ok, false).is_ok(), "{ok}");
        }
        for bad in ["http://app.example.gov.br/cb", "http://10.0.0.1/cb", "http://localhost.evil.example/cb"] {
            assert_eq!(validate_redirect_uri(bad, false), Err(RedirectUriError::InsecureHttp), "{bad}");
            assert!(validate_redirect_uri(bad, true).is_ok(), "{bad} when explicitly allowed");
        }
    }

    #[test]
    fn malformed_or_dangerous_redirect_uris_are_refused() {
        use RedirectUriError::*;
        let cases = [
            ("/callback", NotAbsolute),
            ("app.example/cb", NotAbsolute),
            ("", NotAbsolute),
            ("https:///cb", NotAbsolute),
            ("https:app.example/cb", NotAbsolute),
            ("http:\\\\app.example\\cb", BadCharacter),
            ("https://app.example/cb#frag", Fragment),
            ("https://app.example/cb#", Fragment),
            ("https://user:pw@app.example/cb", UserInfo),
            ("https://user@app.example/cb", UserInfo),
            ("javascript:alert(1)", UnsupportedScheme),
            ("ftp://app.example/cb", UnsupportedScheme),
            ("com.example.app:/cb", UnsupportedScheme),
            ("data:text/html,hi", UnsupportedScheme),
            (" https://app.example/cb", BadCharacter),
            ("https://app.example/c b", BadCharacter),
            ("https://app.example/cb\n", BadCharacter),
            ("https://app.example/ção", BadCharacter),
        ];
        for (raw, want) in cases {
            assert_eq!(validate_redirect_uri(raw, true), Err(want), "{raw:?}");
        }
        let long = format!("https://app.example/{}", "a".repeat(MAX_REDIRECT_URI_LEN));
        assert_eq!(validate_redirect_uri(&long, false), Err(NotAbsolute));
    }

    #[test]
    fn redirect_uris_match_exactly_never_by_prefix_or_case() {
        let registered = uris(&["https://app.example/cb", "http://localhost:8080/cb"]);
        assert!(redirect_uri_is_registered("https://app.example/cb", &registered));
        assert!(redirect_uri_is_registered("http://localhost:8080/cb", &registered));
        for near in [
            "https://app.example/cb/",
            "https://app.example/cb/evil",
            "https://app.example/cb?x=1",
            "https://app.example/c",
            "https://APP.example/cb",
            "https://app.example:443/cb",
            "https://app.example/%63b",
            "https://app.example/cb#x",
            "http://localhost:8081/cb",
            "https://app.example.evil.example/cb",
            "",
        ] {
            assert!(!redirect_uri_is_registered(near, &registered), "{near}");
        }
    }

    #[test]
    fn an_omitted_redirect_uri_resolves_only_when_one_is_registered() {
        let one = uris(&["https://a.example/cb"]);
        let two = uris(&["https://a.example/cb", "https://b.example/cb"]);
        assert_eq!(resolve_redirect_uri(None, &one).as_deref(), Ok("https://a.example/cb"));
        assert_eq!(resolve_redirect_uri(Some(""), &one).as_deref(), Ok("https://a.example/cb"));
        assert_eq!(resolve_redirect_uri(Some("https://b.example/cb"), &two).as_deref(), Ok("https://b.example/cb"));
        assert_eq!(resolve_redirect_uri(None, &two).map_err(|e| e.error_code()), Err("invalid_request"));
        assert_eq!(
            resolve_redirect_uri(Some("https://c.example/cb"), &two).map_err(|e| e.error_code()),
            Err("invalid_request")
        );
    }

    proptest! {
        #[test]
        fn only_the_exact_registered_text_matches(uri in "https://[a-z]{1,10}\\.example/[a-z/]{0,12}", extra in "[a-zA-Z0-9/?#.%]{1,5}") {
            let registered = vec![uri.clone()];
            prop_assert!(redirect_uri_is_registered(&uri, &registered));
            let longer = format!("{uri}{extra}");
            prop_assert!(!redirect_uri_is_registered(&longer, &registered));
            prop_assert!(!redirect_uri_is_registered(&uri[..uri.len() - 1], &registered));
        }
    }
}
