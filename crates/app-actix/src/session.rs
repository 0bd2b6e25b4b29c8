//! The browser session at the HTTP edge, shared by the OAuth, account and
//! administration pages: its cookie, reading it on each request, the
//! guards that send a browser without one to the login form, the fences of
//! a signed-in POST, and the login form's anti-forgery key.
//!
//! The session cookie holds an opaque id (the session is a stored record:
//! [`credencial_application::SessionService`]); HttpOnly, `SameSite=Lax`,
//! on the whole site (`/oauth/authorize/`, `/conta/` and `/admin/` share
//! it). A signed-in POST carries `csrf_token`, the session's form token
//! (keyed by the id only the HttpOnly cookie holds), and is refused when
//! the browser says it came from another origin (`Sec-Fetch-Site`); a
//! login form's token is a double-submit token keyed by a random value in
//! a second cookie.
//!
//! The handlers find the [`SessionService`] in their application data
//! (every page factory registers it).

// A page's early answer (to the login form, a refusal page) is the `Err` of
// the helpers below: one per request, never on a hot path.
#![allow(clippy::result_large_err)]

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use credencial_application::{LoginSession, Origin, ServiceError, SessionService, SignedSession};
use credencial_domain::local_path::resolve_under;

use crate::client_address::client_address;
use crate::cookies::{self, CookiePolicy};
use crate::form::{read_form, FormError, FormFields};
use crate::html::{self, ErrorPage, PROVIDER};

/// Cookie holding the session's id.
pub const SESSION_COOKIE: &str = "credencial_session";
/// Cookie holding the key of a login form's anti-forgery token.
pub const LOGIN_COOKIE: &str = "credencial_login";
/// Path of both cookies: the whole site.
pub const COOKIE_PATH: &str = "/";
/// How long a login form can be submitted after it was shown.
pub const LOGIN_FORM_SECS: i64 = 60 * 60;

/// The account overview (where a login without `next` goes).
pub const HOME_PATH: &str = "/conta/";
/// The login form's path.
pub const LOGIN_PATH: &str = "/conta/entrar/";
/// The logout page's path.
pub const LOGOUT_PATH: &str = "/conta/sair/";
/// The password page's path.
pub const PASSWORD_PATH: &str = "/conta/senha/";
/// The second factor's page, after a right password.
pub const VERIFY_PATH: &str = "/conta/entrar/verificar/";
/// The security page (second factors), where a person without one is sent
/// when an application or the panel requires it.
pub const SECURITY_PATH: &str = "/conta/seguranca/";
/// Where an account that must change its password is sent: the password
/// page, told to say why.
pub const MUST_CHANGE_LOCATION: &str = "/conta/senha/?trocar=1";

/// Also what a deactivated account hears with its right password: the
/// form never tells a right password from a wrong one (docs/decisions.md).
pub const WRONG_CREDENTIALS: &str =
    "Usuário ou senha inválidos. Se a sua conta foi desativada, procure a equipe que administra o serviço.";
/// A login form sent without a username or a password.
pub const MISSING_CREDENTIALS: &str = "Informe o usuário e a senha.";
/// A login form whose anti-forgery token does not match its cookie.
pub const FORM_EXPIRED: &str = "O formulário expirou. Entre novamente.";

const FORGED: &str = "O formulário expirou ou não veio desta página. Volte à página, recarregue-a e tente de novo.";
const FROM_ANOTHER_SITE: &str = "O formulário foi enviado a partir de outro site e foi recusado.";
/// What a page says about text that holds a NUL: the service refuses it in
/// any text a client sends.
pub const NULL_CHARACTER: &str = "O texto enviado contém um caractere nulo (NUL), que não é aceito. Nada foi alterado.";

/// The session service registered with the application (every page
/// factory registers it; its absence is a wiring mistake, a 500 page).
fn service(req: &HttpRequest) -> Result<&SessionService, ServiceError> {
    req.app_data::<web::Data<SessionService>>()
        .map(|d| d.get_ref())
        .ok_or_else(|| ServiceError::Internal("no SessionService registered for this route".into()))
}

/// Where a request comes from, as a new session records it.
pub fn origin(req: &HttpRequest) -> Origin {
    let user_agent = req.headers().get(header::USER_AGENT).and_then(|v| v.to_str().ok()).map(str::to_owned);
    Origin { address: client_address(req), user_agent }
}

/// The browser's live session, `Ok(None)` for none (no cookie, or one that
/// names no live session). One round trip. Errors: `Storage`.
pub async fn session_of(req: &HttpRequest) -> Result<Option<LoginSession>, ServiceError> {
    match cookies::read(req, SESSION_COOKIE) {
        Some(cookie) => service(req)?.resume(&cookie).await,
        None => Ok(None),
    }
}

