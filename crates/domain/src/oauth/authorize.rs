//! The authorization request (RFC 6749 §4.1.1, OpenID Connect Core
//! §3.1.2.1) and its validation.

use super::*;
use crate::scope::ScopeSet;
use crate::user::UserId;

/// The parameters of an authorization request as received (query or form).
/// Empty values count as absent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthorizationParams {
    /// `response_type` (must be `code`).
    pub response_type: Option<String>,
    /// `client_id`.
    pub client_id: Option<String>,
    /// `redirect_uri` (optional when the client has exactly one).
    pub redirect_uri: Option<String>,
    /// `scope`, space-separated.
    pub scope: Option<String>,
    /// `state`, passed back unchanged.
    pub state: Option<String>,
    /// `code_challenge` (PKCE).
    pub code_challenge: Option<String>,
    /// `code_challenge_method` (must be `S256`).
    pub code_challenge_method: Option<String>,
    /// `prompt` (OpenID Connect), space-separated: `none`, `login`,
    /// `consent`, `select_account` (see [`Prompt`]).
    pub prompt: Option<String>,
    /// `nonce` (OpenID Connect), echoed in the ID token.
    pub nonce: Option<String>,
    /// `max_age` (OpenID Connect): seconds since the login beyond which the
    /// person logs in again.
    pub max_age: Option<String>,
    /// `response_mode`: how the response travels (see [`ResponseMode`]).
    pub response_mode: Option<String>,
    /// `request` (OpenID Connect): a request object; refused.
    pub request: Option<String>,
    /// `request_uri` (OpenID Connect): a request object by reference;
    /// refused.
    pub request_uri: Option<String>,
    /// `registration` (OpenID Connect): the client's own metadata; refused.
    pub registration: Option<String>,
    /// `acr_values` (OpenID Connect), space-separated: naming
    /// [`crate::session::ACR_TWO_FACTORS`] asks the second factor before
    /// the code (see [`wants_two_factors`]).
    pub acr_values: Option<String>,
}

/// Whether `acr_values` asks for the second factor: it names
/// [`crate::session::ACR_TWO_FACTORS`] (the service treats the value as
/// required, not as a preference: a person who has no second factor is taken
/// to enrol one).
pub fn wants_two_factors(acr_values: Option<&str>) -> bool {
    acr_values.is_some_and(|v| v.split_ascii_whitespace().any(|a| a == crate::session::ACR_TWO_FACTORS))
}

/// Why an authorization request is refused, and where the answer goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthorizationRefusal {
    /// The client is missing or unknown, or the redirect URI is missing,
    /// unregistered or ambiguous: tell the user on our own page and never
    /// redirect (RFC 6749 §4.1.2.1), so that we cannot be used as an open
    /// redirector.
    ShowToUser(OAuthError),
    /// Any other problem: send the error to the client's (verified)
    /// redirect URI with the request's `state`, in the requested response
    /// mode (the default one when the mode itself was refused).
    Redirect {
        /// The verified redirect URI.
        redirect_uri: String,
        /// How the error travels.
        response_mode: ResponseMode,
        /// The request's `state`, if any.
        state: Option<String>,
        /// The error to report.
        error: OAuthError,
    },
}

/// An authorization request that passed every check; what the consent page
/// shows and what the code will be bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidAuthorization {
    /// The requesting client.
    pub client_id: ClientId,
    /// Where the answer goes (a registered URI, exactly).
    pub redirect_uri: String,
    /// Whether the request named `redirect_uri` (then the token request
    /// must repeat it, RFC 6749 §4.1.3).
    pub redirect_uri_explicit: bool,
    /// The scopes the grant will carry (see [`granted_scopes`]).
    pub scopes: ScopeSet,
    /// The request's `state`, passed back unchanged.
    pub state: Option<String>,
    /// The PKCE challenge, if the client sent one.
    pub code_challenge: Option<CodeChallenge>,
    /// What the request lets the authorization endpoint show.
    pub prompt: Prompt,
    /// The `nonce` to echo in the ID token (OpenID Connect).
    pub nonce: Option<String>,
    /// The request's `max_age`, in seconds (see [`oidc::login_is_recent`]).
    pub max_age: Option<i64>,
    /// How the response travels to the redirect URI.
    pub response_mode: ResponseMode,
}

