//! The client component's routes: the host application's side of an OAuth2
//! login.
//!
//! - `GET /auth/login/?next=/path`: starts a login — a signed, HttpOnly,
//!   `SameSite=Lax` cookie keeps the state, the PKCE verifier and `next`
//!   (10 minutes, `Path=/auth`), then 303 to the provider's authorize page;
//! - `GET /auth/callback/?code&state` (or `?error=…&state`): completes the
//!   login, starts the host session (a signed HttpOnly cookie with the host
//!   user's id and lookup value and an expiry), clears the login cookie and
//!   303s to `next`; a failure is an HTML page with a 4xx/502/503 status;
//! - `GET /auth/logout/`: a page with the logout button; `POST
//!   /auth/logout/` with the page's `csrf_token` (an HMAC keyed by the
//!   HttpOnly session cookie) and not from another origin clears the
//!   session, 303 to `GET /auth/logout/`, which without a session is the
//!   page "Você saiu" with a link to `/auth/login/` (a forged post gets a
//!   403 page and ends nothing);
//! - `GET /auth/me/`: the host user's record, column by column; without a
//!   session, 303 to `/auth/login/?next=/auth/me/`;
//! - `POST /auth/backchannel-logout/` (with back-channel logout on): the
//!   provider's logout token (`logout_token=` in a form, OpenID Connect
//!   Back-Channel Logout §2.5); 200 when taken (the host sessions it names
//!   end at their next request), 400 with `error` when refused (no other
//!   origin check: the signed token is the caller's credential), 502/503
//!   when the provider's keys or the storage cannot be read.
//!
//! Codes, states, verifiers and cookie values are never logged.

pub mod pages;

use std::sync::Arc;

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, ResponseError};
use credencial_application::client_login::HostLogin;
use credencial_application::{CallbackResult, ClientLoginError, ClientLoginService, PendingLogin, ServiceError};

use credencial_domain::form_token::{form_token, form_token_matches, FormPurpose};
use credencial_domain::oauth::OAuthError;

use crate::cookies::{self, CookiePolicy};
use crate::error::ApiError;
use crate::form::read_form;
use crate::html::{self, html, response};
use crate::routes::{self, resource};

/// Path of the login route.
pub const LOGIN_PATH: &str = "/auth/login/";
/// Path of the callback route (the redirect URI registered at the provider).
pub const CALLBACK_PATH: &str = "/auth/callback/";
/// Path of the logout route.
pub const LOGOUT_PATH: &str = "/auth/logout/";
/// Path of the record page.
pub const ME_PATH: &str = "/auth/me/";
/// Path of the back-channel logout receiver (the `backchannel_logout_uri`
/// registered at the provider).
pub const BACKCHANNEL_PATH: &str = "/auth/backchannel-logout/";
/// Cookie of the login in progress.
pub const PENDING_COOKIE: &str = "credencial_client_login";
/// Cookie of the host session.
pub const SESSION_COOKIE: &str = "credencial_host_session";

/// The client component's routes, with their application data.
pub struct ClientLoginApi {
    service: web::Data<ClientLoginService>,
    cookies: web::Data<ClientCookies>,
    table: web::Data<HostTableName>,
}

/// The host user table's name, shown on the record page.
#[derive(Debug, Clone)]
struct HostTableName(String);

/// The client component's two cookies.
#[derive(Debug, Clone, Copy)]
struct ClientCookies(CookiePolicy);

impl ClientCookies {
    fn pending(&self, req: &HttpRequest, value: &str, max_age_secs: i64) -> String {
        self.0.set(req, PENDING_COOKIE, "/auth", value, max_age_secs)
    }

    fn session(&self, req: &HttpRequest, value: &str, max_age_secs: i64) -> String {
        self.0.set(req, SESSION_COOKIE, "/", value, max_age_secs)
    }
}

impl ClientLoginApi {
    /// The routes over `service`; `cookie_secure` marks cookies `Secure`
    /// (`None`: when the request came over https).
    pub fn new(service: Arc<ClientLoginService>, cookie_secure: Option<bool>) -> Self {
        let table = service.table().to_owned();
        Self {
            service: web::Data::from(service),
            cookies: web::Data::new(ClientCookies(CookiePolicy { secure: cookie_secure })),
            table: web::Data::new(HostTableName(table)),
        }
    }
}

