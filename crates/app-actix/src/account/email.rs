//! Confirmed addresses (issue 24): the page a confirmation link opens
//! (`/conta/email/confirmar/<token>/`: a button, so that a mail scanner
//! that follows links confirms nothing; the post confirms the address, or
//! applies the change of address the link was sent for), the page of the
//! link that undoes a change (`/conta/email/desfazer/<token>/`, mailed to
//! the old address), "Reenviar link de confirmação" on the overview
//! (`POST /conta/email/reenviar/`) and "Cancelar a troca"
//! (`POST /conta/email/cancelar/`). Served when the service sends mail.

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use credencial_application::email_confirmation::{Sent, Undone, CONFIRM_PATH, UNDO_PATH};
use credencial_application::{EmailConfirmationService, ServiceError, SessionService};
use credencial_domain::UserId;
use credencial_ports::Confirmation;

use crate::cookies::CookiePolicy;
use crate::html::{self, ErrorPage, Site, PROVIDER};
use crate::routes::{self, resource};
use crate::session::{login_form, login_form_token_matches, posted_form, see_other, signed_post};

/// Where the overview's resend button posts.
pub const RESEND_PATH: &str = "/conta/email/reenviar/";
/// Where the overview's "cancel the change" button posts.
pub const CANCEL_PATH: &str = "/conta/email/cancelar/";

#[derive(Template)]
#[template(path = "account/email_confirm.html")]
struct ConfirmPage<'a> {
    site: &'static Site,
    title: &'a str,
    /// What the button does (before the post).
    intro: &'a str,
    button: &'a str,
    action: &'a str,
    hidden: Vec<(&'static str, &'a str)>,
    /// What happened (after the post), and where to go next.
    done: Option<&'a str>,
    next: (&'a str, &'a str),
}

/// The two link pages: a confirmation and an undo.
#[derive(Debug, Clone, Copy)]
struct LinkPage {
    title: &'static str,
    intro: &'static str,
    button: &'static str,
}

/// The confirmation link's page.
const CONFIRM_PAGE: LinkPage = LinkPage {
    title: "Confirmar e-mail",
    intro: "Para confirmar que este é o seu e-mail, pressione o botão.",
    button: "Confirmar meu e-mail",
};

/// The undo link's page.
const UNDO_PAGE: LinkPage = LinkPage {
    title: "Desfazer a troca de e-mail",
    intro: "Pressione o botão para devolver à conta o e-mail para o qual enviamos este link. Todas as sessões abertas da conta serão encerradas.",
    button: "Desfazer a troca",
};

/// The pages after a post: `title`, what happened, and where to go.
fn done_page(title: &str, text: &str, next: (&str, &str)) -> HttpResponse {
    let page = ConfirmPage {
        site: &PROVIDER,
        title,
        intro: "",
        button: "",
        action: "",
        hidden: Vec::new(),
        done: Some(text),
        next,
    };
    html::html(html::response(StatusCode::OK), &page)
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
            .route(routes::get().to(|req, s, c| link_form(req, s, c, CONFIRM_PAGE)))
            .route(web::post().to(confirm))
            .register(config);
        data(resource(&format!("{UNDO_PATH}{{token}}/"), "GET, POST"))
            .route(routes::get().to(|req, s, c| link_form(req, s, c, UNDO_PAGE)))
            .route(web::post().to(undo))
            .register(config);
        data(resource(RESEND_PATH, "POST")).route(web::post().to(resend)).register(config);
        data(resource(CANCEL_PATH, "POST")).route(web::post().to(cancel)).register(config);
    }
}

/// Whether `user`'s address is confirmed, when the service sends mail
/// (`None` otherwise, or when it cannot be read: the page says nothing).
pub async fn confirmed(req: &HttpRequest, user: UserId) -> Option<bool> {
    let confirmations = req.app_data::<web::Data<EmailConfirmationService>>()?;
    said_nothing(confirmations.is_confirmed(user).await)
}

/// `read`'s value, or `None` with the failure logged: a page leaves out
/// an address's state it could not read, and the log says why.
fn said_nothing<T>(read: Result<T, ServiceError>) -> Option<T> {
    read.inspect_err(|e| tracing::warn!(error = %e, "the address's state could not be read; the page leaves it out"))
        .ok()
}

/// Fills in the overview's address state for `user` when the service
/// sends mail (whether it is confirmed, and a change waiting for its
/// link); says nothing when it cannot be read.
pub async fn show_state(page: &mut super::pages::Overview<'_>, req: &HttpRequest, user: UserId) {
    let Some(confirmations) = req.app_data::<web::Data<EmailConfirmationService>>() else { return };
    page.email_confirmed = said_nothing(confirmations.is_confirmed(user).await);
    page.email_pending = said_nothing(confirmations.pending_change(user).await).flatten();
}

