//! Token claims, token types and lifetimes.

use serde::{Deserialize, Serialize};

/// The kinds of token the service issues, as the `token_type` claim names
/// them. A token of one kind is never accepted where another is expected.
///
/// First-party tokens (`pair`, `refresh`) keep simplejwt's `access` and
/// `refresh`, so that SUAP-side APIs running djangorestframework-simplejwt
/// accept them unchanged. Tokens issued to client applications (OAuth2)
/// carry `oauth_access` and `oauth_refresh`, which simplejwt refuses
/// ("Token has wrong type") whatever key it holds: a token a person granted
/// to a third-party application never reads as a login there (RFC 8725
/// §3.11–3.12). OAuth2 tokens issued before this distinction carry
/// `access`/`refresh` with an `aud`; they are still read in the client lane
/// until they expire ([`Claims::client_audience`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TokenType {
    /// Short-lived first-party token that authorises requests.
    Access,
    /// Longer-lived, single-use first-party token that buys a new pair.
    Refresh,
    /// The user's login session at `/oauth/authorize/` (kept in an HttpOnly
    /// cookie scoped to `/oauth`); it authorises nothing else.
    Session,
    /// An OAuth2 access token issued to a client application (JWT header
    /// `typ: at+jwt`, RFC 9068 §2.1).
    #[serde(rename = "oauth_access")]
    ClientAccess,
    /// An OAuth2 refresh token issued to a client application.
    #[serde(rename = "oauth_refresh")]
    ClientRefresh,
    /// An OAuth2 access token a client application got for itself with the
    /// `client_credentials` grant (RFC 6749 §4.4; JWT header `typ:
    /// at+jwt`): `sub` is the client, there is no person and no refresh
    /// token, and its `scope` holds API permissions (`users:read`). It is
    /// accepted by the user-management API only; every route that speaks
    /// for a person refuses it, and simplejwt refuses its type.
    #[serde(rename = "oauth_machine")]
    Machine,
}

/// The JWT header `typ` of OAuth2 access tokens (RFC 9068 §2.1).
pub const ACCESS_TOKEN_JWT_TYPE: &str = "at+jwt";

/// Whether a JWT header's `typ` names an OAuth2 access token: `at+jwt` or
/// `application/at+jwt`, in any case (RFC 9068 §2.1, RFC 8725 §3.11).
pub fn is_access_token_jwt_type(typ: &str) -> bool {
    let typ = typ.get(..12).filter(|p| p.eq_ignore_ascii_case("application/")).map_or(typ, |_| &typ[12..]);
    typ.eq_ignore_ascii_case(ACCESS_TOKEN_JWT_TYPE)
}

impl TokenType {
    /// The type of the same kind in the client lane: `oauth_access` for
    /// `access`, `oauth_refresh` for `refresh` (the others are kept).
    pub fn for_client(self) -> Self {
        match self {
            Self::Access => Self::ClientAccess,
            Self::Refresh => Self::ClientRefresh,
            other => other,
        }
    }

    /// The first-party type of the same kind, which OAuth2 tokens issued
    /// before the client types existed carry: `access` for
    /// `oauth_access`, `refresh` for `oauth_refresh` (the others are kept).
    pub fn legacy(self) -> Self {
        match self {
            Self::ClientAccess => Self::Access,
            Self::ClientRefresh => Self::Refresh,
            other => other,
        }
    }

    /// Whether the token authorises requests (`access`, `oauth_access`,
    /// `oauth_machine`).
    pub fn is_access(self) -> bool {
        matches!(self, Self::Access | Self::ClientAccess | Self::Machine)
    }

    /// Whether the token is an OAuth2 access token, whose JWT header says
    /// `typ: at+jwt` (RFC 9068 §2.1): `oauth_access` and `oauth_machine`.
    pub fn is_oauth_access(self) -> bool {
        matches!(self, Self::ClientAccess | Self::Machine)
    }

