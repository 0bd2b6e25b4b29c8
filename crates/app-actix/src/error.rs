//! The one error type of the HTTP layer: every refusal is JSON.

use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use credencial_application::{ClientLoginError, ServiceError};
use credencial_domain::oauth::OAuthError;
use credencial_domain::{EndpointError, TokenError};
use credencial_ports::UpstreamError;
use serde_json::{json, Map, Value};

/// The `detail` of a token pair refused because an administrator set the
/// account's password (a temporary one): the person sets their own first.
pub const PASSWORD_CHANGE_REQUIRED: &str =
    "A senha desta conta foi definida pela administração e precisa ser trocada. Defina uma nova senha em \
     /conta/senha/ e tente de novo.";

/// The `detail` of a token pair refused for the password alone: the
/// account has a second factor (`code` `second_factor_required`).
pub const SECOND_FACTOR_REQUIRED: &str =
    "Esta conta exige um segundo fator. Envie também \"otp\" com o código do aplicativo autenticador (ou um código \
     de recuperação), ou use uma senha de aplicativo criada em /conta/seguranca/.";

/// The `detail` of a token pair refused for a wrong second factor's code
/// (`code` `second_factor_invalid`).
pub const SECOND_FACTOR_INVALID: &str = "O código do segundo fator está errado ou já foi usado.";

/// A JSON error response: `{"detail": …, "code": …}` or, for validation,
/// `{"<field>": ["<message>"]}`, with optional headers.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    body: Value,
    headers: Vec<(HeaderName, HeaderValue)>,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.status.as_u16(), self.body)
    }
}

impl ApiError {
    /// `{"detail": detail, "code": code}` with `status`.
    pub fn detail(status: StatusCode, detail: &str, code: &str) -> Self {
        Self { status, body: json!({ "detail": detail, "code": code }), headers: Vec::new() }
    }

    /// 400 with per-field messages, in DRF's shape.
    pub fn fields(errors: Map<String, Value>) -> Self {
        Self { status: StatusCode::BAD_REQUEST, body: Value::Object(errors), headers: Vec::new() }
    }

    /// 400 for one field.
    pub fn field(name: &str, message: &str) -> Self {
        let mut errors = Map::new();
        errors.insert(name.to_owned(), json!([message]));
        Self::fields(errors)
    }

    /// Adds a response header.
    pub fn with_header(mut self, name: HeaderName, value: &str) -> Self {
        if let Ok(v) = HeaderValue::from_str(value) {
            self.headers.push((name, v));
        }
        self
    }

    /// The status code.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The JSON body.
    pub fn body(&self) -> &Value {
        &self.body
    }

    /// 400 for a body that is not JSON.
    pub fn parse_error(reason: &str) -> Self {
        Self::detail(StatusCode::BAD_REQUEST, &format!("JSON parse error - {reason}"), "parse_error")
    }

