//! RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0 §2, §3):
//! which client a logout request speaks for, and where the browser goes
//! afterwards. A `post_logout_redirect_uri` is followed only when it is
//! exactly one of that client's registered post-logout URIs; otherwise the
//! provider shows its own page (never an open redirector).

use url::Url;

use super::id_token::LogoutHint;
use super::{invalid_request, redirect_uri_is_registered, ClientId, OAuthError};

/// The parameters of a logout request as received (query or form). Empty
/// values count as absent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogoutParams {
    /// `id_token_hint`: an ID token we issued (expired is fine).
    pub id_token_hint: Option<String>,
    /// `post_logout_redirect_uri`.
    pub post_logout_redirect_uri: Option<String>,
    /// `state`, passed back unchanged.
    pub state: Option<String>,
    /// `client_id`.
    pub client_id: Option<String>,
}

/// The client a logout request speaks for: the hint's audience, or the
/// `client_id` parameter; `None` when neither names one (or the parameter
/// is not a client id). Errors: `invalid_request` when both are given and
/// disagree (RP-Initiated Logout 1.0 §2).
pub fn logout_client(hint: Option<&LogoutHint>, client_id: Option<&str>) -> Result<Option<ClientId>, OAuthError> {
    let named = client_id.filter(|c| !c.is_empty());
    match (hint, named) {
        (Some(hint), Some(named)) if hint.client_id.as_str() != named => {
            Err(invalid_request("client_id does not match the client of id_token_hint"))
        }
        (Some(hint), _) => Ok(Some(hint.client_id.clone())),
        (None, Some(named)) => Ok(ClientId::parse(named).ok()),
        (None, None) => Ok(None),
    }
}

/// Where the browser goes after the logout: `requested` with `state`
/// appended to its query, when `requested` is one of the client's
/// `registered` post-logout URIs exactly; `None` (our own page) otherwise,
/// also when nothing was requested.
pub fn post_logout_location(requested: Option<&str>, registered: &[String], state: Option<&str>) -> Option<String> {
    let uri = requested.filter(|u| !u.is_empty() && redirect_uri_is_registered(u, registered))?;
    let mut url = Url::parse(uri).ok()?;
    if let Some(state) = state.filter(|s| !s.is_empty()) {
        url.query_pairs_mut().append_pair("state", state);
    }
    Some(url.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::user::UserId;

    fn hint(client: &str) -> LogoutHint {
        LogoutHint { client_id: ClientId::parse(client).expect("id"), user: UserId(42) }
    }

    #[test]
    fn the_client_is_the_hint_s_or_the_named_one_and_they_must_agree() {
        let portal = Some(ClientId::parse("portal").expect("id"));
        assert_eq!(logout_client(Some(&hint("portal")), None), Ok(portal.clone()));
        assert_eq!(logout_client(Some(&hint("portal")), Some("portal")), Ok(portal.clone()));
        assert_eq!(logout_client(None, Some("portal")), Ok(portal));
        assert_eq!(logout_client(None, Some("")), Ok(None));
        assert_eq!(logout_client(None, Some("not a client!")), Ok(None));
        assert_eq!(logout_client(None, None), Ok(None));
        let e = logout_client(Some(&hint("portal")), Some("spa")).expect_err("disagree");
        assert_eq!(e.error_code(), "invalid_request");
    }

    #[test]
    fn only_a_registered_uri_is_followed_and_state_is_echoed() {
        let registered = vec!["https://app.example.gov.br/saiu?x=1".to_owned()];
        assert_eq!(
            post_logout_location(Some("https://app.example.gov.br/saiu?x=1"), &registered, Some("s 1&2")).as_deref(),
            Some("https://app.example.gov.br/saiu?x=1&state=s+1%262")
        );
        assert_eq!(
            post_logout_location(Some("https://app.example.gov.br/saiu?x=1"), &registered, None).as_deref(),
            Some("https://app.example.gov.br/saiu?x=1")
        );
        for unregistered in [
            "https://app.example.gov.br/saiu",
            "https://app.example.gov.br/saiu?x=1&y=2",
            "https://evil.example/saiu?x=1",
            "HTTPS://app.example.gov.br/saiu?x=1",
            "",
        ] {
            assert_eq!(post_logout_location(Some(unregistered), &registered, Some("s")), None, "{unregistered}");
        }
        assert_eq!(post_logout_location(None, &registered, Some("s")), None);
        assert_eq!(post_logout_location(Some("https://app.example.gov.br/saiu?x=1"), &[], None), None);
    }
}
