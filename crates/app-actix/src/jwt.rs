//! The JWT sub-application: `pair`, `refresh`, `verify`, `blacklist` and the consume
//! routes `user-info` and `rh/eu`, mountable under any prefix.
//!
//! ```no_run
//! # use std::sync::Arc;
//! # fn demo(service: Arc<credencial_application::TokenService>) {
//! use actix_web::{web, App};
//! use credencial_app_actix::jwt::{self, JwtApi};
//!
//! // Everything under the default prefix /api/token/, with one call:
//! let app = App::new().service(JwtApi::new(Arc::clone(&service)));
//! // …or under another prefix:
//! let app = App::new().service(JwtApi::new(Arc::clone(&service)).at("/auth/jwt/"));
//! // …or just the handlers, on routes of your own:
//! let app = App::new()
//!     .app_data(web::Data::from(service))
//!     .route("/login/", web::post().to(jwt::pair));
//! # }
//! ```

use std::sync::Arc;

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::{web, HttpRequest, HttpResponse};
use credencial_application::TokenService;
use secrecy::SecretString;

use crate::body::{JsonBody, Trim};
use crate::client_address::client_address;
use crate::consume;
use crate::error::ApiError;
use crate::private::private_json;
use crate::routes::{self, resource};

/// The prefix the sub-application is mounted under unless told otherwise.
pub const DEFAULT_PREFIX: &str = "/api/token/";

/// `POST pair` — `{"username", "password"}` → `{"access", "refresh", "username"}`;
/// 429 with `Retry-After` while the username or the client address is
/// limited (the address is the one [`ClientAddressSource`] gives, by
/// default the TCP peer).
///
/// [`ClientAddressSource`]: crate::client_address::ClientAddressSource
pub async fn pair(
    req: HttpRequest,
    service: web::Data<TokenService>,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let [username, password] = body.required([("username", Trim::Yes), ("password", Trim::No)])?;
    let pair = service.pair(&username, SecretString::from(password), client_address(&req)).await?;
    Ok(private_json(pair))
}

/// `POST refresh` — `{"refresh"}` → `{"access", "refresh"}`; the presented
/// refresh token is rotated out.
pub async fn refresh(service: web::Data<TokenService>, body: JsonBody) -> Result<HttpResponse, ApiError> {
    let [token] = body.required([("refresh", Trim::Yes)])?;
    let pair = service.refresh(&token).await?;
    Ok(private_json(pair))
}

/// `POST verify` — `{"token"}` → `{}` when the token is valid.
pub async fn verify(service: web::Data<TokenService>, body: JsonBody) -> Result<HttpResponse, ApiError> {
    let [token] = body.required([("token", Trim::Yes)])?;
    service.verify(&token).await?;
    Ok(HttpResponse::Ok().json(serde_json::json!({})))
}

/// `POST blacklist` — `{"refresh"}` → `{}` (simplejwt's logout): that
/// refresh token and every current token of its family are dead.
pub async fn blacklist(service: web::Data<TokenService>, body: JsonBody) -> Result<HttpResponse, ApiError> {
    let [token] = body.required([("refresh", Trim::Yes)])?;
    service.blacklist(&token).await?;
    Ok(HttpResponse::Ok().json(serde_json::json!({})))
}

/// The mountable sub-application. Register it with `App::service` or
/// `ServiceConfig::service`; it brings its own application data.
pub struct JwtApi {
    service: web::Data<TokenService>,
    prefix: String,
}

impl JwtApi {
    /// The sub-application under [`DEFAULT_PREFIX`].
    pub fn new(service: Arc<TokenService>) -> Self {
        Self { service: web::Data::from(service), prefix: DEFAULT_PREFIX.to_owned() }
    }

    /// Mounts it under `prefix` instead (`/auth/jwt/`, `/auth/jwt` and
    /// `auth/jwt` mean the same).
    pub fn at(mut self, prefix: &str) -> Self {
        self.prefix = prefix.to_owned();
        self
    }

    fn scope_path(&self) -> String {
        let trimmed = self.prefix.trim_matches('/');
        if trimmed.is_empty() {
            String::new()
        } else {
            format!("/{trimmed}")
        }
    }
}

impl HttpServiceFactory for JwtApi {
    fn register(self, config: &mut AppService) {
        web::scope(&self.scope_path())
            .app_data(self.service.clone())
            .service(resource("/pair", "POST").route(web::post().to(pair)))
            .service(resource("/refresh", "POST").route(web::post().to(refresh)))
            .service(resource("/verify", "POST").route(web::post().to(verify)))
            .service(resource("/blacklist", "POST").route(web::post().to(blacklist)))
            .service(consume_resource("/user-info"))
            .service(consume_resource("/rh/eu"))
            .register(config);
    }
}

fn consume_resource(path: &str) -> actix_web::Resource {
    resource(path, "GET, POST")
        .route(routes::get().to(consume::consume_get))
        .route(web::post().to(consume::consume_post))
}
