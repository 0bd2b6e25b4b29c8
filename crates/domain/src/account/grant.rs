//! Remembered consent: what a stored grant covers and how approving more
//! widens it. The required scopes (`dados_publicos`, `cpf`, `email`) always
//! count as granted.

use crate::scope::ScopeSet;

/// The scopes a stored grant gives: what was approved plus the required
/// scopes.
pub fn effective_scopes(granted: ScopeSet) -> ScopeSet {
    granted.union(ScopeSet::required())
}

/// Whether a stored grant of `granted` covers an authorization asking for
/// `requested`, so that the consent page can be skipped: every requested
/// profile scope is granted or required. `openid` needs no consent of its
/// own: it reveals no data beyond the required scopes (an ID token names
/// the account by its id), so any stored grant covers it.
pub fn covers(granted: ScopeSet, requested: ScopeSet) -> bool {
    requested.profile_scopes().is_subset(effective_scopes(granted))
}

/// The grant after the person approved `approved`: the union, never
/// narrower than before.
pub fn widen(granted: ScopeSet, approved: ScopeSet) -> ScopeSet {
    granted.union(approved)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(text: &str) -> ScopeSet {
        ScopeSet::parse_strict(text).expect("known scopes")
    }

    #[test]
    fn a_grant_covers_subsets_of_itself_plus_the_required_scopes() {
        let cases = [
            ("", "", true),
            ("", "dados_publicos cpf email", true),
            ("receita_federal", "cpf receita_federal", true),
            ("receita_federal cnes", "cnes", true),
            ("receita_federal", "receita_federal cnes", false),
            ("", "formacao_academica", false),
            ("cpf email", "experiencia_profissional", false),
            ("", "openid dados_publicos email", true),
            ("cnes", "openid cnes", true),
            ("", "openid cnes", false),
            (
                "dados_publicos cpf email receita_federal cnes experiencia_profissional formacao_academica cursos_cdp",
                "cursos_cdp cnes",
                true,
            ),
        ];
        for (granted, requested, want) in cases {
            assert_eq!(covers(set(granted), set(requested)), want, "{granted:?} covers {requested:?}");
        }
    }

    #[test]
    fn widening_is_the_union_and_never_narrows() {
        let cases = [
            ("receita_federal", "cnes", "receita_federal cnes"),
            ("receita_federal cnes", "cnes", "receita_federal cnes"),
            ("receita_federal cnes", "", "receita_federal cnes"),
            ("", "cpf", "cpf"),
        ];
        for (granted, approved, want) in cases {
            let widened = widen(set(granted), set(approved));
            assert_eq!(widened, set(want), "{granted:?} + {approved:?}");
            assert!(covers(widened, set(granted)) && covers(widened, set(approved)));
        }
    }

    #[test]
    fn the_effective_scopes_always_hold_the_required_ones() {
        assert_eq!(effective_scopes(ScopeSet::empty()), ScopeSet::required());
        assert_eq!(effective_scopes(set("cnes")).to_scope_string(), "dados_publicos cpf email cnes");
    }
}
