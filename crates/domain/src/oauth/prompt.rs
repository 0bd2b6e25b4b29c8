//! The OpenID Connect `prompt` parameter of an authorization request (OIDC
//! Core §3.1.2.1): whether the authorization endpoint may show a page, and
//! which. Its values are `none`, `login`, `consent` and `select_account`,
//! space-separated; `none` goes with no other value.
//!
//! We hold one account per browser session, so `select_account` means what
//! `login` means: show the login form even when a session exists.

use super::{invalid_request, OAuthError};

/// What an authorization request lets the endpoint show. The default (no
/// `prompt`) shows the login form without a session and the consent page
/// when the stored consent does not cover the request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Prompt {
    none: bool,
    login: bool,
    consent: bool,
}

impl Prompt {
    /// The prompt of a request's `prompt` parameter (absent or empty: the
    /// default). Errors: `invalid_request` for an unknown value, or `none`
    /// with another value.
    pub fn parse(raw: Option<&str>) -> Result<Self, OAuthError> {
        let mut prompt = Self::default();
        let mut values = 0;
        for value in raw.unwrap_or("").split(' ').filter(|v| !v.is_empty()) {
            values += 1;
            match value {
                "none" => prompt.none = true,
                "login" | "select_account" => prompt.login = true,
                "consent" => prompt.consent = true,
                other => {
                    let shown: String = other.chars().take(32).collect();
                    return Err(invalid_request(format!(
                        "unsupported prompt value: {shown} (none, login, consent or select_account)"
                    )));
                }
            }
        }
        if prompt.none && values > 1 {
            return Err(invalid_request("prompt=none cannot be combined with other prompt values"));
        }
        Ok(prompt)
    }

    /// `none`: no page at all; what would need one is an error
    /// (`login_required`, `consent_required`) sent to the client.
    pub fn forbids_pages(self) -> bool {
        self.none
    }

    /// `login` (or `select_account`): the login form even with a session.
    pub fn forces_login(self) -> bool {
        self.login
    }

    /// `consent`: the consent page even when the stored consent covers the
    /// request.
    pub fn forces_consent(self) -> bool {
        self.consent
    }
}

/// The `prompt` to carry on after the user logged in through the form: the
/// same without `login` and `select_account` (they are satisfied), so that
/// the login form is not shown again; `None` when nothing is left.
pub fn prompt_after_login(raw: Option<&str>) -> Option<String> {
    let left: Vec<&str> =
        raw.unwrap_or("").split(' ').filter(|v| !v.is_empty() && !matches!(*v, "login" | "select_account")).collect();
    (!left.is_empty()).then(|| left.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_values_parse_alone_and_together() {
        // (raw, none, login, consent)
        let cases = [
            (None, false, false, false),
            (Some(""), false, false, false),
            (Some("none"), true, false, false),
            (Some("login"), false, true, false),
            (Some("select_account"), false, true, false),
            (Some("consent"), false, false, true),
            (Some("login consent"), false, true, true),
            (Some(" consent  login "), false, true, true),
            (Some("consent consent"), false, false, true),
        ];
        for (raw, none, login, consent) in cases {
            let p = Prompt::parse(raw).expect("valid");
            assert_eq!((p.forbids_pages(), p.forces_login(), p.forces_consent()), (none, login, consent), "{raw:?}");
        }
    }

    #[test]
    fn unknown_values_and_none_with_others_are_invalid_requests() {
        for raw in ["always", "None", "none login", "consent none", "none none", "login,consent"] {
            let e = Prompt::parse(Some(raw)).expect_err(raw);
            assert_eq!(e.error_code(), "invalid_request", "{raw}");
        }
        let long = "x".repeat(500);
        let e = Prompt::parse(Some(&long)).expect_err("unknown");
        assert!(e.description().len() < 120, "the value is cut: {}", e.description());
    }

    #[test]
    fn after_the_login_form_the_login_values_are_dropped() {
        let cases = [
            (None, None),
            (Some("login"), None),
            (Some("select_account login"), None),
            (Some("login consent"), Some("consent")),
            (Some("consent"), Some("consent")),
            (Some("none"), Some("none")),
        ];
        for (raw, want) in cases {
            assert_eq!(prompt_after_login(raw).as_deref(), want, "{raw:?}");
        }
    }
}
