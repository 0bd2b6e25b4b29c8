//! `POST /api/perfil/dados/`: the profile data of the holder of an OAuth2
//! access token, keyed by scope.

use actix_web::{web, HttpRequest, HttpResponse};
use credencial_application::request_context::{self, RequestId};
use credencial_application::{ProfileService, TokenService};

use crate::body::FormOrJsonBody;
use crate::consume::bearer_token;
use crate::error::ApiError;
use crate::private::private_json;
use crate::routes::two_forms;

/// The route's path.
pub const PATH: &str = "/api/perfil/dados";

/// The handler: bearer token → the granted scopes still enabled for the
/// client, narrowed by an optional body field `scope` (form or JSON,
/// space-separated). The answer is written to the person's access log under
/// the request's id (the `X-Request-Id` header) before it is sent; a token
/// whose grant the person revoked is refused like a bad one (401,
/// `WWW-Authenticate: Bearer … error="invalid_token"`), and a read that
/// cannot be logged is a 503.
pub async fn perfil_dados(
    req: HttpRequest,
    tokens: web::Data<TokenService>,
    profiles: web::Data<ProfileService>,
    body: FormOrJsonBody,
) -> Result<HttpResponse, ApiError> {
    let token = bearer_token(&req)?.ok_or_else(ApiError::not_authenticated)?;
    let claims = tokens.authenticate_client_token(&token).map_err(|e| ApiError::from(e).invalid_bearer_token())?;
    let narrow = body.0.optional("scope")?;
    let answer = profiles
        .answer(&claims, narrow.as_deref(), request_id().as_str())
        .await
        .map_err(|e| ApiError::from(e).invalid_bearer_token())?;
    Ok(private_json(answer))
}

/// The request's id, as the request log middleware made it current (a
/// fresh one if the route is served without the middleware).
fn request_id() -> RequestId {
    request_context::current().unwrap_or_else(|| RequestId::from_uuid(uuid::Uuid::new_v4()))
}

/// The profile endpoint's resource (POST only; other methods get a 405).
pub fn resource_for(profiles: web::Data<ProfileService>) -> impl actix_web::dev::HttpServiceFactory {
    two_forms(PATH, "POST", move |r| r.app_data(profiles.clone()).route(web::post().to(perfil_dados)))
}
