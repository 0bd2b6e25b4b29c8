//! The person's own account: the pages under `/conta/`.
//!
//! They use the login session of the authorization endpoint (the same
//! HttpOnly cookie, on the whole site): a browser that logged in at
//! `/oauth/authorize/` is logged in here, and the other way round. Without
//! a session a page answers 303 to `/conta/entrar/?next=<its path>`; after
//! the login the browser goes back to `next`, which must be an account
//! page (never another site).
//!
//! Every POST carries `csrf_token`, the session's account form token
//! (HMAC keyed by the session's id, which only the HttpOnly cookie holds),
//! and is refused when the browser says it came from another origin
//! (`Sec-Fetch-Site`); the login form's token is the authorization
//! endpoint's double-submit token.

// A page's early answer (to the login form, a refusal page) is the `Err` of
// the helpers below: one per request, never on a hot path.
#![allow(clippy::result_large_err)]

pub mod applications;
pub mod details;
pub mod email;
pub mod entries;
pub mod federation;
pub mod pages;
pub mod passkeys;
pub mod password;
pub mod recovery;
pub mod security;
pub mod sessions;
pub mod signup;
pub mod validation;

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, Resource};
use credencial_application::{
    AccountEditService, AccountService, OwnEntryService, SecondFactorService, ServiceError, SessionService,
    SignupService, TaxIdValidationService,
};
use credencial_domain::admin::LoginVia;
use secrecy::SecretString;

use crate::cookies::CookiePolicy;
use crate::form::{FormError, FormFields};
use crate::html::{self, ErrorPage, PROVIDER};
use crate::routes::{self, resource};
use crate::session::{
    clear_session_cookie, login_form, login_form_token_matches, origin, session_of, to_login, to_second_factor,
    FORM_EXPIRED, MISSING_CREDENTIALS, WRONG_CREDENTIALS,
};

pub use crate::session::{
    form_refused, refused, safe_next, safe_next_after_factor, see_other, signed_in, signed_post, with_session,
    HOME_PATH, LOGIN_PATH, LOGOUT_PATH, MUST_CHANGE_LOCATION, NULL_CHARACTER, PASSWORD_PATH,
};

/// The sign-up page's path.
pub const SIGNUP_PATH: &str = "/conta/cadastro/";

/// What the account pages need from the configuration.
#[derive(Debug, Clone, Copy, Default)]
pub struct AccountSettings {
    /// Whether anyone may create an account at `/conta/cadastro/`.
    pub signup_enabled: bool,
}

/// The account pages as one service factory, with their application data.
pub struct AccountApi {
    sessions: web::Data<SessionService>,
    accounts: web::Data<AccountService>,
    signup: web::Data<SignupService>,
    edits: web::Data<AccountEditService>,
    cookies: web::Data<CookiePolicy>,
    settings: web::Data<AccountSettings>,
    entries: web::Data<OwnEntryService>,
    validation: web::Data<TaxIdValidationService>,
    factors: Option<web::Data<SecondFactorService>>,
}

/// The use cases behind the account pages.
#[derive(Debug, Clone)]
pub struct AccountServices {
    /// Sessions (the login form, the session cookie).
    pub sessions: web::Data<SessionService>,
    /// The overview.
    pub accounts: web::Data<AccountService>,
    /// The sign-up page.
    pub signup: web::Data<SignupService>,
    /// The details form and the password page.
    pub edits: web::Data<AccountEditService>,
    /// Experiences and degrees (`/conta/experiencias/`, `/conta/formacoes/`).
    pub entries: web::Data<OwnEntryService>,
    /// Tax-id validation (`/conta/validacao/`).
    pub validation: web::Data<TaxIdValidationService>,
    /// Second factors (`/conta/seguranca/`, `/conta/entrar/verificar/`);
    /// `None` when the service offers none.
    pub factors: Option<web::Data<SecondFactorService>>,
}

impl AccountApi {
    /// The pages over these use cases, marking cookies as `cookies` says.
    pub fn new(services: AccountServices, cookies: CookiePolicy, settings: AccountSettings) -> Self {
        let AccountServices { sessions, accounts, signup, edits, entries, validation, factors } = services;
        Self {
            sessions,
            accounts,
            signup,
            edits,
            cookies: web::Data::new(cookies),
            settings: web::Data::new(settings),
            entries,
            validation,
            factors,
        }
    }

