//! The cookies of the HTML routes (the `/oauth` login session and form, the
//! client component's pending login and host session): reading one from a
//! request and writing the `Set-Cookie` value, always `HttpOnly` and
//! `SameSite=Lax`.

use actix_web::http::header;
use actix_web::HttpRequest;

/// How cookies are marked `Secure`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CookiePolicy {
    /// `Secure`: `Some(true)` always, `Some(false)` never, `None` when the
    /// request came over https (directly or as a proxy's
    /// `Forwarded`/`X-Forwarded-Proto` says).
    pub secure: Option<bool>,
}

impl CookiePolicy {
    /// The `Set-Cookie` value that sets cookie `name` to `value` on `path`
    /// for `max_age_secs` (`0` with an empty value deletes it).
    pub fn set(&self, req: &HttpRequest, name: &str, path: &str, value: &str, max_age_secs: i64) -> String {
        let secure = self.secure.unwrap_or_else(|| req.connection_info().scheme().eq_ignore_ascii_case("https"));
        let secure = if secure { "; Secure" } else { "" };
        format!("{name}={value}; Path={path}; Max-Age={max_age_secs}; HttpOnly; SameSite=Lax{secure}")
    }

    /// The `Set-Cookie` value that deletes cookie `name` on `path`.
    pub fn clear(&self, req: &HttpRequest, name: &str, path: &str) -> String {
        self.set(req, name, path, "", 0)
    }
}

/// Appends the `Set-Cookie` header `set_cookie` (a value of
/// [`CookiePolicy::set`] or [`CookiePolicy::clear`]) to `answer`.
pub fn append(answer: &mut actix_web::HttpResponse, set_cookie: &str) {
    if let Ok(value) = header::HeaderValue::from_str(set_cookie) {
        answer.headers_mut().append(header::SET_COOKIE, value);
    }
}

/// The value of cookie `name` in `req` (the first one, across `Cookie`
/// headers); an empty value counts as none.
pub fn read(req: &HttpRequest, name: &str) -> Option<String> {
    req.headers()
        .get_all(header::COOKIE)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim_matches('"').to_owned())
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;

    #[test]
    fn the_first_value_of_the_named_cookie_is_read_across_headers() {
        let req = TestRequest::default()
            .insert_header((header::COOKIE, "a=1; session=\"s1\""))
            .append_header((header::COOKIE, "session=s2"))
            .to_http_request();
        assert_eq!(read(&req, "session").as_deref(), Some("s1"));
        assert_eq!(read(&req, "a").as_deref(), Some("1"));
        assert_eq!(read(&req, "sess"), None, "no prefix match");
    }

    #[test]
    fn an_empty_or_missing_cookie_is_none() {
        let req = TestRequest::default().insert_header((header::COOKIE, "session=; other")).to_http_request();
        assert_eq!(read(&req, "session"), None);
        assert_eq!(read(&req, "other"), None);
        assert_eq!(read(&TestRequest::default().to_http_request(), "session"), None);
    }

    #[test]
    fn secure_follows_the_policy_or_the_scheme() {
        let plain = TestRequest::default().to_http_request();
        let https = TestRequest::default().insert_header(("x-forwarded-proto", "https")).to_http_request();
        let auto = CookiePolicy { secure: None };
        assert_eq!(auto.set(&plain, "c", "/p", "v", 60), "c=v; Path=/p; Max-Age=60; HttpOnly; SameSite=Lax");
        assert!(auto.set(&https, "c", "/p", "v", 60).ends_with("; Secure"));
        assert!(CookiePolicy { secure: Some(true) }.set(&plain, "c", "/", "v", 1).ends_with("; Secure"));
        assert!(!CookiePolicy { secure: Some(false) }.set(&https, "c", "/", "v", 1).contains("Secure"));
        assert_eq!(auto.clear(&plain, "c", "/p"), "c=; Path=/p; Max-Age=0; HttpOnly; SameSite=Lax");
    }
}
