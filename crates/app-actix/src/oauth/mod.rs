//! The OAuth2 provider's endpoints.
//!
//! - `GET /oauth/authorize/`: validates the request; shows the login form
//!   when the browser has no valid session (or `prompt=login`), answers the
//!   redirect with a code at once when the person's stored consent covers
//!   the request (unless `prompt=consent`), else shows the consent page;
//!   with `prompt=none` a page becomes `error=login_required` or
//!   `error=consent_required` at the redirect URI. An unknown client or a
//!   redirect URI that is not the client's gets an HTML 400 page and is
//!   never redirected; other errors go back to the client.
//! - `POST /oauth/authorize/`: the login form (`action=login`: opens the
//!   session, then 303 back to the GET with the same parameters) and the
//!   consent form (`action=approve` or `action=deny`: 303 to the client's
//!   redirect URI with `code` or `error=access_denied`, and `state`).
//! - The response to the client travels as its `response_mode` says: in
//!   the redirect URI's query (the default) or fragment, or, with
//!   `form_post`, in a page whose form posts it there ([`form_post`], with
//!   `GET /oauth/form_post.js`). The OpenID Connect `request`,
//!   `request_uri` and `registration` parameters are refused with their
//!   own errors.
//! - `POST /oauth/token/`: form-encoded token requests (`authorization_code`
//!   and `refresh_token` grants); JSON answers with `Cache-Control: no-store`
//!   (with an `id_token` when `openid` was granted).
//! - `POST /oauth/revoke/` and `POST /oauth/introspect/` (RFC 7009, RFC
//!   7662; in [`revocation`]): form-encoded, client-authenticated as at the
//!   token endpoint.
//! - OpenID Connect: `GET /.well-known/openid-configuration`
//!   ([`discovery`]), `GET`/`POST /oauth/userinfo/` ([`userinfo`]),
//!   `GET`/`POST /oauth/logout/` ([`logout`]).
//!
//! The login session is the browser session of [`crate::session`] (the
//! account pages share it). Both forms carry an anti-forgery token: the
//! login form's is keyed by a random value in a second cookie (double
//! submit), the consent form's by the session and bound to the request it
//! was rendered for.

pub mod discovery;

pub mod form_post;
pub mod logout;
pub mod pages;
pub mod revocation;
pub mod userinfo;

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use credencial_application::request_context;
use credencial_application::{
    AuthorizationStep, ConsentPrompt, LoginSession, OAuthService, SecondFactorService, ServiceError, SessionService,
    TokenRequest,
};
use credencial_domain::admin::LoginVia;
use credencial_domain::federation::{ProviderKind, ReliabilityLevel};
use credencial_domain::oauth::{prompt_after_login, AuthorizationParams, OAuthError};
use secrecy::SecretString;

use crate::client_address::client_address;
use crate::cookies::CookiePolicy;
use crate::error::ApiError;
use crate::form::{self, read_form, FormError, FormFields};
use crate::html;
use crate::private::private_json;
use crate::routes::{self, resource};
use crate::session::{
    clear_session_cookie, login_form, login_form_token_matches, origin, session_of, to_second_factor, with_session,
    FORM_EXPIRED, MISSING_CREDENTIALS, MUST_CHANGE_LOCATION, SECURITY_PATH, WRONG_CREDENTIALS,
};

/// Path of the authorization endpoint (a trailing slash is optional).
pub const AUTHORIZE_PATH: &str = "/oauth/authorize";
/// Path of the token endpoint (a trailing slash is optional).
pub const TOKEN_PATH: &str = "/oauth/token";
const SESSION_EXPIRED: &str = "Sua sessão expirou. Entre novamente.";
const FROM_ANOTHER_SITE: &str = "O formulário foi enviado a partir de outro site. Comece de novo pelo aplicativo.";
const BACK_TO_APP: &str = "Volte ao aplicativo de onde você veio e tente novamente.";

/// The OAuth2 endpoints as one service factory, with their application data.
pub struct OAuthApi {
    service: web::Data<OAuthService>,
    sessions: web::Data<SessionService>,
    factors: Option<web::Data<SecondFactorService>>,
    cookies: web::Data<CookiePolicy>,
}

