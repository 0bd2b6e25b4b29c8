//! The OpenID Connect ID token (OIDC Core 1.0 §2, §3.1.3.6, §12.2): the
//! claims it carries, `at_hash`, the subject identifier, and what an
//! `id_token_hint` (RP-Initiated Logout 1.0 §2) names once its signature
//! verified.
//!
//! Signing and verifying are the token issuer's (with the provider's
//! asymmetric key, RS256 or ES256); the rules of what the token says live
//! here.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::{Deserialize, Deserializer, Serialize};
use sha2::{Digest, Sha256};

use super::oidc::AMR_PASSWORD;
use super::ClientId;
use crate::user::UserId;

/// The claims of an ID token we issue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdTokenClaims {
    /// The issuer identifier: the `issuer_url` setting, exactly as the
    /// discovery document says it.
    pub iss: String,
    /// The subject: the user's id as a decimal string ([`subject`]).
    pub sub: String,
    /// The audience: the client the token was issued to.
    pub aud: String,
    /// Expiry, Unix seconds.
    pub exp: i64,
    /// Issue time, Unix seconds.
    pub iat: i64,
    /// When the person logged in (Unix seconds), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_time: Option<i64>,
    /// The authorization request's `nonce`, exactly (never on a refresh).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nonce: Option<String>,
    /// The access token's hash ([`at_hash`]), when one is issued with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_hash: Option<String>,
    /// How the person authenticated (RFC 8176): `pwd`, and `otp` and
    /// `mfa` after a second factor.
    pub amr: Vec<String>,
    /// The authentication context class reached, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acr: Option<String>,
    /// The account's address, with the `email` scope (OIDC Core §5.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// Whether the person confirmed that address through a link sent to
    /// it, with `email`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email_verified: Option<bool>,
    /// The login session's id for applications (OpenID Connect
    /// Back-Channel Logout §2.1): what a logout token names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sid: Option<String>,
}

/// What an ID token is made of.
#[derive(Debug, Clone, Copy)]
pub struct IdTokenFacts<'a> {
    /// The issuer identifier.
    pub issuer: &'a str,
    /// The person.
    pub user: UserId,
    /// The client the token goes to.
    pub client_id: &'a ClientId,
    /// Now, Unix seconds.
    pub now: i64,
    /// How long the token lives, in seconds.
    pub lifetime_secs: i64,
    /// When the person logged in, when known.
    pub auth_time: Option<i64>,
    /// The authorization request's nonce (code exchange only).
    pub nonce: Option<&'a str>,
    /// The access token issued with it.
    pub access_token: &'a str,
    /// The login's authentication context class, when known.
    pub acr: Option<&'a str>,
    /// The login's methods (the `amr` claim); `None`: a password.
    pub amr: Option<&'a [String]>,
    /// The account's address and whether it is confirmed, when the token
    /// carries them (the `email` scope, an account with an address).
    pub email: Option<(&'a str, bool)>,
    /// The login session's `sid`, when the grant was made in one.
    pub sid: Option<&'a str>,
}

impl IdTokenClaims {
    /// The claims of an ID token of `facts`: issued now, `amr` a password,
    /// `at_hash` of the access token issued with it.
    pub fn new(facts: IdTokenFacts<'_>) -> Self {
        Self {
            iss: facts.issuer.to_owned(),
            sub: subject(facts.user),
            aud: facts.client_id.as_str().to_owned(),
            exp: facts.now.saturating_add(facts.lifetime_secs),
            iat: facts.now,
            auth_time: facts.auth_time,
            nonce: facts.nonce.map(str::to_owned),
            at_hash: Some(at_hash(facts.access_token)),
            amr: facts.amr.map_or_else(|| vec![AMR_PASSWORD.to_owned()], <[String]>::to_vec),
            acr: facts.acr.map(str::to_owned),
            email: facts.email.map(|(address, _)| address.to_owned()),
            email_verified: facts.email.map(|(_, verified)| verified),
            sid: facts.sid.map(str::to_owned),
        }
    }
}

