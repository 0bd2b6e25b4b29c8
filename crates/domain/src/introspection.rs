//! What a client application may learn about and do to a token: RFC 7009
//! revocation and RFC 7662 introspection.
//!
//! Both speak to one client about its own tokens only. A token issued to
//! another client, a first-party token (`pair`, `refresh`), a login
//! session, or anything that does not verify is, for the asking client,
//! "not a token of mine": revocation does nothing and answers 200 (RFC 7009
//! §2.2), introspection answers `{"active": false}` (RFC 7662 §2.2), so
//! that neither tells a client anything about another client's tokens.
//! Access tokens are self-contained JWTs checked locally by every resource
//! server; they are not revocable (RFC 7009 §2 lets a server choose) and
//! end with their short lifetime. Refresh tokens are revoked with their
//! whole family.

use serde::Serialize;

use crate::oauth::ClientId;
use crate::scope::ScopeSet;
use crate::token::{Claims, TokenType};

/// `token_type` of an introspected access token (RFC 7009's hint name).
pub const ACCESS_TOKEN: &str = "access_token";
/// `token_type` of an introspected refresh token (RFC 7009's hint name).
pub const REFRESH_TOKEN: &str = "refresh_token";

/// What a revocation request of `caller` does to a token that verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RevocationTarget<'a> {
    /// A refresh token of the caller: its family is revoked.
    RefreshFamily {
        /// The token's `jti`.
        jti: &'a str,
        /// The token's user.
        user_id: i64,
    },
    /// An access token of the caller: not revocable, it ends with its
    /// lifetime; answered 200 all the same.
    AccessToken,
    /// Not the caller's token (another client's, first-party, a session):
    /// nothing happens, answered 200.
    NotTheCallers,
}

/// Whether `claims` are of a token issued to `caller` (its `aud` and
/// `client_id` both name it).
pub fn issued_to(claims: &Claims, caller: &ClientId) -> bool {
    claims.client_audience() == Some(caller.as_str())
}

/// What revoking the token with `claims` at the request of `caller` does.
pub fn revocation_target<'a>(claims: &'a Claims, caller: &ClientId) -> RevocationTarget<'a> {
    if !issued_to(claims, caller) {
        return RevocationTarget::NotTheCallers;
    }
    match (claims.token_type, claims.user_id) {
        (TokenType::Refresh | TokenType::ClientRefresh, Some(user_id)) => {
            RevocationTarget::RefreshFamily { jti: &claims.jti, user_id }
        }
        (TokenType::Access | TokenType::ClientAccess | TokenType::Machine, _) => RevocationTarget::AccessToken,
        (TokenType::Refresh | TokenType::ClientRefresh | TokenType::Session, _) => RevocationTarget::NotTheCallers,
    }
}

/// An introspection answer (RFC 7662 §2.2): `{"active": false}` alone, or
/// `active` with the token's `scope`, `client_id`, `sub` (the user id, as
/// text; the client id on an application's own `client_credentials`
/// token), `exp`, `iat` and `token_type` (`access_token` or
/// `refresh_token`: a gateway must accept only the first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Introspection {
    /// Whether the token is active.
    pub active: bool,
    /// Space-separated scopes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The client the token was issued to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// The user the token speaks for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sub: Option<String>,
    /// Expiry (Unix seconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exp: Option<i64>,
    /// Issue time (Unix seconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iat: Option<i64>,
    /// `access_token` or `refresh_token`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_type: Option<&'static str>,
    /// The authentication context class of the login behind the token,
    /// when known (`urn:credencial:acr:senha`, `…:dois-fatores`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acr: Option<String>,
}

impl Introspection {
    /// `{"active": false}`: nothing more is said about an inactive token.
    pub fn inactive() -> Self {
        Self {
            active: false,
            scope: None,
            client_id: None,
            sub: None,
            exp: None,
            iat: None,
            token_type: None,
            acr: None,
        }
    }

    /// What `caller` may hear about the token with `claims` (verified and
    /// unexpired), before the checks that need storage: inactive unless it
    /// is an access or refresh token issued to `caller`; otherwise the
    /// answer to give if those checks pass.
    pub fn for_caller(claims: &Claims, caller: &ClientId) -> Self {
        let token_type = match claims.token_type {
            TokenType::Access | TokenType::ClientAccess | TokenType::Machine => ACCESS_TOKEN,
            TokenType::Refresh | TokenType::ClientRefresh => REFRESH_TOKEN,
            TokenType::Session => return Self::inactive(),
        };
        if !issued_to(claims, caller) {
            return Self::inactive();
        }
        Self {
            active: true,
            scope: claims.scope.clone(),
            client_id: Some(caller.as_str().to_owned()),
            sub: match claims.user_id {
                Some(user) => Some(user.to_string()),
                None => claims.sub.clone(),
            },
            exp: Some(claims.exp),
            iat: Some(claims.iat),
            token_type: Some(token_type),
            acr: claims.acr.clone(),
        }
    }
}