impl HttpServiceFactory for ClientLoginApi {
    fn register(self, config: &mut AppService) {
        let data = |r: actix_web::Resource| {
            r.app_data(self.service.clone()).app_data(self.cookies.clone()).app_data(self.table.clone())
        };
        data(resource(LOGIN_PATH, "GET")).route(routes::get().to(login)).register(config);
        data(resource(CALLBACK_PATH, "GET")).route(routes::get().to(callback)).register(config);
        data(resource(LOGOUT_PATH, "GET, POST"))
            .route(routes::get().to(logout_page))
            .route(web::post().to(logout))
            .register(config);
        data(resource(ME_PATH, "GET")).route(routes::get().to(me)).register(config);
        if self.service.receives_logouts() {
            data(resource(BACKCHANNEL_PATH, "POST")).route(web::post().to(backchannel_logout)).register(config);
        }
    }
}

/// The first value of `name` in the query string.
fn query_value(req: &HttpRequest, name: &str) -> Option<String> {
    serde_urlencoded::from_str::<Vec<(String, String)>>(req.query_string())
        .ok()?
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
}

fn see_other(location: &str) -> actix_web::HttpResponseBuilder {
    let mut builder = response(StatusCode::SEE_OTHER);
    builder.insert_header((header::LOCATION, location.to_owned()));
    builder
}

/// `GET /auth/login/`: the pending-login cookie, then 303 to the provider.
async fn login(
    req: HttpRequest,
    service: web::Data<ClientLoginService>,
    cookies: web::Data<ClientCookies>,
) -> HttpResponse {
    let next = query_value(&req, "next");
    let start = service.begin(next.as_deref());
    let pending = PendingLogin {
        state: start.authorization.state.into(),
        pkce_verifier: start.authorization.pkce_verifier.into(),
        next: start.next,
    };
    let sealed = service.seal_pending(&pending);
    see_other(&start.authorization.url)
        .append_header((header::SET_COOKIE, cookies.pending(&req, &sealed.value, sealed.max_age_secs)))
        .finish()
}

/// `GET /auth/callback/`: completes the login and starts the host session.
async fn callback(
    req: HttpRequest,
    service: web::Data<ClientLoginService>,
    cookies: web::Data<ClientCookies>,
) -> HttpResponse {
    let clear_pending = cookies.pending(&req, "", 0);
    let Some(pending) = cookies::read(&req, PENDING_COOKIE).and_then(|v| service.open_pending(&v)) else {
        return failure(ClientLoginError::StateMismatch.into(), &clear_pending);
    };
    let result = match (query_value(&req, "code"), query_value(&req, "error")) {
        (_, Some(error)) => CallbackResult::Error(error),
        (Some(code), None) => CallbackResult::Code(code),
        (None, None) => CallbackResult::Error("invalid_request".to_owned()),
    };
    let state = query_value(&req, "state");
    match service.complete(&pending.state, &pending.pkce_verifier, state.as_deref(), result).await {
        Ok(login) => {
            let session = service.seal_session(&login);
            see_other(&pending.next)
                .append_header((header::SET_COOKIE, cookies.session(&req, &session.value, session.max_age_secs)))
                .append_header((header::SET_COOKIE, clear_pending))
                .finish()
        }
        Err(e) => failure(e, &clear_pending),
    }
}

/// The host session cookie's value and its session, when it holds a
/// genuine, unexpired session the provider did not end; `Err`: the page
/// of a storage failure.
async fn host_session(
    req: &HttpRequest,
    service: &ClientLoginService,
) -> Result<Option<(String, HostLogin)>, HttpResponse> {
    let Some(value) = cookies::read(req, SESSION_COOKIE) else { return Ok(None) };
    match service.open_session(&value).await {
        Ok(session) => Ok(session.map(|session| (value, session))),
        Err(e) => Err(failure(e, "")),
    }
}