/// The subject identifier of a user (OIDC Core §8, `public` type): the
/// user's primary key as a decimal string, the same for every client and
/// the same number as the access tokens' `user_id`.
pub fn subject(user: UserId) -> String {
    user.0.to_string()
}

/// The user a subject identifier names: a positive decimal number without
/// sign or leading zero, as [`subject`] writes it; `None` otherwise.
pub fn user_of_subject(sub: &str) -> Option<UserId> {
    let canonical = !sub.is_empty() && sub.bytes().all(|b| b.is_ascii_digit()) && !sub.starts_with('0');
    canonical.then(|| sub.parse().ok()).flatten().map(UserId)
}

/// `at_hash` (OIDC Core §3.1.3.6): the left half of the SHA-256 digest of
/// the access token's ASCII text, base64url without padding. SHA-256 is
/// the hash of every algorithm we sign ID tokens with (RS256, ES256).
pub fn at_hash(access_token: &str) -> String {
    let digest = Sha256::digest(access_token.as_bytes());
    URL_SAFE_NO_PAD.encode(&digest[..16])
}

/// The claims of an `id_token_hint` that matter to a logout, read from a
/// token whose signature verified with the provider's keys. Its expiry is
/// not checked: an expired ID token still identifies its client and user
/// (RP-Initiated Logout 1.0 §2).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct HintClaims {
    /// The issuer.
    pub iss: String,
    /// The subject.
    pub sub: String,
    /// The audience, as a string or an array of strings.
    #[serde(deserialize_with = "audiences")]
    pub aud: Vec<String>,
    /// Our tokens' type claim: an ID token has none, an access token
    /// (which also carries `iss`, `sub` and `aud`, RFC 9068 §2.2) has one.
    #[serde(default)]
    pub token_type: Option<serde_json::Value>,
}

/// Who an `id_token_hint` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogoutHint {
    /// The client it was issued to.
    pub client_id: ClientId,
    /// The person.
    pub user: UserId,
}

/// What a verified hint names, when it is one of our ID tokens: issued by
/// `issuer`, to exactly one client, for a subject we write. `None` for
/// anything else (an access token, which names its type; another
/// issuer's token, several audiences or a strange subject are not ours).
pub fn logout_hint(claims: &HintClaims, issuer: &str) -> Option<LogoutHint> {
    if claims.iss != issuer || claims.token_type.is_some() {
        return None;
    }
    let [aud] = claims.aud.as_slice() else {
        return None;
    };
    Some(LogoutHint { client_id: ClientId::parse(aud).ok()?, user: user_of_subject(&claims.sub)? })
}

