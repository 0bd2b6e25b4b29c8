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
pub mod entries;
pub mod pages;
pub mod password;
pub mod signup;
pub mod validation;

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, Resource};
use credencial_application::{
    AccountEditService, AccountService, LoginSession, OAuthService, OwnEntryService, ServiceError, SignedSession,
    SignupService, TaxIdValidationService,
};
use credencial_domain::admin::LoginVia;
use credencial_domain::local_path::resolve_under;
use secrecy::SecretString;

use crate::client_address::client_address;
use crate::cookies::{self, CookiePolicy};
use crate::html::{self, ErrorPage, PROVIDER};
use crate::oauth::form::{read_form, FormError, FormFields};
use crate::oauth::{
    session_of, COOKIE_PATH, FORM_EXPIRED, LOGIN_COOKIE, LOGIN_FORM_SECS, MISSING_CREDENTIALS, SESSION_COOKIE,
    WRONG_CREDENTIALS,
};
use crate::routes::{self, resource};

/// The overview's path (a trailing slash is optional on every account path).
pub const HOME_PATH: &str = "/conta/";
/// The login form's path.
pub const LOGIN_PATH: &str = "/conta/entrar/";
/// The logout page's path.
pub const LOGOUT_PATH: &str = "/conta/sair/";
/// The sign-up page's path.
pub const SIGNUP_PATH: &str = "/conta/cadastro/";
/// The password page's path.
pub const PASSWORD_PATH: &str = "/conta/senha/";

/// Where an account that must change its password is sent: the password
/// page, told to say why.
pub const MUST_CHANGE_LOCATION: &str = "/conta/senha/?trocar=1";

/// Whether the page at `path` is one an account that must change its
/// password may use before it does: the password page and the logout page.
fn may_wait_for_new_password(path: &str) -> bool {
    [PASSWORD_PATH, LOGOUT_PATH].iter().any(|p| path == *p || p.strip_suffix('/') == Some(path))
}

const FORGED: &str = "O formulário expirou ou não veio desta página. Volte à página, recarregue-a e tente de novo.";
const FROM_ANOTHER_SITE: &str = "O formulário foi enviado a partir de outro site e foi recusado.";

/// What the account pages need from the configuration.
#[derive(Debug, Clone, Copy, Default)]
pub struct AccountSettings {
    /// Whether anyone may create an account at `/conta/cadastro/`.
    pub signup_enabled: bool,
}

/// The account pages as one service factory, with their application data.
pub struct AccountApi {
    oauth: web::Data<OAuthService>,
    accounts: web::Data<AccountService>,
    signup: web::Data<SignupService>,
    edits: web::Data<AccountEditService>,
    cookies: web::Data<CookiePolicy>,
    settings: web::Data<AccountSettings>,
    entries: web::Data<OwnEntryService>,
    validation: web::Data<TaxIdValidationService>,
}

/// The use cases behind the account pages.
#[derive(Debug, Clone)]
pub struct AccountServices {
    /// Sessions (the login form, the session cookie).
    pub oauth: web::Data<OAuthService>,
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
}

impl AccountApi {
    /// The pages over these use cases, marking cookies as `cookies` says.
    pub fn new(services: AccountServices, cookies: CookiePolicy, settings: AccountSettings) -> Self {
        let AccountServices { oauth, accounts, signup, edits, entries, validation } = services;
        Self {
            oauth,
            accounts,
            signup,
            edits,
            cookies: web::Data::new(cookies),
            settings: web::Data::new(settings),
            entries,
            validation,
        }
    }

    fn with_data(&self, r: Resource) -> Resource {
        r.app_data(self.oauth.clone())
            .app_data(self.accounts.clone())
            .app_data(self.signup.clone())
            .app_data(self.edits.clone())
            .app_data(self.cookies.clone())
            .app_data(self.settings.clone())
            .app_data(self.entries.clone())
            .app_data(self.validation.clone())
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
    }
}

// ------------------------------------------------------- shared by pages

