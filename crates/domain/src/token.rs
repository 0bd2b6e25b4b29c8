//! Token claims, token types and lifetimes.

use serde::{Deserialize, Serialize};

/// The kinds of token the service issues. A token of one kind is never
/// accepted where another is expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TokenType {
    /// Short-lived token that authorises requests.
    Access,
    /// Longer-lived, single-use token that buys a new pair.
    Refresh,
    /// The user's login session at `/oauth/authorize/` (kept in an HttpOnly
    /// cookie scoped to `/oauth`); it authorises nothing else.
    Session,
}

/// The claims carried by every token we issue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// `access`, `refresh` or `session`.
    pub token_type: TokenType,
    /// Expiry, seconds since the Unix epoch.
    pub exp: i64,
    /// Issue time, seconds since the Unix epoch.
    pub iat: i64,
    /// Unique token id (a UUID v4 in simple form).
    pub jti: String,
    /// Primary key of the user the token speaks for.
    pub user_id: i64,
    /// Optional not-before time; we never issue it but honour it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nbf: Option<i64>,
    /// Space-separated OAuth2 scopes (OAuth2 access tokens only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// OAuth2 client the token was issued to (OAuth2 access tokens only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
}

impl Claims {
    /// Fresh claims of `token_type` for `user_id`, issued at `now` and living
    /// for `lifetime_secs`, with a new random `jti`.
    pub fn new(token_type: TokenType, user_id: i64, now: i64, lifetime_secs: i64) -> Self {
        Self {
            token_type,
            exp: now.saturating_add(lifetime_secs),
            iat: now,
            jti: uuid::Uuid::new_v4().simple().to_string(),
            user_id,
            nbf: None,
            scope: None,
            client_id: None,
        }
    }
}

/// How long each token type lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenLifetimes {
    /// Access-token lifetime in seconds (default 5 minutes).
    pub access_secs: i64,
    /// Refresh-token lifetime in seconds (default 1 day).
    pub refresh_secs: i64,
    /// Login-session lifetime at the authorization endpoint in seconds
    /// (default 10 minutes).
    pub session_secs: i64,
}

impl Default for TokenLifetimes {
    fn default() -> Self {
        Self { access_secs: 5 * 60, refresh_secs: 24 * 60 * 60, session_secs: 10 * 60 }
    }
}

impl TokenLifetimes {
    /// Lifetime of a token of `token_type`.
    pub fn of(&self, token_type: TokenType) -> i64 {
        match token_type {
            TokenType::Access => self.access_secs,
            TokenType::Refresh => self.refresh_secs,
            TokenType::Session => self.session_secs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_lifetimes_are_five_minutes_one_day_and_ten_minutes_for_sessions() {
        let l = TokenLifetimes::default();
        assert_eq!(l.of(TokenType::Access), 300);
        assert_eq!(l.of(TokenType::Refresh), 86_400);
        assert_eq!(l.of(TokenType::Session), 600);
    }

    #[test]
    fn new_claims_expire_after_their_lifetime_and_get_unique_ids() {
        let a = Claims::new(TokenType::Access, 7, 1_000, 300);
        let b = Claims::new(TokenType::Access, 7, 1_000, 300);
        assert_eq!(a.exp, 1_300);
        assert_eq!(a.iat, 1_000);
        assert_eq!(a.user_id, 7);
        assert_ne!(a.jti, b.jti);
        assert_eq!(a.jti.len(), 32);
    }

    #[test]
    fn token_type_serialises_in_lowercase() {
        let c = Claims::new(TokenType::Refresh, 1, 0, 1);
        let v = serde_json::to_value(&c).expect("claims serialise");
        assert_eq!(v["token_type"], "refresh");
        assert!(v.get("scope").is_none(), "absent optional claims are omitted");
        let session = serde_json::to_value(Claims::new(TokenType::Session, 1, 0, 1)).expect("claims serialise");
        assert_eq!(session["token_type"], "session");
    }
}
