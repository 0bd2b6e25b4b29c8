//! Second factors at the edge: the security page (`/conta/seguranca/`:
//! enrol an authenticator app with a QR code rendered here as SVG, see the
//! recovery codes once, make new ones, turn the app off, end the other
//! sessions afterwards) and the second step of a login
//! (`/conta/entrar/verificar/`).
//!
//! Turning the app on or off and making new codes ask for the password in
//! the same form (re-authentication before a change of factors); a wrong
//! password or code counts toward the login form's limits.

// A page's early answer is the `Err` of the helpers (see the parent).
#![allow(clippy::result_large_err)]

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, Resource};
use askama::Template;
use credencial_application::metrics::SessionEnd;
use credencial_application::{
    Creation, LoginSession, SecondFactorService, ServiceError, SessionService, TotpEnrolment,
};
use credencial_domain::security_event::SecurityEventKind;
use credencial_domain::Redacted;
use credencial_ports::SecurityEvent;
use qrcode::render::svg;
use qrcode::QrCode;
use secrecy::SecretString;

use super::{
    form_refused, refused, safe_next_after_factor, see_other, service_failure, signed_in, signed_post, throttled_text,
    with_retry_after, with_session,
};
use crate::cookies::CookiePolicy;
use crate::form::FormFields;
use crate::html::{self, Frame, Site, PROVIDER};
use crate::routes::{self, resource};
use crate::session::{origin, session_of, to_login, VERIFY_PATH};

pub use crate::session::SECURITY_PATH;

const WRONG_CODE: &str = "Código inválido ou já usado. Confira o código no aplicativo e tente de novo.";
const WRONG_PASSWORD: &str = "A senha não confere. Nada foi alterado.";
const NOT_OFFERED: &str = "A verificação em duas etapas não está disponível neste serviço.";

/// Registers both pages; `with_data` gives them the account's application
/// data (the second factor service is the application's).
pub fn register(config: &mut AppService, with_data: impl Fn(Resource) -> Resource) {
    with_data(resource(SECURITY_PATH, "GET, POST"))
        .route(routes::get().to(security))
        .route(web::post().to(change))
        .register(config);
    with_data(resource(VERIFY_PATH, "GET, POST"))
        .route(routes::get().to(verify_form))
        .route(web::post().to(verify))
        .register(config);
}

// ---------------------------------------------------------- second step

/// `templates/account/verify.html`.
#[derive(Debug, Template)]
#[template(path = "account/verify.html")]
struct VerifyPage<'a> {
    site: &'static Site,
    title: &'a str,
    action: &'a str,
    message: Option<&'a str>,
    hidden: Vec<(&'static str, &'a str)>,
    passkey: bool,
    passkey_action: &'a str,
    first_step: &'a str,
}

async fn verify_page(
    req: &HttpRequest,
    session: &LoginSession,
    next: &str,
    message: Option<&str>,
    status: StatusCode,
) -> HttpResponse {
    // A passkey is offered when the person has one and the page is at the
    // passkeys' origin.
    let passkey = match super::passkeys::offered(req) {
        Some(passkeys) => match passkeys.list(session.user_id).await {
            Ok(list) => !list.is_empty(),
            Err(e) => return html::failure_page(e),
        },
        None => false,
    };
    let token = session.account_form_token();
    let page = VerifyPage {
        site: &PROVIDER,
        title: "Verificação em duas etapas",
        action: VERIFY_PATH,
        message,
        hidden: vec![("csrf_token", &token), ("next", next)],
        passkey,
        passkey_action: super::passkeys::VERIFY_PASSKEY_PATH,
        // What the person did first: a login through a provider, or the
        // password.
        first_step: match session.proof().upstream {
            Some(_) => {
                "A sua entrada pelo provedor de identidade deu certo, e esta conta também pede o seu segundo fator."
            }
            None => "A sua senha está certa.",
        },
    };
    html::html(html::response(status), &page)
}

