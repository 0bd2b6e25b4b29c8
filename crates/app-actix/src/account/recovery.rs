//! "Esqueci minha senha" (`/conta/recuperar/`): the form that asks for a
//! link by mail, and the page the link opens, where the new password is
//! set (after the second factor's code, when the account has one).
//!
//! The request's answer is the same page, status and time whatever was
//! typed (the use case finds the account after answering). Both forms
//! carry the login form's anti-forgery token and are refused when the
//! browser says they came from another origin; the link's page is never
//! cached and sends no `Referer` (the token is in its path), like every
//! page.

use actix_web::dev::AppService;
use actix_web::dev::HttpServiceFactory;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, Resource};
use askama::Template;
use credencial_application::password_reset::RECOVER_PATH;
use credencial_application::{LinkProblem, PasswordResetService, ResetOutcome, ServiceError, SessionService};
use credencial_domain::account::registration::MSG_CONFIRMACAO;
use credencial_domain::account::FieldErrors;
use secrecy::SecretString;

use super::{text_fields, throttled_text, with_retry_after, LOGIN_PATH};
use crate::cookies::CookiePolicy;
use crate::html::{self, ErrorPage, Site, PROVIDER};
use crate::routes::{self, resource};
use crate::session::{form_refused, login_form, login_form_token_matches, origin, posted_form};

/// The request form (`templates/account/recover.html`).
#[derive(Debug, Template)]
#[template(path = "account/recover.html")]
struct RecoverPage<'a> {
    site: &'static Site,
    title: &'a str,
    action: &'a str,
    message: Option<&'a str>,
    hidden: Vec<(&'static str, &'a str)>,
    typed: &'a str,
    errors: &'a FieldErrors,
    sent: bool,
    login_path: &'a str,
}

/// The new-password form (`templates/account/reset.html`).
#[derive(Debug, Template)]
#[template(path = "account/reset.html")]
struct ResetPage<'a> {
    site: &'static Site,
    title: &'a str,
    action: &'a str,
    message: Option<&'a str>,
    hidden: Vec<(&'static str, &'a str)>,
    username: &'a str,
    needs_factor: bool,
    errors: &'a FieldErrors,
}

/// The page after a reset (`templates/account/recover_done.html`).
#[derive(Debug, Template)]
#[template(path = "account/recover_done.html")]
struct DonePage<'a> {
    site: &'static Site,
    title: &'a str,
    username: &'a str,
    login_path: &'a str,
}

/// Message of an empty request form.
const MSG_EMPTY: &str = "Digite o CPF, o nome de usuário ou o e-mail da conta.";
/// Message of a form whose anti-forgery token expired.
const FORM_EXPIRED: &str = "O formulário expirou. Tente novamente.";
/// Message above a refused form.
const CHECK_FIELDS: &str = "Confira os campos indicados.";

/// The recovery pages, when the service can send mail.
pub struct RecoveryPages {
    resets: web::Data<PasswordResetService>,
    sessions: web::Data<SessionService>,
    cookies: web::Data<CookiePolicy>,
}

impl RecoveryPages {
    /// The pages over `resets`, with the login form's tokens from
    /// `sessions` and cookies as `cookies` says.
    pub fn new(
        resets: web::Data<PasswordResetService>,
        sessions: web::Data<SessionService>,
        cookies: CookiePolicy,
    ) -> Self {
        Self { resets, sessions, cookies: web::Data::new(cookies) }
    }

    fn with_data(&self, r: Resource) -> Resource {
        r.app_data(self.resets.clone()).app_data(self.sessions.clone()).app_data(self.cookies.clone())
    }
}

impl HttpServiceFactory for RecoveryPages {
    fn register(self, config: &mut AppService) {
        self.with_data(resource(RECOVER_PATH, "GET, POST"))
            .route(routes::get().to(ask_form))
            .route(web::post().to(ask))
            .register(config);
        self.with_data(resource(&format!("{RECOVER_PATH}{{token}}/"), "GET, POST"))
            .route(routes::get().to(reset_form))
            .route(web::post().to(reset))
            .register(config);
    }
}

