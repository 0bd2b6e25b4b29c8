//! The checks of an upstream's ID token once its signature verified
//! (OpenID Connect Core §3.1.3.7): who issued it, for whom, when, for which
//! login (`nonce`) and with which access token (`at_hash`).
//!
//! The signature is the adapter's to check, with the provider's published
//! keys and the algorithm its settings pin; everything else is here, so
//! that each refusal has a name the tests and the logs can tell apart.

use serde_json::{Map, Value};
use subtle::ConstantTimeEq;
use thiserror::Error;

use crate::oauth::id_token::at_hash;

/// How far the upstream's clock may be ahead of ours, or `exp` behind it:
/// a minute (gov.br's ID tokens live 60 seconds).
pub const CLOCK_SKEW_SECS: i64 = 60;

/// What this login expects of the upstream's ID token.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    /// The provider's issuer, exactly as its discovery document says.
    pub issuer: &'a str,
    /// This service's client id at the provider.
    pub client_id: &'a str,
    /// The nonce this login sent.
    pub nonce: &'a str,
    /// The access token that came with the ID token, if any (`at_hash`,
    /// SHA-256's left half: the adapter allows only RS256, PS256 and
    /// ES256).
    pub access_token: Option<&'a str>,
}

/// Why an ID token whose signature verified is still refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum IdTokenRejection {
    /// `iss` is not the provider's issuer.
    #[error("the ID token's issuer is not the provider's")]
    Issuer,
    /// `aud` does not name this service's client id, or names others
    /// without `azp` being this client.
    #[error("the ID token is not for this client")]
    Audience,
    /// `exp` is missing or past (beyond the clock skew).
    #[error("the ID token has expired")]
    Expired,
    /// `iat` is missing or in the future (beyond the clock skew).
    #[error("the ID token was issued in the future")]
    IssuedInFuture,
    /// `nonce` is missing or not this login's.
    #[error("the ID token's nonce is not this login's")]
    Nonce,
    /// `at_hash` does not match the access token.
    #[error("the ID token's at_hash does not match the access token")]
    AccessTokenHash,
}

