//! OpenID Connect Back-Channel Logout 1.0: the logout token the provider
//! posts to an application when a session it received an ID token in ends
//! (§2.4), how often a delivery is tried again, and the checks an
//! application makes of a logout token it receives (§2.6) — the client
//! component's receiver applies them.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::id_token::subject;
use super::ClientId;
use crate::UserId;

/// The event a logout token carries (§2.4).
pub const BACKCHANNEL_LOGOUT_EVENT: &str = "http://schemas.openid.net/event/backchannel-logout";

/// The JWT header `typ` of a logout token (§2.4: explicit typing, RFC 8725
/// §3.11), which the logout tokens this service sends carry.
pub const LOGOUT_TOKEN_JWT_TYPE: &str = "logout+jwt";

/// Whether a logout token's JWT header `typ` is one a receiver takes:
/// `logout+jwt` or `application/logout+jwt` (§2.4), `JWT` (what providers
/// wrote before explicit typing, this one included: tokens signed before an
/// upgrade are still in flight), or none (the header member is optional);
/// in any case. Any other type names another kind of token (`at+jwt`, an
/// ID token typed `id_token+jwt`, …) and is refused, so that no token
/// typed for another use passes for a logout token.
pub fn logout_token_type_accepted(typ: Option<&str>) -> bool {
    let Some(typ) = typ else { return true };
    let typ = typ.get(..12).filter(|p| p.eq_ignore_ascii_case("application/")).map_or(typ, |_| &typ[12..]);
    typ.eq_ignore_ascii_case(LOGOUT_TOKEN_JWT_TYPE) || typ.eq_ignore_ascii_case("JWT")
}

/// How long a logout token is accepted after it is issued, in seconds: a
/// token is signed at each try, so a short life costs nothing.
pub const LOGOUT_TOKEN_LIFETIME_SECS: i64 = 120;

/// How long a delivery keeps being tried after its session ended, in
/// seconds (a day): an application down for longer has had its own
/// sessions expire, or must be told by other means.
pub const GIVE_UP_AFTER_SECS: i64 = 24 * 60 * 60;

/// How long after its `attempts`-th failed try a delivery is tried again:
/// 30 s, doubling, at most an hour.
pub fn retry_delay_secs(attempts: u32) -> i64 {
    30_i64.saturating_mul(1_i64 << attempts.min(7)).min(3_600)
}

/// The claims of a logout token (§2.4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogoutTokenClaims {
    /// The issuer identifier, as in ID tokens.
    pub iss: String,
    /// The application told.
    pub aud: String,
    /// Issue time, Unix seconds.
    pub iat: i64,
    /// Expiry, Unix seconds.
    pub exp: i64,
    /// The token's id: the same at every try of one delivery, so that a
    /// receiver that saw it once ignores a repeat.
    pub jti: String,
    /// The person, as ID tokens name them.
    pub sub: String,
    /// The session that ended, as ID tokens name it.
    pub sid: String,
    /// `{"http://schemas.openid.net/event/backchannel-logout": {}}`.
    pub events: Map<String, Value>,
}

/// What a logout token is made of: one delivery to one application.
#[derive(Debug, Clone, Copy)]
pub struct LogoutFacts<'a> {
    /// The issuer identifier.
    pub issuer: &'a str,
    /// The application told.
    pub client_id: &'a ClientId,
    /// The person whose session ended.
    pub user: UserId,
    /// The session's `sid`.
    pub sid: &'a str,
    /// The delivery's record id (for the token's `jti`).
    pub delivery: i64,
    /// Now, Unix seconds.
    pub now: i64,
}

impl LogoutTokenClaims {
    /// The claims of the logout token of `facts`, issued now.
    pub fn new(facts: LogoutFacts<'_>) -> Self {
        let mut events = Map::new();
        events.insert(BACKCHANNEL_LOGOUT_EVENT.to_owned(), Value::Object(Map::new()));
        Self {
            iss: facts.issuer.to_owned(),
            aud: facts.client_id.as_str().to_owned(),
            iat: facts.now,
            exp: facts.now.saturating_add(LOGOUT_TOKEN_LIFETIME_SECS),
            jti: logout_jti(facts.delivery, facts.client_id, facts.sid),
            sub: subject(facts.user),
            sid: facts.sid.to_owned(),
            events,
        }
    }
}

