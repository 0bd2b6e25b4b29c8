//! The rules of an application's registration, shared by the panel's
//! forms and the CLI's flags: its name, its exact redirect URIs and the
//! optional scopes enabled for it. Each error has an English text (the
//! CLI's) and a Portuguese one (shown next to the panel's field).

use thiserror::Error;

use crate::oauth::{validate_redirect_uri, RedirectUriError};
use crate::scope::{ScopeSet, UnknownScope, OPENID};

/// Longest application name accepted.
pub const MAX_CLIENT_NAME_CHARS: usize = 200;

/// Most redirect URIs one application may register.
pub const MAX_REDIRECT_URIS: usize = 50;

/// An application's name as shown on the consent page: trimmed, 1 to
/// [`MAX_CLIENT_NAME_CHARS`] characters, no control character.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientName(String);

/// Why a name was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum ClientNameError {
    /// Empty once trimmed.
    #[error("must not be empty")]
    Empty,
    /// Longer than [`MAX_CLIENT_NAME_CHARS`].
    #[error("must have at most {MAX_CLIENT_NAME_CHARS} characters")]
    TooLong,
    /// Holds a control character (a line break, a tab…).
    #[error("must not contain control characters")]
    ControlCharacter,
}

impl ClientNameError {
    /// The Portuguese text shown next to the panel's field.
    pub fn message_pt(self) -> String {
        match self {
            Self::Empty => "Informe o nome da aplicação.".into(),
            Self::TooLong => format!("O nome pode ter no máximo {MAX_CLIENT_NAME_CHARS} caracteres."),
            Self::ControlCharacter => "O nome não pode conter quebras de linha nem caracteres de controle.".into(),
        }
    }
}

impl ClientName {
    /// Validates `raw` (surrounding whitespace is dropped).
    pub fn parse(raw: &str) -> Result<Self, ClientNameError> {
        let name = raw.trim();
        if name.is_empty() {
            return Err(ClientNameError::Empty);
        }
        if name.chars().count() > MAX_CLIENT_NAME_CHARS {
            return Err(ClientNameError::TooLong);
        }
        if name.chars().any(char::is_control) {
            return Err(ClientNameError::ControlCharacter);
        }
        Ok(Self(name.to_owned()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name, owned.
    pub fn into_string(self) -> String {
        self.0
    }
}

/// An application's redirect URIs: 1 to [`MAX_REDIRECT_URIS`], each valid
/// for registration ([`validate_redirect_uri`]), without duplicates (the
/// first is kept), in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedirectUris(Vec<String>);

/// Why a list of redirect URIs was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RedirectUrisError {
    /// No URI at all.
    #[error("at least one redirect URI is required")]
    Empty,
    /// More than [`MAX_REDIRECT_URIS`].
    #[error("at most {MAX_REDIRECT_URIS} redirect URIs")]
    TooMany,
    /// One URI is not acceptable.
    #[error("{uri:?}: {error}")]
    Invalid {
        /// The URI as given.
        uri: String,
        /// What is wrong with it.
        error: RedirectUriError,
    },
}

impl RedirectUrisError {
    /// The Portuguese text shown next to the panel's field.
    pub fn message_pt(&self) -> String {
        match self {
            Self::Empty => "Informe ao menos um endereço de retorno.".into(),
            Self::TooMany => format!("Informe no máximo {MAX_REDIRECT_URIS} endereços de retorno."),
            Self::Invalid { uri, error } => {
                let why = match error {
                    RedirectUriError::NotAbsolute => "não é um endereço http(s) completo",
                    RedirectUriError::UnsupportedScheme => "deve começar por https://",
                    RedirectUriError::InsecureHttp => {
                        "deve usar https (http só é aceito para localhost e endereços de loopback)"
                    }
                    RedirectUriError::Fragment => "não pode conter fragmento (#)",
                    RedirectUriError::UserInfo => "não pode conter usuário nem senha",
                    RedirectUriError::BadCharacter => {
                        "não pode conter espaços, caracteres de controle nem caracteres fora do ASCII"
                    }
                };
                format!("O endereço {uri} {why}.")
            }
        }
    }
}

impl RedirectUris {
    /// Validates each URI of `raw` (`allow_insecure_http`: accept `http`
    /// on hosts other than loopback, for testing only).
    pub fn parse<'a>(
        raw: impl IntoIterator<Item = &'a str>,
        allow_insecure_http: bool,
    ) -> Result<Self, RedirectUrisError> {
        let uris = validated_uris(raw, allow_insecure_http)?;
        if uris.is_empty() {
            return Err(RedirectUrisError::Empty);
        }
        Ok(Self(uris))
    }

    /// Validates the non-blank lines of a text (the panel's textarea, one
    /// URI a line; surrounding whitespace of a line is dropped).
    pub fn parse_lines(text: &str, allow_insecure_http: bool) -> Result<Self, RedirectUrisError> {
        Self::parse(text.lines().map(str::trim).filter(|l| !l.is_empty()), allow_insecure_http)
    }

    /// The URIs.
    pub fn as_slice(&self) -> &[String] {
        &self.0
    }

    /// The URIs, owned.
    pub fn into_vec(self) -> Vec<String> {
        self.0
    }
}

/// Each URI of `raw` valid for registration ([`validate_redirect_uri`]),
/// duplicates dropped (the first is kept), at most [`MAX_REDIRECT_URIS`].
fn validated_uris<'a>(
    raw: impl IntoIterator<Item = &'a str>,
    allow_insecure_http: bool,
) -> Result<Vec<String>, RedirectUrisError> {
    let mut uris: Vec<String> = Vec::new();
    for uri in raw {
        let uri = validate_redirect_uri(uri, allow_insecure_http)
            .map_err(|error| RedirectUrisError::Invalid { uri: uri.to_owned(), error })?;
        if !uris.contains(&uri) {
            uris.push(uri);
        }
        if uris.len() > MAX_REDIRECT_URIS {
            return Err(RedirectUrisError::TooMany);
        }
    }
    Ok(uris)
}

