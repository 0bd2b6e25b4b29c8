//! `GET` and `POST /oauth/userinfo/` (OpenID Connect Core 1.0 §5.3): the
//! claims of the person who granted the bearer access token, by its scopes.
//!
//! The token comes from `Authorization: Bearer` (GET or POST) or, in a
//! POST, from the form body's `access_token` (RFC 6750 §2.2), never from
//! the query. It must be an access token issued to a client application
//! (a first-party token is refused) and carry `openid`. Every answer is
//! written to the person's access report before it is sent, and is never
//! cached. Errors follow RFC 6750 §3: 401 `invalid_token`, 403
//! `insufficient_scope`, 400 `invalid_request`, each with its
//! `WWW-Authenticate: Bearer` challenge and `{"error",
//! "error_description"}`.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use credencial_application::request_context::{self, RequestId};
use credencial_application::{ProfileService, ServiceError, TokenService};

use crate::consume::bearer_token;
use crate::error::ApiError;
use crate::form::{read_form, FormError};
use crate::private::private_json;
use crate::routes;

/// The route's path (a trailing slash is optional).
pub const USERINFO_PATH: &str = "/oauth/userinfo";

/// `WWW-Authenticate` descriptions (no quote or backslash in them).
const NO_TOKEN: &str = "an access token is required";
const BAD_TOKEN: &str = "the access token is invalid, expired, revoked or not issued to an application";
const NO_OPENID: &str = "the access token was not granted the openid scope";

/// The route (GET and POST; other methods get a 405).
pub fn resource_for(
    tokens: web::Data<TokenService>,
    profiles: web::Data<ProfileService>,
) -> impl actix_web::dev::HttpServiceFactory {
    routes::two_forms(USERINFO_PATH, "GET, POST", move |r| {
        r.app_data(tokens.clone())
            .app_data(profiles.clone())
            .route(routes::get().to(userinfo_get))
            .route(web::post().to(userinfo_post))
    })
}

/// `GET /oauth/userinfo/`: the token from the `Authorization` header.
pub async fn userinfo_get(
    req: HttpRequest,
    tokens: web::Data<TokenService>,
    profiles: web::Data<ProfileService>,
) -> Result<HttpResponse, ApiError> {
    let token = header_token(&req)?;
    answer(token, &tokens, &profiles).await
}

/// `POST /oauth/userinfo/`: the token from the `Authorization` header, or
/// the form body's `access_token` (one of the two, not both).
pub async fn userinfo_post(
    req: HttpRequest,
    payload: web::Payload,
    tokens: web::Data<TokenService>,
    profiles: web::Data<ProfileService>,
) -> Result<HttpResponse, ApiError> {
    let from_header = header_token(&req)?;
    let fields = read_form(&req, payload).await.map_err(|e| match e {
        FormError::TooLarge => ApiError::payload_too_large(crate::body::MAX_BODY_BYTES).in_oauth_shape(),
        other => invalid_request(&other.message()),
    })?;
    let from_body = fields.owned("access_token").map_err(|e| invalid_request(&e.message()))?;
    let token = match (from_header, from_body) {
        (Some(_), Some(_)) => return Err(invalid_request("send the access token once: in the header or the body")),
        (header, body) => header.or(body),
    };
    answer(token, &tokens, &profiles).await
}

/// The token of the `Authorization: Bearer` header, if any; a Bearer
/// header that is not usable is `invalid_token`.
fn header_token(req: &HttpRequest) -> Result<Option<String>, ApiError> {
    bearer_token(req).map_err(|_| invalid_token())
}

/// The claims for `token`, or the RFC 6750 error.
async fn answer(
    token: Option<String>,
    tokens: &TokenService,
    profiles: &ProfileService,
) -> Result<HttpResponse, ApiError> {
    let token = token.ok_or_else(|| ApiError::bearer_resource(StatusCode::UNAUTHORIZED, None, NO_TOKEN, None))?;
    let claims = tokens.authenticate_client_token(&token).map_err(refusal)?;
    let request_id = request_context::current().unwrap_or_else(|| RequestId::from_uuid(uuid::Uuid::new_v4()));
    let answer = profiles.userinfo(&claims, request_id.as_str()).await.map_err(refusal)?;
    Ok(private_json(answer))
}

/// A use case's refusal in RFC 6750's terms; faults of ours in the OAuth2
/// error shape (503 `temporarily_unavailable`, 500 `server_error`).
fn refusal(e: ServiceError) -> ApiError {
    match e {
        ServiceError::InvalidToken(_) | ServiceError::UnknownUser => invalid_token(),
        ServiceError::Forbidden(_) => {
            ApiError::bearer_resource(StatusCode::FORBIDDEN, Some("insufficient_scope"), NO_OPENID, Some("openid"))
        }
        other => ApiError::from(other).in_oauth_shape(),
    }
}

fn invalid_token() -> ApiError {
    ApiError::bearer_resource(StatusCode::UNAUTHORIZED, Some("invalid_token"), BAD_TOKEN, None)
}

fn invalid_request(description: &str) -> ApiError {
    // The form's messages hold no quote or backslash.
    ApiError::bearer_resource(StatusCode::BAD_REQUEST, Some("invalid_request"), description, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn challenge(e: &ApiError) -> String {
        let response = actix_web::ResponseError::error_response(e);
        let value = response.headers().get(actix_web::http::header::WWW_AUTHENTICATE).expect("challenge");
        value.to_str().expect("ascii").to_owned()
    }

    #[test]
    fn each_refusal_carries_its_rfc_6750_challenge_and_body() {
        let missing = ApiError::bearer_resource(StatusCode::UNAUTHORIZED, None, NO_TOKEN, None);
        assert_eq!(challenge(&missing), r#"Bearer realm="credencial""#, "no error code without a token");
        assert_eq!(missing.body()["error"], "invalid_token");

        let bad = refusal(ServiceError::UnknownUser);
        assert_eq!(bad.status(), StatusCode::UNAUTHORIZED);
        assert!(challenge(&bad).starts_with(r#"Bearer realm="credencial", error="invalid_token""#));

        let scope = refusal(ServiceError::Forbidden("x".into()));
        assert_eq!(scope.status(), StatusCode::FORBIDDEN);
        assert_eq!(scope.body()["error"], "insufficient_scope");
        assert!(challenge(&scope).ends_with(r#"scope="openid""#), "{}", challenge(&scope));

        let down = refusal(ServiceError::Storage("db".into()));
        assert_eq!(down.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(down.body()["error"], "temporarily_unavailable");
    }
}