/// The `jti` of delivery `delivery` of session `sid`'s end to `client_id`:
/// stable across tries, different for every delivery, revealing nothing.
fn logout_jti(delivery: i64, client_id: &ClientId, sid: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(delivery.to_be_bytes());
    hasher.update(client_id.as_str().as_bytes());
    hasher.update([0]);
    hasher.update(sid.as_bytes());
    URL_SAFE_NO_PAD.encode(&hasher.finalize()[..16])
}

/// What a valid logout token orders: end the sessions of this person, or
/// of this session (at least one is named).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogoutOrder {
    /// The person, when named.
    pub sub: Option<String>,
    /// The session, when named.
    pub sid: Option<String>,
    /// The token's id (a receiver refuses one it has seen).
    pub jti: String,
    /// Until when the token is valid (a receiver remembers `jti` that long).
    pub exp: i64,
}

/// Why a logout token is refused (§2.6); the receiver answers 400.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LogoutTokenError {
    /// A claim is missing, malformed or not what it must be (named).
    #[error("the logout token's {0} is missing or wrong")]
    Claim(&'static str),
    /// It carries a `nonce` (§2.4: a logout token never does, so that an
    /// ID token cannot pass for one).
    #[error("a logout token carries no nonce")]
    Nonce,
    /// It is expired, or issued too far in the future.
    #[error("the logout token is expired or not yet valid")]
    Time,
}

/// How far a logout token's `iat` may be ahead of our clock, in seconds.
const CLOCK_SKEW_SECS: i64 = 60;

