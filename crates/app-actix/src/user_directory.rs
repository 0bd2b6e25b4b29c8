//! The user-management API, compatible with the Sabiá API as its clients
//! call it: `GET /usuarios/{cpf-or-email}/`, `GET /usuarios/?cpfs=…&page=N`
//! and `POST /usuarios/` (form-encoded or JSON), trailing slash optional,
//! authenticated by `Authorization: Token <api token>` (the application's
//! static token) or `Authorization: Bearer <access token>` (the
//! application's own OAuth2 token, from the `client_credentials` grant).
//!
//! Answers (DRF's shapes): 200/201 the user(s) (`no-store`: personal
//! data); 400 `{"<field>": ["<message>"]}`; 403 `{"detail": …}` for a
//! missing or wrong token (`authentication_failed`, counted for the
//! per-address limit) or a missing permission (`permission_denied`); 404
//! `{"detail": "Not found."}`; 429 once the address is limited, with
//! `Retry-After`; 503 when storage is down.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, FromRequest, HttpRequest, HttpResponse};
use credencial_application::{ApiCaller, PreRegistrationOutcome, UserDirectoryService};
use credencial_domain::account::FieldErrors;
use credencial_domain::admin::{DirectoryUser, PreRegistrationForm};
use serde_json::{json, Map, Value};

use crate::body::FormOrJsonBody;
use crate::client_address::client_address;
use crate::error::ApiError;
use crate::routes::{self, resource};

/// The collection's path.
pub const PATH: &str = "/usuarios";

/// The answer to a missing, malformed or wrong token.
const INVALID_TOKEN: &str = "Invalid token.";

/// The API's resources, with the service as application data.
pub fn resources(service: web::Data<UserDirectoryService>) -> (actix_web::Resource, actix_web::Resource) {
    (
        resource(PATH, "GET, POST")
            .app_data(service.clone())
            .route(routes::get().to(list))
            .route(web::post().to(create)),
        resource(&format!("{PATH}/{{cpf_ou_email}}"), "GET").app_data(service).route(routes::get().to(read)),
    )
}

/// The credential an `Authorization` header presents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Presented<'a> {
    /// `Token <api token>` (scheme in any case): a static API token.
    Static(&'a str),
    /// `Bearer <access token>` (scheme in any case): an application's own
    /// OAuth2 token.
    Bearer(&'a str),
}

/// The credential of the `Authorization` header; `None` when there is no
/// such header or its scheme is neither.
fn presented_token(req: &HttpRequest) -> Option<Presented<'_>> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    if scheme.eq_ignore_ascii_case("token") {
        Some(Presented::Static(token.trim()))
    } else if scheme.eq_ignore_ascii_case("bearer") {
        Some(Presented::Bearer(token.trim()))
    } else {
        None
    }
}

/// The calling application, or the refusal.
async fn caller(req: &HttpRequest, service: &UserDirectoryService) -> Result<ApiCaller, ApiError> {
    let from = client_address(req);
    let authenticated = match presented_token(req) {
        Some(Presented::Bearer(token)) => service.authenticate_machine(Some(token), from).await,
        Some(Presented::Static(token)) => service.authenticate(Some(token), from).await,
        None => service.authenticate(None, from).await,
    };
    authenticated.map_err(|e| match e {
        credencial_application::ServiceError::InvalidCredentials => {
            ApiError::detail(StatusCode::FORBIDDEN, INVALID_TOKEN, "authentication_failed")
        }
        other => ApiError::from(other),
    })
}

/// A user as the API answers it.
fn user_json(user: &DirectoryUser) -> Value {
    json!({
        "username": user.username,
        "cpf": user.cpf,
        "email": user.email,
        "nome": user.nome,
        "genero": user.genero,
        "data_de_nascimento": user.data_de_nascimento,
        "validado": user.validado,
    })
}

/// A JSON answer with `status` that no cache keeps (personal data).
fn private(status: StatusCode, body: &Value) -> HttpResponse {
    HttpResponse::build(status)
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .insert_header((header::PRAGMA, HeaderValue::from_static("no-cache")))
        .json(body)
}

/// 400 with DRF's per-field shape.
fn field_errors(errors: &FieldErrors) -> ApiError {
    let mut map = Map::new();
    for e in errors.iter() {
        map.insert(e.field.to_owned(), json!([e.message]));
    }
    ApiError::fields(map)
}

