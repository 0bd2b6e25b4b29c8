//! Demo only: a stand-in for the upstream user-data resource, so that the
//! consume routes can be tried without the institution's real service. It
//! serves `GET /_sandbox/rh/api/rh/eu/` with the stored data of the user the
//! bearer access token names.

use actix_web::{web, HttpRequest, HttpResponse};
use credencial_application::TokenService;

use crate::consume::bearer_token;
use crate::error::ApiError;
use crate::routes::{self, resource};

/// Where the sandbox is mounted; the demo points the upstream base URL here.
pub const SANDBOX_PREFIX: &str = "/_sandbox/rh";

async fn user_data(req: HttpRequest, service: web::Data<TokenService>) -> Result<HttpResponse, ApiError> {
    let token = bearer_token(&req)?.ok_or_else(ApiError::not_authenticated)?;
    let data = service.own_user_data(&token).await?;
    Ok(crate::private::private_json(data))
}

/// The sandbox's routes.
pub fn scope() -> actix_web::Scope {
    web::scope(SANDBOX_PREFIX).service(resource("/api/rh/eu", "GET").route(routes::get().to(user_data)))
}