/// The `scope` introspection reports for an active person token whose
/// claim says `token_scope`, asked by a client that has `enabled` enabled:
/// the profile scopes the client may still be served (those it has
/// enabled, and the required ones; a scope staff took away since is left
/// out), and `openid` whenever the token carries it. `openid` is a
/// protocol scope no client enables: the token still reads
/// `/oauth/userinfo/` with it, so a resource server that asks
/// introspection must hear it (RFC 7662 §2.2: the scopes associated with
/// the token).
pub fn servable_scope(token_scope: &str, enabled: ScopeSet) -> String {
    let granted = ScopeSet::parse_lenient(token_scope);
    granted.intersection(enabled.union(ScopeSet::required())).with_openid(granted.has_openid()).to_scope_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn introspection_keeps_openid_and_drops_only_the_profile_scopes_the_client_lost() {
        let enabled = ScopeSet::parse_strict("dados_publicos cpf email cnes").expect("scopes");
        for (token, want) in [
            ("openid dados_publicos cpf email", "openid dados_publicos cpf email"),
            ("openid", "openid"),
            ("dados_publicos cpf email cnes", "dados_publicos cpf email cnes"),
            // cursos_cdp is no longer enabled for the client.
            ("openid dados_publicos cursos_cdp", "openid dados_publicos"),
            ("dados_publicos cursos_cdp", "dados_publicos"),
            ("", ""),
        ] {
            assert_eq!(servable_scope(token, enabled), want, "{token}");
        }
        assert_eq!(servable_scope("openid cpf", ScopeSet::empty()), "openid cpf", "cpf is required");
    }

    fn client(id: &str) -> ClientId {
        ClientId::parse(id).expect("a client id")
    }

    fn issued(token_type: TokenType, aud: Option<&str>) -> Claims {
        Claims {
            scope: Some("dados_publicos cpf email".into()),
            client_id: aud.map(Into::into),
            aud: aud.map(Into::into),
            ..Claims::new(token_type, 42, 1_419_350_238, 6_000)
        }
    }

    #[test]
    fn the_rfc_7662_inactive_answer_is_active_false_alone() {
        assert_eq!(
            serde_json::to_value(Introspection::inactive()).expect("json"),
            serde_json::json!({"active": false})
        );
    }

    #[test]
    fn an_access_token_of_the_caller_is_described_like_rfc_7662s_example() {
        // RFC 7662 §2.2's example, in what applies: active, client_id,
        // scope, sub, exp, iat (the rest are optional members we omit).
        let answer = Introspection::for_caller(&issued(TokenType::Access, Some("portal")), &client("portal"));
        assert_eq!(
            serde_json::to_value(answer).expect("json"),
            serde_json::json!({"active": true, "scope": "dados_publicos cpf email", "client_id": "portal",
                               "sub": "42", "exp": 1_419_356_238, "iat": 1_419_350_238, "token_type": "access_token"})
        );
    }

    #[test]
    fn a_refresh_token_of_the_caller_says_so() {
        let answer = Introspection::for_caller(&issued(TokenType::Refresh, Some("portal")), &client("portal"));
        assert_eq!((answer.active, answer.token_type), (true, Some(REFRESH_TOKEN)));
    }

    #[test]
    fn another_clients_first_party_and_session_tokens_are_inactive_for_the_caller() {
        for claims in [
            issued(TokenType::Access, Some("other")),
            issued(TokenType::Refresh, Some("other")),
            issued(TokenType::Access, None),
            issued(TokenType::Refresh, None),
            issued(TokenType::Session, None),
            Claims { aud: Some("portal".into()), ..issued(TokenType::Access, Some("other")) },
        ] {
            assert_eq!(Introspection::for_caller(&claims, &client("portal")), Introspection::inactive(), "{claims:?}");
        }
    }

    #[test]
    fn revocation_revokes_the_callers_refresh_family_and_nothing_else() {
        let portal = client("portal");
        let refresh = issued(TokenType::Refresh, Some("portal"));
        assert_eq!(
            revocation_target(&refresh, &portal),
            RevocationTarget::RefreshFamily { jti: &refresh.jti, user_id: 42 }
        );
        assert_eq!(
            revocation_target(&issued(TokenType::Access, Some("portal")), &portal),
            RevocationTarget::AccessToken
        );
        for claims in [
            issued(TokenType::Refresh, Some("other")),
            issued(TokenType::Refresh, None),
            issued(TokenType::Session, None),
        ] {
            assert_eq!(revocation_target(&claims, &portal), RevocationTarget::NotTheCallers, "{claims:?}");
        }
    }

    #[test]
    fn tokens_of_the_client_types_are_described_and_revoked_like_the_old_form() {
        let portal = client("portal");
        let access = issued(TokenType::ClientAccess, Some("portal"));
        let refresh = issued(TokenType::ClientRefresh, Some("portal"));
        assert_eq!(Introspection::for_caller(&access, &portal).token_type, Some(ACCESS_TOKEN));
        assert_eq!(Introspection::for_caller(&refresh, &portal).token_type, Some(REFRESH_TOKEN));
        assert_eq!(revocation_target(&access, &portal), RevocationTarget::AccessToken);
        assert_eq!(
            revocation_target(&refresh, &portal),
            RevocationTarget::RefreshFamily { jti: &refresh.jti, user_id: 42 }
        );
        let others = issued(TokenType::ClientRefresh, Some("other"));
        assert_eq!(Introspection::for_caller(&others, &portal), Introspection::inactive());
        assert_eq!(revocation_target(&others, &portal), RevocationTarget::NotTheCallers);
    }

    #[test]
    fn a_machine_token_introspects_as_its_client_and_is_not_revocable() {
        let portal = client("portal");
        let machine = Claims::machine("portal", "users:read".into(), 1_419_350_238, 300);
        let answer = Introspection::for_caller(&machine, &portal);
        assert_eq!(
            serde_json::to_value(answer).expect("json"),
            serde_json::json!({"active": true, "scope": "users:read", "client_id": "portal", "sub": "portal",
                               "exp": 1_419_350_538, "iat": 1_419_350_238, "token_type": "access_token"})
        );
        assert_eq!(revocation_target(&machine, &portal), RevocationTarget::AccessToken);
        assert_eq!(Introspection::for_caller(&machine, &client("other")), Introspection::inactive());
        assert_eq!(revocation_target(&machine, &client("other")), RevocationTarget::NotTheCallers);
    }
}
