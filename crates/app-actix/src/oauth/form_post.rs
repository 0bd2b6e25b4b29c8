//! `response_mode=form_post` (OAuth 2.0 Form Post Response Mode): the page
//! that delivers an authorization response (a code, or an error, and
//! `state`) as a form posted to the client's redirect URI, and
//! `GET /oauth/form_post.js`, the script that submits it at once.
//!
//! The page works without scripts (a *Continuar* button). Its
//! `Content-Security-Policy` is every page's, plus `script-src 'self'` (the
//! file above; still no inline script, and no other answer of the service
//! runs as a script with an effect) and `form-action` naming the redirect
//! URI's origin, the one place the page may post to (docs/decisions.md).

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use credencial_domain::oauth::AuthorizationResponse;
use url::{Host, Url};

use super::pages;
use crate::html;

/// Where the page's script is served (a trailing slash is optional).
pub const SCRIPT_PATH: &str = "/oauth/form_post.js";

/// The script: submits the page's form.
const SCRIPT: &str = include_str!("../../assets/form_post.js");

/// How long a browser or a shared cache may keep the script.
const SCRIPT_CACHE: &str = "public, max-age=3600";

/// `GET /oauth/form_post.js`.
pub async fn script() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/javascript; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static(SCRIPT_CACHE)))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")))
        .body(SCRIPT)
}

/// The form-post page for `response`, with the headers of every page
/// (never cached, never framed) and its own `Content-Security-Policy`.
pub fn page(response: &AuthorizationResponse) -> HttpResponse {
    let mut builder = html::response(StatusCode::OK);
    if let Ok(csp) = HeaderValue::from_str(&content_security_policy(response.redirect_uri())) {
        builder.insert_header((header::CONTENT_SECURITY_POLICY, csp));
    }
    html::html(builder, &pages::form_post(response, SCRIPT_PATH))
}

/// The page's `Content-Security-Policy`: every page's, the script file, and
/// `form-action` with the redirect URI's origin when CSP can name it.
pub fn content_security_policy(redirect_uri: &str) -> String {
    let mut csp = format!("{}; script-src 'self'", html::CSP);
    if let Some(origin) = form_action_source(redirect_uri) {
        csp.push_str("; form-action ");
        csp.push_str(&origin);
    }
    csp
}

/// The redirect URI's origin as a CSP source (`scheme://host[:port]`).
/// The origin, not the whole URI: browsers check `form-action` again on
/// the redirects that follow the post (ignoring paths), and the client's
/// callback usually redirects within its own origin. `None` when CSP's
/// grammar cannot name the host (an IPv6 literal, a name with characters
/// other than letters, digits, `-` and `.`): an unparsable source would
/// leave a `form-action` that allows nothing, so the page then sets none,
/// like every other page.
fn form_action_source(redirect_uri: &str) -> Option<String> {
    let url = Url::parse(redirect_uri).ok()?;
    if !matches!(url.scheme(), "https" | "http") {
        return None;
    }
    match url.host()? {
        Host::Domain(name)
            if !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.') => {}
        Host::Ipv4(_) => {}
        Host::Domain(_) | Host::Ipv6(_) => return None,
    }
    Some(url.origin().ascii_serialization())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_action_names_the_redirect_uri_s_origin_when_csp_can() {
        for (uri, source) in [
            ("https://app.example.gov.br/callback?x=1", Some("https://app.example.gov.br")),
            ("https://app.example.gov.br:8443/a;b,c", Some("https://app.example.gov.br:8443")),
            ("https://app.example.gov.br:443/cb", Some("https://app.example.gov.br")),
            ("http://127.0.0.1:9/cb", Some("http://127.0.0.1:9")),
            ("http://localhost:8080/callback", Some("http://localhost:8080")),
            ("https://xn--acar-0oa8i.example/cb", Some("https://xn--acar-0oa8i.example")),
            ("https://açúcar.example/cb", Some("https://xn--acar-0oa8i.example")),
            ("http://[::1]:8080/cb", None),
            ("https://under_score.example/cb", None),
            ("not a url", None),
        ] {
            assert_eq!(form_action_source(uri).as_deref(), source, "{uri}");
        }
    }

    #[test]
    fn the_policy_adds_the_script_file_and_the_destination_to_every_page_s() {
        let csp = content_security_policy("https://app.example.gov.br/callback");
        assert!(csp.starts_with(html::CSP), "{csp}");
        assert!(csp.ends_with("; script-src 'self'; form-action https://app.example.gov.br"), "{csp}");
        assert!(!csp.contains("unsafe-inline'; script") && !csp.contains("script-src 'unsafe"), "{csp}");
        let ipv6 = content_security_policy("http://[::1]:8080/cb");
        assert!(!ipv6.contains("form-action"), "{ipv6}");
    }
}
