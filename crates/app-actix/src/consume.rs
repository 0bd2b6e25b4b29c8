//! The consume routes: read user data from the upstream resource with the
//! caller's access token.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use credencial_application::TokenService;
use credencial_domain::TokenError;

use crate::body::OptionalJsonBody;
use crate::error::ApiError;
use crate::private::private_json;

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
    Ok(private_json(data))
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
    Ok(private_json(data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;
    use proptest::prelude::*;

    fn bearer_of(value: &[u8]) -> Option<Result<Option<String>, ApiError>> {
        let value = header::HeaderValue::from_bytes(value).ok()?;
        Some(bearer_token(&TestRequest::get().insert_header((header::AUTHORIZATION, value)).to_http_request()))
    }

    proptest! {
        #[test]
        fn any_authorization_header_is_a_token_nothing_or_a_401(value in prop::collection::vec(any::<u8>(), 0..80)) {
            if let Some(Err(e)) = bearer_of(&value) {
                prop_assert_eq!(e.status().as_u16(), 401);
                prop_assert_eq!(&e.body()["code"], "token_not_valid");
            }
        }

        #[test]
        fn a_bearer_token_comes_out_as_sent(
            scheme in prop::sample::select(vec!["Bearer", "bearer", "BEARER"]),
            gap in "[ \t]{1,3}",
            token in "[A-Za-z0-9._~+/=-]{1,60}",
        ) {
            let header = format!("{scheme}{gap}{token}");
            prop_assert_eq!(bearer_of(header.as_bytes()).map(|r| r.ok()), Some(Some(Some(token))));
        }

        #[test]
        fn other_schemes_are_no_bearer_token(scheme in "[A-Za-z]{1,10}", rest in "[ -~]{0,30}") {
            prop_assume!(!scheme.eq_ignore_ascii_case("bearer"));
            let header = format!("{scheme} {rest}");
            prop_assert_eq!(bearer_of(header.as_bytes()).map(|r| r.ok()), Some(Some(None)));
        }
    }
}