/// The checks of §2.6 steps 3–6 over the payload of a logout token whose
/// signature verified: `iss` is `issuer`, `aud` is (or includes)
/// `client_id`, `iat` is not in the future, `exp` is there (§2.4 makes it
/// required) and has not passed, `events` has the back-channel logout event (an object), there
/// is no `nonce`, and `sub` or `sid` is named. Errors: which check failed.
pub fn check_logout_token(
    payload: &Value,
    issuer: &str,
    client_id: &str,
    now: i64,
) -> Result<LogoutOrder, LogoutTokenError> {
    let text = |name: &'static str| payload.get(name).and_then(Value::as_str);
    if text("iss") != Some(issuer) {
        return Err(LogoutTokenError::Claim("iss"));
    }
    let audience_matches = match payload.get("aud") {
        Some(Value::String(aud)) => aud == client_id,
        Some(Value::Array(auds)) => auds.iter().any(|a| a.as_str() == Some(client_id)),
        _ => false,
    };
    if !audience_matches {
        return Err(LogoutTokenError::Claim("aud"));
    }
    let iat = payload.get("iat").and_then(Value::as_i64).ok_or(LogoutTokenError::Claim("iat"))?;
    // Required (§2.4): a token without one would be good forever, and its
    // `jti` would have to be remembered as long.
    let exp = payload.get("exp").and_then(Value::as_i64).ok_or(LogoutTokenError::Claim("exp"))?;
    if iat > now.saturating_add(CLOCK_SKEW_SECS) || exp <= now {
        return Err(LogoutTokenError::Time);
    }
    let event = payload.get("events").and_then(|events| events.get(BACKCHANNEL_LOGOUT_EVENT));
    if !matches!(event, Some(Value::Object(_))) {
        return Err(LogoutTokenError::Claim("events"));
    }
    if payload.get("nonce").is_some() {
        return Err(LogoutTokenError::Nonce);
    }
    let jti = text("jti").filter(|j| !j.is_empty()).ok_or(LogoutTokenError::Claim("jti"))?.to_owned();
    let sub = text("sub").filter(|s| !s.is_empty()).map(str::to_owned);
    let sid = text("sid").filter(|s| !s.is_empty()).map(str::to_owned);
    if sub.is_none() && sid.is_none() {
        return Err(LogoutTokenError::Claim("sub/sid"));
    }
    Ok(LogoutOrder { sub, sid, jti, exp })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const ISSUER: &str = "https://id.example.gov.br";

    fn token(now: i64) -> Value {
        let client = ClientId::parse("portal").expect("id");
        let facts = LogoutFacts { issuer: ISSUER, client_id: &client, user: UserId(7), sid: "s1", delivery: 3, now };
        serde_json::to_value(LogoutTokenClaims::new(facts)).expect("json")
    }

    #[test]
    fn a_logout_token_names_the_person_and_the_session_and_carries_the_event() {
        let claims = token(1_000);
        assert_eq!(claims["sub"], "7");
        assert_eq!(claims["sid"], "s1");
        assert_eq!(claims["aud"], "portal");
        assert_eq!(claims["exp"], 1_000 + LOGOUT_TOKEN_LIFETIME_SECS);
        assert_eq!(claims["events"], json!({ BACKCHANNEL_LOGOUT_EVENT: {} }));
        assert!(claims.get("nonce").is_none());
        let order = check_logout_token(&claims, ISSUER, "portal", 1_000).expect("valid");
        assert_eq!((order.sub.as_deref(), order.sid.as_deref()), (Some("7"), Some("s1")));
    }

    #[test]
    fn the_jti_is_the_same_at_every_try_of_a_delivery_and_differs_between_deliveries() {
        assert_eq!(token(1_000)["jti"], token(5_000)["jti"], "a retry repeats the jti");
        let client = ClientId::parse("portal").expect("id");
        let other = LogoutFacts { issuer: ISSUER, client_id: &client, user: UserId(7), sid: "s1", delivery: 4, now: 0 };
        assert_ne!(LogoutTokenClaims::new(other).jti, token(1_000)["jti"].as_str().expect("jti"));
    }

    #[test]
    fn each_rule_of_the_receiver_refuses_its_own_fault() {
        let valid = token(1_000);
        let with = |key: &str, value: Value| {
            let mut claims = valid.clone();
            claims[key] = value;
            check_logout_token(&claims, ISSUER, "portal", 1_000)
        };
        let without = |key: &str| {
            let mut claims = valid.clone();
            claims.as_object_mut().expect("object").remove(key);
            check_logout_token(&claims, ISSUER, "portal", 1_000)
        };
        assert_eq!(with("iss", json!("https://evil.example")), Err(LogoutTokenError::Claim("iss")));
        assert_eq!(with("aud", json!("other")), Err(LogoutTokenError::Claim("aud")));
        assert!(with("aud", json!(["other", "portal"])).is_ok(), "an audience list that names us");
        assert_eq!(with("events", json!({})), Err(LogoutTokenError::Claim("events")));
        assert_eq!(with("events", json!({ BACKCHANNEL_LOGOUT_EVENT: "x" })), Err(LogoutTokenError::Claim("events")));
        assert_eq!(with("nonce", json!("n")), Err(LogoutTokenError::Nonce), "an ID token is not a logout token");
        assert_eq!(with("exp", json!(999)), Err(LogoutTokenError::Time));
        assert_eq!(with("iat", json!(1_000 + 3_600)), Err(LogoutTokenError::Time));
        assert_eq!(without("jti"), Err(LogoutTokenError::Claim("jti")));
        assert_eq!(without("iat"), Err(LogoutTokenError::Claim("iat")));
        assert_eq!(without("exp"), Err(LogoutTokenError::Claim("exp")), "§2.4: exp is required");
        assert_eq!(with("exp", json!("1100")), Err(LogoutTokenError::Claim("exp")));
        assert!(without("sid").is_ok(), "sub alone ends the person's sessions");
        let mut neither = valid.clone();
        neither.as_object_mut().expect("object").remove("sid");
        neither.as_object_mut().expect("object").remove("sub");
        assert_eq!(check_logout_token(&neither, ISSUER, "portal", 1_000), Err(LogoutTokenError::Claim("sub/sid")));
    }

    #[test]
    fn the_receiver_takes_logout_tokens_typed_logout_jwt_or_jwt_and_refuses_other_types() {
        for typ in
            [None, Some("logout+jwt"), Some("application/logout+jwt"), Some("Logout+JWT"), Some("JWT"), Some("jwt")]
        {
            assert!(logout_token_type_accepted(typ), "{typ:?}");
        }
        for typ in ["at+jwt", "application/at+jwt", "id_token+jwt", "secevent+jwt", "logout", "", "application/"] {
            assert!(!logout_token_type_accepted(Some(typ)), "{typ}");
        }
    }

    #[test]
    fn retries_wait_longer_each_time_up_to_an_hour() {
        assert_eq!(retry_delay_secs(0), 30);
        assert_eq!(retry_delay_secs(1), 60);
        assert_eq!(retry_delay_secs(6), 1_920);
        assert_eq!(retry_delay_secs(7), 3_600);
        assert_eq!(retry_delay_secs(u32::MAX), 3_600);
    }
}
