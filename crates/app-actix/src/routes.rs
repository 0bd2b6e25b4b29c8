//! Route helpers: every path answers with and without its trailing slash
//! (no redirect, so a POST is served), a GET route answers HEAD too, and a
//! wrong method gets a JSON 405.

use actix_web::{guard, web, HttpRequest, Resource, Route};

use crate::error::ApiError;

/// A resource at `path` and at `path/`, whose other methods answer 405 with
/// `Allow: allow` (`HEAD` added after `GET`, which [`get`] answers).
pub fn resource(path: &str, allow: &'static str) -> Resource {
    let (bare, with_slash) = forms(path);
    with_405(web::resource([bare.to_owned(), with_slash]), allow)
}

/// [`resource`] for a route on a hot path: `routes` adds the routes (and
/// data) to a resource, once per form. A path without parameters becomes
/// two resources of one pattern each, which actix matches by comparing
/// strings; one resource of two patterns is matched with a set of regular
/// expressions, a few microseconds per request (docs/performance.md). A
/// path with parameters stays one resource of two patterns.
pub fn two_forms<F>(path: &str, allow: &'static str, routes: F) -> TwoForms<F>
where
    F: Fn(Resource) -> Resource,
{
    TwoForms { path: path.to_owned(), allow, routes }
}

/// The services of [`two_forms`].
pub struct TwoForms<F> {
    path: String,
    allow: &'static str,
    routes: F,
}

impl<F> actix_web::dev::HttpServiceFactory for TwoForms<F>
where
    F: Fn(Resource) -> Resource,
{
    fn register(self, config: &mut actix_web::dev::AppService) {
        if self.path.contains('{') {
            (self.routes)(resource(&self.path, self.allow)).register(config);
            return;
        }
        let (bare, with_slash) = forms(&self.path);
        (self.routes)(with_405(web::resource(bare), self.allow)).register(config);
        (self.routes)(with_405(web::resource(with_slash), self.allow)).register(config);
    }
}

/// The two forms of `path`: without its trailing slash (`/` stays `/`) and
/// with it (`/` gives `//`, as it always has).
fn forms(path: &str) -> (&str, String) {
    let bare = path.trim_end_matches('/');
    let bare = if bare.is_empty() { "/" } else { bare };
    (bare, format!("{bare}/"))
}

/// `resource` with its 405 answer for the methods it has no route for.
fn with_405(resource: Resource, allow: &'static str) -> Resource {
    resource.default_service(web::to(move |req: HttpRequest| async move {
        Err::<actix_web::HttpResponse, _>(ApiError::method_not_allowed(req.method().as_str(), &with_head(allow)))
    }))
}

/// The route of a resource's GET handler, which answers HEAD as well (RFC
/// 9110 §9.3.2: the same status and headers, no content). The handler runs
/// as for a GET (a HEAD has GET's effects, no more) and actix-http's HTTP/1
/// encoder writes the head only, keeping the `Content-Length` GET would
/// send. Use it instead of `routes::get()` (clippy's `disallowed-methods`
/// holds this crate to it).
pub fn get() -> Route {
    web::route().guard(guard::Any(guard::Get()).or(guard::Head()))
}

/// `allow` with `HEAD` after `GET` when it lists `GET` (`"GET, POST"` →
/// `"GET, HEAD, POST"`).
fn with_head(allow: &str) -> String {
    let methods: Vec<&str> = allow.split(", ").collect();
    if !methods.contains(&"GET") || methods.contains(&"HEAD") {
        return allow.to_owned();
    }
    methods.iter().flat_map(|m| if *m == "GET" { vec!["GET", "HEAD"] } else { vec![*m] }).collect::<Vec<_>>().join(", ")
}

/// The app's fallback for paths no route serves: JSON 404.
pub async fn not_found() -> Result<actix_web::HttpResponse, ApiError> {
    Err(ApiError::not_found())
}

/// Where [`inventory`] is mounted (only with the `route-inventory` feature).
#[cfg(feature = "route-inventory")]
pub const INVENTORY_PATH: &str = "/_test/routes";

/// Test support (feature `route-inventory`, never in a release build): the
/// route patterns this app serves, as a JSON list, so that a test can
/// compare them with the OpenAPI description. actix-web has no public way
/// to list its routes, so the candidates are the path literals in the
/// resource map's `Debug` text and their two-part joins (a scope and its
/// resource); the map itself decides which of them are routes.
#[cfg(feature = "route-inventory")]
pub async fn inventory(req: HttpRequest) -> actix_web::HttpResponse {
    let map = req.resource_map();
    let literals = quoted_paths(&format!("{map:?}"));
    let mut patterns = std::collections::BTreeSet::new();
    for a in &literals {
        patterns.extend(map.match_pattern(a));
        for b in &literals {
            patterns.extend(map.match_pattern(&format!("{a}{b}")));
        }
    }
    actix_web::HttpResponse::Ok().json(patterns)
}

/// The string literals of a `Debug` text that start with `/`, unescaped.
#[cfg(feature = "route-inventory")]
fn quoted_paths(debug: &str) -> std::collections::BTreeSet<String> {
    let mut found = std::collections::BTreeSet::new();
    let mut chars = debug.chars();
    while let Some(c) = chars.next() {
        if c != '"' {
            continue;
        }
        let mut literal = String::new();
        while let Some(c) = chars.next() {
            match c {
                '\\' => literal.extend(chars.next()),
                '"' => break,
                other => literal.push(other),
            }
        }
        if literal.starts_with('/') {
            found.insert(literal);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::with_head;

    #[test]
    fn allow_lists_head_right_after_get_and_only_where_get_is() {
        assert_eq!(with_head("GET"), "GET, HEAD");
        assert_eq!(with_head("GET, POST"), "GET, HEAD, POST");
        assert_eq!(with_head("POST"), "POST");
        assert_eq!(with_head("GET, HEAD"), "GET, HEAD");
    }
}