/// The session of a signed-in request, or the answer that sends the
/// browser to the login form and back to this page afterwards (also when
/// the session ended because the password changed), or a failure page when
/// the account cannot be read.
///
/// An account whose password an administrator set (a temporary one) is
/// sent to the password page, with a notice, from every page but that one
/// and the logout page, until it changes the password.
pub async fn signed_in(req: &HttpRequest, oauth: &OAuthService) -> Result<LoginSession, HttpResponse> {
    match session_of(req, oauth).await {
        Ok(Some(session)) if session.must_change_password && !may_wait_for_new_password(req.path()) => {
            Err(see_other(MUST_CHANGE_LOCATION))
        }
        Ok(Some(session)) => Ok(session),
        Ok(None) => {
            let mut answer = to_login(req.path());
            // A cookie whose session is over (expired, password changed,
            // account deactivated) is cleared.
            let policy = req.app_data::<web::Data<CookiePolicy>>();
            if let (Some(_), Some(policy)) = (cookies::read(req, SESSION_COOKIE), policy) {
                if let Ok(value) = HeaderValue::from_str(&policy.clear(req, SESSION_COOKIE, COOKIE_PATH)) {
                    answer.headers_mut().append(header::SET_COOKIE, value);
                }
            }
            Err(answer)
        }
        Err(e) => Err(html::failure_page(e)),
    }
}

/// A POST of an account page, read and fenced: a post the browser marks
/// as from another origin (403 page), an unreadable form (400 or 413
/// page), no session (303 to the login form), a missing or wrong
/// `csrf_token` (403 page). Otherwise the session and the form's fields.
pub async fn signed_post(
    req: &HttpRequest,
    payload: web::Payload,
    oauth: &OAuthService,
) -> Result<(LoginSession, FormFields), HttpResponse> {
    if html::posted_from_another_origin(req) {
        return Err(refused(StatusCode::FORBIDDEN, FROM_ANOTHER_SITE));
    }
    let fields = read_form(req, payload).await.map_err(form_refused)?;
    let session = signed_in(req, oauth).await?;
    let presented = fields.get("csrf_token").ok().flatten().unwrap_or("");
    if !session.account_form_token_matches(presented) {
        return Err(refused(StatusCode::FORBIDDEN, FORGED));
    }
    Ok((session, fields))
}

/// The answer when a use case fails: an account that is gone or inactive
/// ends the session (back to the login form); anything else is a failure
/// page (503 or 500, details in the log).
pub fn service_failure(req: &HttpRequest, cookies: &CookiePolicy, e: ServiceError) -> HttpResponse {
    match e {
        ServiceError::UnknownUser => {
            let mut answer = to_login(HOME_PATH);
            if let Ok(value) = HeaderValue::from_str(&cookies.clear(req, SESSION_COOKIE, COOKIE_PATH)) {
                answer.headers_mut().append(header::SET_COOKIE, value);
            }
            answer
        }
        other => html::failure_page(other),
    }
}

/// An error page of the account with `status`: the reason, and a link back
/// to the overview.
pub fn refused(status: StatusCode, reason: &str) -> HttpResponse {
    let page = ErrorPage {
        site: &PROVIDER,
        title: "Não foi possível continuar",
        reason,
        hint: "Nada foi alterado.",
        retry: Some(HOME_PATH),
    };
    html::html(html::response(status), &page)
}

/// What a page says about text that holds a NUL: the service refuses it in
/// any text a client sends.
pub const NULL_CHARACTER: &str = "O texto enviado contém um caractere nulo (NUL), que não é aceito. Nada foi alterado.";