/// The browser's session when it may pass the second factor (waiting for
/// it, or opened by the password alone: a step-up); otherwise the answer:
/// to `next` (already passed) or to the login form.
pub(super) async fn waiting(req: &HttpRequest, next: &str) -> Result<LoginSession, HttpResponse> {
    match session_of(req).await {
        Ok(Some(session)) if session.needs_second_factor() => Ok(session),
        Ok(Some(_)) => Err(see_other(next)),
        Ok(None) => Err(to_login(next)),
        Err(e) => Err(html::failure_page(e)),
    }
}

/// `GET /conta/entrar/verificar/?next=…`: the code form.
async fn verify_form(req: HttpRequest) -> HttpResponse {
    let query = FormFields::parse(req.query_string().as_bytes()).unwrap_or_default();
    let next = safe_next_after_factor(query.get("next").ok().flatten());
    let session = or_answer!(waiting(&req, &next).await);
    verify_page(&req, &session, &next, None, StatusCode::OK).await
}

/// `POST /conta/entrar/verificar/`: checks the code (TOTP or recovery) and
/// completes the login with a new session.
async fn verify(
    req: HttpRequest,
    payload: web::Payload,
    sessions: web::Data<SessionService>,
    cookies: web::Data<CookiePolicy>,
) -> HttpResponse {
    let fields = or_answer!(crate::session::posted_form(&req, payload).await);
    let field = |name| fields.get(name).ok().flatten().unwrap_or("");
    let next = safe_next_after_factor(fields.get("next").ok().flatten());
    let session = or_answer!(waiting(&req, &next).await);
    if !session.account_form_token_matches(field("csrf_token")) {
        return refused(StatusCode::FORBIDDEN, "O formulário expirou. Entre novamente.");
    }
    let code = field("codigo").trim();
    if code.is_empty() {
        return verify_page(&req, &session, &next, Some("Informe o código."), StatusCode::OK).await;
    }
    match sessions.complete_second_factor(&session, code, &origin(&req)).await {
        Ok(Some(signed)) => {
            super::federation::carry_upstream_session(&req, &session, &signed).await;
            with_session(&req, &cookies, see_other(&next), &signed)
        }
        Ok(None) => verify_page(&req, &session, &next, Some(WRONG_CODE), StatusCode::OK).await,
        Err(ServiceError::Throttled { retry_after_secs }) => {
            let text = throttled_text(retry_after_secs);
            let answer = verify_page(&req, &session, &next, Some(&text), StatusCode::TOO_MANY_REQUESTS).await;
            with_retry_after(answer, retry_after_secs)
        }
        Err(e) => html::failure_page(e),
    }
}

// -------------------------------------------------------- security page

/// An enrolment as the page shows it.
#[derive(Debug)]
struct EnrolmentView {
    qr_svg: String,
    secret_text: String,
}

/// `templates/account/security.html`.
#[derive(Debug, Template)]
#[template(path = "account/security.html")]
struct SecurityPage<'a> {
    site: &'static Site,
    title: &'a str,
    frame: Frame,
    action: &'a str,
    csrf_token: &'a str,
    message: Option<&'a str>,
    notice: Option<&'a str>,
    totp: bool,
    codes_left: u64,
    enrolment: Option<EnrolmentView>,
    recovery_codes: Option<Vec<String>>,
    others: bool,
    next: Option<String>,
    any_factor: bool,
    activity: Vec<ActivityRow>,
    passkeys: Vec<PasskeyRow>,
    passkey_offer: bool,
    passkey_elsewhere: Option<String>,
    passkey_action: &'a str,
    links: Vec<LinkRow>,
    unlink_action: &'a str,
    has_password: bool,
    app_passwords_offered: bool,
    app_passwords: Vec<AppPasswordRow>,
    new_app_password: Option<NewAppPasswordView>,
    app_password_limit: u32,
}

/// An application password as the page lists it.
#[derive(Debug)]
struct AppPasswordRow {
    id: i64,
    name: String,
    created: String,
    last_used: String,
}

/// A new application password, shown once.
#[derive(Debug)]
struct NewAppPasswordView {
    name: String,
    password: String,
}

/// One linked provider as the page lists it.
#[derive(Debug)]
struct LinkRow {
    provider: String,
    name: String,
    linked: String,
    level: Option<String>,
}

