//! The administration panel: the pages under `/admin/`.
//!
//! They use the login session of `/conta/` (the same cookie and login
//! form): without a session a page answers 303 to
//! `/conta/entrar/?next=<its path>`; a signed-in user who is not staff (or
//! no longer is: the flag is read on every request) gets a 403 page. Every
//! POST keeps the account pages' fences: a post the browser marks as from
//! another origin is refused, and `csrf_token` must be the session's form
//! token.
//!
//! Each section registers its own routes (`register`), with the panel's
//! application data.

// A page's early answer (the login redirect, a refusal page) is the `Err`
// of the helpers below: one per request, never on a hot path.
#![allow(clippy::result_large_err)]

pub mod api_tokens;
pub mod applications;
pub mod audit;
pub mod mail;
pub mod pages;
pub mod user_new;
pub mod users;

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, Resource};
use credencial_application::{
    AccountAdminService, ApiTokenService, ClientAdminService, LoginSession, MailSender, SecondFactorService,
    SessionService, StaffService,
};
use credencial_domain::admin::Actor;

use crate::cookies::CookiePolicy;
use crate::form::{FormError, FormFields};
use crate::html::{self, ErrorPage, PROVIDER};
use crate::routes::{self, resource};
use crate::session::{see_other, signed_in, signed_post, to_second_factor, NULL_CHARACTER, SECURITY_PATH};

/// The panel's home.
pub const HOME_PATH: &str = "/admin/";

const NOT_STAFF: &str = "Esta área é da equipe que administra o serviço. A sua conta não tem acesso a ela.";

/// Whether staff must pass a second factor before any panel page (the
/// setting `staff_second_factor`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StaffPolicy {
    /// A staff session of the password alone is sent to the second factor
    /// (or to enrol one) first.
    pub second_factor: bool,
}

/// The panel as one service factory, with its application data.
pub struct AdminApi {
    services: AdminServices,
    cookies: web::Data<CookiePolicy>,
    policy: web::Data<StaffPolicy>,
    mail: Option<web::Data<MailSender>>,
}

/// The use cases behind the panel.
#[derive(Debug, Clone)]
pub struct AdminServices {
    /// Sessions (the login session of `/conta/`).
    pub sessions: web::Data<SessionService>,
    /// Staff membership and the audit trail.
    pub staff: web::Data<StaffService>,
    /// The registered applications (`/admin/aplicativos/`).
    pub clients: web::Data<ClientAdminService>,
    /// Account administration (`/admin/usuarios/`).
    pub accounts: web::Data<AccountAdminService>,
    /// The user-management API's tokens.
    pub api_tokens: web::Data<ApiTokenService>,
    /// Second factors (the staff's own, when the policy asks one); `None`
    /// when the service offers none.
    pub factors: Option<web::Data<SecondFactorService>>,
}

impl AdminApi {
    /// The panel over these use cases, marking cookies as `cookies` says,
    /// under `policy`.
    pub fn new(services: AdminServices, cookies: CookiePolicy, policy: StaffPolicy) -> Self {
        Self { services, cookies: web::Data::new(cookies), policy: web::Data::new(policy), mail: None }
    }

    /// With the outbox's page over `mail` (`/admin/emails/`), when the
    /// service can send mail.
    pub fn with_mail(mut self, mail: Option<web::Data<MailSender>>) -> Self {
        self.mail = mail;
        self
    }

    fn with_data(&self, r: Resource) -> Resource {
        let AdminServices { sessions, staff, clients, accounts, api_tokens, factors } = &self.services;
        let r = r
            .app_data(sessions.clone())
            .app_data(staff.clone())
            .app_data(clients.clone())
            .app_data(accounts.clone())
            .app_data(api_tokens.clone())
            .app_data(self.cookies.clone())
            .app_data(self.policy.clone());
        let r = match &self.mail {
            Some(mail) => r.app_data(mail.clone()),
            None => r,
        };
        match factors {
            Some(factors) => r.app_data(factors.clone()),
            None => r,
        }
    }
}