    fn with_data(&self, r: Resource) -> Resource {
        let r = r
            .app_data(self.sessions.clone())
            .app_data(self.accounts.clone())
            .app_data(self.signup.clone())
            .app_data(self.edits.clone())
            .app_data(self.cookies.clone())
            .app_data(self.settings.clone())
            .app_data(self.entries.clone())
            .app_data(self.validation.clone());
        match &self.factors {
            Some(factors) => r.app_data(factors.clone()),
            None => r,
        }
    }
}

impl HttpServiceFactory for AccountApi {
    fn register(self, config: &mut AppService) {
        self.with_data(resource(HOME_PATH, "GET, POST"))
            .route(routes::get().to(overview))
            .route(web::post().to(details::update))
            .register(config);
        self.with_data(resource(LOGIN_PATH, "GET, POST"))
            .route(routes::get().to(login_get))
            .route(web::post().to(login_post))
            .register(config);
        self.with_data(resource(LOGOUT_PATH, "GET, POST"))
            .route(routes::get().to(logout_get))
            .route(web::post().to(logout_post))
            .register(config);
        self.with_data(resource(SIGNUP_PATH, "GET, POST"))
            .route(routes::get().to(signup::form))
            .route(web::post().to(signup::create))
            .register(config);
        self.with_data(resource(PASSWORD_PATH, "GET, POST"))
            .route(routes::get().to(password::form))
            .route(web::post().to(password::change))
            .register(config);
        entries::register(config, |r| self.with_data(r));
        validation::register(config, |r| self.with_data(r));
        applications::register(config, |r| self.with_data(r));
        sessions::register(config, |r| self.with_data(r));
        security::register(config, |r| self.with_data(r));
        passkeys::register(config, |r| self.with_data(r));
    }
}

// ------------------------------------------------------- shared by pages

/// The answer when a use case fails: an account that is gone or inactive
/// ends the session (back to the login form); anything else is a failure
/// page (503 or 500, details in the log).
pub fn service_failure(req: &HttpRequest, e: ServiceError) -> HttpResponse {
    match e {
        ServiceError::UnknownUser => {
            let mut answer = to_login(HOME_PATH);
            clear_session_cookie(req, &mut answer);
            answer
        }
        other => html::failure_page(other),
    }
}

/// The text values of `names` in `fields` (an absent or empty field is
/// `""`); a field sent twice makes the form unreadable.
pub fn text_fields<'a, const N: usize>(fields: &'a FormFields, names: [&str; N]) -> Result<[&'a str; N], FormError> {
    let mut values = [""; N];
    for (value, name) in values.iter_mut().zip(names) {
        *value = fields.get(name)?.unwrap_or("");
    }
    Ok(values)
}

pub use crate::html::throttled_text;

/// `answer` with `Retry-After: retry_after_secs`.
pub fn with_retry_after(mut answer: HttpResponse, retry_after_secs: u64) -> HttpResponse {
    answer.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
    answer
}

/// The account's 404 page (a page that is not offered here).
pub fn not_offered(reason: &str) -> HttpResponse {
    let page = ErrorPage {
        site: &PROVIDER,
        title: "Página não encontrada",
        reason,
        hint: "Se você já tem uma conta, entre com o seu CPF ou nome de usuário.",
        retry: Some(LOGIN_PATH),
    };
    html::html(html::response(StatusCode::NOT_FOUND), &page)
}

// ---------------------------------------------------------------- login

/// `GET /conta/entrar/`: the login form, or straight to `next` when the
/// browser has a session.
async fn login_get(
    req: HttpRequest,
    sessions: web::Data<SessionService>,
    cookies: web::Data<CookiePolicy>,
    settings: web::Data<AccountSettings>,
) -> HttpResponse {
    let fields = FormFields::parse(req.query_string().as_bytes()).unwrap_or_default();
    let next = safe_next(fields.get("next").ok().flatten());
    match session_of(&req).await {
        Ok(Some(s)) if s.second_factor_pending => return to_second_factor(&next),
        Ok(Some(_)) => return see_other(&next),
        Ok(None) => {}
        Err(e) => return html::failure_page(e),
    }
    login_page(&req, &sessions, &cookies, &settings, &next, "", None, StatusCode::OK)
}