/// `POST /auth/backchannel-logout/`: takes the provider's logout token.
async fn backchannel_logout(
    req: HttpRequest,
    payload: web::Payload,
    service: web::Data<ClientLoginService>,
) -> HttpResponse {
    // RFC 6749's error shape (§2.8 allows it), never cached.
    let refused = |why: &str| ApiError::oauth(&OAuthError::InvalidRequest(why.to_owned())).error_response();
    let form = match read_form(&req, payload).await {
        Ok(form) => form,
        Err(_) => return refused("the body is not a form"),
    };
    let token = match form.get("logout_token") {
        Ok(Some(token)) => token.to_owned(),
        Ok(None) => return refused("logout_token is required"),
        Err(_) => return refused("logout_token is repeated"),
    };
    let error = match service.receive_logout(&token).await {
        Ok(()) => return response(StatusCode::OK).insert_header((header::CACHE_CONTROL, "no-store")).finish(),
        Err(ServiceError::ClientLogin(ClientLoginError::LogoutToken(why))) => return refused(&why),
        Err(ServiceError::ClientLogin(inner)) => ApiError::client_login(inner),
        Err(other) => ApiError::from(other),
    };
    error.in_oauth_shape().error_response()
}

/// The anti-forgery token of the logout form of the session whose cookie
/// value is `session`: keyed by that HttpOnly value, which another site can
/// neither read nor plant with a matching token.
fn logout_token(session: &str) -> String {
    form_token(session, FormPurpose::Logout, &[])
}

/// `GET /auth/logout/`: the logout button (ending a session takes a POST
/// from this site); without a session, the page after leaving, with a
/// link to the login (not a redirect to it: the provider's session and the
/// remembered consent would log the person straight back in).
async fn logout_page(req: HttpRequest, service: web::Data<ClientLoginService>) -> HttpResponse {
    match or_answer!(host_session(&req, &service).await).map(|(value, _)| value) {
        Some(session) => html(response(StatusCode::OK), &pages::logout(LOGOUT_PATH, &logout_token(&session), ME_PATH)),
        None => html(response(StatusCode::OK), &pages::logged_out(LOGIN_PATH)),
    }
}

/// `POST /auth/logout/`: ends the host session when the post carries the
/// session's `csrf_token` and does not come from another origin; a forged
/// post gets a 403 page and the session goes on; then, or without a
/// session (nothing to end), 303 to `GET /auth/logout/`: the page after
/// leaving.
async fn logout(
    req: HttpRequest,
    payload: web::Payload,
    service: web::Data<ClientLoginService>,
    cookies: web::Data<ClientCookies>,
) -> HttpResponse {
    if html::posted_from_another_origin(&req) {
        return forged_logout();
    }
    let Some((session, _)) = or_answer!(host_session(&req, &service).await) else {
        return see_other(LOGOUT_PATH).finish();
    };
    let form = read_form(&req, payload).await.ok();
    let presented = form.as_ref().and_then(|f| f.get("csrf_token").ok().flatten()).unwrap_or("");
    if !form_token_matches(&session, FormPurpose::Logout, &[], presented) {
        return forged_logout();
    }
    see_other(LOGOUT_PATH).append_header((header::SET_COOKIE, cookies.session(&req, "", 0))).finish()
}

/// The 403 page of a logout post that did not come from our own page.
fn forged_logout() -> HttpResponse {
    let page = pages::error(
        "Saída não confirmada",
        "O pedido de saída não veio da página desta aplicação, por isso a sua sessão continua aberta.",
        "Para sair, use o botão Sair desta aplicação.",
        Some(LOGOUT_PATH),
    );
    html(response(StatusCode::FORBIDDEN), &page)
}

/// `GET /auth/me/`: the host user's record.
async fn me(
    req: HttpRequest,
    service: web::Data<ClientLoginService>,
    cookies: web::Data<ClientCookies>,
    table: web::Data<HostTableName>,
) -> HttpResponse {
    let to_login = format!("{LOGIN_PATH}?next=%2Fauth%2Fme%2F");
    let Some((value, session)) = or_answer!(host_session(&req, &service).await) else {
        // Ended by the provider (or expired): the stale cookie goes too.
        return see_other(&to_login).append_header((header::SET_COOKIE, cookies.session(&req, "", 0))).finish();
    };
    let token = logout_token(&value);
    match service.record(session.id).await {
        Ok(Some(columns)) => html(response(StatusCode::OK), &pages::record(&table.0, &columns, LOGOUT_PATH, &token)),
        // The row is gone: the session means nothing any more.
        Ok(None) => see_other(&to_login).append_header((header::SET_COOKIE, cookies.session(&req, "", 0))).finish(),
        Err(e) => failure(e, ""),
    }
}