/// `GET /usuarios/{cpf-or-email}/`: 200 the user, 404 when none.
async fn read(
    req: HttpRequest,
    key: web::Path<String>,
    service: web::Data<UserDirectoryService>,
) -> Result<HttpResponse, ApiError> {
    let caller = caller(&req, &service).await?;
    match service.get(&caller, &key).await? {
        Some(user) => Ok(private(StatusCode::OK, &user_json(&user))),
        None => Err(ApiError::not_found()),
    }
}

/// `GET /usuarios/?cpfs=a,b,c&page=N`: 200 a list of the users found.
async fn list(req: HttpRequest, service: web::Data<UserDirectoryService>) -> Result<HttpResponse, ApiError> {
    let caller = caller(&req, &service).await?;
    let query: Vec<(String, String)> = serde_urlencoded::from_str(req.query_string()).unwrap_or_default();
    let value = |name: &str| query.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    for name in ["cpfs", "page"] {
        if let Some(message) = value(name).and_then(crate::body::null_character_message) {
            return Err(ApiError::field(name, message));
        }
    }
    let cpfs = value("cpfs").ok_or_else(|| ApiError::field("cpfs", crate::body::REQUIRED))?;
    let page = match value("page").map(str::trim) {
        None | Some("") => 1,
        Some(text) => text
            .parse::<u32>()
            .ok()
            .filter(|n| *n >= 1)
            .ok_or_else(|| ApiError::field("page", "Informe um número de página a partir de 1."))?,
    };
    let users = service.list(&caller, cpfs, page).await.map_err(|e| match e {
        credencial_application::ServiceError::Invalid(why) => ApiError::field("cpfs", &why),
        other => ApiError::from(other),
    })?;
    let body = Value::Array(users.iter().map(user_json).collect());
    Ok(private(StatusCode::OK, &body))
}

/// `POST /usuarios/`: 201 the user created, 200 the user that had the CPF
/// already, 400 with field errors.
async fn create(
    req: HttpRequest,
    payload: web::Payload,
    service: web::Data<UserDirectoryService>,
) -> Result<HttpResponse, ApiError> {
    // The token first, as DRF does: a caller without one learns nothing
    // about the body.
    let caller = caller(&req, &service).await?;
    let mut payload = payload.into_inner();
    let body = FormOrJsonBody::from_request(&req, &mut payload).await?;
    let [cpf, email, nome, genero, data_de_nascimento] =
        ["cpf", "email", "nome", "genero", "data_de_nascimento"].map(|name| body.0.optional(name));
    let (cpf, email, nome, genero, data_de_nascimento) = (cpf?, email?, nome?, genero?, data_de_nascimento?);
    let form = PreRegistrationForm {
        cpf: cpf.as_deref(),
        email: email.as_deref(),
        nome: nome.as_deref(),
        genero: genero.as_deref(),
        data_de_nascimento: data_de_nascimento.as_deref(),
    };
    match service.create(&caller, form).await? {
        PreRegistrationOutcome::Created(user) => Ok(private(StatusCode::CREATED, &user_json(&user))),
        PreRegistrationOutcome::Existing(user) => Ok(private(StatusCode::OK, &user_json(&user))),
        PreRegistrationOutcome::Invalid(errors) => Err(field_errors(&errors)),
    }
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;

    #[test]
    fn the_token_and_bearer_schemes_are_read_and_no_other() {
        let read = |value: &'static str| {
            let req = TestRequest::default().insert_header((header::AUTHORIZATION, value)).to_http_request();
            presented_token(&req).map(|p| format!("{p:?}"))
        };
        assert_eq!(read("Token abc.def").as_deref(), Some(r#"Static("abc.def")"#));
        assert_eq!(read("token  abc").as_deref(), Some(r#"Static("abc")"#));
        assert_eq!(read("Bearer abc").as_deref(), Some(r#"Bearer("abc")"#));
        assert_eq!(read("bearer abc").as_deref(), Some(r#"Bearer("abc")"#));
        assert_eq!(read("Basic abc"), None);
        assert_eq!(presented_token(&TestRequest::default().to_http_request()), None);
    }
}