/// Validates an authorization request against the client it names.
/// `client` is the stored client looked up by `params.client_id` (`None`
/// when there is none). The order follows RFC 6749 §4.1.2.1: the client and
/// redirect URI are checked first and their errors are shown to the user;
/// every later error is redirected with `state`. The `response_mode` comes
/// next (every later error travels in it; its own error in the default
/// mode), then the OpenID Connect parameters that are never supported
/// (`request`, `request_uri`, `registration`), then the rest.
pub fn validate_authorization_request(
    params: &AuthorizationParams,
    client: Option<ClientPolicy<'_>>,
) -> Result<ValidAuthorization, AuthorizationRefusal> {
    use AuthorizationRefusal::ShowToUser;

    let Some(requested_id) = present(params.client_id.as_deref()) else {
        return Err(ShowToUser(invalid_request("client_id is required")));
    };
    let client = match client {
        Some(c) if c.client_id.as_str() == requested_id => c,
        _ => return Err(ShowToUser(OAuthError::InvalidClient("unknown client_id"))),
    };
    let redirect_requested = present(params.redirect_uri.as_deref());
    let redirect_uri = resolve_redirect_uri(redirect_requested, client.redirect_uris).map_err(ShowToUser)?;

    let state = params.state.clone().filter(|s| !s.is_empty());
    let refuse_in = |response_mode: ResponseMode, error: OAuthError| AuthorizationRefusal::Redirect {
        redirect_uri: redirect_uri.clone(),
        response_mode,
        state: state.clone(),
        error,
    };
    let response_mode =
        ResponseMode::parse(params.response_mode.as_deref()).map_err(|e| refuse_in(ResponseMode::default(), e))?;
    let refuse = |error: OAuthError| refuse_in(response_mode, error);
    oidc::refuse_unsupported_parameters(params).map_err(refuse)?;

    match present(params.response_type.as_deref()) {
        None => return Err(refuse(invalid_request("response_type is required"))),
        Some(RESPONSE_TYPE_CODE) => {}
        Some(_) => return Err(refuse(OAuthError::UnsupportedResponseType)),
    }
    let prompt = Prompt::parse(params.prompt.as_deref()).map_err(refuse)?;
    let nonce = oidc::parse_nonce(params.nonce.as_deref()).map_err(refuse)?;
    let max_age = oidc::parse_max_age(params.max_age.as_deref()).map_err(refuse)?;
    let requested = parse_requested_scope(params.scope.as_deref()).map_err(refuse)?;
    let challenge = present(params.code_challenge.as_deref());
    let method = present(params.code_challenge_method.as_deref());
    let code_challenge = match (challenge, method) {
        (Some(challenge), method) => Some(CodeChallenge::from_request(challenge, method).map_err(refuse)?),
        (None, Some(_)) => {
            return Err(refuse(invalid_request("code_challenge_method was sent without code_challenge")))
        }
        (None, None) if client.pkce_required() => {
            return Err(refuse(invalid_request("code_challenge is required for this client (PKCE with S256)")))
        }
        (None, None) => None,
    };
    Ok(ValidAuthorization {
        client_id: client.client_id.clone(),
        redirect_uri,
        redirect_uri_explicit: redirect_requested.is_some(),
        scopes: granted_scopes(requested, client.enabled_scopes),
        state,
        code_challenge,
        prompt,
        nonce,
        max_age,
        response_mode,
    })
}

