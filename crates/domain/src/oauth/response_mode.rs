//! How an authorization response reaches the client: the `response_mode`
//! parameter (OAuth 2.0 Multiple Response Type Encoding Practices §2.1,
//! OAuth 2.0 Form Post Response Mode) and the response itself, a code or
//! an error with the request's `state`, bound for the client's verified
//! redirect URI.
//!
//! - `query` (the default of the `code` response type): the parameters
//!   are appended to the redirect URI's query, keeping the query it
//!   already has (RFC 6749 §4.1.2).
//! - `fragment`: the parameters are the redirect URI's fragment (a
//!   registered redirect URI never has one).
//! - `form_post`: the parameters are posted to the redirect URI by an HTML
//!   form the browser submits (the HTTP layer renders the page).
//!
//! Any other mode is refused with `invalid_request`, sent in the default
//! mode, since the one requested cannot be honoured.

use std::fmt;

use url::Url;

use super::{invalid_request, OAuthError};

/// The `response_mode` values served, as the discovery document lists them.
pub const RESPONSE_MODES_SUPPORTED: [&str; 3] = ["query", "fragment", "form_post"];

/// Longest `response_mode` echoed back in an error description.
const MAX_ECHOED_MODE_LEN: usize = 40;

/// Where the parameters of an authorization response travel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ResponseMode {
    /// In the redirect URI's query (the default for `response_type=code`).
    #[default]
    Query,
    /// In the redirect URI's fragment.
    Fragment,
    /// In the body of a form the browser posts to the redirect URI.
    FormPost,
}

impl ResponseMode {
    /// Reads the `response_mode` of an authorization request: absent or
    /// empty is [`ResponseMode::Query`]; the names are case-sensitive.
    /// Errors: `invalid_request` for any other value (JARM's `*.jwt` modes
    /// included).
    pub fn parse(raw: Option<&str>) -> Result<Self, OAuthError> {
        match raw.filter(|m| !m.is_empty()) {
            None | Some("query") => Ok(ResponseMode::Query),
            Some("fragment") => Ok(ResponseMode::Fragment),
            Some("form_post") => Ok(ResponseMode::FormPost),
            Some(other) => {
                let shown: String = other.chars().take(MAX_ECHOED_MODE_LEN).collect();
                Err(invalid_request(format!(
                    "unsupported response_mode \"{shown}\"; supported: {}",
                    RESPONSE_MODES_SUPPORTED.join(", ")
                )))
            }
        }
    }

    /// The mode's name, as `response_mode` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ResponseMode::Query => "query",
            ResponseMode::Fragment => "fragment",
            ResponseMode::FormPost => "form_post",
        }
    }
}

/// An authorization response bound for a client's verified redirect URI:
/// the parameters (`code` and `state`, or `error`, `error_description` and
/// `state`) and the mode that carries them.
#[derive(Clone, PartialEq, Eq)]
pub struct AuthorizationResponse {
    redirect_uri: String,
    mode: ResponseMode,
    params: Vec<(&'static str, String)>,
}

/// Shows the parameter names only: a response may carry a code.
impl fmt::Debug for AuthorizationResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthorizationResponse")
            .field("redirect_uri", &self.redirect_uri)
            .field("mode", &self.mode)
            .field("params", &self.params.iter().map(|(k, _)| *k).collect::<Vec<_>>())
            .finish()
    }
}

impl AuthorizationResponse {
    /// A successful response (RFC 6749 §4.1.2): `code`, then `state` if the
    /// request had one.
    pub fn code(redirect_uri: &str, mode: ResponseMode, code: &str, state: Option<&str>) -> Self {
        let mut params = vec![("code", code.to_owned())];
        params.extend(state.map(|s| ("state", s.to_owned())));
        Self { redirect_uri: redirect_uri.to_owned(), mode, params }
    }

    /// An error response (RFC 6749 §4.1.2.1): `error`, `error_description`,
    /// then `state` if the request had one.
    pub fn error(redirect_uri: &str, mode: ResponseMode, error: &OAuthError, state: Option<&str>) -> Self {
        let mut params = vec![("error", error.error_code().to_owned()), ("error_description", error.description())];
        params.extend(state.map(|s| ("state", s.to_owned())));
        Self { redirect_uri: redirect_uri.to_owned(), mode, params }
    }

    /// The redirect URI, exactly as registered (a form post's target).
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// How the parameters travel.
    pub fn mode(&self) -> ResponseMode {
        self.mode
    }

    /// The parameters, in order (a form post's fields).
    pub fn params(&self) -> impl Iterator<Item = (&'static str, &str)> {
        self.params.iter().map(|(k, v)| (*k, v.as_str()))
    }