/// The path of the recovery form, when the service offers it (the login
/// forms link to it).
pub fn offered(req: &HttpRequest) -> Option<&'static str> {
    req.app_data::<web::Data<PasswordResetService>>().map(|_| RECOVER_PATH)
}

/// `GET /conta/recuperar/`.
async fn ask_form(
    req: HttpRequest,
    sessions: web::Data<SessionService>,
    cookies: web::Data<CookiePolicy>,
) -> HttpResponse {
    ask_page(&req, &sessions, &cookies, "", &FieldErrors::new(), None, false, StatusCode::OK)
}

/// `POST /conta/recuperar/`: the same answer whether an account matched.
async fn ask(
    req: HttpRequest,
    payload: web::Payload,
    resets: web::Data<PasswordResetService>,
    sessions: web::Data<SessionService>,
    cookies: web::Data<CookiePolicy>,
) -> HttpResponse {
    let fields = or_answer!(posted_form(&req, payload).await);
    let [csrf_token, typed] = match text_fields(&fields, ["csrf_token", "identificador"]) {
        Ok(values) => values,
        Err(e) => return form_refused(e),
    };
    let typed = typed.trim();
    let page = |message, errors: &FieldErrors, sent, status| {
        ask_page(&req, &sessions, &cookies, typed, errors, message, sent, status)
    };
    if !login_form_token_matches(&req, &sessions, csrf_token) {
        return page(Some(FORM_EXPIRED), &FieldErrors::new(), false, StatusCode::BAD_REQUEST);
    }
    if typed.is_empty() {
        let mut errors = FieldErrors::new();
        errors.push("identificador", MSG_EMPTY);
        return page(Some(CHECK_FIELDS), &errors, false, StatusCode::UNPROCESSABLE_ENTITY);
    }
    match resets.into_inner().request(typed, &origin(&req)).await {
        Ok(()) => page(None, &FieldErrors::new(), true, StatusCode::OK),
        Err(ServiceError::Throttled { retry_after_secs }) => {
            let text = throttled_text(retry_after_secs);
            let answer = page(Some(&text), &FieldErrors::new(), false, StatusCode::TOO_MANY_REQUESTS);
            with_retry_after(answer, retry_after_secs)
        }
        Err(e) => html::failure_page(e),
    }
}

#[allow(clippy::too_many_arguments)]
fn ask_page(
    req: &HttpRequest,
    sessions: &SessionService,
    cookies: &CookiePolicy,
    typed: &str,
    errors: &FieldErrors,
    message: Option<&str>,
    sent: bool,
    status: StatusCode,
) -> HttpResponse {
    let (token, builder) = login_form(req, sessions, cookies, status);
    let page = RecoverPage {
        site: &PROVIDER,
        title: "Esqueci minha senha",
        action: RECOVER_PATH,
        message,
        hidden: vec![("csrf_token", &token)],
        // What was typed is not shown back once the request is sent.
        typed: if sent { "" } else { typed },
        errors,
        sent,
        login_path: LOGIN_PATH,
    };
    html::html(builder, &page)
}

/// `GET /conta/recuperar/{token}/`.
async fn reset_form(
    req: HttpRequest,
    path: web::Path<String>,
    resets: web::Data<PasswordResetService>,
    sessions: web::Data<SessionService>,
    cookies: web::Data<CookiePolicy>,
) -> HttpResponse {
    match resets.open(&path).await {
        Ok(Ok(link)) => reset_page(
            &req,
            &sessions,
            &cookies,
            &link.username,
            link.needs_factor,
            &FieldErrors::new(),
            None,
            StatusCode::OK,
        ),
        Ok(Err(problem)) => link_problem(problem),
        Err(e) => html::failure_page(e),
    }
}