/// The page for a form that could not be read.
pub fn form_refused(e: FormError) -> HttpResponse {
    match e {
        FormError::TooLarge => refused(StatusCode::PAYLOAD_TOO_LARGE, "O formulário enviado é inválido."),
        FormError::NullCharacter(_) => refused(StatusCode::BAD_REQUEST, NULL_CHARACTER),
        _ => refused(StatusCode::BAD_REQUEST, "O formulário enviado é inválido."),
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

/// `answer` with the cookie of the new session `signed`, and the login
/// form's key cleared: after a login, a sign-up or a password change.
pub fn with_session(
    req: &HttpRequest,
    cookies: &CookiePolicy,
    mut answer: HttpResponse,
    signed: &SignedSession,
) -> HttpResponse {
    for cookie in [
        cookies.set(req, SESSION_COOKIE, COOKIE_PATH, &signed.token, signed.max_age_secs),
        cookies.clear(req, LOGIN_COOKIE, COOKIE_PATH),
    ] {
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            answer.headers_mut().append(header::SET_COOKIE, value);
        }
    }
    answer
}

/// What a page says while the brute-force limits refuse its form.
pub fn throttled_text(retry_after_secs: u64) -> String {
    format!("Muitas tentativas sem sucesso. Tente novamente em {retry_after_secs} segundos.")
}

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

/// 303 to `location` (after a POST: the browser GETs it).
pub fn see_other(location: &str) -> HttpResponse {
    let mut builder = html::response(StatusCode::SEE_OTHER);
    builder.insert_header((header::LOCATION, location));
    builder.finish()
}

fn to_login(next: &str) -> HttpResponse {
    let query = serde_urlencoded::to_string([("next", next)]).unwrap_or_default();
    see_other(&format!("{LOGIN_PATH}?{query}"))
}

/// `next` resolved as the browser will resolve it (dot segments removed in
/// every spelling: `..`, `%2e%2e`, `.%2E`, …) when the resolved path is an
/// account or administration page of this site, else the overview: a path
/// under `/conta` or `/admin` with no `//` or `\` (which browsers read as
/// another host) and no control characters
/// ([`credencial_domain::local_path::resolve_under`]).
pub fn safe_next(next: Option<&str>) -> String {
    next.and_then(|n| resolve_under(n, &["/conta", "/admin"])).unwrap_or_else(|| HOME_PATH.to_owned())
}

// ---------------------------------------------------------------- login

/// `GET /conta/entrar/`: the login form, or straight to `next` when the
/// browser has a session.
async fn login_get(
    req: HttpRequest,
    oauth: web::Data<OAuthService>,
    cookies: web::Data<CookiePolicy>,
    settings: web::Data<AccountSettings>,
) -> HttpResponse {
    let fields = FormFields::parse(req.query_string().as_bytes()).unwrap_or_default();
    let next = safe_next(fields.get("next").ok().flatten());
    match session_of(&req, &oauth).await {
        Ok(Some(_)) => return see_other(&next),
        Ok(None) => {}
        Err(e) => return html::failure_page(e),
    }
    login_page(&req, &oauth, &cookies, &settings, &next, "", None, StatusCode::OK)
}

/// `POST /conta/entrar/`: checks the form token, the username (or CPF) and
/// the password (the authorization endpoint's rules and limits), opens the
/// session and goes to `next`.
async fn login_post(
    req: HttpRequest,
    payload: web::Payload,
    oauth: web::Data<OAuthService>,
    cookies: web::Data<CookiePolicy>,
    settings: web::Data<AccountSettings>,
) -> HttpResponse {
    if html::posted_from_another_origin(&req) {
        return refused(StatusCode::FORBIDDEN, FROM_ANOTHER_SITE);
    }
    let fields = match read_form(&req, payload).await {
        Ok(f) => f,
        Err(e) => return form_refused(e),
    };
    let field = |name| fields.get(name).ok().flatten().unwrap_or("");
    let next = safe_next(fields.get("next").ok().flatten());
    let username = field("username").trim();
    let page = |message, status| login_page(&req, &oauth, &cookies, &settings, &next, username, Some(message), status);
    let key = cookies::read(&req, LOGIN_COOKIE);
    if !key.as_deref().is_some_and(|k| oauth.login_form_token_matches(k, field("csrf_token"))) {
        return page(FORM_EXPIRED, StatusCode::BAD_REQUEST);
    }
    let password = field("password");
    if username.is_empty() || password.is_empty() {
        return page(MISSING_CREDENTIALS, StatusCode::OK);
    }
    let password = SecretString::from(password.to_owned());
    match oauth.log_in_via(LoginVia::Account, username, password, client_address(&req)).await {
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
    oauth: &OAuthService,
    cookies: &CookiePolicy,
    settings: &AccountSettings,
    next: &str,
    username: &str,
    message: Option<&str>,
    status: StatusCode,
) -> HttpResponse {
    // Keep the browser's key if it has one, so that two open tabs both work.
    let key = cookies::read(req, LOGIN_COOKIE).filter(|k| k.len() == 43).unwrap_or_else(|| oauth.new_form_key());
    let token = oauth.login_form_token(&key);
    let page = pages::Login {
        site: &PROVIDER,
        title: "Entrar",
        action: LOGIN_PATH,
        message,
        hidden: vec![("csrf_token", &token), ("next", next)],
        username,
        signup: settings.signup_enabled,
        signup_path: SIGNUP_PATH,
    };
    let mut builder = html::response(status);
    builder.append_header((header::SET_COOKIE, cookies.set(req, LOGIN_COOKIE, COOKIE_PATH, &key, LOGIN_FORM_SECS)));
    html::html(builder, &page)
}

// ------------------------------------------------------------- overview

/// `GET /conta/`: the overview.
async fn overview(
    req: HttpRequest,
    oauth: web::Data<OAuthService>,
    accounts: web::Data<AccountService>,
    cookies: web::Data<CookiePolicy>,
) -> HttpResponse {
    let session = or_answer!(signed_in(&req, &oauth).await);
    match accounts.overview(session.user_id).await {
        Ok(account) => {
            let notice = details::notice(&req);
            let token = session.account_form_token();
            let page = pages::overview(&account, &token, notice);
            html::html(html::response(StatusCode::OK), &page)
        }
        Err(e) => service_failure(&req, &cookies, e),
    }
}

// --------------------------------------------------------------- logout

/// `GET /conta/sair/`: the logout button.
async fn logout_get(req: HttpRequest, oauth: web::Data<OAuthService>) -> HttpResponse {
    match signed_in(&req, &oauth).await {
        Ok(session) => html::html(html::response(StatusCode::OK), &pages::logout(&session.account_form_token())),
        Err(answer) => answer,
    }
}

/// `POST /conta/sair/`: ends the session in this browser and shows the
/// login form.
async fn logout_post(
    req: HttpRequest,
    payload: web::Payload,
    oauth: web::Data<OAuthService>,
    cookies: web::Data<CookiePolicy>,
) -> HttpResponse {
    if let Err(answer) = signed_post(&req, payload, &oauth).await {
        return answer;
    }
    let mut answer = see_other(LOGIN_PATH);
    if let Ok(value) = HeaderValue::from_str(&cookies.clear(&req, SESSION_COOKIE, COOKIE_PATH)) {
        answer.headers_mut().append(header::SET_COOKIE, value);
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_stays_on_the_account_pages() {
        for ok in ["/conta/", "/conta", "/conta/experiencias/?x=1", "/conta/formacoes/3/"] {
            assert_eq!(safe_next(Some(ok)), ok);
        }
        for (dotted, resolved) in [("/admin/../conta/", "/conta/"), ("/conta/x/%2E%2e/", "/conta/")] {
            assert_eq!(safe_next(Some(dotted)), resolved);
        }
        for bad in [
            "//evil.example/",
            "https://evil.example/conta/",
            "/conta//evil.example",
            "/conta/\\evil",
            "/oauth/x",
            "/contas",
            "/conta/\n",
            "/conta/../auth/logout/",
            "/conta/%2e%2e/auth/logout/",
            "/conta/.%2E/auth/logout/",
            "/conta/..\\auth/logout/",
        ] {
            assert_eq!(safe_next(Some(bad)), HOME_PATH, "{bad:?}");
        }
        assert_eq!(safe_next(None), HOME_PATH);
    }
}