/// `POST /conta/entrar/`: checks the form token, the username (or CPF) and
/// the password (the authorization endpoint's rules and limits), opens a
/// new session and goes to `next`.
async fn login_post(
    req: HttpRequest,
    payload: web::Payload,
    sessions: web::Data<SessionService>,
    cookies: web::Data<CookiePolicy>,
    settings: web::Data<AccountSettings>,
) -> HttpResponse {
    let fields = or_answer!(crate::session::posted_form(&req, payload).await);
    let field = |name| fields.get(name).ok().flatten().unwrap_or("");
    let next = safe_next(fields.get("next").ok().flatten());
    let username = field("username").trim();
    let page =
        |message, status| login_page(&req, &sessions, &cookies, &settings, &next, username, Some(message), status);
    if !login_form_token_matches(&req, &sessions, field("csrf_token")) {
        return page(FORM_EXPIRED, StatusCode::BAD_REQUEST);
    }
    let password = field("password");
    if username.is_empty() || password.is_empty() {
        return page(MISSING_CREDENTIALS, StatusCode::OK);
    }
    let password = SecretString::from(password.to_owned());
    match sessions.log_in(LoginVia::Account, username, password, &origin(&req)).await {
        Ok(signed) if signed.session.second_factor_pending => {
            with_session(&req, &cookies, to_second_factor(&next), &signed)
        }
        Ok(signed) if signed.session.must_change_password => {
            with_session(&req, &cookies, see_other(MUST_CHANGE_LOCATION), &signed)
        }
        Ok(signed) => with_session(&req, &cookies, see_other(&next), &signed),
        Err(ServiceError::InvalidCredentials) => page(WRONG_CREDENTIALS, StatusCode::OK),
        Err(ServiceError::Throttled { retry_after_secs }) => {
            let answer = page(&throttled_text(retry_after_secs), StatusCode::TOO_MANY_REQUESTS);
            with_retry_after(answer, retry_after_secs)
        }
        Err(e) => html::failure_page(e),
    }
}

#[allow(clippy::too_many_arguments)]
fn login_page(
    req: &HttpRequest,
    sessions: &SessionService,
    cookies: &CookiePolicy,
    settings: &AccountSettings,
    next: &str,
    username: &str,
    message: Option<&str>,
    status: StatusCode,
) -> HttpResponse {
    let (token, builder) = login_form(req, sessions, cookies, status);
    let page = pages::Login {
        site: &PROVIDER,
        title: "Entrar",
        action: LOGIN_PATH,
        message,
        hidden: vec![("csrf_token", &token), ("next", next)],
        username,
        signup: settings.signup_enabled,
        signup_path: SIGNUP_PATH,
        passkey_path: passkeys::LOGIN_PASSKEY_PATH,
        passkey_next: passkeys::offered(req).map(|_| next),
        passkey_token: &token,
        recovery_path: recovery::offered(req),
        providers: federation::buttons(req, next),
    };
    html::html(builder, &page)
}

// ------------------------------------------------------------- overview

/// `GET /conta/`: the overview.
async fn overview(req: HttpRequest, accounts: web::Data<AccountService>) -> HttpResponse {
    let session = or_answer!(signed_in(&req).await);
    match accounts.overview(session.user_id).await {
        Ok(account) => {
            let notice = details::notice(&req);
            let token = session.account_form_token();
            let mut page = pages::overview(&account, &token, notice);
            email::show_state(&mut page, &req, session.user_id).await;
            html::html(html::response(StatusCode::OK), &page)
        }
        Err(e) => service_failure(&req, e),
    }
}

// --------------------------------------------------------------- logout

/// `GET /conta/sair/`: the logout button.
async fn logout_get(req: HttpRequest) -> HttpResponse {
    match signed_in(&req).await {
        Ok(session) => html::html(html::response(StatusCode::OK), &pages::logout(&session.account_form_token())),
        Err(answer) => answer,
    }
}

/// `POST /conta/sair/`: ends the session on the server (a copy of the
/// cookie opens nothing afterwards), clears the cookie and shows the login
/// form.
async fn logout_post(req: HttpRequest, payload: web::Payload) -> HttpResponse {
    let session = match signed_post(&req, payload).await {
        Ok((session, _)) => session,
        Err(answer) => return answer,
    };
    // A session that came through an upstream (gov.br, or any OpenID
    // provider with an end_session_endpoint) ends there too: the browser
    // goes through the upstream's logout and comes back to the login form.
    let upstream = match req.app_data::<web::Data<credencial_application::FederationService>>() {
        Some(federation) => federation.logout_url(&session, LOGIN_PATH).await,
        None => None,
    };
    match crate::session::log_out(&req, see_other(upstream.as_deref().unwrap_or(LOGIN_PATH))).await {
        Ok(answer) => answer,
        Err(e) => html::failure_page(e),
    }
}
