//! Confirming the account's address (issue 24): the page a confirmation
//! link opens (`/conta/email/confirmar/<token>/`: a button, so that a mail
//! scanner that follows links confirms nothing; the post confirms), and
//! "Reenviar link de confirmação" on the overview
//! (`POST /conta/email/reenviar/`). Served when the service sends mail.

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use credencial_application::email_confirmation::{Sent, CONFIRM_PATH};
use credencial_application::{EmailConfirmationService, SessionService};
use credencial_domain::UserId;
use credencial_ports::Confirmation;

use crate::cookies::CookiePolicy;
use crate::html::{self, ErrorPage, Site, PROVIDER};
use crate::routes::{self, resource};
use crate::session::{login_form, login_form_token_matches, posted_form, see_other, signed_post};

/// Where the overview's resend button posts.
pub const RESEND_PATH: &str = "/conta/email/reenviar/";

#[derive(Template)]
#[template(path = "account/email_confirm.html")]
struct ConfirmPage<'a> {
    site: &'static Site,
    title: &'a str,
    action: &'a str,
    hidden: Vec<(&'static str, &'a str)>,
    done: Option<&'a str>,
}

/// The confirmation pages over `confirmations`.
pub struct EmailPages {
    confirmations: web::Data<EmailConfirmationService>,
    sessions: web::Data<SessionService>,
    cookies: web::Data<CookiePolicy>,
}

impl EmailPages {
    /// The pages, with the login form's tokens from `sessions`.
    pub fn new(
        confirmations: web::Data<EmailConfirmationService>,
        sessions: web::Data<SessionService>,
        cookies: CookiePolicy,
    ) -> Self {
        Self { confirmations, sessions, cookies: web::Data::new(cookies) }
    }
}

impl HttpServiceFactory for EmailPages {
    fn register(self, config: &mut AppService) {
        let data = |r: actix_web::Resource| {
            r.app_data(self.confirmations.clone()).app_data(self.sessions.clone()).app_data(self.cookies.clone())
        };
        data(resource(&format!("{CONFIRM_PATH}{{token}}/"), "GET, POST"))
            .route(routes::get().to(confirm_form))
            .route(web::post().to(confirm))
            .register(config);
        data(resource(RESEND_PATH, "POST")).route(web::post().to(resend)).register(config);
    }
}

/// Whether `user`'s address is confirmed, when the service sends mail
/// (`None` otherwise, or when it cannot be read: the page says nothing).
pub async fn confirmed(req: &HttpRequest, user: UserId) -> Option<bool> {
    let confirmations = req.app_data::<web::Data<EmailConfirmationService>>()?;
    confirmations.is_confirmed(user).await.ok()
}

/// `GET /conta/email/confirmar/<token>/`: the button.
async fn confirm_form(
    req: HttpRequest,
    sessions: web::Data<SessionService>,
    cookies: web::Data<CookiePolicy>,
) -> HttpResponse {
    let (token, builder) = login_form(&req, &sessions, &cookies, StatusCode::OK);
    let action = req.path().to_owned();
    let page = ConfirmPage {
        site: &PROVIDER,
        title: "Confirmar e-mail",
        action: &action,
        hidden: vec![("csrf_token", &token)],
        done: None,
    };
    html::html(builder, &page)
}

/// `POST /conta/email/confirmar/<token>/`: confirms.
async fn confirm(
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
    confirmations: web::Data<EmailConfirmationService>,
    sessions: web::Data<SessionService>,
) -> HttpResponse {
    let fields = or_answer!(posted_form(&req, payload).await);
    let presented = fields.get("csrf_token").ok().flatten().unwrap_or("");
    if !login_form_token_matches(&req, &sessions, presented) {
        return crate::session::refused(StatusCode::BAD_REQUEST, "O formulário expirou. Abra o link de novo.");
    }
    let (title, text) = match confirmations.confirm(&path).await {
        Ok(Confirmation::Confirmed(_)) => ("E-mail confirmado", "Obrigado: o seu e-mail está confirmado."),
        Ok(Confirmation::AddressChanged(_)) => {
            return gone("O e-mail da conta mudou depois que este link foi enviado: confirme o endereço novo pelo link que enviamos para ele.")
        }
        Ok(Confirmation::NoLink) => {
            return gone("Este link não vale mais: ele já foi usado, passou de 24 horas ou não existe. Peça outro em Minha conta.")
        }
        Err(e) => return html::failure_page(e),
    };
    let page = ConfirmPage { site: &PROVIDER, title, action: "", hidden: Vec::new(), done: Some(text) };
    html::html(html::response(StatusCode::OK), &page)
}

/// The 410 page of a confirmation link that cannot be used.
fn gone(reason: &str) -> HttpResponse {
    let page = ErrorPage {
        site: &PROVIDER,
        title: "Link inválido",
        reason,
        hint: "Em Minha conta você pode pedir um novo link de confirmação.",
        retry: Some("/conta/"),
    };
    html::html(html::response(StatusCode::GONE), &page)
}

/// `POST /conta/email/reenviar/`: another link to the account's address.
async fn resend(
    req: HttpRequest,
    payload: web::Payload,
    confirmations: web::Data<EmailConfirmationService>,
) -> HttpResponse {
    let (session, _) = or_answer!(signed_post(&req, payload).await);
    match confirmations.send(session.user_id).await {
        Ok(Sent::Sent) => see_other("/conta/?confirmacao=enviada"),
        Ok(Sent::TooSoon) => see_other("/conta/?confirmacao=aguarde"),
        Ok(Sent::AlreadyConfirmed | Sent::NoAddress) => see_other("/conta/"),
        Err(e) => html::failure_page(e),
    }
}