/// `POST /conta/recuperar/{token}/`.
async fn reset(
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
    resets: web::Data<PasswordResetService>,
    sessions: web::Data<SessionService>,
    cookies: web::Data<CookiePolicy>,
) -> HttpResponse {
    let fields = or_answer!(posted_form(&req, payload).await);
    let names = ["csrf_token", "password", "password_confirmacao", "codigo"];
    let [csrf_token, new, confirmation, code] = match text_fields(&fields, names) {
        Ok(values) => values,
        Err(e) => return form_refused(e),
    };
    let link = match resets.open(&path).await {
        Ok(Ok(link)) => link,
        Ok(Err(problem)) => return link_problem(problem),
        Err(e) => return html::failure_page(e),
    };
    let page = |errors: &FieldErrors, message, status| {
        reset_page(&req, &sessions, &cookies, &link.username, link.needs_factor, errors, message, status)
    };
    if !login_form_token_matches(&req, &sessions, csrf_token) {
        return page(&FieldErrors::new(), Some(FORM_EXPIRED), StatusCode::BAD_REQUEST);
    }
    let mut errors = FieldErrors::new();
    if new.is_empty() {
        errors.push("password", "Informe a nova senha.");
    } else if confirmation != new {
        errors.push("password_confirmacao", MSG_CONFIRMACAO);
    }
    if !errors.is_empty() {
        return page(&errors, Some(CHECK_FIELDS), StatusCode::UNPROCESSABLE_ENTITY);
    }
    match resets.complete(&link, &path, SecretString::from(new.to_owned()), code, &origin(&req)).await {
        Ok(ResetOutcome::Done { username }) => {
            let done =
                DonePage { site: &PROVIDER, title: "Senha redefinida", username: &username, login_path: LOGIN_PATH };
            html::html(html::response(StatusCode::OK), &done)
        }
        Ok(ResetOutcome::Refused(errors)) => page(&errors, Some(CHECK_FIELDS), StatusCode::UNPROCESSABLE_ENTITY),
        Ok(ResetOutcome::Link(problem)) => link_problem(problem),
        Err(ServiceError::Throttled { retry_after_secs }) => {
            let text = throttled_text(retry_after_secs);
            let answer = page(&FieldErrors::new(), Some(&text), StatusCode::TOO_MANY_REQUESTS);
            with_retry_after(answer, retry_after_secs)
        }
        Err(e) => html::failure_page(e),
    }
}

#[allow(clippy::too_many_arguments)]
fn reset_page(
    req: &HttpRequest,
    sessions: &SessionService,
    cookies: &CookiePolicy,
    username: &str,
    needs_factor: bool,
    errors: &FieldErrors,
    message: Option<&str>,
    status: StatusCode,
) -> HttpResponse {
    let (token, builder) = login_form(req, sessions, cookies, status);
    let action = req.path().to_owned();
    let page = ResetPage {
        site: &PROVIDER,
        title: "Criar uma nova senha",
        action: &action,
        message,
        hidden: vec![("csrf_token", &token)],
        username,
        needs_factor,
        errors,
    };
    html::html(builder, &page)
}

/// The page of a link that cannot be used: 410, what happened and a way
/// to ask for a new one.
fn link_problem(problem: LinkProblem) -> HttpResponse {
    let (title, reason) = match problem {
        LinkProblem::Unknown => (
            "Link inválido",
            "Este link não vale mais: ele já foi usado, o e-mail da conta mudou depois que ele foi enviado, ou ele não existe.",
        ),
        LinkProblem::Expired => ("Link expirado", "Este link passou do prazo de 30 minutos."),
        LinkProblem::PasswordChanged => {
            ("Link sem efeito", "A senha desta conta foi alterada depois que o link foi enviado.")
        }
    };
    let page = ErrorPage {
        site: &PROVIDER,
        title,
        reason,
        hint: "Para criar uma nova senha, peça outro link.",
        retry: Some(RECOVER_PATH),
    };
    html::html(html::response(StatusCode::GONE), &page)
}
