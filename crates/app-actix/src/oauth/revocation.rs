//! `POST /oauth/revoke/` (RFC 7009) and `POST /oauth/introspect/` (RFC
//! 7662): form-encoded, client-authenticated as at `/oauth/token/`, errors
//! in RFC 6749's shape, answers never cached.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use credencial_application::{OAuthService, TokenRequest};
use credencial_domain::oauth::OAuthError;

use crate::client_address::client_address;
use crate::error::ApiError;
use crate::form::{read_form, FormError};
use crate::private::private_json;

/// Path of the revocation endpoint (a trailing slash is optional).
pub const REVOKE_PATH: &str = "/oauth/revoke";
/// Path of the introspection endpoint (a trailing slash is optional).
pub const INTROSPECT_PATH: &str = "/oauth/introspect";

/// `POST /oauth/revoke/`: `token` (and an optional `token_type_hint`,
/// which is not needed: the token says its type) → 200 `{}` whether or not
/// anything was revoked (RFC 7009 §2.2); 400 `invalid_request` without
/// `token`; 401 `invalid_client`; 429 while the client address is limited.
pub async fn revoke(
    req: HttpRequest,
    payload: web::Payload,
    oauth: web::Data<OAuthService>,
) -> Result<HttpResponse, ApiError> {
    let (client, token) = client_and_token(&req, payload).await?;
    oauth.revoke(&client, token.as_deref()).await.map_err(ApiError::oauth_service)?;
    Ok(private_json(serde_json::json!({})))
}

/// `POST /oauth/introspect/`: `token` → `{"active": false}` or `{"active":
/// true, "scope", "client_id", "sub", "exp", "iat", "token_type"}`, never
/// cached; 400 `invalid_request` without `token`; 401 `invalid_client` (a
/// public client included); 429 while the client address is limited.
pub async fn introspect(
    req: HttpRequest,
    payload: web::Payload,
    oauth: web::Data<OAuthService>,
) -> Result<HttpResponse, ApiError> {
    let (client, token) = client_and_token(&req, payload).await?;
    let answer = oauth.introspect(&client, token.as_deref()).await.map_err(ApiError::oauth_service)?;
    Ok(private_json(answer))
}

/// The client credentials (as at the token endpoint) and the `token` of a
/// revocation or introspection form. `token_type_hint` is read (at most
/// once, like every field) and otherwise ignored.
async fn client_and_token(
    req: &HttpRequest,
    payload: web::Payload,
) -> Result<(TokenRequest, Option<String>), ApiError> {
    let invalid = |e: FormError| match e {
        FormError::TooLarge => ApiError::payload_too_large(crate::body::MAX_BODY_BYTES).in_oauth_shape(),
        other => ApiError::oauth(&OAuthError::InvalidRequest(other.message())),
    };
    let fields = read_form(req, payload).await.map_err(invalid)?;
    let field = |name: &str| fields.owned(name).map_err(invalid);
    let authorization = req.headers().get(header::AUTHORIZATION).map(|v| v.to_str().unwrap_or("Basic !").to_owned());
    let _hint = field("token_type_hint")?;
    let client = TokenRequest {
        authorization,
        client_id: field("client_id")?,
        client_secret: field("client_secret")?,
        client_address: client_address(req),
        ..TokenRequest::default()
    };
    Ok((client, field("token")?))
}