    /// Whether the token buys a new pair (`refresh`, `oauth_refresh`).
    pub fn is_refresh(self) -> bool {
        matches!(self, Self::Refresh | Self::ClientRefresh)
    }
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
    /// Primary key of the user the token speaks for; `None` on a token
    /// that speaks for no person (`oauth_machine`), and only there. Read
    /// from a number or from a string of digits: djangorestframework-simplejwt
    /// 5.5 writes `str(user.pk)`, and tokens it mints with the shared key
    /// verify here. Read it through [`Claims::person`].
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "user_id")]
    pub user_id: Option<i64>,
    /// Issuer (RFC 7519 §4.1.1), on tokens issued to applications when
    /// OpenID Connect is on: the issuer identifier the discovery document
    /// names (RFC 9068 §2.2). First-party tokens carry none (simplejwt's
    /// shape).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iss: Option<String>,
    /// Subject (RFC 7519 §4.1.2), on tokens issued to applications only
    /// (RFC 9068 §2.2): on a person's token the person's public subject
    /// identifier, the `sub` of their ID tokens and userinfo
    /// ([`subject`](crate::oauth::id_token::subject)); on an
    /// `oauth_machine` token the client id of the application it speaks
    /// for. First-party tokens carry none (simplejwt's shape).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub: Option<String>,
    /// Optional not-before time; we never issue it but honour it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nbf: Option<i64>,
    /// Space-separated OAuth2 scopes (OAuth2 access tokens only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// OAuth2 client the token was issued to (OAuth2 tokens only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// Audience (RFC 7519 §4.1.3): the client id of the application an
    /// OAuth2 token was issued to. First-party tokens (`pair`, `refresh`)
    /// carry none, so anyone holding the key can tell the two lanes apart.
    /// RFC 7519 also allows an array: one entry reads as that string;
    /// several are kept space-joined, which names no client (a client id
    /// has no spaces), so such a token is in no lane we accept.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "audience")]
    pub aud: Option<String>,
    /// The [`PasswordStamp`](crate::PasswordStamp) of the password a login
    /// session was opened with (session tokens only): the session ends
    /// when the account's password changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_stamp: Option<String>,
    /// When the person logged in (Unix seconds), on the OAuth2 tokens of an
    /// OpenID Connect grant: the ID token of a refresh keeps the first
    /// one's `auth_time` (OIDC Core §12.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_time: Option<i64>,
    /// The authentication context class the login reached (client tokens,
    /// RFC 9068 §2.2.1): kept through refreshes, for the ID token and
    /// introspection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acr: Option<String>,
    /// How the person authenticated (RFC 8176 values; client tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amr: Option<Vec<String>>,
    /// The login session the grant was made in (the ID token's `sid`), on
    /// the tokens of an OpenID Connect grant: a refresh's ID token keeps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sid: Option<String>,
    /// When the login that started the token's refresh family happened
    /// (Unix seconds; refresh tokens only, both lanes): rotations keep it,
    /// and none rotates past it plus the family's absolute lifetime. A
    /// refresh token without it (issued before) counts from its `iat`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orig_iat: Option<i64>,
    /// The application password a first-party refresh family was opened
    /// with (its id; a private claim of this service): every refresh
    /// checks it is still there, so that revoking it ends the families it
    /// started. Access tokens and other logins carry none (simplejwt's
    /// shape).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_password: Option<i64>,
}

impl Claims {
    /// When the refresh family of this token started: its `orig_iat`, or
    /// for a token issued before tokens carried it, its `iat`.
    pub fn family_started(&self) -> i64 {
        self.orig_iat.unwrap_or(self.iat)
    }

    /// Fresh claims of `token_type` for `user_id`, issued at `now` and living
    /// for `lifetime_secs`, with a new random `jti`.
    pub fn new(token_type: TokenType, user_id: i64, now: i64, lifetime_secs: i64) -> Self {
        Self {
            token_type,
            exp: now.saturating_add(lifetime_secs),
            iat: now,
            jti: uuid::Uuid::new_v4().simple().to_string(),
            user_id: Some(user_id),
            iss: None,
            sub: None,
            nbf: None,
            scope: None,
            client_id: None,
            aud: None,
            password_stamp: None,
            auth_time: None,
            acr: None,
            amr: None,
            sid: None,
            orig_iat: None,
            app_password: None,
        }
    }