impl HttpServiceFactory for AdminApi {
    fn register(self, config: &mut AppService) {
        self.with_data(resource(HOME_PATH, "GET")).route(routes::get().to(home)).register(config);
        audit::register(config, |r| self.with_data(r));
        mail::register(config, |r| self.with_data(r));
        applications::register(config, |r| self.with_data(r));
        // Before `users`: `/admin/usuarios/novo/` is not an account's page.
        user_new::register(config, |r| self.with_data(r));
        users::register(config, |r| self.with_data(r));
        api_tokens::register(config, |r| self.with_data(r));
    }
}

// ------------------------------------------------------- shared by pages

/// The session and actor of a staff user's request; or the login redirect
/// (no session), a 403 page (not staff), a failure page (storage down).
pub async fn staff_signed_in(req: &HttpRequest, staff: &StaffService) -> Result<(LoginSession, Actor), HttpResponse> {
    let session = signed_in(req).await?;
    let actor = member(staff, &session).await?;
    second_factor_gate(req, &session).await?;
    Ok((session, actor))
}

/// A staff user's POST, read and fenced like an account page's (another
/// origin, unreadable form, no session, wrong `csrf_token`), then checked
/// for staff: the session, the actor and the form's fields.
pub async fn staff_post(
    req: &HttpRequest,
    payload: web::Payload,
    staff: &StaffService,
) -> Result<(LoginSession, Actor, FormFields), HttpResponse> {
    let (session, fields) = signed_post(req, payload).await?;
    let actor = member(staff, &session).await?;
    second_factor_gate(req, &session).await?;
    Ok((session, actor, fields))
}

/// The fields of a panel page's query string (its filters: `?q=…`,
/// `?ator=…`); the 400 page when one holds a NUL (it can match nothing, and
/// must not reach storage); a query that cannot be read otherwise is an
/// empty filter, as before.
pub fn filter_query(req: &HttpRequest) -> Result<FormFields, HttpResponse> {
    match FormFields::parse(req.query_string().as_bytes()) {
        Ok(fields) => Ok(fields),
        Err(FormError::NullCharacter(_)) => Err(refused(StatusCode::BAD_REQUEST, NULL_CHARACTER)),
        Err(_) => Ok(FormFields::default()),
    }
}

async fn member(staff: &StaffService, session: &LoginSession) -> Result<Actor, HttpResponse> {
    match staff.member(session.user_id).await {
        Ok(Some(actor)) => Ok(actor),
        Ok(None) => Err(refused(StatusCode::FORBIDDEN, NOT_STAFF)),
        Err(e) => Err(html::failure_page(e)),
    }
}

/// The staff policy's second factor: a staff session of the password alone
/// goes to the code's page (and back), or, without an authenticator app,
/// to the security page to enrol one (the first administrator bootstraps
/// so). A 403 page when the service offers no second factor.
async fn second_factor_gate(req: &HttpRequest, session: &LoginSession) -> Result<(), HttpResponse> {
    let policy = req.app_data::<web::Data<StaffPolicy>>().map(|p| *p.get_ref()).unwrap_or_default();
    if !policy.second_factor || !session.needs_second_factor() {
        return Ok(());
    }
    let Some(factors) = req.app_data::<web::Data<SecondFactorService>>() else {
        return Err(refused(
            StatusCode::FORBIDDEN,
            "A administração exige um segundo fator, que não está configurado.",
        ));
    };
    let here = match req.query_string() {
        "" => req.path().to_owned(),
        query => format!("{}?{query}", req.path()),
    };
    match factors.has_factor(session.user_id).await {
        Ok(true) => Err(to_second_factor(&here)),
        Ok(false) => {
            let query = serde_urlencoded::to_string([("exigido", "A área de administração"), ("next", here.as_str())])
                .unwrap_or_default();
            Err(see_other(&format!("{SECURITY_PATH}?{query}")))
        }
        Err(e) => Err(html::failure_page(e)),
    }
}

/// An error page of the panel with `status`: the reason, and a link back
/// to the panel's home.
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

/// `GET /admin/`: what the panel offers.
async fn home(req: HttpRequest, staff: web::Data<StaffService>) -> HttpResponse {
    let (_, actor) = or_answer!(staff_signed_in(&req, &staff).await);
    let page = pages::Home {
        site: &PROVIDER,
        title: "Administração",
        frame: crate::html::Frame::admin(HOME_PATH),
        staff: actor.name(),
    };
    html::html(html::response(StatusCode::OK), &page)
}