impl OAuthApi {
    /// The endpoints over `service`, with the browser sessions of
    /// `sessions`, marking cookies as `cookies` says.
    pub fn new(service: web::Data<OAuthService>, sessions: web::Data<SessionService>, cookies: CookiePolicy) -> Self {
        Self { service, sessions, factors: None, cookies: web::Data::new(cookies) }
    }

    /// The same endpoints, asking for `factors`' second factor where an
    /// application (or `acr_values`) requires one.
    pub fn with_second_factors(mut self, factors: Option<web::Data<SecondFactorService>>) -> Self {
        self.factors = factors;
        self
    }
}

impl HttpServiceFactory for OAuthApi {
    fn register(self, config: &mut AppService) {
        let authorize = resource(AUTHORIZE_PATH, "GET, POST")
            .app_data(self.service.clone())
            .app_data(self.sessions.clone())
            .app_data(self.cookies.clone());
        let authorize = match &self.factors {
            Some(factors) => authorize.app_data(factors.clone()),
            None => authorize,
        };
        authorize.route(routes::get().to(authorize_get)).route(web::post().to(authorize_post)).register(config);
        resource(form_post::SCRIPT_PATH, "GET").route(routes::get().to(form_post::script)).register(config);
        resource(revocation::REVOKE_PATH, "POST")
            .app_data(self.service.clone())
            .route(web::post().to(revocation::revoke))
            .register(config);
        resource(revocation::INTROSPECT_PATH, "POST")
            .app_data(self.service.clone())
            .route(web::post().to(revocation::introspect))
            .register(config);
        resource(logout::LOGOUT_PATH, "GET, POST")
            .app_data(self.service.clone())
            .app_data(self.sessions.clone())
            .app_data(self.cookies.clone())
            .route(routes::get().to(logout::logout_get))
            .route(web::post().to(logout::logout_post))
            .register(config);
        resource(discovery::DISCOVERY_PATH, "GET")
            .app_data(self.service.clone())
            .route(routes::get().to(discovery::openid_configuration))
            .register(config);
        resource(TOKEN_PATH, "POST").app_data(self.service).route(web::post().to(token)).register(config);
    }
}

// ------------------------------------------------------------- authorize

/// `GET /oauth/authorize/`.
pub async fn authorize_get(
    req: HttpRequest,
    oauth: web::Data<OAuthService>,
    sessions: web::Data<SessionService>,
    cookies: web::Data<CookiePolicy>,
) -> HttpResponse {
    let params = match FormFields::parse(req.query_string().as_bytes()).and_then(|f| f.authorization_params()) {
        Ok(p) => p,
        Err(e) => return malformed(&e.message()),
    };
    let session = match session_of(&req).await {
        // A login waiting for its second factor: the factor first, then
        // back here (`prompt=none` cannot show the page: as without a
        // session, `login_required`).
        Ok(Some(session)) if session.second_factor_pending => match wants_no_prompt(&params) {
            true => None,
            false => return to_second_factor(&format!("{}?{}", req.path(), req.query_string())),
        },
        // `prompt=none` cannot be sent to the password page: it goes on as
        // without a session (the client hears `login_required`).
        Ok(Some(session)) if session.must_change_password => match wants_no_prompt(&params) {
            true => None,
            false => return must_change_password(),
        },
        Ok(session) => session,
        Err(e) => return html::failure_page(e),
    };
    match oauth.authorize(session.as_ref(), &params).await {
        Ok(AuthorizationStep::LogIn { client_name }) => {
            login_page(&req, &sessions, &cookies, &params, &client_name, "", None, StatusCode::OK)
        }
        Ok(AuthorizationStep::Consent(prompt)) => match &session {
            Some(session) => consent_page(&req, &oauth, session, &params, &prompt).await,
            None => html::failure_page(ServiceError::Internal("consent step without a session".into())),
        },
        Ok(AuthorizationStep::SecondFactor { client_name }) => match &session {
            Some(session) => step_up(&req, session, &client_name, &params).await,
            None => html::failure_page(ServiceError::Internal("second-factor step without a session".into())),
        },
        Ok(AuthorizationStep::Level { client_name, level }) => level_page(&req, &client_name, level, &params),
        Err(ServiceError::UnknownUser) => session_expired(&req, &oauth, &sessions, &cookies, &params).await,
        other => step_response(other, StatusCode::FOUND),
    }
}