/// The QR code of `uri` as an inline SVG element, named for screen readers.
fn qr_svg(uri: &str) -> String {
    let Ok(code) = QrCode::new(uri.as_bytes()) else {
        return String::new();
    };
    let image = code.render::<svg::Color<'_>>().min_dimensions(200, 200).quiet_zone(true).build();
    let start = image.find("<svg").unwrap_or(0);
    image[start..].replacen("<svg", "<svg role=\"img\" aria-label=\"Código QR para o aplicativo autenticador\"", 1)
}

/// What a render of the security page shows beyond the account's state.
#[derive(Default)]
pub(super) struct Shown<'a> {
    /// A problem with the form.
    pub message: Option<&'a str>,
    /// What was done.
    pub notice: Option<&'a str>,
    /// A TOTP enrolment to show (the QR code).
    pub enrolment: Option<TotpEnrolment>,
    /// New recovery codes, shown once.
    pub recovery_codes: Option<Vec<Redacted<String>>>,
    /// Whether to offer ending the other sessions (after a factor changed).
    pub offer_end_others: bool,
    /// Where to go on after enrolling (a step-up that sent the person here).
    pub next: Option<String>,
    /// A new application password (its name and itself), shown once.
    pub new_app_password: Option<(String, Redacted<String>)>,
}

/// An entry of the security activity as the page lists it.
#[derive(Debug)]
struct ActivityRow {
    at: String,
    what: String,
    device: String,
    place: String,
}

/// What a security event reads as on the page.
fn event_words(event: &SecurityEvent) -> String {
    match SecurityEventKind::from_code(&event.kind) {
        Some(kind) => kind_words(kind, &event.detail),
        None => "Outra alteração".into(),
    }
}

/// What an event of `kind` with `detail` reads as (the security page and
/// the notices by mail).
pub(crate) fn kind_words(kind: SecurityEventKind, detail: &str) -> String {
    use credencial_domain::security_event::SecurityEventKind as K;
    match kind {
        // A login through a provider is recorded as `fed:<its name>`.
        K::Login => match detail.strip_prefix("fed:") {
            Some(provider) => format!("Entrada com {provider}"),
            None => format!("Entrada com {}", super::sessions::method_words(detail)),
        },
        K::TotpEnabled => "Aplicativo autenticador ativado".into(),
        K::TotpDisabled => "Aplicativo autenticador desativado".into(),
        K::PasskeyAdded => format!("Chave de acesso «{detail}» cadastrada"),
        K::PasskeyRemoved => format!("Chave de acesso «{detail}» removida"),
        K::RecoveryCodesRenewed => "Novos códigos de recuperação gerados".into(),
        K::PasswordChanged => "Senha alterada".into(),
        K::PasswordReset => "Senha redefinida pela equipe do serviço".into(),
        K::FactorsReset => "Verificação em duas etapas removida pela equipe do serviço".into(),
        K::OtherSessionsEnded => "Sessões em outros navegadores encerradas".into(),
        K::PasswordRecovered => "Senha redefinida pelo link enviado por e-mail".into(),
        K::EmailChanged => format!("E-mail da conta alterado (o anterior era {detail})"),
        K::AccountDeactivated => "Conta desativada pela equipe do serviço".into(),
        K::EmailChangeUndone => format!("Troca de e-mail desfeita pelo endereço anterior ({detail} saiu da conta)"),
        K::ProviderLinked => format!("Conta vinculada a {detail}"),
        K::ProviderUnlinked => format!("Vínculo com {detail} desfeito"),
        K::SecondFactorLocked => {
            "Códigos errados demais: a verificação em duas etapas ficou bloqueada por alguns minutos".into()
        }
        K::AppPasswordCreated => format!("Senha de aplicativo «{detail}» criada"),
        K::AppPasswordRevoked => format!("Senha de aplicativo «{detail}» revogada"),
    }
}

/// A passkey as the page lists it.
#[derive(Debug)]
struct PasskeyRow {
    id: i64,
    name: String,
    created: String,
    last_used: String,
}

/// The second factor service of the request's application, when the
/// service offers second factors.
pub(super) fn factors_of(req: &HttpRequest) -> Option<web::Data<SecondFactorService>> {
    req.app_data::<web::Data<SecondFactorService>>().cloned()
}

