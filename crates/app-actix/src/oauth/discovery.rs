//! `GET /.well-known/openid-configuration`: the OpenID Connect Discovery
//! 1.0 document (§3, §4), built from the `issuer_url` setting. It holds no
//! personal data, so shared caches may keep it a little (five minutes); a
//! 404 when OpenID Connect is off.

use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, HttpResponse};
use credencial_application::OAuthService;
use credencial_domain::oauth::discovery::EndpointPaths;

use crate::error::ApiError;

pub use credencial_domain::oauth::discovery::DISCOVERY_PATH;

/// The endpoints the document names (with their trailing slash, as every
/// route of the service is written). Revocation and introspection are the
/// RFC 7009 / RFC 7662 endpoints of the same release.
pub const ENDPOINTS: EndpointPaths = EndpointPaths {
    authorization: "/oauth/authorize/",
    token: "/oauth/token/",
    userinfo: "/oauth/userinfo/",
    end_session: "/oauth/logout/",
    revocation: "/oauth/revoke/",
    introspection: "/oauth/introspect/",
};

/// How long a cache may keep the document.
const CACHE: &str = "public, max-age=300";

/// The handler.
pub async fn openid_configuration(oauth: web::Data<OAuthService>) -> Result<HttpResponse, ApiError> {
    let document = oauth.discovery(ENDPOINTS).ok_or_else(ApiError::not_found)?;
    Ok(HttpResponse::Ok().insert_header((header::CACHE_CONTROL, HeaderValue::from_static(CACHE))).json(document))
}