    /// The `Location` of the redirect that carries the response in the
    /// `query` or `fragment` mode. `None` in the `form_post` mode (no
    /// redirect carries it), or if the redirect URI is not a URL, which
    /// registration prevents.
    pub fn location(&self) -> Option<String> {
        let mut url = Url::parse(&self.redirect_uri).ok()?;
        match self.mode {
            ResponseMode::Query => {
                url.query_pairs_mut().extend_pairs(self.params());
            }
            ResponseMode::Fragment => {
                let encoded = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(self.params()).finish();
                url.set_fragment(Some(&encoded));
            }
            ResponseMode::FormPost => return None,
        }
        Some(url.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_or_empty_is_query_and_the_three_modes_are_read_by_their_exact_names() {
        assert_eq!(ResponseMode::parse(None), Ok(ResponseMode::Query));
        assert_eq!(ResponseMode::parse(Some("")), Ok(ResponseMode::Query));
        for name in RESPONSE_MODES_SUPPORTED {
            let mode = ResponseMode::parse(Some(name)).expect("supported");
            assert_eq!(mode.as_str(), name);
        }
        assert_eq!(ResponseMode::parse(Some("form_post")), Ok(ResponseMode::FormPost));
        assert_eq!(ResponseMode::parse(Some("fragment")), Ok(ResponseMode::Fragment));
    }

    #[test]
    fn unknown_modes_are_invalid_request_naming_the_supported_ones() {
        for raw in ["form_post.jwt", "query.jwt", "jwt", "FORM_POST", "Query", "web_message", " query"] {
            let e = ResponseMode::parse(Some(raw)).expect_err(raw);
            assert_eq!(e.error_code(), "invalid_request", "{raw}");
            assert!(e.description().contains("query, fragment, form_post"), "{}", e.description());
        }
        let long = "x".repeat(5000);
        let e = ResponseMode::parse(Some(&long)).expect_err("unknown");
        assert!(e.description().len() < 200, "a long mode is not echoed whole");
    }

    #[test]
    fn query_responses_append_to_the_redirect_uri_query() {
        let r = AuthorizationResponse::code(
            "https://app.example/cb?tenant=a%20b",
            ResponseMode::Query,
            "c0de",
            Some("s t&x"),
        );
        assert_eq!(r.location().as_deref(), Some("https://app.example/cb?tenant=a%20b&code=c0de&state=s+t%26x"));
        let r = AuthorizationResponse::code("http://127.0.0.1:9000/cb", ResponseMode::Query, "c", None);
        assert_eq!(r.location().as_deref(), Some("http://127.0.0.1:9000/cb?code=c"));
        let r = AuthorizationResponse::error(
            "https://app.example/cb",
            ResponseMode::Query,
            &OAuthError::AccessDenied,
            Some("s"),
        );
        assert_eq!(
            r.location().as_deref(),
            Some("https://app.example/cb?error=access_denied&error_description=the+resource+owner+denied+the+request&state=s")
        );
    }

    #[test]
    fn fragment_responses_leave_the_query_alone() {
        let r =
            AuthorizationResponse::code("https://app.example/cb?tenant=1", ResponseMode::Fragment, "c0de", Some("a&b"));
        assert_eq!(r.location().as_deref(), Some("https://app.example/cb?tenant=1#code=c0de&state=a%26b"));
        let r = AuthorizationResponse::error(
            "https://app.example/cb",
            ResponseMode::Fragment,
            &OAuthError::LoginRequired,
            None,
        );
        let location = r.location().expect("url");
        let url = Url::parse(&location).expect("url");
        assert_eq!(url.query(), None);
        let fragment: Vec<(String, String)> =
            url::form_urlencoded::parse(url.fragment().expect("fragment").as_bytes()).into_owned().collect();
        assert_eq!(fragment[0], ("error".into(), "login_required".into()));
        assert_eq!(fragment.len(), 2, "no state when the request had none");
    }

    #[test]
    fn form_post_responses_have_no_location_but_their_fields_in_order() {
        let r = AuthorizationResponse::code("https://app.example/cb?x=1", ResponseMode::FormPost, "c0de", Some("s"));
        assert_eq!(r.location(), None);
        assert_eq!(r.redirect_uri(), "https://app.example/cb?x=1", "posted to the registered URI as it is");
        assert_eq!(r.params().collect::<Vec<_>>(), [("code", "c0de"), ("state", "s")]);
        let e = AuthorizationResponse::error(
            "https://app.example/cb",
            ResponseMode::FormPost,
            &OAuthError::AccessDenied,
            None,
        );
        let names: Vec<&str> = e.params().map(|(k, _)| k).collect();
        assert_eq!(names, ["error", "error_description"]);
        assert_eq!(e.mode(), ResponseMode::FormPost);
    }

    #[test]
    fn the_debug_form_never_shows_the_code() {
        let r = AuthorizationResponse::code("https://app.example/cb", ResponseMode::Query, "s3cret-c0de", None);
        let shown = format!("{r:?}");
        assert!(!shown.contains("s3cret-c0de") && shown.contains("code"), "{shown}");
    }
}
