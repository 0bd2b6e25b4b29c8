//! `POST /api/perfil/dados/`: the profile data of the holder of an OAuth2
//! access token, keyed by scope.

use actix_web::{web, HttpRequest, HttpResponse};
use credencial_application::{ProfileService, TokenService};

use crate::body::FormOrJsonBody;
use crate::consume::bearer_token;
use crate::error::ApiError;
use crate::private::private_json;
use crate::routes::resource;

/// The route's path.
pub const PATH: &str = "/api/perfil/dados";

/// The handler: bearer token → the granted scopes still enabled for the
/// client, narrowed by an optional body field `scope` (form or JSON,
/// space-separated).
pub async fn perfil_dados(
    req: HttpRequest,
    tokens: web::Data<TokenService>,
    profiles: web::Data<ProfileService>,
    body: FormOrJsonBody,
) -> Result<HttpResponse, ApiError> {
    let token = bearer_token(&req)?.ok_or_else(ApiError::not_authenticated)?;
    let claims = tokens.authenticate_client_token(&token)?;
    let narrow = body.0.optional("scope")?;
    let answer = profiles.answer(&claims, narrow.as_deref()).await?;
    Ok(private_json(answer))
}

/// The profile endpoint's resource (POST only; other methods get a 405).
pub fn resource_for(profiles: web::Data<ProfileService>) -> actix_web::Resource {
    resource(PATH, "POST").app_data(profiles).route(web::post().to(perfil_dados))
}
