//! What OpenID Connect adds to an authorization request (OIDC Core 1.0
//! §3.1.2.1): the `nonce` echoed in the ID token, `max_age` (how recent the
//! login must be), the standard `profile` scope, which names our
//! `dados_publicos`, and the parameters we never support (request objects,
//! dynamic registration). `prompt` has its own module ([`super::Prompt`]).

use super::{invalid_request, AuthorizationParams, OAuthError};
use crate::scope::{Scope, ScopeSet};

/// Longest `nonce` accepted, in bytes. A nonce is echoed whole in the ID
/// token and stored with the code; clients send 22 to 64 characters
/// (openid-client: 43).
pub const MAX_NONCE_LEN: usize = 512;

/// Largest `max_age` accepted, in seconds (ten years: larger values say
/// nothing more and could overflow time arithmetic).
pub const MAX_MAX_AGE_SECS: i64 = 10 * 365 * 24 * 60 * 60;

/// The standard OpenID Connect scope of the basic profile claims; we read
/// it as `dados_publicos` (name and picture), which every grant carries.
pub const PROFILE_SCOPE: &str = "profile";

/// The one authentication method of our login forms (RFC 8176 §2: a
/// password), the ID token's `amr`.
pub const AMR_PASSWORD: &str = "pwd";

/// The scopes a scope name of an authorization or refresh request stands
/// for: `profile` is `dados_publicos`; `openid` and the catalogue's names
/// are themselves; `None` for any other name.
pub fn requested_scope_name(name: &str) -> Option<ScopeSet> {
    match name {
        PROFILE_SCOPE => Some([Scope::DadosPublicos].into_iter().collect()),
        other => ScopeSet::parse_strict(other).ok(),
    }
}

/// Reads the `nonce` of an authorization request: absent or empty is
/// `None`; otherwise it is kept exactly as sent (it is compared by the
/// client, byte for byte). Errors: `invalid_request` when it is longer
/// than [`MAX_NONCE_LEN`] bytes or holds a control character.
pub fn parse_nonce(raw: Option<&str>) -> Result<Option<String>, OAuthError> {
    let Some(nonce) = raw.filter(|n| !n.is_empty()) else {
        return Ok(None);
    };
    if nonce.len() > MAX_NONCE_LEN {
        return Err(invalid_request(format!("nonce must be at most {MAX_NONCE_LEN} bytes long")));
    }
    if nonce.chars().any(char::is_control) {
        return Err(invalid_request("nonce must not contain control characters"));
    }
    Ok(Some(nonce.to_owned()))
}

/// Reads the `max_age` of an authorization request: absent or empty is
/// `None`; otherwise decimal digits only, at most [`MAX_MAX_AGE_SECS`].
/// Errors: `invalid_request`.
pub fn parse_max_age(raw: Option<&str>) -> Result<Option<i64>, OAuthError> {
    let Some(text) = raw.filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    let bad = || invalid_request(format!("max_age must be a number of seconds from 0 to {MAX_MAX_AGE_SECS}"));
    if text.len() > 12 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    match text.parse::<i64>() {
        Ok(secs) if secs <= MAX_MAX_AGE_SECS => Ok(Some(secs)),
        _ => Err(bad()),
    }
}

/// Whether a login at `auth_time` is recent enough for `max_age` at
/// `now`: always without `max_age`; never with `max_age=0`, which OIDC Core
/// §3.1.2.1 makes the same as `prompt=login`; otherwise when at most
/// `max_age` seconds have passed.
pub fn login_is_recent(auth_time: i64, max_age: Option<i64>, now: i64) -> bool {
    match max_age {
        None => true,
        Some(0) => false,
        Some(max_age) => now.saturating_sub(auth_time) <= max_age,
    }
}

