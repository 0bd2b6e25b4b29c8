//! "Entrar com gov.br" (and any other upstream provider): the link that
//! starts the login at the provider, the page the provider sends the
//! browser back to, the page that confirms a link with the account's
//! password, and the unlinking of a provider from the security page.
//!
//! The login's `state` travels in the URL; the browser that started the
//! login also holds a binding of its own, 256 random bits that are not the
//! `state`, in a cookie (`HttpOnly`, `SameSite=Lax`, on `/conta/entrar/`,
//! living as long as the login may take). The callback is accepted only
//! with that cookie: nobody can log a victim into the attacker's account
//! with a callback URL of their own (login CSRF), and a callback URL seen
//! by someone else (a log, a shared screen, a referrer) signs nobody in
//! elsewhere (RFC 9700 §4.5). Every failure is a page that says what
//! happened and offers to try again, never a 500.

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, Resource};
use askama::Template;
use credencial_application::federation::LOGIN_SECS;
use credencial_application::{
    FederatedLogin, FederationFailure, FederationService, LinkNotice, ServiceError, SessionService,
};
use credencial_domain::admin::LoginVia;
use credencial_domain::federation::linking::LinkRefusal;
use credencial_domain::federation::ProviderKind;
use credencial_ports::FederationError;

use crate::cookies::{self, CookiePolicy};
use crate::form::FormFields;
use crate::html::{self, ErrorPage, Site, PROVIDER};
use crate::routes::{self, resource};
use crate::session::{
    origin, safe_next_after_factor, see_other, to_second_factor, with_next, with_session, LOGIN_PATH,
};

/// Where a login through provider `{id}` starts: `/conta/entrar/externo/{id}/`.
pub const START_PATH: &str = "/conta/entrar/externo/{provider}";
/// Where provider `{id}` sends the browser back:
/// `/conta/entrar/externo/{id}/retorno/` ([`credencial_application::federation::return_path`]).
pub const RETURN_PATH: &str = "/conta/entrar/externo/{provider}/retorno";
/// Where a link waiting for a login into its account is made, once the
/// person logged in (the login form's `next`).
pub const CONFIRM_PATH: &str = "/conta/entrar/vincular/";
/// Where the security page's "Desfazer vínculo" posts.
pub const UNLINK_PATH: &str = "/conta/seguranca/vinculos/";
/// The page that says which gov.br level an application needs, and where
/// to raise it.
pub const GOVBR_LEVELS_URL: &str = "https://confiabilidades.acesso.gov.br/";

/// The cookie that ties a login at a provider to the browser that started
/// it.
const STATE_COOKIE: &str = "credencial_federado";
/// The path of [`STATE_COOKIE`] and [`LINK_COOKIE`].
const STATE_COOKIE_PATH: &str = "/conta/entrar/";
/// The cookie that keeps a link waiting for a login into its account in
/// the browser that came back from the provider.
const LINK_COOKIE: &str = "credencial_vinculo";

/// The start of a login through provider `id`, going on to `next`.
pub fn start_href(id: &str, next: &str) -> String {
    with_next(&format!("/conta/entrar/externo/{id}/"), next)
}

/// A provider's button on a login form.
#[derive(Debug, Clone)]
pub struct ProviderButton {
    /// Where the button leads ([`start_href`]).
    pub href: String,
    /// The provider's name.
    pub name: String,
    /// Whether it is gov.br (drawn with gov.br's look).
    pub govbr: bool,
}

/// The buttons of the configured providers for a login form that goes on
/// to `next` (none when the service has no provider).
pub fn buttons(req: &HttpRequest, next: &str) -> Vec<ProviderButton> {
    let Some(federation) = req.app_data::<web::Data<FederationService>>() else { return Vec::new() };
    federation
        .providers()
        .iter()
        .map(|p| ProviderButton {
            href: start_href(&p.id, next),
            name: p.name.clone(),
            govbr: p.kind == ProviderKind::GovBr,
        })
        .collect()
}

/// Whether the service offers a login through gov.br (the panel warns
/// that an application's minimum gov.br level cannot be met without it).
pub fn offers_govbr(req: &HttpRequest) -> bool {
    req.app_data::<web::Data<FederationService>>()
        .is_some_and(|federation| federation.providers().iter().any(|p| p.kind == ProviderKind::GovBr))
}

/// The pages of brokered logins, with their application data.
pub struct FederationPages {
    federation: web::Data<FederationService>,
    sessions: web::Data<SessionService>,
    cookies: web::Data<CookiePolicy>,
}

impl FederationPages {
    /// The pages over `federation`, opening sessions through `sessions`.
    pub fn new(
        federation: web::Data<FederationService>,
        sessions: web::Data<SessionService>,
        cookies: CookiePolicy,
    ) -> Self {
        Self { federation, sessions, cookies: web::Data::new(cookies) }
    }