/// Re-authentication before a change of factors: `password` must be the
/// account's. Otherwise the answer: the page again (wrong password, which
/// counts toward the login limits), 429, or a failure page.
pub(super) async fn reauthenticate(
    req: &HttpRequest,
    factors: &SecondFactorService,
    sessions: &SessionService,
    session: &LoginSession,
    password: SecretString,
) -> Result<(), HttpResponse> {
    match sessions.reauthenticate(session, password, origin(req).address).await {
        Ok(true) => Ok(()),
        Ok(false) => {
            let shown = Shown { message: Some(WRONG_PASSWORD), ..Shown::default() };
            Err(page(req, factors, sessions, session, shown, StatusCode::UNPROCESSABLE_ENTITY).await)
        }
        Err(ServiceError::Throttled { retry_after_secs }) => Err(with_retry_after(
            refused(StatusCode::TOO_MANY_REQUESTS, &throttled_text(retry_after_secs)),
            retry_after_secs,
        )),
        Err(e) => Err(service_failure(req, e)),
    }
}

/// The security page of `session`'s account, showing `shown`.
pub(super) async fn page(
    req: &HttpRequest,
    factors: &SecondFactorService,
    sessions: &SessionService,
    session: &LoginSession,
    shown: Shown<'_>,
    status: StatusCode,
) -> HttpResponse {
    let state = match factors.state(session.user_id).await {
        Ok(state) => state,
        Err(e) => return service_failure(req, e),
    };
    let pending = match (&shown.enrolment, state.totp) {
        (Some(_), _) | (None, true) => None,
        (None, false) => {
            let account = match factors.credentials().username_of(session.user_id).await {
                Ok(name) => name,
                Err(e) => return service_failure(req, e),
            };
            match factors.pending_totp(session.user_id, &account).await {
                Ok(pending) => pending,
                Err(e) => return service_failure(req, e),
            }
        }
    };
    let others = match shown.offer_end_others {
        true => match sessions.list(session).await {
            Ok(list) => list.sessions.iter().any(|s| s.id != session.id),
            Err(e) => return service_failure(req, e),
        },
        false => false,
    };
    let (passkeys, passkey_offer, passkey_elsewhere) = match sessions.passkeys() {
        Some(service) => {
            let list = match service.list(session.user_id).await {
                Ok(list) => list,
                Err(e) => return service_failure(req, e),
            };
            let rows = list
                .into_iter()
                .map(|p| PasskeyRow {
                    id: p.id,
                    name: p.name,
                    created: html::brasilia_time(p.created_at),
                    last_used: p.last_used_at.map_or_else(|| "nunca".to_owned(), html::brasilia_time),
                })
                .collect();
            let here = super::passkeys::offered(req).is_some();
            (rows, here, (!here).then(|| service.origin().origin().ascii_serialization()))
        }
        None => (Vec::new(), false, None),
    };
    let activity = match sessions.security_log() {
        Some(log) => match log.recent(session.user_id).await {
            Ok(events) => events
                .iter()
                .map(|e| ActivityRow {
                    at: html::brasilia_time(e.at),
                    what: event_words(e),
                    device: e.device.clone(),
                    place: e.place.clone(),
                })
                .collect(),
            Err(e) => return service_failure(req, e),
        },
        None => Vec::new(),
    };
    let links = match req.app_data::<web::Data<credencial_application::FederationService>>() {
        Some(federation) => match federation.links_of(session.user_id).await {
            Ok(links) => links
                .into_iter()
                .map(|(name, link)| LinkRow {
                    provider: link.provider,
                    name,
                    linked: html::brasilia_time(link.linked_at),
                    level: link
                        .reliability
                        .map(|r| format!("nível {} (lido em {})", r.level.name(), html::brasilia_time(r.read_at))),
                })
                .collect(),
            Err(e) => return service_failure(req, e),
        },
        None => Vec::new(),
    };
    let has_password = match links.is_empty() {
        true => true,
        false => match factors.credentials().has_usable_password(session.user_id).await {
            Ok(has) => has,
            Err(e) => return service_failure(req, e),
        },
    };
    let app_passwords = match factors.app_passwords() {
        Some(service) => match service.list(session.user_id).await {
            Ok(list) => Some(
                list.into_iter()
                    .map(|p| AppPasswordRow {
                        id: p.id,
                        name: p.name,
                        created: html::brasilia_time(p.created_at),
                        last_used: p.last_used_at.map_or_else(|| "nunca".to_owned(), html::brasilia_time),
                    })
                    .collect(),
            ),
            Err(e) => return service_failure(req, e),
        },
        None => None,
    };
    let token = session.account_form_token();
    let page = SecurityPage {
        site: &PROVIDER,
        title: "Segurança da conta",
        frame: Frame::account(SECURITY_PATH),
        action: SECURITY_PATH,
        csrf_token: &token,
        message: shown.message,
        notice: shown.notice,
        totp: state.totp,
        codes_left: state.recovery_codes_left,
        enrolment: shown
            .enrolment
            .or(pending)
            .map(|e| EnrolmentView { qr_svg: qr_svg(&e.uri), secret_text: e.secret_text.into_inner() }),
        recovery_codes: shown.recovery_codes.map(|codes| codes.into_iter().map(Redacted::into_inner).collect()),
        others,
        next: shown.next,
        any_factor: state.totp || !passkeys.is_empty(),
        activity,
        passkeys,
        passkey_offer,
        passkey_elsewhere,
        passkey_action: super::passkeys::REGISTER_PASSKEY_PATH,
        links,
        unlink_action: super::federation::UNLINK_PATH,
        has_password,
        app_passwords_offered: app_passwords.is_some(),
        app_passwords: app_passwords.unwrap_or_default(),
        new_app_password: shown
            .new_app_password
            .map(|(name, password)| NewAppPasswordView { name, password: password.into_inner() }),
        app_password_limit: credencial_domain::app_password::MAX_PER_ACCOUNT,
    };
    html::html(html::response(status), &page)
}

