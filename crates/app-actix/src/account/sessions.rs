//! The person's open sessions (`/conta/sessoes/`): each browser where the
//! account is open (device summary, approximate network, started, last
//! activity, how the person logged in), this browser's marked; *Encerrar*
//! ends one, *Encerrar todas as outras* every other.
//!
//! A POST carries `acao` (`encerrar` with the record `id`, or
//! `encerrar_outras`) and the form token: 303 back to the list with a
//! notice; an id that is not one of the person's live sessions is a 404
//! page (another person's id ends nothing), a malformed one a 400 page.

// A page's early answer is the `Err` of the helpers (see the parent).
#![allow(clippy::result_large_err)]

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, Resource};
use askama::Template;
use credencial_application::metrics::SessionEnd;
use credencial_application::SessionService;
use credencial_domain::assurance::Proof;
use credencial_domain::session::AuthMethod;

use super::{form_refused, refused, see_other, service_failure, signed_in, signed_post};
use crate::form::FormFields;
use crate::html::Frame;
use crate::html::{self, Site, PROVIDER};
use crate::routes::{self, resource};

/// The page's path.
pub const SESSIONS_PATH: &str = "/conta/sessoes/";

/// Registers the page; `with_data` gives it the account's application data.
pub fn register(config: &mut AppService, with_data: impl Fn(Resource) -> Resource) {
    with_data(resource(SESSIONS_PATH, "GET, POST"))
        .route(routes::get().to(list))
        .route(web::post().to(end))
        .register(config);
}

/// One session as the page shows it.
#[derive(Debug)]
pub struct SessionView {
    /// The record id (the end form's value).
    pub id: i64,
    /// Browser and system.
    pub device: String,
    /// The network (a /24 or /48), or empty.
    pub place: String,
    /// When it started (Brasília time).
    pub started: String,
    /// Its last activity (Brasília time).
    pub last_seen: String,
    /// How the person logged in, in words.
    pub method: &'static str,
    /// Whether it is the browser showing the page.
    pub current: bool,
}

/// `templates/account/sessions.html`.
#[derive(Debug, Template)]
#[template(path = "account/sessions.html")]
pub struct SessionsPage<'a> {
    site: &'static Site,
    title: &'a str,
    frame: Frame,
    csrf_token: &'a str,
    sessions: Vec<SessionView>,
    others: bool,
    notice: Option<&'a str>,
    idle: String,
    absolute: String,
}

/// How a session's (or a login's) `amr` reads on the pages.
pub(crate) fn method_words(amr: &str) -> &'static str {
    use AuthMethod::{Passkey, Password, RecoveryCode, SyncedPasskey, Totp};
    let proof = Proof::from_stored(amr, "", 0);
    if proof.upstream.is_some() {
        return match proof.local.as_slice() {
            [] => "provedor de identidade externo (gov.br ou outro)",
            [Totp] => "provedor de identidade externo e aplicativo autenticador",
            [RecoveryCode] => "provedor de identidade externo e código de recuperação",
            [Passkey | SyncedPasskey] => "provedor de identidade externo e chave de acesso",
            _ => "provedor de identidade externo e outro método",
        };
    }
    match proof.local.as_slice() {
        [Password] => "senha",
        [Password, Totp] => "senha e aplicativo autenticador",
        [Password, RecoveryCode] => "senha e código de recuperação",
        [Password, Passkey | SyncedPasskey] => "senha e chave de acesso",
        [Passkey | SyncedPasskey] => "chave de acesso",
        [AuthMethod::AppPassword] => "senha de aplicativo",
        _ => "outro método",
    }
}

/// `1800` → "30 minutos", `43200` → "12 horas".
fn duration_words(secs: i64) -> String {
    match secs {
        s if s % 3600 == 0 && s / 3600 == 1 => "1 hora".into(),
        s if s % 3600 == 0 => format!("{} horas", s / 3600),
        s if s % 60 == 0 && s / 60 == 1 => "1 minuto".into(),
        s if s % 60 == 0 => format!("{} minutos", s / 60),
        s => format!("{s} segundos"),
    }
}

