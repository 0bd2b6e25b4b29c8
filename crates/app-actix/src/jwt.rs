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

use actix_web::dev::{AppService, HttpServiceFactory, Url};
use actix_web::guard::{Guard, GuardContext};
use actix_web::{web, HttpRequest, HttpResponse};
use credencial_application::TokenService;
use secrecy::SecretString;

use crate::body::{JsonBody, Trim};
use crate::client_address::client_address;
use crate::consume;
use crate::error::ApiError;
use crate::private::private_json;
use crate::routes::{self, two_forms};

/// The prefix the sub-application is mounted under unless told otherwise.
pub const DEFAULT_PREFIX: &str = "/api/token/";

/// `POST pair` — `{"username", "password"}` → `{"access", "refresh", "username"}`;
/// 429 with `Retry-After` while the username or the client address is
/// limited (the address is the one [`ClientAddressSource`] gives, by
/// default the TCP peer). An account with a second factor answers 401
/// `second_factor_required` to the password alone and takes `otp` (an
/// app's code or a recovery code) in the same body; a wrong code is 401
/// `second_factor_invalid`. A `password` of an application password's
/// shape (`credapp-…`, made at `/conta/seguranca/`) is checked against
/// that account's application passwords and needs no `otp`.
///
/// [`ClientAddressSource`]: crate::client_address::ClientAddressSource
pub async fn pair(
    req: HttpRequest,
    service: web::Data<TokenService>,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let [username, password] = body.required([("username", Trim::Yes), ("password", Trim::No)])?;
    let otp = body.optional("otp")?;
    let pair = service.pair(&username, SecretString::from(password), otp.as_deref(), client_address(&req)).await?;
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
    Ok(ok_empty_object())
}

/// `POST blacklist` — `{"refresh"}` → `{}` (simplejwt's logout): that
/// refresh token and every current token of its family are dead.
pub async fn blacklist(service: web::Data<TokenService>, body: JsonBody) -> Result<HttpResponse, ApiError> {
    let [token] = body.required([("refresh", Trim::Yes)])?;
    service.blacklist(&token).await?;
    Ok(ok_empty_object())
}

/// `200 {}` (`application/json`), from a static body: verify answers it to
/// every resource server's check, so no JSON value is built and serialised
/// for it.
pub(crate) fn ok_empty_object() -> HttpResponse {
    HttpResponse::Ok().content_type(actix_web::http::header::ContentType::json()).body("{}")
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

/// The sub-application's routes under its prefix, the busiest first (the
/// scope tries them in this order: `verify` is what every resource server
/// calls).
const ROUTES: [&str; 6] = ["/verify", "/pair", "/refresh", "/blacklist", "/user-info", "/rh/eu"];

impl HttpServiceFactory for JwtApi {
    fn register(self, config: &mut AppService) {
        let scope_path = self.scope_path();
        let [verify_path, pair_path, refresh_path, blacklist_path, user_info_path, rh_eu_path] = ROUTES;
        web::scope(&scope_path)
            .guard(OwnPaths::of(&scope_path))
            .app_data(self.service.clone())
            .service(two_forms(verify_path, "POST", |r| r.route(web::post().to(verify))))
            .service(two_forms(pair_path, "POST", |r| r.route(web::post().to(pair))))
            .service(two_forms(refresh_path, "POST", |r| r.route(web::post().to(refresh))))
            .service(two_forms(blacklist_path, "POST", |r| r.route(web::post().to(blacklist))))
            .service(consume_resource(user_info_path))
            .service(consume_resource(rh_eu_path))
            .register(config);
    }
}

/// The scope's guard: it claims a request only when the path is one of
/// [`ROUTES`] under the prefix (with or without its trailing slash), so
/// that any other path under the prefix goes on to the services registered
/// after it, as if the scope were not there. The scope can then be
/// registered first — before the pages, whose two-form routes actix tries
/// one by one, each with a regular-expression set — without hiding a route
/// that shares its prefix.
struct OwnPaths(Vec<String>);

impl OwnPaths {
    fn of(scope_path: &str) -> Self {
        Self(ROUTES.iter().flat_map(|r| [format!("{scope_path}{r}"), format!("{scope_path}{r}/")]).collect())
    }

    fn claims(&self, path: &str) -> bool {
        self.0.iter().any(|p| p == path)
    }
}

impl Guard for OwnPaths {
    fn check(&self, ctx: &GuardContext<'_>) -> bool {
        let uri = &ctx.head().uri;
        if uri.path().contains('%') {
            // The router matches the path with its percent-encoded
            // characters re-quoted as actix's `Url` does.
            return self.claims(Url::new(uri.clone()).path());
        }
        self.claims(uri.path())
    }
}

fn consume_resource(path: &str) -> impl HttpServiceFactory {
    two_forms(path, "GET, POST", |r| {
        r.route(routes::get().to(consume::consume_get)).route(web::post().to(consume::consume_post))
    })
}