/// The answer when the application (its minimum gov.br level) or the
/// request's `acr_values` require a gov.br level the session has not
/// reached: which level, where to raise it, and a login through gov.br
/// that comes back to this request; a 400 page when the service offers no
/// login through gov.br.
fn level_page(
    req: &HttpRequest,
    client_name: &str,
    level: ReliabilityLevel,
    params: &AuthorizationParams,
) -> HttpResponse {
    let federation = req.app_data::<web::Data<credencial_application::FederationService>>();
    let govbr = federation.and_then(|f| f.providers().iter().find(|p| p.kind == ProviderKind::GovBr));
    let Some(govbr) = govbr else {
        let reason = format!(
            "O aplicativo {client_name} exige uma conta gov.br de nível {}, e este serviço não oferece a entrada com gov.br.",
            level.name()
        );
        return bad_request(&reason);
    };
    let params = AuthorizationParams { prompt: None, max_age: None, ..params.clone() };
    let back = authorize_href(&params);
    let page = pages::Level {
        site: &html::PROVIDER,
        title: "Nível da conta gov.br",
        client: client_name,
        level: level.name(),
        login: crate::account::federation::start_href(&govbr.id, &back),
        raise: crate::account::federation::GOVBR_LEVELS_URL,
    };
    html::html(html::response(StatusCode::FORBIDDEN), &page)
}

/// The answer when the application (or `acr_values`) requires a second
/// factor the session has not passed: the code's page, back to this
/// request afterwards; for a person without one, the security page, which
/// says why and leads back here once the app is on; a 400 page when the
/// service offers no second factor.
async fn step_up(
    req: &HttpRequest,
    session: &LoginSession,
    client_name: &str,
    params: &AuthorizationParams,
) -> HttpResponse {
    let back = authorize_href(params);
    let Some(factors) = req.app_data::<web::Data<SecondFactorService>>() else {
        let reason = format!(
            "O aplicativo {client_name} exige a verificação em duas etapas, que não está disponível neste serviço."
        );
        return bad_request(&reason);
    };
    match factors.has_factor(session.user_id).await {
        Ok(true) => to_second_factor(&back),
        Ok(false) => {
            let what = format!("O aplicativo {client_name}");
            let query =
                serde_urlencoded::to_string([("exigido", what.as_str()), ("next", back.as_str())]).unwrap_or_default();
            let mut builder = html::response(StatusCode::SEE_OTHER);
            builder.insert_header((header::LOCATION, format!("{SECURITY_PATH}?{query}")));
            builder.finish()
        }
        Err(e) => html::failure_page(e),
    }
}

/// `POST /oauth/authorize/`: the login form or the consent decision.
pub async fn authorize_post(
    req: HttpRequest,
    payload: web::Payload,
    oauth: web::Data<OAuthService>,
    sessions: web::Data<SessionService>,
    cookies: web::Data<CookiePolicy>,
) -> HttpResponse {
    if html::posted_from_another_origin(&req) {
        return bad_request(FROM_ANOTHER_SITE);
    }
    let fields = match read_form(&req, payload).await {
        Ok(f) => f,
        Err(FormError::TooLarge) => {
            return html::html(
                html::response(StatusCode::PAYLOAD_TOO_LARGE),
                &pages::error("Pedido inválido", &FormError::TooLarge.message(), BACK_TO_APP),
            )
        }
        Err(e) => return malformed(&e.message()),
    };
    let (params, action) = match fields.authorization_params().and_then(|p| Ok((p, fields.get("action")?))) {
        Ok(v) => v,
        Err(e) => return malformed(&e.message()),
    };
    match action {
        Some("login") => log_in(&req, &oauth, &sessions, &cookies, &fields, &params).await,
        Some("approve") => decide(&req, &oauth, &sessions, &cookies, &fields, &params, true).await,
        Some("deny") => decide(&req, &oauth, &sessions, &cookies, &fields, &params, false).await,
        _ => malformed("action must be login, approve or deny"),
    }
}

