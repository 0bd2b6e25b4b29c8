//! What the OAuth2 rules' tests share: clients, redirect URIs, requests
//! and codes of the examples.

use super::*;
use crate::scope::ScopeSet;
use crate::user::UserId;

/// RFC 7636 Appendix B.
pub(crate) const RFC_VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

pub(crate) const RFC_CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

pub(crate) fn id(raw: &str) -> ClientId {
    ClientId::parse(raw).expect("valid client id")
}

pub(crate) fn uris(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

pub(crate) fn policy<'a>(client_id: &'a ClientId, redirect_uris: &'a [String], confidential: bool) -> ClientPolicy<'a> {
    ClientPolicy {
        client_id,
        redirect_uris,
        confidential,
        require_pkce: false,
        enabled_scopes: ScopeSet::parse_strict("receita_federal cnes").expect("known"),
    }
}

pub(crate) fn params(client_id: &str) -> AuthorizationParams {
    AuthorizationParams {
        response_type: Some("code".into()),
        client_id: Some(client_id.into()),
        redirect_uri: Some("https://app.example.gov.br/callback".into()),
        scope: Some("cnes cursos_cdp".into()),
        state: Some("xyz".into()),
        code_challenge: None,
        code_challenge_method: None,
        prompt: None,
        nonce: None,
        max_age: None,
        ..AuthorizationParams::default()
    }
}

pub(crate) fn with_pkce(mut p: AuthorizationParams) -> AuthorizationParams {
    p.code_challenge = Some(RFC_CHALLENGE.into());
    p.code_challenge_method = Some("S256".into());
    p
}

pub(crate) fn redirected_error(
    r: Result<ValidAuthorization, AuthorizationRefusal>,
) -> (String, Option<String>, OAuthError) {
    match r {
        Err(AuthorizationRefusal::Redirect { redirect_uri, state, error, .. }) => (redirect_uri, state, error),
        other => panic!("expected a redirected error, got {other:?}"),
    }
}

pub(crate) fn shown_error(r: Result<ValidAuthorization, AuthorizationRefusal>) -> OAuthError {
    match r {
        Err(AuthorizationRefusal::ShowToUser(e)) => e,
        other => panic!("expected an error shown to the user, got {other:?}"),
    }
}

pub(crate) fn grant(client_id: &ClientId, challenge: Option<CodeChallenge>) -> CodeGrant {
    CodeGrant {
        client_id: client_id.clone(),
        user_id: UserId(7),
        redirect_uri: "https://app.example.gov.br/callback".into(),
        redirect_uri_explicit: true,
        scopes: ScopeSet::parse_strict("dados_publicos cpf email cnes").expect("known"),
        code_challenge: challenge,
        expires_at: 1_000_060,
        nonce: None,
        auth_time: None,
        acr: None,
        amr: None,
        sid: None,
    }
}