/// `aud` as a string or an array of strings (RFC 7519 §4.1.3).
fn audiences<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Aud {
        One(String),
        Many(Vec<String>),
    }
    Ok(match Aud::deserialize(d)? {
        Aud::One(one) => vec![one],
        Aud::Many(many) => many,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn at_hash_matches_the_openid_connect_core_examples() {
        // OIDC Core 1.0 Appendix A.3 (access token) and A.4 (the same rule
        // for c_hash over the code).
        assert_eq!(at_hash("jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y"), "77QmUPtjPfzWtF2AnpK9RQ");
        assert_eq!(at_hash("Qcb0Orv1zh30vL1MPRsbm-diHiMwcLyZvn1arpZv-Jxf_11jnpEX3Tgfvk"), "LDktKdoQak3Pk0cnXxCltA");
        assert_eq!(at_hash("a").len(), 22, "128 bits, unpadded");
    }

    fn facts<'a>(client: &'a ClientId, nonce: Option<&'a str>) -> IdTokenFacts<'a> {
        IdTokenFacts {
            issuer: "https://id.example.gov.br",
            user: UserId(42),
            client_id: client,
            now: 1_800_000_000,
            lifetime_secs: 300,
            auth_time: Some(1_799_999_000),
            nonce,
            access_token: "jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y",
            acr: None,
            amr: None,
            email: None,
            sid: None,
        }
    }

    #[test]
    fn an_id_token_says_who_for_whom_since_when_and_echoes_the_nonce() {
        let client = ClientId::parse("portal").expect("id");
        let nonce = "n-0S6_WzA2Mj \"é\"";
        let claims = IdTokenClaims::new(facts(&client, Some(nonce)));
        assert_eq!(
            serde_json::to_value(&claims).expect("json"),
            json!({
                "iss": "https://id.example.gov.br",
                "sub": "42",
                "aud": "portal",
                "exp": 1_800_000_300,
                "iat": 1_800_000_000,
                "auth_time": 1_799_999_000,
                "nonce": nonce,
                "at_hash": "77QmUPtjPfzWtF2AnpK9RQ",
                "amr": ["pwd"],
            })
        );
        let without = IdTokenClaims::new(IdTokenFacts { auth_time: None, ..facts(&client, None) });
        let json = serde_json::to_value(&without).expect("json");
        assert!(json.get("nonce").is_none() && json.get("auth_time").is_none(), "absent, not null: {json}");
        assert!(json.get("email").is_none() && json.get("email_verified").is_none(), "absent, not null: {json}");
        let with = IdTokenClaims::new(IdTokenFacts { email: Some(("ana@example.org", true)), ..facts(&client, None) });
        let json = serde_json::to_value(&with).expect("json");
        assert_eq!((&json["email"], &json["email_verified"]), (&json!("ana@example.org"), &json!(true)));
    }

    #[test]
    fn subjects_are_decimal_user_ids_and_nothing_else_reads_as_one() {
        assert_eq!(subject(UserId(7)), "7");
        assert_eq!(user_of_subject("7"), Some(UserId(7)));
        assert_eq!(user_of_subject(&subject(UserId(i64::MAX))), Some(UserId(i64::MAX)));
        for bad in ["", "0", "07", "-7", "+7", "7a", " 7", "99999999999999999999", "ana"] {
            assert_eq!(user_of_subject(bad), None, "{bad:?}");
        }
    }

    fn hint(value: serde_json::Value) -> Option<HintClaims> {
        serde_json::from_value(value).ok()
    }

    #[test]
    fn a_hint_names_its_client_and_user_only_when_it_is_our_id_token() {
        let issuer = "https://id.example.gov.br";
        let ours = hint(json!({"iss": issuer, "sub": "42", "aud": "portal", "exp": 1})).expect("claims");
        let named = logout_hint(&ours, issuer).expect("ours");
        assert_eq!((named.client_id.as_str(), named.user), ("portal", UserId(42)));
        let access =
            json!({"iss": issuer, "sub": "42", "aud": "portal", "client_id": "portal", "token_type": "oauth_access"});
        assert_eq!(logout_hint(&hint(access).expect("claims"), issuer), None, "an access token is no ID token");
        let as_array = hint(json!({"iss": issuer, "sub": "42", "aud": ["portal"]})).expect("claims");
        assert_eq!(logout_hint(&as_array, issuer), Some(named));

        for foreign in [
            json!({"iss": "https://other.example", "sub": "42", "aud": "portal"}),
            json!({"iss": format!("{issuer}/"), "sub": "42", "aud": "portal"}),
            json!({"iss": issuer, "sub": "42", "aud": ["portal", "spa"]}),
            json!({"iss": issuer, "sub": "42", "aud": []}),
            json!({"iss": issuer, "sub": "ana", "aud": "portal"}),
            json!({"iss": issuer, "sub": "42", "aud": "bad id!"}),
        ] {
            let claims = hint(foreign.clone()).expect("claims");
            assert_eq!(logout_hint(&claims, issuer), None, "{foreign}");
        }
        // An access token of ours has no iss or sub: it is no hint at all.
        assert_eq!(hint(json!({"token_type": "access", "user_id": 42, "aud": "portal"})), None);
    }
}