    /// Claims of an `oauth_machine` token for the application `client_id`
    /// (its `sub`, `aud` and `client_id`), with the API permissions `scope`
    /// (space-separated), issued at `now` and living `lifetime_secs`: no
    /// person, no refresh token.
    pub fn machine(client_id: &str, scope: String, now: i64, lifetime_secs: i64) -> Self {
        Self {
            token_type: TokenType::Machine,
            exp: now.saturating_add(lifetime_secs),
            iat: now,
            jti: uuid::Uuid::new_v4().simple().to_string(),
            user_id: None,
            iss: None,
            sub: Some(client_id.to_owned()),
            nbf: None,
            scope: Some(scope),
            client_id: Some(client_id.to_owned()),
            aud: Some(client_id.to_owned()),
            password_stamp: None,
            auth_time: None,
            acr: None,
            amr: None,
            sid: None,
            orig_iat: None,
            app_password: None,
        }
    }

    /// The person the token speaks for. `WrongType` for a token that speaks
    /// for none (an application's own `oauth_machine` token): it is never
    /// accepted where a person is expected.
    pub fn person(&self) -> Result<crate::user::UserId, crate::error::TokenError> {
        self.user_id.map(crate::user::UserId).ok_or(crate::error::TokenError::WrongType)
    }

    /// The application an `oauth_machine` token speaks for: its `sub`,
    /// when `sub`, `aud` and `client_id` name one client and no person is
    /// named. `WrongType` for every other token.
    pub fn machine_client(&self) -> Result<&str, crate::error::TokenError> {
        match (self.token_type, self.client_audience(), &self.sub, self.user_id) {
            (TokenType::Machine, Some(client), Some(sub), None) if sub == client => Ok(client),
            _ => Err(crate::error::TokenError::WrongType),
        }
    }

    /// Whether the token was issued to the service's own users (by `pair`
    /// or `refresh`, or a login session): a first-party type, a person,
    /// and no audience and no client. Only such tokens are accepted at
    /// `verify`, `refresh` and the consume routes.
    pub fn is_first_party(&self) -> bool {
        matches!(self.token_type, TokenType::Access | TokenType::Refresh | TokenType::Session)
            && self.user_id.is_some()
            && self.aud.is_none()
            && self.client_id.is_none()
    }

    /// The client application an OAuth2 token was issued to: its `aud`,
    /// when it names the same client as `client_id` and the type is an
    /// access or refresh type (`oauth_*`, or `access`/`refresh` on tokens
    /// issued before the client types). `None` for a first-party token, a
    /// session, and one whose two claims disagree or where one is missing;
    /// only tokens with an audience are accepted at the profile endpoint
    /// and the OAuth2 refresh grant.
    pub fn client_audience(&self) -> Option<&str> {
        if self.token_type == TokenType::Session {
            return None;
        }
        match (&self.aud, &self.client_id) {
            (Some(aud), Some(client)) if aud == client => Some(aud),
            _ => None,
        }
    }

    /// `Ok` for a token issued to a client application of `expected` kind:
    /// `oauth_access`/`oauth_refresh`, or the first-party type of the same
    /// kind with a client audience (the form issued before the client
    /// types), whose `aud` and `client_id` name one client. `WrongType`
    /// for a first-party token, a session and a token of another kind.
    pub fn require_client_kind(&self, expected: TokenType) -> Result<(), crate::error::TokenError> {
        let expected = expected.for_client();
        let of_kind = self.token_type == expected || self.token_type == expected.legacy();
        if !of_kind || self.client_audience().is_none() || self.user_id.is_none() {
            return Err(crate::error::TokenError::WrongType);
        }
        Ok(())
    }

    /// Whether this is an OAuth2 token of the form issued before the client
    /// types (`access`/`refresh` with a client audience): still read in
    /// the client lane until it expires, never issued any more.
    pub fn is_legacy_client_token(&self) -> bool {
        matches!(self.token_type, TokenType::Access | TokenType::Refresh) && self.client_audience().is_some()
    }
}