/// Refuses the OpenID Connect parameters we do not support, whatever
/// their value (an empty one counts as absent): `request` is
/// `request_not_supported` (OIDC Core §6.1), `request_uri` is
/// `request_uri_not_supported` (§6.2), `registration` is
/// `registration_not_supported` (§7.2.1). A request that carries several
/// hears of the first of these. Ignoring them would serve a request other
/// than the one the client signed or meant.
pub fn refuse_unsupported_parameters(params: &AuthorizationParams) -> Result<(), OAuthError> {
    let sent = |value: &Option<String>| value.as_deref().is_some_and(|v| !v.is_empty());
    if sent(&params.request) {
        return Err(OAuthError::RequestNotSupported);
    }
    if sent(&params.request_uri) {
        return Err(OAuthError::RequestUriNotSupported);
    }
    if sent(&params.registration) {
        return Err(OAuthError::RegistrationNotSupported);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_objects_and_registration_are_refused_with_their_own_codes() {
        let some = |v: &str| Some(v.to_owned());
        assert_eq!(refuse_unsupported_parameters(&AuthorizationParams::default()), Ok(()));
        let empty = AuthorizationParams {
            request: some(""),
            request_uri: some(""),
            registration: some(""),
            ..AuthorizationParams::default()
        };
        assert_eq!(refuse_unsupported_parameters(&empty), Ok(()), "empty values count as absent");
        let request = AuthorizationParams { request: some("eyJhbGciOiJub25lIn0.e30."), ..Default::default() };
        assert_eq!(refuse_unsupported_parameters(&request).map_err(|e| e.error_code()), Err("request_not_supported"));
        let by_reference = AuthorizationParams { request_uri: some("https://rp.example/r/1"), ..Default::default() };
        assert_eq!(
            refuse_unsupported_parameters(&by_reference).map_err(|e| e.error_code()),
            Err("request_uri_not_supported")
        );
        let registration = AuthorizationParams { registration: some("{\"client_name\":\"x\"}"), ..Default::default() };
        assert_eq!(
            refuse_unsupported_parameters(&registration).map_err(|e| e.error_code()),
            Err("registration_not_supported")
        );
        let all = AuthorizationParams {
            request: some("x"),
            request_uri: some("y"),
            registration: some("z"),
            ..Default::default()
        };
        assert_eq!(refuse_unsupported_parameters(&all), Err(OAuthError::RequestNotSupported));
    }

    #[test]
    fn profile_names_dados_publicos_and_unknown_names_are_none() {
        assert_eq!(requested_scope_name("profile").map(ScopeSet::to_scope_string).as_deref(), Some("dados_publicos"));
        assert_eq!(requested_scope_name("openid"), Some(ScopeSet::openid()));
        assert_eq!(requested_scope_name("cnes").map(ScopeSet::to_scope_string).as_deref(), Some("cnes"));
        for unknown in ["address", "phone", "Profile", "offline_access", "openid profile"] {
            assert_eq!(requested_scope_name(unknown), None, "{unknown}");
        }
    }

    #[test]
    fn a_nonce_is_kept_exactly_and_bounded() {
        assert_eq!(parse_nonce(None), Ok(None));
        assert_eq!(parse_nonce(Some("")), Ok(None));
        let odd = " n-0nce/with spaces+é&\"<>' ";
        assert_eq!(parse_nonce(Some(odd)), Ok(Some(odd.to_owned())), "echoed byte for byte");
        let longest = "n".repeat(MAX_NONCE_LEN);
        assert_eq!(parse_nonce(Some(&longest)), Ok(Some(longest.clone())));
        let e = parse_nonce(Some(&format!("{longest}n"))).expect_err("too long");
        assert_eq!(e.error_code(), "invalid_request");
        for bad in ["a\nb", "a\u{0}b", "tab\there"] {
            assert_eq!(parse_nonce(Some(bad)).map_err(|e| e.error_code()), Err("invalid_request"), "{bad:?}");
        }
    }

    #[test]
    fn max_age_is_a_bounded_count_of_seconds() {
        assert_eq!(parse_max_age(None), Ok(None));
        assert_eq!(parse_max_age(Some("")), Ok(None));
        assert_eq!(parse_max_age(Some("0")), Ok(Some(0)));
        assert_eq!(parse_max_age(Some("3600")), Ok(Some(3600)));
        assert_eq!(parse_max_age(Some(&MAX_MAX_AGE_SECS.to_string())), Ok(Some(MAX_MAX_AGE_SECS)));
        for bad in ["-1", "+5", "1.5", "1e3", " 5", "five", "99999999999999999999", &(MAX_MAX_AGE_SECS + 1).to_string()]
        {
            assert_eq!(parse_max_age(Some(bad)).map_err(|e| e.error_code()), Err("invalid_request"), "{bad:?}");
        }
    }

    #[test]
    fn a_login_is_recent_within_max_age_and_never_for_zero() {
        let (auth_time, now) = (1_000, 1_300);
        assert!(login_is_recent(auth_time, None, now));
        assert!(login_is_recent(auth_time, Some(300), now), "exactly max_age old");
        assert!(!login_is_recent(auth_time, Some(299), now));
        assert!(!login_is_recent(now, Some(0), now), "max_age=0 is prompt=login");
        assert!(!login_is_recent(i64::MIN, Some(MAX_MAX_AGE_SECS), i64::MAX), "no overflow");
    }
}