/// `GET /conta/seguranca/` (`?encerradas=N` after ending the others).
async fn security(
    req: HttpRequest,
    factors: Option<web::Data<SecondFactorService>>,
    sessions: web::Data<SessionService>,
) -> HttpResponse {
    let session = or_answer!(signed_in(&req).await);
    let Some(factors) = factors else {
        return super::not_offered(NOT_OFFERED);
    };
    let query = FormFields::parse(req.query_string().as_bytes()).unwrap_or_default();
    let ended = query.get("encerradas").ok().flatten().filter(|n| n.parse::<u64>().is_ok());
    let required = query.get("exigido").ok().flatten();
    let notice = match (ended, required) {
        (Some(n), _) => Some(format!("Sessões encerradas: {n}. Só este navegador continua com a sua conta aberta.")),
        (None, Some(what)) => Some(format!(
            "{what} exige a verificação em duas etapas. Ative o aplicativo autenticador abaixo para continuar."
        )),
        (None, None) => None,
    };
    let next = query.get("next").ok().flatten().map(|n| safe_next_after_factor(Some(n)));
    let shown = Shown { notice: notice.as_deref(), next, ..Shown::default() };
    page(&req, &factors, &sessions, &session, shown, StatusCode::OK).await
}

/// `POST /conta/seguranca/`: one change (`acao`).
async fn change(
    req: HttpRequest,
    payload: web::Payload,
    factors: Option<web::Data<SecondFactorService>>,
    sessions: web::Data<SessionService>,
) -> HttpResponse {
    let (session, fields) = or_answer!(signed_post(&req, payload).await);
    let Some(factors) = factors else {
        return super::not_offered(NOT_OFFERED);
    };
    let field = |name| fields.get(name).ok().flatten().unwrap_or("");
    let from = origin(&req).address;
    let user = session.user_id;
    let next = fields.get("next").ok().flatten().filter(|n| !n.is_empty()).map(|n| safe_next_after_factor(Some(n)));
    let page = |shown: Shown<'static>, status| {
        page(&req, &factors, &sessions, &session, Shown { next: next.clone(), ..shown }, status)
    };
    let action = match fields.get("acao") {
        Ok(action) => action.unwrap_or(""),
        Err(e) => return form_refused(e),
    };
    // Every change of factors asks for the password again.
    if matches!(action, "iniciar" | "novos-codigos" | "desativar" | "remover-chave") {
        let password = SecretString::from(field("senha").to_owned());
        if let Err(answer) = reauthenticate(&req, &factors, &sessions, &session, password).await {
            return answer;
        }
    }
    let account = || async { factors.credentials().username_of(user).await };
    match action {
        "iniciar" => {
            let name = match account().await {
                Ok(name) => name,
                Err(e) => return service_failure(&req, e),
            };
            match factors.start_totp(user, &name).await {
                Ok(enrolment) => page(Shown { enrolment: Some(enrolment), ..Shown::default() }, StatusCode::OK).await,
                Err(ServiceError::Invalid(_)) => see_other(SECURITY_PATH),
                Err(e) => service_failure(&req, e),
            }
        }
        "confirmar" => match factors.confirm_totp(user, field("codigo"), from).await {
            Ok(Some(codes)) => {
                let shown = Shown {
                    notice: Some(
                        "Aplicativo autenticador ativado. A partir de agora, ao entrar, pedimos o código dele.",
                    ),
                    recovery_codes: Some(codes),
                    offer_end_others: true,
                    ..Shown::default()
                };
                page(shown, StatusCode::OK).await
            }
            Ok(None) => {
                page(Shown { message: Some(WRONG_CODE), ..Shown::default() }, StatusCode::UNPROCESSABLE_ENTITY).await
            }
            Err(ServiceError::Invalid(_)) => see_other(SECURITY_PATH),
            Err(ServiceError::Throttled { retry_after_secs }) => with_retry_after(
                refused(StatusCode::TOO_MANY_REQUESTS, &throttled_text(retry_after_secs)),
                retry_after_secs,
            ),
            Err(e) => service_failure(&req, e),
        },
        "novos-codigos" => match factors.has_factor(user).await {
            Ok(true) => match factors.renew_recovery_codes(user).await {
                Ok(codes) => {
                    let shown = Shown {
                        notice: Some("Novos códigos de recuperação gerados. Os anteriores não valem mais."),
                        recovery_codes: Some(codes),
                        ..Shown::default()
                    };
                    page(shown, StatusCode::OK).await
                }
                Err(e) => service_failure(&req, e),
            },
            Ok(false) => refused(StatusCode::BAD_REQUEST, "Ative o aplicativo autenticador antes."),
            Err(e) => service_failure(&req, e),
        },
        "desativar" => match factors.remove_totp(user).await {
            Ok(_) => {
                let shown = Shown {
                    notice: Some("Aplicativo autenticador desativado."),
                    offer_end_others: true,
                    ..Shown::default()
                };
                page(shown, StatusCode::OK).await
            }
            Err(e) => service_failure(&req, e),
        },
        "remover-chave" => {
            let (Some(passkeys), Ok(id)) = (sessions.passkeys(), field("id").parse::<i64>()) else {
                return refused(StatusCode::BAD_REQUEST, "A chave de acesso pedida não existe.");
            };
            match passkeys.remove(user, id).await {
                Ok(true) => match factors.forget_codes_without_factor(user).await {
                    Ok(()) => {
                        let shown = Shown {
                            notice: Some("Chave de acesso removida. Ela não abre mais a sua conta."),
                            offer_end_others: true,
                            ..Shown::default()
                        };
                        page(shown, StatusCode::OK).await
                    }
                    Err(e) => service_failure(&req, e),
                },
                Ok(false) => refused(StatusCode::NOT_FOUND, "A chave de acesso pedida não existe."),
                Err(e) => service_failure(&req, e),
            }
        }
        "criar-senha-app" => create_app_password(&req, &factors, &sessions, &session, &fields).await,
        "revogar-senha-app" => revoke_app_password(&req, &factors, &sessions, &session, &fields).await,
        "encerrar-outras" => {
            let purpose = "encerrar sessões abertas em outros navegadores";
            or_answer!(crate::session::recent_authentication(&req, &session, &fields, purpose, SECURITY_PATH).await);
            match sessions.end_all(user, Some(session.id), SessionEnd::Person).await {
                Ok(ended) => see_other(&format!("{SECURITY_PATH}?encerradas={ended}")),
                Err(e) => service_failure(&req, e),
            }
        }
        _ => refused(StatusCode::BAD_REQUEST, "A ação pedida não existe."),
    }
}