/// `user_id` as a number, or as a string of ASCII digits (simplejwt 5.5).
/// A visitor rather than an untagged enum: this runs on every token check.
/// (Called only when the claim is present; absent, it is `None`.)
fn user_id<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    struct UserIdVisitor;
    impl serde::de::Visitor<'_> for UserIdVisitor {
        type Value = i64;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an integer or a string of digits")
        }

        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<i64, E> {
            Ok(v)
        }

        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<i64, E> {
            i64::try_from(v).map_err(|_| E::custom("user_id out of range"))
        }

        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<i64, E> {
            if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
                return Err(E::invalid_value(serde::de::Unexpected::Str(v), &self));
            }
            v.parse().map_err(|_| E::custom("user_id out of range"))
        }
    }
    d.deserialize_any(UserIdVisitor).map(Some)
}

/// `aud` as a string or an array of strings (RFC 7519 §4.1.3).
fn audience<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Aud {
        One(String),
        Many(Vec<String>),
    }
    Ok(match Option::<Aud>::deserialize(d)? {
        None => None,
        Some(Aud::One(one)) => Some(one),
        Some(Aud::Many(many)) => Some(many.join(" ")),
    })
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
    /// The absolute lifetime of a refresh-token family in seconds (default
    /// 30 days): however often its tokens rotate, none is issued or
    /// accepted past its login's time plus this; the person logs in again.
    pub refresh_family_secs: i64,
}

/// The default absolute lifetime of a refresh-token family: 30 days.
pub const DEFAULT_REFRESH_FAMILY_SECS: i64 = 30 * 24 * 60 * 60;

impl Default for TokenLifetimes {
    fn default() -> Self {
        Self {
            access_secs: 5 * 60,
            refresh_secs: 24 * 60 * 60,
            session_secs: 10 * 60,
            refresh_family_secs: DEFAULT_REFRESH_FAMILY_SECS,
        }
    }
}

impl TokenLifetimes {
    /// Lifetime of a token of `token_type`.
    pub fn of(&self, token_type: TokenType) -> i64 {
        match token_type {
            TokenType::Access | TokenType::ClientAccess | TokenType::Machine => self.access_secs,
            TokenType::Refresh | TokenType::ClientRefresh => self.refresh_secs,
            TokenType::Session => self.session_secs,
        }
    }

    /// When the refresh-token family whose login was at `started_at` ends
    /// (its absolute lifetime).
    pub fn family_ends_at(&self, started_at: i64) -> i64 {
        started_at.saturating_add(self.refresh_family_secs)
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
        assert_eq!(a.user_id, Some(7));
        assert_ne!(a.jti, b.jti);
        assert_eq!(a.jti.len(), 32);
    }