async fn log_in(
    req: &HttpRequest,
    oauth: &OAuthService,
    sessions: &SessionService,
    cookies: &CookiePolicy,
    fields: &FormFields,
    params: &AuthorizationParams,
) -> HttpResponse {
    let prompt = match oauth.start(params).await {
        Ok(AuthorizationStep::Consent(prompt)) => prompt,
        other => return step_response(other, StatusCode::SEE_OTHER),
    };
    let username = fields.get("username").ok().flatten().unwrap_or("").trim();
    let page = |message: Option<&str>, status| {
        login_page(req, sessions, cookies, params, &prompt.client_name, username, message, status)
    };
    let presented = fields.get("csrf_token").ok().flatten().unwrap_or("");
    if !login_form_token_matches(req, sessions, presented) {
        return page(Some(FORM_EXPIRED), StatusCode::BAD_REQUEST);
    }
    let password = fields.get("password").ok().flatten().unwrap_or("");
    if username.is_empty() || password.is_empty() {
        return page(Some(MISSING_CREDENTIALS), StatusCode::OK);
    }
    let password = SecretString::from(password.to_owned());
    match sessions.log_in(LoginVia::OAuth, username, password, &origin(req)).await {
        Ok(signed) if signed.session.second_factor_pending => {
            // The factor's page, then back to the GET as below.
            let params = AuthorizationParams {
                prompt: prompt_after_login(params.prompt.as_deref()),
                max_age: None,
                ..params.clone()
            };
            let query = serde_urlencoded::to_string(form::authorization_pairs(&params)).unwrap_or_default();
            with_session(req, cookies, to_second_factor(&format!("{}?{query}", req.path())), &signed)
        }
        Ok(signed) if signed.session.must_change_password => {
            // The password an administrator set is changed first; the
            // application is started again afterwards.
            let mut builder = html::response(StatusCode::SEE_OTHER);
            builder.insert_header((header::LOCATION, MUST_CHANGE_LOCATION));
            with_session(req, cookies, builder.finish(), &signed)
        }
        Ok(signed) => {
            // Back to the GET, where the new session goes on; `prompt=login`
            // and `max_age` are satisfied now and must not show the form
            // again (the ID token's `auth_time` tells the client when).
            let params = AuthorizationParams {
                prompt: prompt_after_login(params.prompt.as_deref()),
                max_age: None,
                ..params.clone()
            };
            let query = serde_urlencoded::to_string(form::authorization_pairs(&params)).unwrap_or_default();
            let location = format!("{}?{query}", req.path());
            let mut builder = html::response(StatusCode::SEE_OTHER);
            builder.insert_header((header::LOCATION, location));
            with_session(req, cookies, builder.finish(), &signed)
        }
        Err(ServiceError::InvalidCredentials) => page(Some(WRONG_CREDENTIALS), StatusCode::OK),
        Err(ServiceError::Throttled { retry_after_secs }) => {
            let message = html::throttled_text(retry_after_secs);
            let mut answer = page(Some(&message), StatusCode::TOO_MANY_REQUESTS);
            answer.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
            answer
        }
        Err(e) => html::failure_page(e),
    }
}

async fn decide(
    req: &HttpRequest,
    oauth: &OAuthService,
    sessions: &SessionService,
    cookies: &CookiePolicy,
    fields: &FormFields,
    params: &AuthorizationParams,
    approve: bool,
) -> HttpResponse {
    let session = match session_of(req).await {
        Ok(Some(session)) if session.second_factor_pending => {
            return session_expired(req, oauth, sessions, cookies, params).await
        }
        Ok(Some(session)) if session.must_change_password => return must_change_password(),
        Ok(Some(session)) => session,
        Ok(None) => return session_expired(req, oauth, sessions, cookies, params).await,
        Err(e) => return html::failure_page(e),
    };
    let presented = fields.get("csrf_token").ok().flatten().unwrap_or("");
    if !oauth.consent_form_token_matches(&session, params, presented) {
        return bad_request("O formulário de autorização é inválido ou expirou.");
    }
    let step = if approve { oauth.approve(&session, params).await } else { oauth.deny(params).await };
    match step {
        Ok(AuthorizationStep::SecondFactor { client_name }) => step_up(req, &session, &client_name, params).await,
        Ok(AuthorizationStep::Level { client_name, level }) => level_page(req, &client_name, level, params),
        Err(ServiceError::UnknownUser) => session_expired(req, oauth, sessions, cookies, params).await,
        other => step_response(other, StatusCode::SEE_OTHER),
    }
}