/// `GET /conta/sessoes/` (`?encerrada=1` or `?encerradas=N` after a POST).
async fn list(req: HttpRequest, sessions: web::Data<SessionService>) -> HttpResponse {
    let session = or_answer!(signed_in(&req).await);
    let listed = match sessions.list(&session).await {
        Ok(listed) => listed,
        Err(e) => return service_failure(&req, e),
    };
    let query = FormFields::parse(req.query_string().as_bytes()).unwrap_or_default();
    let notice = match (query.get("encerrada").ok().flatten(), query.get("encerradas").ok().flatten()) {
        (Some("1"), _) => Some("A sessão foi encerrada. Aquele navegador precisará entrar de novo.".to_owned()),
        (_, Some(n)) if n.parse::<u64>().is_ok() => {
            Some(format!("Sessões encerradas: {n}. Só este navegador continua com a sua conta aberta."))
        }
        _ => None,
    };
    let token = session.account_form_token();
    let mut views: Vec<SessionView> = listed
        .sessions
        .into_iter()
        .map(|s| SessionView {
            id: s.id,
            device: s.device,
            place: s.place,
            started: html::brasilia_time(s.created_at),
            last_seen: html::brasilia_time(s.last_seen_at),
            method: method_words(&s.amr),
            current: s.id == listed.current,
        })
        .collect();
    // This browser's first: "is this me?" is the first question.
    views.sort_by_key(|v| !v.current);
    let limits = sessions.limits();
    let page = SessionsPage {
        site: &PROVIDER,
        title: "Sessões abertas",
        frame: Frame::account(SESSIONS_PATH),
        csrf_token: &token,
        others: views.iter().any(|v| !v.current),
        sessions: views,
        notice: notice.as_deref(),
        idle: duration_words(limits.idle_secs),
        absolute: duration_words(limits.absolute_secs),
    };
    html::html(html::response(StatusCode::OK), &page)
}

/// `POST /conta/sessoes/`: ends one session of the person, or all others.
async fn end(req: HttpRequest, payload: web::Payload, sessions: web::Data<SessionService>) -> HttpResponse {
    let (session, fields) = or_answer!(signed_post(&req, payload).await);
    let action = match fields.get("acao") {
        Ok(action) => action,
        Err(e) => return form_refused(e),
    };
    if matches!(action, Some("encerrar" | "encerrar_outras")) {
        let purpose = "encerrar sessões abertas em outros navegadores";
        or_answer!(crate::session::recent_authentication(&req, &session, &fields, purpose, SESSIONS_PATH).await);
    }
    match action {
        Some("encerrar") => {
            let id = match fields.get("id") {
                Ok(Some(raw)) => match raw.parse::<i64>() {
                    Ok(id) if id > 0 => id,
                    _ => return refused(StatusCode::BAD_REQUEST, "A sessão informada é inválida."),
                },
                Ok(None) => return refused(StatusCode::BAD_REQUEST, "Informe a sessão a encerrar."),
                Err(e) => return form_refused(e),
            };
            if id == session.id {
                return refused(StatusCode::BAD_REQUEST, "Para encerrar esta sessão, use Sair.");
            }
            match sessions.end_one(session.user_id, id).await {
                Ok(true) => see_other(&format!("{SESSIONS_PATH}?encerrada=1")),
                Ok(false) => refused(StatusCode::NOT_FOUND, "Esta sessão não está aberta na sua conta."),
                Err(e) => service_failure(&req, e),
            }
        }
        Some("encerrar_outras") => {
            match sessions.end_all(session.user_id, Some(session.id), SessionEnd::Person).await {
                Ok(ended) => see_other(&format!("{SESSIONS_PATH}?encerradas={ended}")),
                Err(e) => service_failure(&req, e),
            }
        }
        _ => refused(StatusCode::BAD_REQUEST, "Escolha encerrar uma sessão ou todas as outras."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_methods_read_in_words() {
        assert_eq!(duration_words(1800), "30 minutos");
        assert_eq!(duration_words(43_200), "12 horas");
        assert_eq!(duration_words(3600), "1 hora");
        assert_eq!(duration_words(90), "90 segundos");
        assert_eq!(method_words("pwd"), "senha");
        assert_eq!(method_words("xyz"), "outro método");
        assert_eq!(method_words("pwd otp"), "senha e aplicativo autenticador");
        assert_eq!(method_words("pwd rec"), "senha e código de recuperação");
        assert_eq!(method_words("hwk"), "chave de acesso");
        assert_eq!(method_words("pwd swk"), "senha e chave de acesso");
    }

    #[test]
    fn the_page_marks_this_session_and_escapes_what_browsers_sent() {
        let view = |id, current| SessionView {
            id,
            device: "<b>Firefox</b> no Linux".into(),
            place: "203.0.113.0/24".into(),
            started: "01/02/2026 10:00".into(),
            last_seen: "01/02/2026 10:30".into(),
            method: "senha",
            current,
        };
        let page = SessionsPage {
            site: &PROVIDER,
            title: "t",
            frame: Frame::account(SESSIONS_PATH),
            csrf_token: "tok",
            sessions: vec![view(7, true), view(8, false)],
            others: true,
            notice: None,
            idle: "30 minutos".into(),
            absolute: "12 horas".into(),
        }
        .render()
        .expect("renders");
        assert!(!page.contains("<b>Firefox</b>"), "{page}");
        assert_eq!(page.matches("esta sessão").count(), 1, "{page}");
        assert!(page.contains("name=\"id\" value=\"8\"") && !page.contains("name=\"id\" value=\"7\""), "{page}");
        assert!(page.contains("Encerrar todas as outras sessões"), "{page}");
    }
}