    fn with_data(&self, r: Resource) -> Resource {
        r.app_data(self.federation.clone()).app_data(self.sessions.clone()).app_data(self.cookies.clone())
    }
}

impl HttpServiceFactory for FederationPages {
    fn register(self, config: &mut AppService) {
        self.with_data(resource(RETURN_PATH, "GET")).route(routes::get().to(finish)).register(config);
        self.with_data(resource(START_PATH, "GET")).route(routes::get().to(start)).register(config);
        self.with_data(resource(CONFIRM_PATH, "GET")).route(routes::get().to(confirm)).register(config);
        self.with_data(resource(UNLINK_PATH, "POST")).route(web::post().to(unlink)).register(config);
    }
}

/// `GET /conta/entrar/externo/{id}/?next=…`: starts the login at the
/// provider and sends the browser there, with the `state` cookie.
async fn start(
    req: HttpRequest,
    path: web::Path<String>,
    federation: web::Data<FederationService>,
    cookies: web::Data<CookiePolicy>,
) -> HttpResponse {
    let fields = FormFields::parse(req.query_string().as_bytes()).unwrap_or_default();
    let next = safe_next_after_factor(fields.get("next").ok().flatten());
    let via = if next.starts_with("/oauth/authorize") { LoginVia::OAuth } else { LoginVia::Account };
    match federation.start(&path, via, &next).await {
        Ok(Ok(started)) => {
            let mut answer = see_other(&started.url);
            cookies::append(
                &mut answer,
                &cookies.set(&req, STATE_COOKIE, STATE_COOKIE_PATH, &started.binding, LOGIN_SECS),
            );
            answer
        }
        Ok(Err(failure)) => failure_page(&failure, federation.provider(&path).map(|p| p.name.as_str())),
        Err(e) => html::failure_page(e),
    }
}

/// `GET /conta/entrar/externo/{id}/retorno/?state=…&code=…` (or
/// `error=…`): finishes the login in the browser that started it.
async fn finish(
    req: HttpRequest,
    path: web::Path<String>,
    federation: web::Data<FederationService>,
    cookies: web::Data<CookiePolicy>,
) -> HttpResponse {
    let name = federation.provider(&path).map(|p| p.name.clone());
    let fields = FormFields::parse(req.query_string().as_bytes()).unwrap_or_default();
    let field = |key| fields.get(key).ok().flatten().unwrap_or("");
    let state = field("state");
    // Only the browser that started the login may finish it: it holds the
    // binding (not the state, which the URL carries) in its cookie.
    let binding = cookies::read(&req, STATE_COOKIE).unwrap_or_default();
    let mut answer = if binding.is_empty() || state.is_empty() {
        failure_page(&FederationFailure::State, name.as_deref())
    } else {
        let answer = match (field("code"), field("error")) {
            (_, error) if !error.is_empty() => Err(error),
            (code, _) => Ok(code),
        };
        match federation.finish(&path, state, &binding, answer, &origin(&req)).await {
            Ok(Ok(login)) => logged_in(&req, &cookies, login, name.as_deref().unwrap_or_default()),
            Ok(Err(failure)) => failure_page(&failure, name.as_deref()),
            Err(e) => html::failure_page(e),
        }
    };
    // The state is used (or refused): its cookie goes.
    cookies::append(&mut answer, &cookies.clear(&req, STATE_COOKIE, STATE_COOKIE_PATH));
    answer
}

/// The answer to a login that went well: the session's cookie and the
/// next page (a page that tells what happened to the account first), or
/// the page that asks for a login into the account holding the CPF.
fn logged_in(req: &HttpRequest, cookies: &CookiePolicy, login: FederatedLogin, provider: &str) -> HttpResponse {
    match login {
        // The account's bar asks its own second factor after this login:
        // the code's page first, then `next`.
        FederatedLogin::SignedIn { signed, next, .. } if signed.session.second_factor_pending => {
            with_session(req, cookies, to_second_factor(&next), &signed)
        }
        FederatedLogin::SignedIn { signed, next, notice: None } => {
            with_session(req, cookies, see_other(&next), &signed)
        }
        FederatedLogin::SignedIn { signed, next, notice: Some(notice) } => {
            with_session(req, cookies, notice_page(&notice, provider, &next), &signed)
        }
        FederatedLogin::Confirm { token, newly_proven } => {
            let login = with_next(LOGIN_PATH, CONFIRM_PATH);
            let page = ConfirmPage { site: &PROVIDER, title: "Confirme a sua conta", provider, newly_proven, login };
            let mut answer = html::html(html::response(StatusCode::OK), &page);
            cookies::append(&mut answer, &cookies.set(req, LINK_COOKIE, STATE_COOKIE_PATH, &token, LOGIN_SECS));
            answer
        }
    }
}