/// Where an application is told that a session it received an ID token
/// in ended (OpenID Connect Back-Channel Logout 1.0 §2.2): one absolute
/// URI under the rules of a redirect URI (`https`, or `http` on a loopback
/// host; no fragment), which the provider posts logout tokens to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackchannelLogoutUri(String);

impl BackchannelLogoutUri {
    /// Validates `raw` (`allow_insecure_http`: accept `http` on hosts other
    /// than loopback, for testing only). Errors: `Invalid`.
    pub fn parse(raw: &str, allow_insecure_http: bool) -> Result<Self, RedirectUrisError> {
        let raw = raw.trim();
        validate_redirect_uri(raw, allow_insecure_http)
            .map(Self)
            .map_err(|error| RedirectUrisError::Invalid { uri: raw.to_owned(), error })
    }

    /// The URI.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The URI, owned.
    pub fn into_string(self) -> String {
        self.0
    }
}

/// An application's post-logout redirect URIs (OpenID Connect
/// RP-Initiated Logout): where `/oauth/logout/` may send the browser
/// afterwards, matched exactly. The rules of [`RedirectUris`], except
/// that the list may be empty (then the provider shows its own page).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostLogoutRedirectUris(Vec<String>);

impl PostLogoutRedirectUris {
    /// Validates each URI of `raw` (`allow_insecure_http`: accept `http`
    /// on hosts other than loopback, for testing only). Errors: `TooMany`,
    /// `Invalid`.
    pub fn parse<'a>(
        raw: impl IntoIterator<Item = &'a str>,
        allow_insecure_http: bool,
    ) -> Result<Self, RedirectUrisError> {
        validated_uris(raw, allow_insecure_http).map(Self)
    }

    /// Validates the non-blank lines of a text (the panel's textarea).
    pub fn parse_lines(text: &str, allow_insecure_http: bool) -> Result<Self, RedirectUrisError> {
        Self::parse(text.lines().map(str::trim).filter(|l| !l.is_empty()), allow_insecure_http)
    }

    /// No URI: the provider shows its own page after a logout.
    pub fn none() -> Self {
        Self(Vec::new())
    }

    /// The URIs.
    pub fn as_slice(&self) -> &[String] {
        &self.0
    }

    /// The URIs, owned.
    pub fn into_vec(self) -> Vec<String> {
        self.0
    }
}

/// The optional scopes named in `raw` (separated by spaces or commas;
/// an unknown name is an error naming it). The required scopes are
/// dropped: they are always granted whatever an application enables.
/// `openid` is refused like an unknown name: it is not a profile scope to
/// enable (every application may ask for it).
pub fn optional_scopes(raw: &str) -> Result<ScopeSet, UnknownScope> {
    let text = raw.replace(',', " ");
    if let Some(openid) = text.split_ascii_whitespace().find(|w| *w == OPENID) {
        return Err(UnknownScope(openid.to_owned()));
    }
    ScopeSet::parse_strict(&text).map(only_optional)
}