// ------------------------------------------------ application passwords

const NO_APP_PASSWORD: &str = "A senha de aplicativo pedida não existe.";

/// `acao=criar-senha-app`: a new application password named `nome`, the
/// current password (`senha`) asked again; the result page shows it once.
async fn create_app_password(
    req: &HttpRequest,
    factors: &SecondFactorService,
    sessions: &SessionService,
    session: &LoginSession,
    fields: &FormFields,
) -> HttpResponse {
    let Some(service) = factors.app_passwords() else {
        return super::not_offered("As senhas de aplicativo não estão disponíveis neste serviço.");
    };
    let field = |name| fields.get(name).ok().flatten().unwrap_or("");
    let password = SecretString::from(field("senha").to_owned());
    let problem = |message: &'static str| async move {
        let shown = Shown { message: Some(message), ..Shown::default() };
        page(req, factors, sessions, session, shown, StatusCode::UNPROCESSABLE_ENTITY).await
    };
    match service.create(session.user_id, password, field("nome"), &origin(req)).await {
        Ok(Creation::Created { name, password, .. }) => {
            let shown = Shown {
                notice: Some("Senha de aplicativo criada. Copie-a agora: ela não será mostrada de novo."),
                new_app_password: Some((name, password)),
                ..Shown::default()
            };
            page(req, factors, sessions, session, shown, StatusCode::OK).await
        }
        Ok(Creation::BadName(e)) => problem(e.message()).await,
        Ok(Creation::WrongPassword) => problem(WRONG_PASSWORD).await,
        Ok(Creation::LimitReached) => {
            problem("Você já tem o máximo de senhas de aplicativo. Revogue uma que não use mais antes de criar outra.")
                .await
        }
        Err(ServiceError::Throttled { retry_after_secs }) => with_retry_after(
            refused(StatusCode::TOO_MANY_REQUESTS, &throttled_text(retry_after_secs)),
            retry_after_secs,
        ),
        Err(e) => service_failure(req, e),
    }
}