impl ValidAuthorization {
    /// The grant a code issued at `now` for `user_id`, who logged in at
    /// `auth_time`, carries; it expires [`CODE_LIFETIME_SECS`] later.
    pub fn into_grant(self, user_id: UserId, auth_time: i64, now: i64) -> CodeGrant {
        CodeGrant {
            client_id: self.client_id,
            user_id,
            redirect_uri: self.redirect_uri,
            redirect_uri_explicit: self.redirect_uri_explicit,
            scopes: self.scopes,
            code_challenge: self.code_challenge,
            expires_at: code_expires_at(now),
            nonce: self.nonce,
            auth_time: Some(auth_time),
            acr: None,
            amr: None,
            sid: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::test_support::*;

    #[test]
    fn a_valid_request_yields_the_granted_scopes_and_keeps_state() {
        let cid = id("portal");
        let list = uris(&["https://app.example.gov.br/callback"]);
        let ok = validate_authorization_request(&with_pkce(params("portal")), Some(policy(&cid, &list, true)))
            .expect("valid");
        assert_eq!(ok.client_id, cid);
        assert_eq!(ok.redirect_uri, "https://app.example.gov.br/callback");
        assert!(ok.redirect_uri_explicit);
        assert_eq!(ok.scopes.to_scope_string(), "dados_publicos cpf email cnes", "cursos_cdp is not enabled");
        assert_eq!(ok.state.as_deref(), Some("xyz"));
        assert_eq!(ok.code_challenge.as_ref().map(CodeChallenge::as_str), Some(RFC_CHALLENGE));

        assert_eq!((ok.nonce.clone(), ok.max_age), (None, None));
        let g = ok.into_grant(UserId(3), 900, 1_000);
        assert_eq!((g.user_id, g.expires_at, g.auth_time, g.nonce), (UserId(3), 1_060, Some(900), None));
    }

    #[test]
    fn an_openid_connect_request_carries_its_nonce_and_max_age_into_the_code() {
        let cid = id("portal");
        let list = uris(&["https://app.example.gov.br/callback"]);
        let mut p = params("portal");
        p.scope = Some("openid profile cnes".into());
        p.nonce = Some("n-0S6_WzA2Mj".into());
        p.max_age = Some("600".into());
        let ok = validate_authorization_request(&p, Some(policy(&cid, &list, true))).expect("valid");
        assert_eq!(ok.scopes.to_scope_string(), "openid dados_publicos cpf email cnes");
        assert_eq!((ok.nonce.as_deref(), ok.max_age), (Some("n-0S6_WzA2Mj"), Some(600)));
        let g = ok.into_grant(UserId(3), 900, 1_000);
        assert_eq!((g.nonce.as_deref(), g.auth_time), (Some("n-0S6_WzA2Mj"), Some(900)));
        assert!(g.scopes.has_openid());
    }

    #[test]
    fn unknown_client_or_bad_redirect_uri_is_shown_never_redirected() {
        let cid = id("portal");
        let list = uris(&["https://app.example.gov.br/callback"]);
        let client = Some(policy(&cid, &list, true));

        let mut p = params("portal");
        p.client_id = None;
        assert_eq!(shown_error(validate_authorization_request(&p, client)).error_code(), "invalid_request");
        assert_eq!(
            shown_error(validate_authorization_request(&params("other"), client)).error_code(),
            "invalid_client"
        );
        assert_eq!(shown_error(validate_authorization_request(&params("portal"), None)).error_code(), "invalid_client");

        for bad in [
            "https://evil.example/callback",
            "https://app.example.gov.br/callback/x",
            "https://app.example.gov.br/callback#x",
        ] {
            let mut p = params("portal");
            p.redirect_uri = Some(bad.into());
            p.response_type = Some("token".into());
            assert_eq!(
                shown_error(validate_authorization_request(&p, client)).error_code(),
                "invalid_request",
                "{bad}"
            );
        }
    }

    /// Spoils one parameter of a valid request.
    type Spoil = fn(&mut AuthorizationParams);

    #[test]
    fn later_errors_are_redirected_with_state() {
        let cid = id("portal");
        let list = uris(&["https://app.example.gov.br/callback"]);
        let client = Some(policy(&cid, &list, true));
        let cases: [(Spoil, &str); 15] = [
            (|p| p.response_type = None, "invalid_request"),
            (|p| p.response_mode = Some("form_post.jwt".into()), "invalid_request"),
            (|p| p.request = Some("eyJhbGciOiJub25lIn0.e30.".into()), "request_not_supported"),
            (|p| p.request_uri = Some("https://app.example.gov.br/req/1".into()), "request_uri_not_supported"),
            (|p| p.registration = Some("{}".into()), "registration_not_supported"),
            (|p| p.prompt = Some("always".into()), "invalid_request"),
            (|p| p.prompt = Some("none consent".into()), "invalid_request"),
            (|p| p.response_type = Some("token".into()), "unsupported_response_type"),
            (|p| p.scope = Some("cpf phone".into()), "invalid_scope"),
            (|p| p.code_challenge_method = Some("plain".into()), "invalid_request"),
            (|p| p.code_challenge_method = None, "invalid_request"),
            (|p| p.code_challenge = None, "invalid_request"),
            (|p| p.nonce = Some("n".repeat(oidc::MAX_NONCE_LEN + 1)), "invalid_request"),
            (|p| p.nonce = Some("line\nbreak".into()), "invalid_request"),
            (|p| p.max_age = Some("-1".into()), "invalid_request"),
        ];
        for (spoil, code) in cases {
            let mut p = with_pkce(params("portal"));
            spoil(&mut p);
            let (uri, state, error) = redirected_error(validate_authorization_request(&p, client));
            assert_eq!(uri, "https://app.example.gov.br/callback");
            assert_eq!(state.as_deref(), Some("xyz"));
            assert_eq!(error.error_code(), code, "{p:?}");
        }
    }

    #[test]
    fn the_response_mode_is_kept_and_later_errors_travel_in_it() {
        let cid = id("portal");
        let list = uris(&["https://app.example.gov.br/callback"]);
        let client = Some(policy(&cid, &list, true));
        let mode_of = |p: &AuthorizationParams| match validate_authorization_request(p, client) {
            Ok(valid) => Ok(valid.response_mode),
            Err(AuthorizationRefusal::Redirect { response_mode, error, .. }) => {
                Err((response_mode, error.error_code()))
            }
            Err(other) => panic!("expected a redirect, got {other:?}"),
        };
        let mut p = params("portal");
        assert_eq!(mode_of(&p), Ok(ResponseMode::Query), "query by default");
        for (raw, mode) in [
            ("query", ResponseMode::Query),
            ("fragment", ResponseMode::Fragment),
            ("form_post", ResponseMode::FormPost),
        ] {
            p.response_mode = Some(raw.into());
            assert_eq!(mode_of(&p), Ok(mode), "{raw}");
        }
        // Every error after the mode travels in it, request objects first of all.
        p.response_mode = Some("form_post".into());
        p.request_uri = Some("urn:example:req".into());
        p.response_type = Some("token".into());
        assert_eq!(mode_of(&p), Err((ResponseMode::FormPost, "request_uri_not_supported")));
        p.request_uri = None;
        assert_eq!(mode_of(&p), Err((ResponseMode::FormPost, "unsupported_response_type")));
        // A mode we cannot honour is refused in the default mode, before
        // anything else is looked at.
        p.response_mode = Some("web_message".into());
        p.request = Some("x".into());
        assert_eq!(mode_of(&p), Err((ResponseMode::Query, "invalid_request")));
    }

    #[test]
    fn request_objects_with_an_unknown_client_or_redirect_uri_are_shown_never_redirected() {
        let cid = id("portal");
        let list = uris(&["https://app.example.gov.br/callback"]);
        let mut p = params("portal");
        p.request = Some("eyJhbGciOiJub25lIn0.e30.".into());
        p.response_mode = Some("form_post".into());
        assert_eq!(shown_error(validate_authorization_request(&p, None)).error_code(), "invalid_client");
        p.redirect_uri = Some("https://evil.example/callback".into());
        let client = Some(policy(&cid, &list, true));
        assert_eq!(shown_error(validate_authorization_request(&p, client)).error_code(), "invalid_request");
    }

    #[test]
    fn public_clients_and_require_pkce_clients_must_send_a_challenge() {
        let cid = id("spa");
        let list = uris(&["https://app.example.gov.br/callback"]);
        let public = policy(&cid, &list, false);
        let (_, _, e) = redirected_error(validate_authorization_request(&params("spa"), Some(public)));
        assert_eq!(e.error_code(), "invalid_request");
        assert!(validate_authorization_request(&with_pkce(params("spa")), Some(public)).is_ok());

        let confidential = policy(&cid, &list, true);
        let ok = validate_authorization_request(&params("spa"), Some(confidential)).expect("PKCE optional");
        assert_eq!(ok.code_challenge, None);
        let strict = ClientPolicy { require_pkce: true, ..confidential };
        assert!(validate_authorization_request(&params("spa"), Some(strict)).is_err());
        assert!(validate_authorization_request(&with_pkce(params("spa")), Some(strict)).is_ok());
    }

    #[test]
    fn a_sole_registered_redirect_uri_is_used_when_none_is_named() {
        let cid = id("portal");
        let list = uris(&["https://app.example.gov.br/callback"]);
        let mut p = params("portal");
        p.redirect_uri = None;
        p.state = Some(String::new());
        let ok = validate_authorization_request(&p, Some(policy(&cid, &list, true))).expect("valid");
        assert_eq!(ok.redirect_uri, "https://app.example.gov.br/callback");
        assert!(!ok.redirect_uri_explicit);
        assert_eq!(ok.state, None, "an empty state counts as absent");
    }
}