    /// 401 for a request that carries no token at all.
    pub fn not_authenticated() -> Self {
        Self::detail(StatusCode::UNAUTHORIZED, "Authentication credentials were not provided.", "not_authenticated")
            .with_header(header::WWW_AUTHENTICATE, r#"Bearer realm="api""#)
    }

    /// The same error as an OAuth2 resource answers it (RFC 6750 §3.1): a
    /// 401 for a token that is not acceptable (bad, expired, revoked, or
    /// its user gone) says `WWW-Authenticate: Bearer realm="api",
    /// error="invalid_token"`; the body and every other error are kept.
    pub fn invalid_bearer_token(mut self) -> Self {
        if self.status == StatusCode::UNAUTHORIZED {
            self.headers.retain(|(name, _)| name != header::WWW_AUTHENTICATE);
            self = self.with_header(header::WWW_AUTHENTICATE, r#"Bearer realm="api", error="invalid_token""#);
        }
        self
    }

    /// An error of a protected OAuth2 resource (`/oauth/userinfo/`, RFC
    /// 6750 §3): `{"error", "error_description"}` with `status` and
    /// `WWW-Authenticate: Bearer realm="credencial"`, which names `error`
    /// (and the `scope` needed) unless the request carried no token at all
    /// (`error` is then `None` in the header and `invalid_token` in the
    /// body); never cached.
    pub fn bearer_resource(status: StatusCode, error: Option<&str>, description: &str, scope: Option<&str>) -> Self {
        let mut challenge = r#"Bearer realm="credencial""#.to_owned();
        if let Some(error) = error {
            challenge.push_str(&format!(r#", error="{error}", error_description="{description}""#));
        }
        if let Some(scope) = scope {
            challenge.push_str(&format!(r#", scope="{scope}""#));
        }
        let body = json!({ "error": error.unwrap_or("invalid_token"), "error_description": description });
        Self { status, body, headers: Vec::new() }
            .with_header(header::WWW_AUTHENTICATE, &challenge)
            .with_header(header::CACHE_CONTROL, "no-store")
            .with_header(header::PRAGMA, "no-cache")
    }

    /// 405 naming the allowed methods in `Allow`.
    pub fn method_not_allowed(method: &str, allow: &str) -> Self {
        Self::detail(StatusCode::METHOD_NOT_ALLOWED, &format!("Method \"{method}\" not allowed."), "method_not_allowed")
            .with_header(header::ALLOW, allow)
    }

    /// 404 for a path no route serves.
    pub fn not_found() -> Self {
        Self::detail(StatusCode::NOT_FOUND, "Not found.", "not_found")
    }

    /// 413 for a body over `limit` bytes.
    pub fn payload_too_large(limit: usize) -> Self {
        Self::detail(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!("Request body is larger than {limit} bytes."),
            "payload_too_large",
        )
    }

    /// 415 for a body that is declared as something other than JSON.
    pub fn unsupported_media_type(content_type: &str) -> Self {
        Self::detail(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            &format!("Unsupported media type \"{content_type}\" in request."),
            "unsupported_media_type",
        )
    }

    /// 429 with `Retry-After` for a credential check refused by the
    /// brute-force limits, in DRF's words.
    pub fn throttled(retry_after_secs: u64) -> Self {
        Self::detail(
            StatusCode::TOO_MANY_REQUESTS,
            &format!("Request was throttled. Expected available in {retry_after_secs} seconds."),
            "throttled",
        )
        .with_header(header::RETRY_AFTER, &retry_after_secs.to_string())
    }

    /// The token endpoint's 429: `{"error": "too_many_requests",
    /// "error_description"}` with `Retry-After`, never cached.
    pub fn oauth_throttled(retry_after_secs: u64) -> Self {
        Self {
            status: StatusCode::TOO_MANY_REQUESTS,
            body: json!({
                "error": "too_many_requests",
                "error_description": format!("Too many failed attempts. Retry after {retry_after_secs} seconds."),
            }),
            headers: Vec::new(),
        }
        .with_header(header::RETRY_AFTER, &retry_after_secs.to_string())
        .with_header(header::CACHE_CONTROL, "no-store")
        .with_header(header::PRAGMA, "no-cache")
    }

    /// A use-case error at the token endpoint, in the OAuth2 shape.
    pub fn oauth_service(e: ServiceError) -> Self {
        match e {
            ServiceError::Throttled { retry_after_secs } => Self::oauth_throttled(retry_after_secs),
            other => Self::from(other).in_oauth_shape(),
        }
    }

    /// 401 for a token that is not acceptable.
    pub fn token(e: &TokenError) -> Self {
        let detail = match e {
            TokenError::WrongType => "Token has wrong type",
            TokenError::Revoked => "Token is blacklisted",
            TokenError::Invalid | TokenError::Expired | TokenError::NotYetValid => "Token is invalid or expired",
        };
        Self::detail(StatusCode::UNAUTHORIZED, detail, "token_not_valid")
            .with_header(header::WWW_AUTHENTICATE, r#"Bearer realm="api""#)
    }

    /// An OAuth2 token-endpoint error (RFC 6749 §5.2): `{"error",
    /// "error_description"}`, 400, or for `invalid_client` 401 with
    /// `WWW-Authenticate: Basic`; never cached.
    pub fn oauth(e: &OAuthError) -> Self {
        let status = match e {
            OAuthError::InvalidClient(_) => StatusCode::UNAUTHORIZED,
            _ => StatusCode::BAD_REQUEST,
        };
        let mut error = Self {
            status,
            body: json!({ "error": e.error_code(), "error_description": e.description() }),
            headers: Vec::new(),
        };
        if status == StatusCode::UNAUTHORIZED {
            error = error.with_header(header::WWW_AUTHENTICATE, r#"Basic realm="credencial""#);
        }
        error.with_header(header::CACHE_CONTROL, "no-store").with_header(header::PRAGMA, "no-cache")
    }

    /// The same error in the OAuth2 shape, for the token endpoint: `detail`
    /// becomes `error_description`, `code` becomes `error` (a 503 is
    /// `temporarily_unavailable`, another 5xx `server_error`, a 4xx
    /// `invalid_request`); `error_id` and headers are kept.
    pub fn in_oauth_shape(mut self) -> Self {
        if self.body.get("error").is_some() {
            return self;
        }
        let error = match self.status {
            StatusCode::SERVICE_UNAVAILABLE => "temporarily_unavailable",
            s if s.is_server_error() => "server_error",
            _ => "invalid_request",
        };
        let description = self.body.get("detail").and_then(Value::as_str).unwrap_or("invalid request").to_owned();
        let mut body = Map::new();
        body.insert("error".into(), Value::String(error.into()));
        body.insert("error_description".into(), Value::String(description));
        if let Some(id) = self.body.get("error_id") {
            body.insert("error_id".into(), id.clone());
        }
        self.body = Value::Object(body);
        self.with_header(header::CACHE_CONTROL, "no-store").with_header(header::PRAGMA, "no-cache")
    }

    /// A 5xx whose details go to the log under an id, never to the client.
    fn server_fault(status: StatusCode, detail: &str, code: &str, internal: &str) -> Self {
        let error_id = uuid::Uuid::new_v4().simple().to_string();
        tracing::error!(%error_id, status = status.as_u16(), error = internal, "request failed");
        let mut e = Self::detail(status, detail, code);
        if let Value::Object(map) = &mut e.body {
            map.insert("error_id".into(), Value::String(error_id));
        }
        e
    }
}

impl ApiError {
    /// A client-component login failure: the status and code its HTML page
    /// also uses (`/auth/callback/`).
    pub fn client_login(e: ClientLoginError) -> Self {
        match e {
            ClientLoginError::StateMismatch => {
                Self::detail(StatusCode::BAD_REQUEST, "The login state does not match.", "state_mismatch")
            }
            ClientLoginError::Denied => Self::detail(StatusCode::FORBIDDEN, "Access was denied.", "access_denied"),
            ClientLoginError::Refused(why) => {
                Self::server_fault(StatusCode::BAD_GATEWAY, "The provider refused the login.", "provider_refused", &why)
            }
            ClientLoginError::ProviderDown(why) => Self::server_fault(
                StatusCode::BAD_GATEWAY,
                "The provider is unavailable.",
                "provider_unavailable",
                &why,
            ),
            ClientLoginError::Inactive => {
                Self::detail(StatusCode::FORBIDDEN, "The account is inactive.", "account_inactive")
            }
            ClientLoginError::NotRegistered => Self::detail(
                StatusCode::FORBIDDEN,
                "There is no account for this person in this application.",
                "account_not_registered",
            ),
            ClientLoginError::MissingLookup(column) => Self::detail(
                StatusCode::UNPROCESSABLE_ENTITY,
                &format!("The profile has no usable value for {column}."),
                "missing_lookup",
            ),
            ClientLoginError::LogoutToken(why) => Self::detail(
                StatusCode::BAD_REQUEST,
                &format!("The logout token is refused: {why}."),
                "invalid_request",
            ),
        }
    }
}

impl From<ServiceError> for ApiError {
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::InvalidCredentials => Self::detail(
                StatusCode::UNAUTHORIZED,
                "No active account found with the given credentials",
                "authentication_failed",
            ),
            ServiceError::Throttled { retry_after_secs } => Self::throttled(retry_after_secs),
            ServiceError::PasswordChangeRequired => {
                Self::detail(StatusCode::UNAUTHORIZED, PASSWORD_CHANGE_REQUIRED, "password_change_required")
            }
            ServiceError::SecondFactorRequired => {
                Self::detail(StatusCode::UNAUTHORIZED, SECOND_FACTOR_REQUIRED, "second_factor_required")
            }
            ServiceError::SecondFactorInvalid => {
                Self::detail(StatusCode::UNAUTHORIZED, SECOND_FACTOR_INVALID, "second_factor_invalid")
            }
            ServiceError::InvalidToken(t) => Self::token(&t),
            ServiceError::OAuth(e) => Self::oauth(&e),
            ServiceError::UnknownUser => Self::detail(StatusCode::UNAUTHORIZED, "User not found", "user_not_found")
                .with_header(header::WWW_AUTHENTICATE, r#"Bearer realm="api""#),
            ServiceError::InvalidEndpoint(EndpointError::NotAPlainPath) => {
                Self::field("endpoint", "Must be a plain path starting with '/' (no scheme, host, '..', '%' or '\\').")
            }
            ServiceError::InvalidEndpoint(EndpointError::NotAllowed) => {
                Self::field("endpoint", "This endpoint is not on the allow-list.")
            }
            ServiceError::Upstream(u) => match u {
                UpstreamError::Unauthorized => Self::detail(
                    StatusCode::UNAUTHORIZED,
                    "The upstream resource refused the token.",
                    "upstream_unauthorized",
                ),
                UpstreamError::Forbidden => {
                    Self::detail(StatusCode::FORBIDDEN, "The upstream resource denied access.", "upstream_forbidden")
                }
                UpstreamError::BadResponse(why) => Self::server_fault(
                    StatusCode::BAD_GATEWAY,
                    "The upstream resource failed or sent an invalid answer.",
                    "bad_gateway",
                    &why,
                ),
                UpstreamError::Timeout => Self::server_fault(
                    StatusCode::GATEWAY_TIMEOUT,
                    "The upstream resource did not answer in time.",
                    "gateway_timeout",
                    "upstream timed out",
                ),
                // Registries only; the consume routes never see it.
                UpstreamError::NotFound => Self::server_fault(
                    StatusCode::BAD_GATEWAY,
                    "The upstream resource failed or sent an invalid answer.",
                    "bad_gateway",
                    "upstream has no record",
                ),
            },
            ServiceError::ClientLogin(e) => Self::client_login(e),
            ServiceError::Invalid(why) => Self::detail(StatusCode::BAD_REQUEST, &why, "invalid"),
            ServiceError::LastStaff => Self::detail(
                StatusCode::CONFLICT,
                "The last active staff account can be neither demoted nor deactivated.",
                "last_staff",
            ),
            ServiceError::Forbidden(why) => Self::detail(StatusCode::FORBIDDEN, &why, "permission_denied"),
            ServiceError::Storage(why) => Self::server_fault(
                StatusCode::SERVICE_UNAVAILABLE,
                "The service is temporarily unavailable.",
                "service_unavailable",
                &why,
            )
            .with_header(header::RETRY_AFTER, "5"),
            ServiceError::Internal(why) => {
                Self::server_fault(StatusCode::INTERNAL_SERVER_ERROR, "Internal error.", "internal_error", &why)
            }
        }
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status);
        for (name, value) in &self.headers {
            response.insert_header((name.clone(), value.clone()));
        }
        response.json(&self.body)
    }
}