/// Whether the page at `path` is one an account that must change its
/// password may use before it does: the password page and the logout page.
fn may_wait_for_new_password(path: &str) -> bool {
    [PASSWORD_PATH, LOGOUT_PATH].iter().any(|page| is_page(path, page))
}

/// Whether `path` is `page` (the trailing slash is optional).
fn is_page(path: &str, page: &str) -> bool {
    path == page || page.strip_suffix('/') == Some(path)
}

/// The session of a signed-in request, or the answer that sends the
/// browser to the login form and back to this page afterwards (a cookie
/// whose session is over is cleared), or a failure page when the session
/// cannot be read.
///
/// An account whose password an administrator set (a temporary one) is
/// sent to the password page, with a notice, from every page but that one
/// and the logout page, until it changes the password.
pub async fn signed_in(req: &HttpRequest) -> Result<LoginSession, HttpResponse> {
    match session_of(req).await {
        // A session waiting for the second factor opens no page but the
        // logout: the factor first, then back here.
        Ok(Some(session)) if session.second_factor_pending && !is_page(req.path(), LOGOUT_PATH) => {
            Err(to_second_factor(req.path()))
        }
        Ok(Some(session)) if session.must_change_password && !may_wait_for_new_password(req.path()) => {
            Err(see_other(MUST_CHANGE_LOCATION))
        }
        Ok(Some(session)) => {
            crate::branding::set_person(&session.display_name);
            Ok(session)
        }
        Ok(None) => {
            let mut answer = to_login(req.path());
            if cookies::read(req, SESSION_COOKIE).is_some() {
                clear_session_cookie(req, &mut answer);
            }
            Err(answer)
        }
        Err(e) => Err(html::failure_page(e)),
    }
}

/// An account page's POST, read and fenced: a post the browser marks as
/// from another origin (403 page) or an unreadable form (400 or 413 page)
/// is refused; otherwise its fields. The form's token is the caller's to
/// check (a login form's, or a session's).
pub async fn posted_form(req: &HttpRequest, payload: web::Payload) -> Result<FormFields, HttpResponse> {
    if html::posted_from_another_origin(req) {
        return Err(refused(StatusCode::FORBIDDEN, FROM_ANOTHER_SITE));
    }
    read_form(req, payload).await.map_err(form_refused)
}

/// A signed-in POST, read and fenced: a post the browser marks as from
/// another origin (403 page), an unreadable form (400 or 413 page), no
/// session (303 to the login form), a missing or wrong `csrf_token` (403
/// page). Otherwise the session and the form's fields.
pub async fn signed_post(req: &HttpRequest, payload: web::Payload) -> Result<(LoginSession, FormFields), HttpResponse> {
    let fields = posted_form(req, payload).await?;
    let session = signed_in(req).await?;
    let presented = fields.get("csrf_token").ok().flatten().unwrap_or("");
    if !session.account_form_token_matches(presented) {
        return Err(refused(StatusCode::FORBIDDEN, FORGED));
    }
    Ok((session, fields))
}

/// Ends the browser's session on the server (logging out) and answers
/// `answer` with its cookie cleared. Errors: `Storage` — the session may
/// still be live, so the caller shows a failure instead of a logout that
/// did not happen.
pub async fn log_out(req: &HttpRequest, mut answer: HttpResponse) -> Result<HttpResponse, ServiceError> {
    if let Some(cookie) = cookies::read(req, SESSION_COOKIE) {
        service(req)?.end(&cookie).await?;
    }
    clear_session_cookie(req, &mut answer);
    Ok(answer)
}

/// Appends to `answer` the `Set-Cookie` that deletes the session cookie.
pub fn clear_session_cookie(req: &HttpRequest, answer: &mut HttpResponse) {
    let policy = req.app_data::<web::Data<CookiePolicy>>().map(|p| *p.get_ref()).unwrap_or_default();
    cookies::append(answer, &policy.clear(req, SESSION_COOKIE, COOKIE_PATH));
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
        cookies::append(&mut answer, &cookie);
    }
    answer
}

/// The token of a login form to render, and the builder of its answer
/// with `status`, the headers of every page and the `Set-Cookie` that
/// keeps the form's key in the browser. The browser's key is kept when it
/// has one, so that two open tabs both work.
pub fn login_form(
    req: &HttpRequest,
    sessions: &SessionService,
    cookies: &CookiePolicy,
    status: StatusCode,
) -> (String, actix_web::HttpResponseBuilder) {
    let key = cookies::read(req, LOGIN_COOKIE).filter(|k| k.len() == 43).unwrap_or_else(|| sessions.new_form_key());
    let token = sessions.login_form_token(&key);
    let mut builder = html::response(status);
    builder.append_header((header::SET_COOKIE, cookies.set(req, LOGIN_COOKIE, COOKIE_PATH, &key, LOGIN_FORM_SECS)));
    (token, builder)
}

