//! The consume routes: read user data from the upstream resource with the
//! caller's access token.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use credencial_application::TokenService;
use credencial_domain::TokenError;

use crate::body::OptionalJsonBody;
use crate::error::ApiError;

/// The token of an `Authorization: Bearer <token>` header. `Ok(None)` when
/// there is no such header (or another scheme); an unusable Bearer header
/// is a 401.
pub fn bearer_token(req: &HttpRequest) -> Result<Option<String>, ApiError> {
    let Some(value) = req.headers().get(header::AUTHORIZATION) else {
        return Ok(None);
    };
    let text = value.to_str().map_err(|_| ApiError::token(&TokenError::Invalid))?;
    let mut parts = text.split_ascii_whitespace();
    match (parts.next(), parts.next(), parts.next()) {
        (Some(scheme), Some(token), None) if scheme.eq_ignore_ascii_case("bearer") => Ok(Some(token.to_owned())),
        (Some(scheme), _, _) if scheme.eq_ignore_ascii_case("bearer") => Err(ApiError::token(&TokenError::Invalid)),
        _ => Ok(None),
    }
}

/// `GET user-info` / `GET rh/eu`: the token from the `Authorization` header.
pub async fn consume_get(req: HttpRequest, service: web::Data<TokenService>) -> Result<HttpResponse, ApiError> {
    let token = bearer_token(&req)?.ok_or_else(ApiError::not_authenticated)?;
    let data = service.consume(&token, None).await?;
    Ok(HttpResponse::Ok().json(data))
}

/// `POST user-info` / `POST rh/eu`: the token from the `Authorization`
/// header, else from the body's `token`; an optional `endpoint` names the
/// upstream path (checked against the allow-list).
pub async fn consume_post(
    req: HttpRequest,
    service: web::Data<TokenService>,
    body: OptionalJsonBody,
) -> Result<HttpResponse, ApiError> {
    let body = body.0;
    let token = match bearer_token(&req)? {
        Some(t) => t,
        None => body.optional("token")?.filter(|t| !t.is_empty()).ok_or_else(ApiError::not_authenticated)?,
    };
    let endpoint = body.optional("endpoint")?;
    let data = service.consume(&token, endpoint.as_deref()).await?;
    Ok(HttpResponse::Ok().json(data))
}