/// After the second factor replaced the waiting session `from` by
/// `signed`: a login through a provider keeps its logout through it.
pub(crate) async fn carry_upstream_session(
    req: &HttpRequest,
    from: &credencial_application::LoginSession,
    signed: &credencial_application::SignedSession,
) {
    if let Some(federation) = req.app_data::<web::Data<FederationService>>() {
        if from.proof().upstream.is_some() {
            federation.carry_upstream_session(from, signed).await;
        }
    }
}

/// The page that says what happened to the account, then goes on.
fn notice_page(notice: &LinkNotice, provider: &str, next: &str) -> HttpResponse {
    let page = NoticePage { site: &PROVIDER, title: notice_title(notice), text: notice_text(notice, provider), next };
    html::html(html::response(StatusCode::OK), &page)
}

fn notice_title(notice: &LinkNotice) -> &'static str {
    match notice {
        LinkNotice::Linked { .. } => "Conta vinculada",
        LinkNotice::Created => "Conta criada",
    }
}

fn notice_text(notice: &LinkNotice, provider: &str) -> String {
    match notice {
        LinkNotice::Linked { proves_cpf: true } => format!(
            "Sua conta foi vinculada a {provider}, que confirmou o seu CPF: ele passa a constar como comprovado. \
             A partir de agora você pode entrar com {provider} ou com a sua senha."
        ),
        LinkNotice::Linked { proves_cpf: false } => format!(
            "Sua conta foi vinculada a {provider}. A partir de agora você pode entrar com {provider} ou com a sua senha."
        ),
        LinkNotice::Created => format!(
            "Criamos a sua conta com o nome, o CPF e o e-mail confirmados por {provider}. Ela não tem senha: você entra \
             com {provider}, e pode definir uma senha quando quiser pelo link «Esqueci minha senha»."
        ),
    }
}

/// `templates/account/federated_notice.html`.
#[derive(Debug, Template)]
#[template(path = "account/federated_notice.html")]
struct NoticePage<'a> {
    site: &'static Site,
    title: &'a str,
    text: String,
    next: &'a str,
}

/// `templates/account/federated_confirm.html`: the person logs into the
/// account holding the CPF before the link is made.
#[derive(Debug, Template)]
#[template(path = "account/federated_confirm.html")]
struct ConfirmPage<'a> {
    site: &'static Site,
    title: &'a str,
    provider: &'a str,
    newly_proven: bool,
    login: String,
}

/// `GET /conta/entrar/vincular/`: the link waiting in this browser is
/// made for the account the person just logged into (password and second
/// factor), then the person is told and goes on.
async fn confirm(
    req: HttpRequest,
    federation: web::Data<FederationService>,
    cookies: web::Data<CookiePolicy>,
) -> HttpResponse {
    let session = or_answer!(crate::session::signed_in(&req).await);
    let token = cookies::read(&req, LINK_COOKIE).unwrap_or_default();
    let mut answer = match federation.confirm(&token, &session, &origin(&req)).await {
        Ok(done) => notice_page(&done.notice, &done.provider, &done.next),
        Err(ServiceError::Invalid(reason)) => {
            let page = ErrorPage {
                site: &PROVIDER,
                title: "A conta não foi vinculada",
                reason: &reason,
                hint: "Para vincular, entre pelo provedor e depois na conta que tem o seu CPF.",
                retry: Some(LOGIN_PATH),
            };
            html::html(html::response(StatusCode::BAD_REQUEST), &page)
        }
        Err(e) => super::service_failure(&req, e),
    };
    cookies::append(&mut answer, &cookies.clear(&req, LINK_COOKIE, STATE_COOKIE_PATH));
    answer
}