    #[test]
    fn the_application_password_claim_is_written_only_when_there_is_one() {
        let plain = serde_json::to_value(Claims::new(TokenType::Access, 1, 0, 1)).expect("json");
        let mut keys: Vec<&str> = plain.as_object().expect("object").keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["exp", "iat", "jti", "token_type", "user_id"], "simplejwt's shape");
        let named = Claims { app_password: Some(42), ..Claims::new(TokenType::Refresh, 1, 0, 1) };
        let json = serde_json::to_value(&named).expect("json");
        assert_eq!(json["app_password"], 42);
        let back: Claims = serde_json::from_value(json).expect("read back");
        assert_eq!(back.app_password, Some(42));
    }

    #[test]
    fn token_type_serialises_in_lowercase() {
        let c = Claims::new(TokenType::Refresh, 1, 0, 1);
        let v = serde_json::to_value(&c).expect("claims serialise");
        assert_eq!(v["token_type"], "refresh");
        assert!(v.get("scope").is_none(), "absent optional claims are omitted");
        let session = serde_json::to_value(Claims::new(TokenType::Session, 1, 0, 1)).expect("claims serialise");
        assert_eq!(session["token_type"], "session");
        assert!(v.get("aud").is_none(), "a first-party token names no audience");
    }

    fn issued_to(aud: Option<&str>, client_id: Option<&str>) -> Claims {
        Claims {
            aud: aud.map(Into::into),
            client_id: client_id.map(Into::into),
            ..Claims::new(TokenType::Access, 1, 0, 300)
        }
    }

    #[test]
    fn only_a_token_without_audience_or_client_is_first_party() {
        assert!(issued_to(None, None).is_first_party());
        assert!(!issued_to(Some("portal"), Some("portal")).is_first_party());
        assert!(!issued_to(Some("portal"), None).is_first_party(), "an audience alone makes it a client's token");
        assert!(!issued_to(None, Some("portal")).is_first_party(), "a client id alone too");
    }

    #[test]
    fn a_client_audience_needs_aud_and_client_id_to_agree() {
        assert_eq!(issued_to(Some("portal"), Some("portal")).client_audience(), Some("portal"));
        assert_eq!(issued_to(Some("portal"), Some("other")).client_audience(), None);
        assert_eq!(issued_to(None, Some("portal")).client_audience(), None, "no audience: not a client's token");
        assert_eq!(issued_to(Some("portal"), None).client_audience(), None);
        assert_eq!(issued_to(None, None).client_audience(), None);
    }

    #[test]
    fn an_audience_array_is_never_first_party_and_names_a_client_only_alone() {
        let read = |aud: serde_json::Value| {
            let json = serde_json::json!({"token_type": "access", "exp": 1, "iat": 0, "jti": "j", "user_id": 1,
                                          "client_id": "portal", "aud": aud});
            serde_json::from_value::<Claims>(json).expect("an array is a valid aud")
        };
        let one = read(serde_json::json!(["portal"]));
        assert_eq!((one.is_first_party(), one.client_audience()), (false, Some("portal")));
        for aud in [serde_json::json!(["portal", "other"]), serde_json::json!([]), serde_json::json!(["portal portal"])]
        {
            let c = read(aud.clone());
            assert_eq!((c.is_first_party(), c.client_audience()), (false, None), "{aud}");
        }
    }

    #[test]
    fn the_audience_serialises_as_the_standard_aud_claim() {
        let v = serde_json::to_value(issued_to(Some("portal"), Some("portal"))).expect("claims serialise");
        assert_eq!((v["aud"].as_str(), v["client_id"].as_str()), (Some("portal"), Some("portal")));
    }

    #[test]
    fn a_machine_token_speaks_for_its_client_and_for_no_person() {
        let machine = Claims::machine("portal", "users:read".into(), 1_000, 300);
        assert_eq!((machine.exp, machine.user_id, machine.sub.as_deref()), (1_300, None, Some("portal")));
        assert_eq!(machine.machine_client(), Ok("portal"));
        assert_eq!(machine.person(), Err(crate::error::TokenError::WrongType));
        assert!(!machine.is_first_party());
        assert_eq!(machine.require_client_kind(TokenType::Access), Err(crate::error::TokenError::WrongType));
        let v = serde_json::to_value(&machine).expect("claims serialise");
        assert_eq!(v["token_type"], "oauth_machine");
        assert!(v.get("user_id").is_none(), "no person is named, not even a sentinel");
        let read: Claims = serde_json::from_value(v).expect("read back");
        assert_eq!(read, machine);
    }

    #[test]
    fn a_person_token_is_never_a_machine_token_and_the_other_way_round() {
        let person = issued_to(Some("portal"), Some("portal"));
        assert_eq!(person.machine_client(), Err(crate::error::TokenError::WrongType));
        assert_eq!(person.person(), Ok(crate::user::UserId(1)));
        // A machine type that names a person, or another subject, is no
        // machine token either.
        let named = Claims { user_id: Some(1), ..Claims::machine("portal", String::new(), 0, 1) };
        assert_eq!(named.machine_client(), Err(crate::error::TokenError::WrongType));
        let other = Claims { sub: Some("other".into()), ..Claims::machine("portal", String::new(), 0, 1) };
        assert_eq!(other.machine_client(), Err(crate::error::TokenError::WrongType));
        // A first-party or client type without a person is in no lane.
        let nobody = Claims { user_id: None, ..Claims::new(TokenType::Access, 1, 0, 300) };
        assert!(!nobody.is_first_party());
        let nobody_client = Claims { user_id: None, ..person };
        assert_eq!(nobody_client.require_client_kind(TokenType::Access), Err(crate::error::TokenError::WrongType));
        assert_eq!(TokenLifetimes::default().of(TokenType::Machine), 300);
    }
}