/// A failed login or page as HTML: 400 for a state mismatch, 403 for
/// denied consent, an inactive account or a person the host does not
/// create an account for, 422 for a profile without the
/// lookup value, 502 for a provider that is down or refuses, 503 for
/// storage; details of 5xx go to the log under an id.
fn failure(e: ServiceError, clear_cookie: &str) -> HttpResponse {
    // Trying again cannot help a person the host turns away (an inactive
    // host user, or one it does not create): no button offers it.
    let retry = match &e {
        ServiceError::ClientLogin(ClientLoginError::Inactive | ClientLoginError::NotRegistered) => None,
        _ => Some(LOGIN_PATH),
    };
    let (status, title, reason, hint) = match &e {
        ServiceError::ClientLogin(ClientLoginError::StateMismatch) => (
            StatusCode::BAD_REQUEST,
            "Não foi possível concluir a entrada",
            "A resposta do provedor de identidade não corresponde a uma entrada iniciada neste navegador \
             (o pedido expirou, já foi usado ou não partiu daqui).",
            "Comece a entrada de novo.".to_owned(),
        ),
        ServiceError::ClientLogin(ClientLoginError::Denied) => (
            StatusCode::FORBIDDEN,
            "Acesso negado",
            "Você não autorizou o compartilhamento dos seus dados com esta aplicação, e sem eles não é possível entrar.",
            "Se mudou de ideia, entre novamente e clique em Autorizar.".to_owned(),
        ),
        ServiceError::ClientLogin(ClientLoginError::Inactive) => (
            StatusCode::FORBIDDEN,
            "Conta desativada",
            "Sua conta nesta aplicação está desativada.",
            "Procure o suporte da aplicação.".to_owned(),
        ),
        ServiceError::ClientLogin(ClientLoginError::NotRegistered) => (
            StatusCode::FORBIDDEN,
            "Sem cadastro nesta aplicação",
            "Sua identidade foi confirmada, mas esta aplicação só aceita pessoas já cadastradas nela, \
             e não há cadastro para você.",
            "Se precisa de acesso, peça o seu cadastro ao suporte da aplicação.".to_owned(),
        ),
        ServiceError::ClientLogin(ClientLoginError::MissingLookup(_)) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            "Dados insuficientes",
            "O seu perfil não trouxe o dado que identifica a sua conta nesta aplicação.",
            "Verifique o seu cadastro no provedor de identidade e tente novamente.".to_owned(),
        ),
        _ => {
            let api = match e {
                ServiceError::ClientLogin(inner) => ApiError::client_login(inner),
                other => ApiError::from(other),
            };
            let error_id = api.body().get("error_id").and_then(|v| v.as_str()).unwrap_or("").to_owned();
            let status = api.status();
            let (title, reason) = match status {
                StatusCode::BAD_GATEWAY => (
                    "Provedor de identidade indisponível",
                    "Não foi possível falar com o provedor de identidade, ou ele recusou a entrada.",
                ),
                StatusCode::SERVICE_UNAVAILABLE => {
                    ("Serviço indisponível", "O serviço está temporariamente indisponível.")
                }
                _ => ("Erro interno", "Ocorreu um erro interno."),
            };
            (status, title, reason, format!("Tente novamente em instantes. Código do erro: {error_id}."))
        }
    };
    let mut builder = response(status);
    if !clear_cookie.is_empty() {
        builder.append_header((header::SET_COOKIE, clear_cookie.to_owned()));
    }
    if status == StatusCode::SERVICE_UNAVAILABLE {
        builder.insert_header((header::RETRY_AFTER, HeaderValue::from_static("5")));
    }
    html(builder, &pages::error(title, reason, &hint, retry))
}