/// `GET` of a link's page: the button (a GET changes nothing: mail
/// scanners follow links).
async fn link_form(
    req: HttpRequest,
    sessions: web::Data<SessionService>,
    cookies: web::Data<CookiePolicy>,
    shown: LinkPage,
) -> HttpResponse {
    let (token, builder) = login_form(&req, &sessions, &cookies, StatusCode::OK);
    let action = req.path().to_owned();
    let page = ConfirmPage {
        site: &PROVIDER,
        title: shown.title,
        intro: shown.intro,
        button: shown.button,
        action: &action,
        hidden: vec![("csrf_token", &token)],
        done: None,
        next: ("", ""),
    };
    html::html(builder, &page)
}

/// The posted form of a link's page, when its anti-forgery token matches.
async fn link_post(req: &HttpRequest, payload: web::Payload, sessions: &SessionService) -> Result<(), HttpResponse> {
    let fields = posted_form(req, payload).await?;
    let presented = fields.get("csrf_token").ok().flatten().unwrap_or("");
    match login_form_token_matches(req, sessions, presented) {
        true => Ok(()),
        false => Err(crate::session::refused(StatusCode::BAD_REQUEST, "O formulário expirou. Abra o link de novo.")),
    }
}

/// Where the pages send the person next.
const TO_ACCOUNT: (&str, &str) = ("/conta/", "Ir para Minha conta");

/// `POST /conta/email/confirmar/<token>/`: confirms the address, or
/// applies the change.
async fn confirm(
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
    confirmations: web::Data<EmailConfirmationService>,
    sessions: web::Data<SessionService>,
) -> HttpResponse {
    or_answer!(link_post(&req, payload, &sessions).await);
    match confirmations.confirm(&path, &crate::session::origin(&req)).await {
        Ok(Confirmation::Confirmed(_)) => {
            done_page("E-mail confirmado", "Obrigado: o seu e-mail está confirmado.", TO_ACCOUNT)
        }
        Ok(Confirmation::Changed(_)) => done_page(
            "E-mail alterado",
            "Pronto: este é agora o e-mail da sua conta, já confirmado. Avisamos o endereço anterior.",
            TO_ACCOUNT,
        ),
        Ok(Confirmation::Taken(_)) => gone(
            StatusCode::CONFLICT,
            "Este endereço passou a ser usado por outra conta depois que o link foi enviado: o e-mail da sua conta não mudou.",
        ),
        Ok(Confirmation::AddressChanged(_)) => gone(
            StatusCode::GONE,
            "O e-mail da conta mudou depois que este link foi enviado: confirme o endereço novo pelo link que enviamos para ele.",
        ),
        Ok(Confirmation::NoLink) => gone(
            StatusCode::GONE,
            "Este link não vale mais: ele já foi usado, passou de 24 horas, foi substituído por um pedido mais novo ou não existe. Peça outro em Minha conta.",
        ),
        Err(e) => html::failure_page(e),
    }
}

/// `POST /conta/email/desfazer/<token>/`: puts the old address back.
async fn undo(
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
    confirmations: web::Data<EmailConfirmationService>,
    sessions: web::Data<SessionService>,
) -> HttpResponse {
    or_answer!(link_post(&req, payload, &sessions).await);
    match confirmations.undo(&path, &crate::session::origin(&req)).await {
        Ok(Undone::Restored) => done_page(
            "Troca de e-mail desfeita",
            "O e-mail anterior voltou para a conta e todas as sessões abertas foram encerradas. Se você não pediu a troca, redefina agora a sua senha.",
            (credencial_application::password_reset::RECOVER_PATH, "Redefinir a senha"),
        ),
        Ok(Undone::Taken) => gone(
            StatusCode::CONFLICT,
            "Este endereço passou a ser usado por outra conta: não foi possível devolvê-lo. Procure o atendimento da instituição.",
        ),
        Ok(Undone::NoLink) => gone(
            StatusCode::GONE,
            "Este link não vale mais: ele já foi usado, passou de 7 dias ou não existe. Se alguém trocou o e-mail da sua conta, procure o atendimento da instituição.",
        ),
        Err(e) => html::failure_page(e),
    }
}

/// The page (`status`: 410 or 409) of a link that cannot be used.
fn gone(status: StatusCode, reason: &str) -> HttpResponse {
    let page = ErrorPage {
        site: &PROVIDER,
        title: "Link inválido",
        reason,
        hint: "Em Minha conta você pode conferir o e-mail da conta e pedir um novo link.",
        retry: Some("/conta/"),
    };
    html::html(html::response(status), &page)
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

/// `POST /conta/email/cancelar/`: drops the change waiting for its link.
async fn cancel(
    req: HttpRequest,
    payload: web::Payload,
    confirmations: web::Data<EmailConfirmationService>,
) -> HttpResponse {
    let (session, _) = or_answer!(signed_post(&req, payload).await);
    match confirmations.cancel_change(session.user_id).await {
        Ok(true) => see_other("/conta/?confirmacao=troca-cancelada"),
        Ok(false) => see_other("/conta/"),
        Err(e) => html::failure_page(e),
    }
}