/// Whether a login form's `presented` token matches the key in the
/// browser's cookie.
pub fn login_form_token_matches(req: &HttpRequest, sessions: &SessionService, presented: &str) -> bool {
    cookies::read(req, LOGIN_COOKIE).is_some_and(|key| sessions.login_form_token_matches(&key, presented))
}

/// `templates/account/confirm.html`: the password asked again before a
/// sensitive change, the form's other fields carried through.
#[derive(Debug, askama::Template)]
#[template(path = "account/confirm.html")]
struct ConfirmPage<'a> {
    site: &'static html::Site,
    title: &'a str,
    purpose: &'a str,
    message: Option<&'a str>,
    action: &'a str,
    carried: Vec<(&'a str, &'a str)>,
    back: &'a str,
}

/// Re-authentication before a sensitive change (`purpose`, as "encerrar
/// outras sessões"): passes when `session` authenticated within the last
/// 5 minutes, or `fields` carry its right password (`senha_confirmacao`,
/// which then counts as the session's latest authentication). Otherwise
/// the answer: the confirmation page, posting the same fields back to the
/// request's path (422 with a message after a wrong password; 429 under
/// the login limits).
pub async fn recent_authentication(
    req: &HttpRequest,
    session: &LoginSession,
    fields: &FormFields,
    purpose: &str,
    back: &str,
) -> Result<(), HttpResponse> {
    let sessions = service(req).map_err(html::failure_page)?;
    if sessions.recently_authenticated(session) {
        return Ok(());
    }
    let page = |message, status| {
        let carried = fields.pairs().filter(|(k, _)| *k != "senha_confirmacao").collect();
        let page = ConfirmPage {
            site: &PROVIDER,
            title: "Confirme que é você",
            purpose,
            message,
            action: req.path(),
            carried,
            back,
        };
        html::html(html::response(status), &page)
    };
    let password = match fields.get("senha_confirmacao") {
        Ok(Some(password)) => secrecy::SecretString::from(password.to_owned()),
        Ok(None) => return Err(page(None, StatusCode::OK)),
        Err(e) => return Err(form_refused(e)),
    };
    match sessions.reauthenticate(session, password, client_address(req)).await {
        Ok(true) => Ok(()),
        Ok(false) => Err(page(Some("A senha não confere. Nada foi alterado."), StatusCode::UNPROCESSABLE_ENTITY)),
        Err(ServiceError::Throttled { retry_after_secs }) => {
            let text = crate::html::throttled_text(retry_after_secs);
            let mut answer = page(Some(&text), StatusCode::TOO_MANY_REQUESTS);
            answer.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
            Err(answer)
        }
        Err(e) => Err(html::failure_page(e)),
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

/// The page for a form that could not be read.
pub fn form_refused(e: FormError) -> HttpResponse {
    match e {
        FormError::TooLarge => refused(StatusCode::PAYLOAD_TOO_LARGE, "O formulário enviado é inválido."),
        FormError::NullCharacter(_) => refused(StatusCode::BAD_REQUEST, NULL_CHARACTER),
        _ => refused(StatusCode::BAD_REQUEST, "O formulário enviado é inválido."),
    }
}

/// 303 to `location` (after a POST: the browser GETs it).
pub fn see_other(location: &str) -> HttpResponse {
    let mut builder = html::response(StatusCode::SEE_OTHER);
    builder.insert_header((header::LOCATION, location));
    builder.finish()
}

/// `path` with the query `next=<next>`: a page that goes on to `next`
/// afterwards (the login form, the second factor's page, sign-up).
pub fn with_next(path: &str, next: &str) -> String {
    let query = serde_urlencoded::to_string([("next", next)]).unwrap_or_default();
    format!("{path}?{query}")
}

/// 303 to the second factor's page, which goes on to `next` afterwards.
pub fn to_second_factor(next: &str) -> HttpResponse {
    see_other(&with_next(VERIFY_PATH, next))
}

/// 303 to the login form, which comes back to `next` afterwards.
pub fn to_login(next: &str) -> HttpResponse {
    see_other(&with_next(LOGIN_PATH, next))
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

/// [`safe_next`], also allowing the authorization endpoint (a login that
/// started there goes back to it after the second factor).
pub fn safe_next_after_factor(next: Option<&str>) -> String {
    next.and_then(|n| resolve_under(n, &["/conta", "/admin", "/oauth/authorize"]))
        .unwrap_or_else(|| HOME_PATH.to_owned())
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