/// `acao=revogar-senha-app` with the application password's `id`: first
/// the confirmation page, then the revocation.
async fn revoke_app_password(
    req: &HttpRequest,
    factors: &SecondFactorService,
    sessions: &SessionService,
    session: &LoginSession,
    fields: &FormFields,
) -> HttpResponse {
    let (Some(service), Ok(id)) =
        (factors.app_passwords(), fields.get("id").ok().flatten().unwrap_or("").parse::<i64>())
    else {
        return refused(StatusCode::BAD_REQUEST, NO_APP_PASSWORD);
    };
    let list = match service.list(session.user_id).await {
        Ok(list) => list,
        Err(e) => return service_failure(req, e),
    };
    let Some(named) = list.into_iter().find(|p| p.id == id) else {
        return refused(StatusCode::NOT_FOUND, NO_APP_PASSWORD);
    };
    if !crate::confirmation::given(fields) {
        let ask = crate::confirmation::Ask {
            question: format!("Revogar a senha de aplicativo «{}»?", named.name),
            consequence: "O programa que usa esta senha não consegue mais entrar com ela, e as sessões que ela abriu \
                          terminam na próxima renovação. Para voltar a usá-lo, crie outra senha de aplicativo."
                .to_owned(),
            button: "Revogar",
            back: SECURITY_PATH,
            frame: Frame::account(SECURITY_PATH),
        };
        return crate::confirmation::page(req, fields, ask);
    }
    match service.revoke(session.user_id, id, Some(&origin(req))).await {
        Ok(true) => {
            let shown = Shown {
                notice: Some("Senha de aplicativo revogada. Ela não abre mais a sua conta."),
                ..Shown::default()
            };
            page(req, factors, sessions, session, shown, StatusCode::OK).await
        }
        Ok(false) => refused(StatusCode::NOT_FOUND, NO_APP_PASSWORD),
        Err(e) => service_failure(req, e),
    }
}
