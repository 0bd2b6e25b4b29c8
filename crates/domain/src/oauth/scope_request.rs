//! The scope of an authorization request and the scopes granted.

use super::*;
use crate::scope::ScopeSet;

/// Parses the `scope` of an authorization (or refresh) request strictly:
/// the catalogue's names, `openid`, and OpenID Connect's `profile` (read as
/// `dados_publicos`, see [`oidc::requested_scope_name`]); any other name is
/// `invalid_scope` naming it. An absent or empty scope is the empty set
/// (the grant then holds the required scopes only).
pub fn parse_requested_scope(raw: Option<&str>) -> Result<ScopeSet, OAuthError> {
    raw.unwrap_or("").split_ascii_whitespace().try_fold(ScopeSet::empty(), |set, name| {
        let scopes = oidc::requested_scope_name(name).ok_or_else(|| {
            let shown: String = name.chars().take(64).collect();
            OAuthError::InvalidScope(format!("unknown scope: {shown}"))
        })?;
        Ok(set.union(scopes))
    })
}

/// What a client may be granted: the optional scopes enabled for it, the
/// required ones, and `openid` (any client may ask for an ID token).
pub(super) fn grantable(enabled: ScopeSet) -> ScopeSet {
    enabled.union(ScopeSet::required()).union(ScopeSet::openid())
}

/// The granted-scope rule: what was requested and is enabled for the
/// client (and `openid`, when requested), plus the required scopes
/// (`dados_publicos`, `cpf`, `email`), which every grant carries. A
/// requested scope the client may not have is dropped silently (RFC 6749
/// §3.3 lets the server grant less).
pub fn granted_scopes(requested: ScopeSet, enabled: ScopeSet) -> ScopeSet {
    requested.intersection(grantable(enabled)).union(ScopeSet::required())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scope::Scope;
    use proptest::prelude::*;

    #[test]
    fn unknown_requested_scopes_are_invalid_scope_naming_the_scope() {
        let e = parse_requested_scope(Some("cpf address")).expect_err("unknown");
        assert_eq!(e.error_code(), "invalid_scope");
        assert!(e.to_string().contains("address"), "{e}");
        assert_eq!(parse_requested_scope(None), Ok(ScopeSet::empty()));
        assert_eq!(parse_requested_scope(Some("")), Ok(ScopeSet::empty()));
    }

    #[test]
    fn a_standard_openid_connect_request_is_understood() {
        let asked = parse_requested_scope(Some("openid profile email")).expect("standard scopes");
        assert!(asked.has_openid());
        assert_eq!(asked.to_scope_string(), "openid dados_publicos email", "profile is dados_publicos");
        let granted = granted_scopes(asked, ScopeSet::empty());
        assert_eq!(granted.to_scope_string(), "openid dados_publicos cpf email", "openid needs no enabling");
        assert!(!granted_scopes(ScopeSet::required(), ScopeSet::all()).has_openid(), "only when asked for");
    }

    #[test]
    fn granted_is_requested_and_enabled_plus_the_required_scopes() {
        let requested = ScopeSet::parse_strict("cnes cursos_cdp").expect("known");
        let enabled = ScopeSet::parse_strict("receita_federal cnes").expect("known");
        assert_eq!(granted_scopes(requested, enabled).to_scope_string(), "dados_publicos cpf email cnes");
        assert_eq!(granted_scopes(ScopeSet::empty(), ScopeSet::all()), ScopeSet::required());
        assert_eq!(granted_scopes(ScopeSet::all(), ScopeSet::empty()), ScopeSet::required());
    }

    proptest! {
        #[test]
        fn granted_scopes_hold_the_required_and_never_more_than_requested_and_enabled(
            requested in 0u8..=255, enabled in 0u8..=255,
        ) {
            let pick = |bits: u8| Scope::ALL.into_iter().enumerate().filter(|(i, _)| bits & (1 << i) != 0).map(|(_, s)| s).collect::<ScopeSet>();
            let (requested, enabled) = (pick(requested), pick(enabled));
            let granted = granted_scopes(requested, enabled);
            prop_assert!(ScopeSet::required().is_subset(granted));
            prop_assert!(granted.is_subset(requested.union(ScopeSet::required())));
            prop_assert!(granted.is_subset(enabled.union(ScopeSet::required())));
        }
    }
}