/// Whether the request says `prompt=none` (no page may be shown).
fn wants_no_prompt(params: &AuthorizationParams) -> bool {
    params.prompt.as_deref().is_some_and(|p| p.split_ascii_whitespace().any(|v| v == "none"))
}

/// 303 to the password page: the account's password was set by an
/// administrator and is changed before any consent.
fn must_change_password() -> HttpResponse {
    let mut builder = html::response(StatusCode::SEE_OTHER);
    builder.insert_header((header::LOCATION, MUST_CHANGE_LOCATION));
    builder.finish()
}

/// The login form again, with a message, after the session ended.
async fn session_expired(
    req: &HttpRequest,
    oauth: &OAuthService,
    sessions: &SessionService,
    cookies: &CookiePolicy,
    params: &AuthorizationParams,
) -> HttpResponse {
    match oauth.start(params).await {
        Ok(AuthorizationStep::Consent(prompt)) => {
            let status = StatusCode::OK;
            let mut page =
                login_page(req, sessions, cookies, params, &prompt.client_name, "", Some(SESSION_EXPIRED), status);
            clear_session_cookie(req, &mut page);
            page
        }
        other => step_response(other, StatusCode::SEE_OTHER),
    }
}

/// The answer to a step that is not a consent prompt: an error page, or a
/// redirect with `redirect_status` (302 after a GET, 303 after a POST).
fn step_response(step: Result<AuthorizationStep, ServiceError>, redirect_status: StatusCode) -> HttpResponse {
    match step {
        Ok(AuthorizationStep::Redirect(location)) => {
            let mut builder = html::response(redirect_status);
            builder.insert_header((header::LOCATION, location));
            builder.finish()
        }
        Ok(AuthorizationStep::FormPost(response)) => form_post::page(&response),
        Ok(AuthorizationStep::Refused(e)) => refused(&e),
        Ok(
            AuthorizationStep::Consent(_)
            | AuthorizationStep::LogIn { .. }
            | AuthorizationStep::SecondFactor { .. }
            | AuthorizationStep::Level { .. },
        ) => html::failure_page(ServiceError::Internal("unexpected page step".into())),
        Err(e) => html::failure_page(e),
    }
}

#[allow(clippy::too_many_arguments)]
fn login_page(
    req: &HttpRequest,
    sessions: &SessionService,
    cookies: &CookiePolicy,
    params: &AuthorizationParams,
    client_name: &str,
    username: &str,
    message: Option<&str>,
    status: StatusCode,
) -> HttpResponse {
    let (token, builder) = login_form(req, sessions, cookies, status);
    // A login by passkey or through a provider comes back to this
    // request, as a login here does.
    let back = {
        let params = AuthorizationParams {
            prompt: prompt_after_login(params.prompt.as_deref()),
            max_age: None,
            ..params.clone()
        };
        authorize_href(&params)
    };
    let passkey_next = crate::account::passkeys::offered(req).map(|_| back.as_str());
    let mut page = pages::login(client_name, params, &token, username, message, passkey_next);
    page.recovery_path = crate::account::recovery::offered(req);
    page.providers = crate::account::federation::buttons(req, &back);
    page.signup_path = crate::account::signup::offered(req).then(|| crate::account::signup::path_with_next(&back));
    html::html(builder, &page)
}

