//! Route helpers: every path answers with and without its trailing slash
//! (no redirect, so a POST is served), and a wrong method gets a JSON 405.

use actix_web::{web, HttpRequest, Resource};

use crate::error::ApiError;

/// A resource at `path` and at `path/`, whose other methods answer 405 with
/// `Allow: allow`.
pub fn resource(path: &str, allow: &'static str) -> Resource {
    let bare = path.trim_end_matches('/');
    let bare = if bare.is_empty() { "/" } else { bare };
    let with_slash = format!("{bare}/");
    web::resource([bare.to_owned(), with_slash]).default_service(web::to(move |req: HttpRequest| async move {
        Err::<actix_web::HttpResponse, _>(ApiError::method_not_allowed(req.method().as_str(), allow))
    }))
}

/// The app's fallback for paths no route serves: JSON 404.
pub async fn not_found() -> Result<actix_web::HttpResponse, ApiError> {
    Err(ApiError::not_found())
}