/// `scopes` without the required ones and without `openid` (what is
/// stored as enabled).
pub fn only_optional(scopes: ScopeSet) -> ScopeSet {
    scopes.iter().filter(|s| !s.is_required()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scope::Scope;

    #[test]
    fn names_are_trimmed_and_bounded() {
        assert_eq!(ClientName::parse("  Portal  ").expect("valid").as_str(), "Portal");
        assert_eq!(ClientName::parse(" \t "), Err(ClientNameError::Empty));
        assert_eq!(ClientName::parse(&"a".repeat(MAX_CLIENT_NAME_CHARS)).map(|n| n.as_str().len()), Ok(200));
        assert_eq!(ClientName::parse(&"é".repeat(MAX_CLIENT_NAME_CHARS + 1)), Err(ClientNameError::TooLong));
        assert_eq!(ClientName::parse("Por\ntal"), Err(ClientNameError::ControlCharacter));
    }

    #[test]
    fn redirect_uris_keep_order_drop_duplicates_and_name_the_bad_one() {
        let uris =
            RedirectUris::parse(["https://a.example/cb", "http://127.0.0.1:9/cb", "https://a.example/cb"], false)
                .expect("valid");
        assert_eq!(uris.as_slice(), ["https://a.example/cb", "http://127.0.0.1:9/cb"]);
        let e = RedirectUris::parse(["https://a.example/cb", "http://evil.example/"], false).expect_err("http");
        assert_eq!(
            e,
            RedirectUrisError::Invalid { uri: "http://evil.example/".into(), error: RedirectUriError::InsecureHttp }
        );
        assert!(e.message_pt().contains("http://evil.example/"));
        assert!(RedirectUris::parse(["http://staging.intranet/cb"], true).is_ok());
        assert_eq!(RedirectUris::parse([], false), Err(RedirectUrisError::Empty));
    }

    #[test]
    fn redirect_uri_lines_skip_blank_lines() {
        let uris =
            RedirectUris::parse_lines("https://a.example/cb\r\n\n  https://b.example/cb  \n", false).expect("valid");
        assert_eq!(uris.as_slice(), ["https://a.example/cb", "https://b.example/cb"]);
        assert_eq!(RedirectUris::parse_lines(" \n ", false), Err(RedirectUrisError::Empty));
        assert!(matches!(
            RedirectUris::parse_lines("https://a.example/cb#x", false),
            Err(RedirectUrisError::Invalid { error: RedirectUriError::Fragment, .. })
        ));
    }

    #[test]
    fn post_logout_uris_follow_the_redirect_uri_rules_and_may_be_none() {
        assert_eq!(PostLogoutRedirectUris::parse_lines(" \n ", false).map(|u| u.into_vec()), Ok(vec![]));
        let uris = PostLogoutRedirectUris::parse_lines("https://a.example/saiu\nhttps://a.example/saiu\n", false)
            .expect("valid");
        assert_eq!(uris.as_slice(), ["https://a.example/saiu"]);
        assert!(matches!(
            PostLogoutRedirectUris::parse(["http://evil.example/saiu"], false),
            Err(RedirectUrisError::Invalid { error: RedirectUriError::InsecureHttp, .. })
        ));
        let many: Vec<String> = (0..=MAX_REDIRECT_URIS).map(|i| format!("https://a.example/{i}")).collect();
        assert_eq!(
            PostLogoutRedirectUris::parse(many.iter().map(String::as_str), false),
            Err(RedirectUrisError::TooMany)
        );
    }

    #[test]
    fn too_many_redirect_uris_are_refused() {
        let many: Vec<String> = (0..=MAX_REDIRECT_URIS).map(|i| format!("https://a.example/{i}")).collect();
        assert_eq!(RedirectUris::parse(many.iter().map(String::as_str), false), Err(RedirectUrisError::TooMany));
    }

    #[test]
    fn optional_scopes_drop_the_required_ones_and_refuse_unknown_names() {
        let scopes = optional_scopes("cpf,cnes  email receita_federal").expect("known");
        assert_eq!(scopes.iter().collect::<Vec<_>>(), [Scope::ReceitaFederal, Scope::Cnes]);
        assert_eq!(optional_scopes("cnes openid"), Err(UnknownScope("openid".into())));
        assert_eq!(optional_scopes(""), Ok(ScopeSet::empty()));
    }
}