/// The consent page, naming the signed-in account (its name, else its
/// username) with a way to log in as someone else: this request again with
/// `prompt=login`. Without the account service, or when the name cannot
/// be read, the page says nothing of the account rather than failing.
async fn consent_page(
    req: &HttpRequest,
    oauth: &OAuthService,
    session: &LoginSession,
    params: &AuthorizationParams,
    prompt: &ConsentPrompt,
) -> HttpResponse {
    let token = oauth.consent_form_token(session, params);
    let account = match req.app_data::<web::Data<credencial_application::AccountService>>() {
        Some(accounts) => match accounts.overview(session.user_id).await {
            Ok(a) if !a.name.trim().is_empty() => Some(a.name),
            Ok(a) => Some(a.username),
            Err(e) => {
                tracing::warn!(error = %e, "the consent page could not read the account's name");
                None
            }
        },
        None => None,
    };
    let again = AuthorizationParams { prompt: Some("login".to_owned()), ..params.clone() };
    let switch = authorize_href(&again);
    let page = pages::consent(
        &prompt.client_name,
        prompt.authorization.scopes,
        &prompt.authorization.redirect_uri,
        params,
        &token,
    )
    .signed_in_as(account.as_deref(), &switch);
    html::html(html::response(StatusCode::OK), &page)
}

fn refused(e: &OAuthError) -> HttpResponse {
    let reason = match e {
        OAuthError::InvalidClient(_) => "O aplicativo que pediu o acesso não está registrado.",
        _ => "O pedido de autorização é inválido: o aplicativo ou o endereço de retorno não confere com o registro.",
    };
    let hint = html::refusal_hint(BACK_TO_APP, &e.description(), e.error_code());
    html::html(html::response(StatusCode::BAD_REQUEST), &pages::error("Não foi possível continuar", reason, &hint))
}

/// A request whose parameters cannot be read (a repeated or NUL-holding
/// parameter, an unknown action): a Portuguese page; `detail` (English,
/// for the integrating developer) goes to the log under the request's code.
fn malformed(detail: &str) -> HttpResponse {
    let hint = html::refusal_hint(BACK_TO_APP, detail, "invalid_request");
    let reason = "O pedido de autorização está malformado: o aplicativo enviou parâmetros repetidos ou inválidos.";
    html::html(html::response(StatusCode::BAD_REQUEST), &pages::error("Pedido inválido", reason, &hint))
}

/// The authorization request `params` as a link to this endpoint (where a
/// login, a level or a second account comes back to).
fn authorize_href(params: &AuthorizationParams) -> String {
    let query = serde_urlencoded::to_string(form::authorization_pairs(params)).unwrap_or_default();
    format!("{AUTHORIZE_PATH}/?{query}")
}

fn bad_request(reason: &str) -> HttpResponse {
    html::html(html::response(StatusCode::BAD_REQUEST), &pages::error("Pedido inválido", reason, BACK_TO_APP))
}

// ----------------------------------------------------------------- token

/// `POST /oauth/token/`: a form-encoded token request → `{"access_token",
/// "token_type", "expires_in", "refresh_token", "scope"}`, never cached;
/// errors as `{"error", "error_description"}` (RFC 6749 §5.2); 429
/// `too_many_requests` with `Retry-After` while the client address is
/// limited.
pub async fn token(
    req: HttpRequest,
    payload: web::Payload,
    oauth: web::Data<OAuthService>,
) -> Result<HttpResponse, ApiError> {
    let invalid = |e: FormError| match e {
        FormError::TooLarge => ApiError::payload_too_large(crate::body::MAX_BODY_BYTES).in_oauth_shape(),
        other => ApiError::oauth(&OAuthError::InvalidRequest(other.message())),
    };
    let fields = read_form(&req, payload).await.map_err(invalid)?;
    let field = |name: &str| fields.owned(name).map_err(invalid);
    let authorization = req.headers().get(header::AUTHORIZATION).map(|v| v.to_str().unwrap_or("Basic !").to_owned());
    let request = TokenRequest {
        authorization,
        grant_type: field("grant_type")?,
        client_id: field("client_id")?,
        client_secret: field("client_secret")?,
        code: field("code")?,
        redirect_uri: field("redirect_uri")?,
        code_verifier: field("code_verifier")?,
        refresh_token: field("refresh_token")?,
        scope: field("scope")?,
        client_address: client_address(&req),
        request_id: request_context::current().map(|id| id.as_str().to_owned()).unwrap_or_default(),
    };
    let tokens = oauth.token(request).await.map_err(ApiError::oauth_service)?;
    Ok(private_json(tokens))
}