/// `POST /conta/seguranca/vinculos/` (`provedor`): unlinks a provider,
/// while another way to log in remains.
async fn unlink(req: HttpRequest, payload: web::Payload, federation: web::Data<FederationService>) -> HttpResponse {
    let (session, fields) = or_answer!(crate::session::signed_post(&req, payload).await);
    let provider = fields.get("provedor").ok().flatten().unwrap_or("");
    let has_password = match req.app_data::<web::Data<SessionService>>() {
        Some(sessions) => match sessions.credentials().has_usable_password(session.user_id).await {
            Ok(has) => has,
            Err(e) => return super::service_failure(&req, e),
        },
        None => false,
    };
    // The confirmation asks only for an unlinking that can be done: a link
    // the person has, and not their only way in (the use case refuses the
    // rest at once).
    if !crate::confirmation::given(&fields) {
        let links = match federation.links_of(session.user_id).await {
            Ok(links) => links,
            Err(e) => return super::service_failure(&req, e),
        };
        let linked = links.iter().any(|(_, link)| link.provider == provider);
        if linked && (has_password || links.len() > 1) {
            let security = super::security::SECURITY_PATH;
            let name = federation.provider(provider).map_or(provider, |p| p.name.as_str());
            let ask = crate::confirmation::Ask {
                question: format!("Desfazer o vínculo com {name}?"),
                consequence: format!(
                    "Você deixa de entrar nesta conta por {name}. Para voltar a usá-lo, será preciso vinculá-lo de \
                     novo, entrando por ele."
                ),
                button: "Desfazer o vínculo",
                back: security,
                frame: crate::html::Frame::account(security),
            };
            return crate::confirmation::page(&req, &fields, ask);
        }
    }
    match federation.unlink(session.user_id, provider, has_password, &origin(&req)).await {
        Ok(true) => see_other(&format!("{}?desvinculado=1", super::security::SECURITY_PATH)),
        Ok(false) => see_other(super::security::SECURITY_PATH),
        Err(ServiceError::Invalid(reason)) => crate::session::refused(StatusCode::CONFLICT, &reason),
        Err(e) => super::service_failure(&req, e),
    }
}

/// The page of a brokered login that failed: what happened, in words,
/// and a way to try again; 400 for what the browser or the person did,
/// 502/504 for a provider that failed.
pub fn failure_page(failure: &FederationFailure, provider: Option<&str>) -> HttpResponse {
    let name = provider.unwrap_or("o provedor de identidade");
    let (status, title, reason, hint): (StatusCode, &str, String, String) = match failure {
        FederationFailure::UnknownProvider => (
            StatusCode::NOT_FOUND,
            "Provedor desconhecido",
            "Este serviço não oferece a entrada por esse provedor.".into(),
            "Entre com o seu CPF e senha, ou por um dos provedores oferecidos.".into(),
        ),
        FederationFailure::State => (
            StatusCode::BAD_REQUEST,
            "A entrada não pôde ser concluída",
            format!("A volta de {name} não corresponde a uma entrada iniciada neste navegador, ou ela expirou."),
            "Comece de novo pela página de entrada.".into(),
        ),
        FederationFailure::Answered(error) if error == "access_denied" => (
            StatusCode::BAD_REQUEST,
            "Entrada cancelada",
            format!("A entrada com {name} foi cancelada."),
            "Você pode tentar de novo ou entrar com o seu CPF e senha.".into(),
        ),
        FederationFailure::Answered(_) => (
            StatusCode::BAD_GATEWAY,
            "A entrada não pôde ser concluída",
            format!("{name} recusou a entrada."),
            "Tente novamente em instantes.".into(),
        ),
        FederationFailure::Provider(FederationError::Upstream(_)) => (
            StatusCode::BAD_GATEWAY,
            "Provedor indisponível",
            format!("Não foi possível falar com {name} agora."),
            "Tente novamente em instantes, ou entre com o seu CPF e senha.".into(),
        ),
        FederationFailure::Provider(_) | FederationFailure::Claims(_) => (
            StatusCode::BAD_GATEWAY,
            "A entrada não pôde ser concluída",
            format!("A resposta de {name} não pôde ser verificada."),
            "Tente novamente. Se o problema continuar, avise a equipe do serviço.".into(),
        ),
        FederationFailure::Refused(refusal) => (
            StatusCode::FORBIDDEN,
            "A entrada não pôde ser concluída",
            refusal_words(*refusal, name),
            "Se precisar de ajuda, procure a equipe do serviço.".into(),
        ),
        FederationFailure::Conflict(_) => (
            StatusCode::CONFLICT,
            "A entrada não pôde ser concluída",
            "Os dados recebidos pertencem a outra conta deste serviço.".into(),
            "Entre com o seu CPF e senha, ou procure a equipe do serviço.".into(),
        ),
    };
    let page = ErrorPage { site: &PROVIDER, title, reason: &reason, hint: &hint, retry: Some(LOGIN_PATH) };
    html::html(html::response(status), &page)
}

fn refusal_words(refusal: LinkRefusal, provider: &str) -> String {
    match refusal {
        LinkRefusal::Inactive => "A conta a que esta entrada leva está desativada.".into(),
        LinkRefusal::MissingLinkClaim => format!("{provider} não informou o dado que identifica a sua conta aqui."),
        LinkRefusal::MissingName => format!("{provider} não informou o seu nome, necessário para criar a conta."),
        LinkRefusal::LocalAddressUnconfirmed => format!(
            "A conta deste serviço com o e-mail informado por {provider} nunca confirmou esse endereço; \
             entre com a senha dela e confirme o e-mail primeiro."
        ),
    }
}
