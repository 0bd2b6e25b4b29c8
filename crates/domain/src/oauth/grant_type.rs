//! The token endpoint's grant types and the scopes of a refresh.

use super::*;
use crate::scope::ScopeSet;

/// The grant types of the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrantType {
    /// `authorization_code`.
    AuthorizationCode,
    /// `refresh_token` (RFC 6749 §6).
    RefreshToken,
    /// `client_credentials` (RFC 6749 §4.4): an application's token for
    /// itself, with no person.
    ClientCredentials,
}

impl GrantType {
    /// Reads `grant_type`. Errors: `invalid_request` when absent,
    /// `unsupported_grant_type` for any other value.
    pub fn parse(raw: Option<&str>) -> Result<Self, OAuthError> {
        match present(raw) {
            None => Err(invalid_request("grant_type is required")),
            Some(GRANT_TYPE_AUTHORIZATION_CODE) => Ok(GrantType::AuthorizationCode),
            Some(GRANT_TYPE_REFRESH_TOKEN) => Ok(GrantType::RefreshToken),
            Some(GRANT_TYPE_CLIENT_CREDENTIALS) => Ok(GrantType::ClientCredentials),
            Some(_) => Err(OAuthError::UnsupportedGrantType),
        }
    }
}

/// The scopes of a refresh (RFC 6749 §6), given the scopes of the presented
/// refresh token, the optional scopes the client has enabled now, and the
/// request's optional `scope`. Returns `(refresh, access)`: the new refresh
/// token keeps the old grant less any scope the client lost since; the
/// access token carries that, narrowed to `requested` when given (the
/// required scopes always stay). Errors: `invalid_scope` when `requested`
/// names an unknown scope or one the presented token does not carry (a
/// refresh may narrow, never widen).
pub fn refreshed_scopes(
    granted: ScopeSet,
    enabled: ScopeSet,
    requested: Option<&str>,
) -> Result<(ScopeSet, ScopeSet), OAuthError> {
    let kept = granted.intersection(grantable(enabled)).union(ScopeSet::required());
    let Some(raw) = present(requested) else {
        return Ok((kept, kept));
    };
    let requested = parse_requested_scope(Some(raw))?;
    if !requested.is_subset(granted.union(ScopeSet::required())) {
        return Err(OAuthError::InvalidScope("scope exceeds the scope originally granted".into()));
    }
    Ok((kept, requested.intersection(kept).union(ScopeSet::required())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::test_support::*;
    use crate::scope::Scope;

    #[test]
    fn only_the_code_refresh_and_client_credentials_grant_types_are_supported() {
        assert_eq!(GrantType::parse(Some("authorization_code")), Ok(GrantType::AuthorizationCode));
        assert_eq!(GrantType::parse(Some("refresh_token")), Ok(GrantType::RefreshToken));
        assert_eq!(GrantType::parse(Some("client_credentials")), Ok(GrantType::ClientCredentials));
        assert_eq!(GrantType::parse(None).map_err(|e| e.error_code()), Err("invalid_request"));
        assert_eq!(GrantType::parse(Some("")).map_err(|e| e.error_code()), Err("invalid_request"));
        for other in ["password", "implicit", "AUTHORIZATION_CODE", "refresh", "CLIENT_CREDENTIALS"] {
            assert_eq!(GrantType::parse(Some(other)), Err(OAuthError::UnsupportedGrantType), "{other}");
        }
    }

    #[test]
    fn openid_stays_through_the_exchange_and_the_refresh_without_being_enabled() {
        let cid = id("portal");
        let list = uris(&["https://app.example.gov.br/callback"]);
        let mut client = policy(&cid, &list, true);
        client.enabled_scopes = ScopeSet::empty();
        let mut g = grant(&cid, None);
        g.scopes = g.scopes.with_openid(true);
        let scopes = check_code_exchange(&g, &client, Some("https://app.example.gov.br/callback"), None).expect("ok");
        assert_eq!(scopes.to_scope_string(), "openid dados_publicos cpf email");
        let (refresh, access) = refreshed_scopes(scopes, ScopeSet::empty(), None).expect("kept");
        assert!(refresh.has_openid() && access.has_openid());
        let (refresh, access) = refreshed_scopes(scopes, ScopeSet::empty(), Some("cpf")).expect("narrowed");
        assert!(refresh.has_openid() && !access.has_openid(), "a narrowed access token may leave openid out");
        let (_, access) = refreshed_scopes(scopes, ScopeSet::empty(), Some("openid profile")).expect("narrowed");
        assert_eq!(access.to_scope_string(), "openid dados_publicos cpf email");
    }

    #[test]
    fn a_refresh_keeps_the_grant_less_the_scopes_the_client_lost() {
        let granted = ScopeSet::parse_strict("dados_publicos cpf email cnes cursos_cdp").expect("known");
        let enabled = ScopeSet::parse_strict("cnes receita_federal").expect("known");
        let (refresh, access) = refreshed_scopes(granted, enabled, None).expect("no narrowing");
        assert_eq!(refresh.to_scope_string(), "dados_publicos cpf email cnes");
        assert_eq!(access, refresh);
        assert!(!refresh.contains(Scope::ReceitaFederal), "enabling a scope later does not add it to a grant");
        let (refresh, _) = refreshed_scopes(ScopeSet::empty(), ScopeSet::empty(), Some("")).expect("empty");
        assert_eq!(refresh, ScopeSet::required(), "the required scopes always stay");
    }

    #[test]
    fn a_refresh_may_narrow_the_access_token_but_never_widen_it() {
        let granted = ScopeSet::parse_strict("dados_publicos cpf email cnes cursos_cdp").expect("known");
        let (refresh, access) = refreshed_scopes(granted, ScopeSet::all(), Some("cnes")).expect("narrower");
        assert_eq!(refresh, granted, "the new refresh token keeps the whole grant (RFC 6749 §6)");
        assert_eq!(access.to_scope_string(), "dados_publicos cpf email cnes");
        let wider = refreshed_scopes(granted, ScopeSet::all(), Some("cnes receita_federal"));
        assert_eq!(wider.map_err(|e| e.error_code()), Err("invalid_scope"));
        let not_granted = refreshed_scopes(granted, ScopeSet::all(), Some("openid"));
        assert_eq!(not_granted.map_err(|e| e.error_code()), Err("invalid_scope"), "openid was not granted");
        let unknown = refreshed_scopes(granted, ScopeSet::all(), Some("phone"));
        assert_eq!(unknown.map_err(|e| e.error_code()), Err("invalid_scope"));
        let (_, access) = refreshed_scopes(granted, ScopeSet::empty(), Some("cnes cpf")).expect("lost scope");
        assert_eq!(access, ScopeSet::required(), "a scope the client lost is dropped, not an error");
    }
}