/// Checks the `claims` of an ID token whose signature verified against
/// `expected`, at `now` (seconds since the Unix epoch).
pub fn check(claims: &Map<String, Value>, expected: Expected<'_>, now: i64) -> Result<(), IdTokenRejection> {
    if claims.get("iss").and_then(Value::as_str) != Some(expected.issuer) {
        return Err(IdTokenRejection::Issuer);
    }
    let audiences: Vec<&str> = match claims.get("aud") {
        Some(Value::String(aud)) => vec![aud.as_str()],
        Some(Value::Array(auds)) => auds.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !audiences.contains(&expected.client_id) {
        return Err(IdTokenRejection::Audience);
    }
    // Core §3.1.3.7, 4 and 5: with several audiences `azp` is needed, and
    // whenever present it must be this client.
    let azp = claims.get("azp");
    if (audiences.len() > 1 || azp.is_some()) && azp.and_then(Value::as_str) != Some(expected.client_id) {
        return Err(IdTokenRejection::Audience);
    }
    let time = |name| claims.get(name).and_then(Value::as_i64);
    if time("exp").is_none_or(|exp| exp.saturating_add(CLOCK_SKEW_SECS) <= now) {
        return Err(IdTokenRejection::Expired);
    }
    if time("iat").is_none_or(|iat| iat > now.saturating_add(CLOCK_SKEW_SECS)) {
        return Err(IdTokenRejection::IssuedInFuture);
    }
    let nonce = claims.get("nonce").and_then(Value::as_str).unwrap_or_default();
    if nonce.is_empty() || !bool::from(nonce.as_bytes().ct_eq(expected.nonce.as_bytes())) {
        return Err(IdTokenRejection::Nonce);
    }
    if let (Some(hash), Some(access_token)) = (claims.get("at_hash"), expected.access_token) {
        if hash.as_str() != Some(at_hash(access_token).as_str()) {
            return Err(IdTokenRejection::AccessTokenHash);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const NOW: i64 = 1_800_000_000;
    const EXPECTED: Expected<'static> = Expected {
        issuer: "https://sso.staging.acesso.gov.br/",
        client_id: "credencial",
        nonce: "n-0S6_WzA2Mj",
        access_token: Some("at-1"),
    };

    fn token(changes: Value) -> Map<String, Value> {
        let mut claims = json!({
            "iss": "https://sso.staging.acesso.gov.br/", "aud": "credencial", "sub": "52998224725",
            "exp": NOW + 60, "iat": NOW, "nonce": "n-0S6_WzA2Mj", "at_hash": at_hash("at-1"),
        });
        for (name, value) in changes.as_object().expect("object") {
            if value.is_null() {
                claims.as_object_mut().expect("object").remove(name);
            } else {
                claims[name] = value.clone();
            }
        }
        claims.as_object().expect("object").clone()
    }

    #[test]
    fn a_token_for_this_login_passes() {
        assert_eq!(check(&token(json!({})), EXPECTED, NOW), Ok(()));
        assert_eq!(check(&token(json!({"at_hash": null})), EXPECTED, NOW), Ok(()), "at_hash is optional");
        assert_eq!(check(&token(json!({"aud": ["credencial", "other"], "azp": "credencial"})), EXPECTED, NOW), Ok(()));
    }

    #[test]
    fn another_issuer_or_audience_is_refused() {
        assert_eq!(
            check(&token(json!({"iss": "https://sso.acesso.gov.br/"})), EXPECTED, NOW),
            Err(IdTokenRejection::Issuer)
        );
        assert_eq!(check(&token(json!({"iss": null})), EXPECTED, NOW), Err(IdTokenRejection::Issuer));
        assert_eq!(check(&token(json!({"aud": "other"})), EXPECTED, NOW), Err(IdTokenRejection::Audience));
        assert_eq!(
            check(&token(json!({"aud": ["credencial", "other"]})), EXPECTED, NOW),
            Err(IdTokenRejection::Audience)
        );
        assert_eq!(check(&token(json!({"aud": null})), EXPECTED, NOW), Err(IdTokenRejection::Audience));
        assert_eq!(
            check(&token(json!({"azp": "other"})), EXPECTED, NOW),
            Err(IdTokenRejection::Audience),
            "azp alone too"
        );
        assert_eq!(check(&token(json!({"iat": null})), EXPECTED, NOW), Err(IdTokenRejection::IssuedInFuture));
    }

    #[test]
    fn an_expired_token_is_refused_beyond_the_skew() {
        let issued = token(json!({"exp": NOW - 30}));
        assert_eq!(check(&issued, EXPECTED, NOW), Ok(()), "30 s late is within the skew");
        assert_eq!(check(&issued, EXPECTED, NOW + 31), Err(IdTokenRejection::Expired));
        assert_eq!(check(&token(json!({"exp": null})), EXPECTED, NOW), Err(IdTokenRejection::Expired));
        assert_eq!(check(&token(json!({"exp": "soon"})), EXPECTED, NOW), Err(IdTokenRejection::Expired));
        assert_eq!(check(&token(json!({"iat": NOW + 61})), EXPECTED, NOW), Err(IdTokenRejection::IssuedInFuture));
    }

    #[test]
    fn another_login_s_nonce_or_access_token_is_refused() {
        assert_eq!(check(&token(json!({"nonce": "other"})), EXPECTED, NOW), Err(IdTokenRejection::Nonce));
        assert_eq!(check(&token(json!({"nonce": null})), EXPECTED, NOW), Err(IdTokenRejection::Nonce));
        let empty = Expected { nonce: "", ..EXPECTED };
        assert_eq!(
            check(&token(json!({"nonce": ""})), empty, NOW),
            Err(IdTokenRejection::Nonce),
            "never an empty nonce"
        );
        assert_eq!(
            check(&token(json!({"at_hash": at_hash("at-2")})), EXPECTED, NOW),
            Err(IdTokenRejection::AccessTokenHash)
        );
    }
}
