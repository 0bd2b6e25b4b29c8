//! Passkeys at the edge: the ceremony page (one template for registering a
//! passkey and for using one), its script, and the three posts that run a
//! ceremony in two steps each — `etapa=iniciar` starts it (a challenge kept
//! server-side) and shows the page, `etapa=concluir` finishes it with the
//! browser's answer:
//! - `POST /conta/entrar/chave/`: logging in by a passkey alone, from any
//!   login form (the login form's anti-forgery token);
//! - `POST /conta/entrar/verificar/chave/`: a passkey as the second factor
//!   after the password;
//! - `POST /conta/seguranca/chave/`: registering one (the password asked
//!   again at the start), named by the person.
//!
//! No JSON route: the options travel in the page (`data-options`), the
//! answer in a form field. The ceremony page's `Content-Security-Policy` is
//! every page's plus `script-src` naming exactly the script's URL at the
//! passkey origin: nothing inline runs.

// A page's early answer is the `Err` of the helpers (see the parent).
#![allow(clippy::result_large_err)]

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, Resource};
use askama::Template;
use credencial_application::{PasskeyService, ServiceError, SessionService, StartedCeremony};
use credencial_domain::admin::LoginVia;
use secrecy::SecretString;

use super::security::{self, Shown};
use super::{refused, safe_next_after_factor, see_other, service_failure, signed_post, with_session};
use crate::cookies::CookiePolicy;
use crate::form::FormFields;
use crate::html::{self, Site, PROVIDER};
use crate::routes::{self, resource};
use crate::session::{login_form_token_matches, origin, posted_form, FORM_EXPIRED, SECURITY_PATH, VERIFY_PATH};

/// Where the script is served.
pub const SCRIPT_PATH: &str = "/conta/chave-de-acesso.js";
/// Logging in by a passkey alone.
pub const LOGIN_PASSKEY_PATH: &str = "/conta/entrar/chave/";
/// A passkey as the second factor.
pub const VERIFY_PASSKEY_PATH: &str = "/conta/entrar/verificar/chave/";
/// Registering a passkey.
pub const REGISTER_PASSKEY_PATH: &str = "/conta/seguranca/chave/";

const SCRIPT: &str = include_str!("../../assets/passkey.js");
const NOT_OFFERED: &str = "As chaves de acesso não estão disponíveis neste serviço.";
const NOT_RECOGNISED: &str = "A chave de acesso não foi reconhecida. Confira se ela está cadastrada na sua conta, \
                              ou entre com a senha.";
const GONE: &str = "A operação com a chave de acesso expirou ou já foi usada. Tente de novo.";

/// Registers the three ceremonies and the script; `with_data` gives them
/// the account's application data.
pub fn register(config: &mut AppService, with_data: impl Fn(Resource) -> Resource) {
    resource(SCRIPT_PATH, "GET").route(routes::get().to(script)).register(config);
    with_data(resource(LOGIN_PASSKEY_PATH, "POST")).route(web::post().to(login)).register(config);
    with_data(resource(VERIFY_PASSKEY_PATH, "POST")).route(web::post().to(second_factor)).register(config);
    with_data(resource(REGISTER_PASSKEY_PATH, "POST")).route(web::post().to(enrol)).register(config);
}

/// `GET /conta/chave-de-acesso.js`.
async fn script() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/javascript; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=3600")))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")))
        .body(SCRIPT)
}

/// The passkeys of the service, when the page at `req` can use them: the
/// service offers them and the browser is at their origin (WebAuthn binds
/// a passkey to it; elsewhere the browser would refuse).
pub fn offered(req: &HttpRequest) -> Option<&PasskeyService> {
    let passkeys = req.app_data::<web::Data<SessionService>>()?.passkeys()?;
    let origin = passkeys.origin();
    let host = match origin.port() {
        Some(port) => format!("{}:{port}", origin.host_str()?),
        None => origin.host_str()?.to_owned(),
    };
    (req.connection_info().host() == host).then_some(passkeys.as_ref())
}

/// `templates/account/passkey.html`.
#[derive(Debug, Template)]
#[template(path = "account/passkey.html")]
struct CeremonyPage<'a> {
    site: &'static Site,
    title: &'a str,
    lead: &'a str,
    message: Option<&'a str>,
    action: &'a str,
    ceremony: &'a str,
    options: &'a str,
    hidden: Vec<(&'static str, &'a str)>,
    button: &'a str,
    back: &'a str,
    back_label: &'a str,
    script: &'a str,
}

/// What a ceremony page says.
struct Wording {
    title: &'static str,
    lead: &'static str,
    button: &'static str,
    back: &'static str,
    back_label: &'static str,
}

const LOGIN_WORDING: Wording = Wording {
    title: "Entrar com chave de acesso",
    lead: "Use a chave de acesso que você cadastrou: o seu celular, computador ou chave de segurança vai pedir o \
           PIN, a digital ou o rosto.",
    button: "Usar a chave de acesso",
    back: super::LOGIN_PATH,
    back_label: "Entrar com a senha",
};

const VERIFY_WORDING: Wording = Wording {
    title: "Verificação em duas etapas",
    lead: "A sua senha está certa. Para terminar de entrar, use uma das chaves de acesso da sua conta.",
    button: "Usar a chave de acesso",
    back: VERIFY_PATH,
    back_label: "Usar um código em vez da chave",
};

const REGISTER_WORDING: Wording = Wording {
    title: "Cadastrar chave de acesso",
    lead: "O seu navegador vai pedir que você escolha onde guardar a chave (este aparelho, o celular ou uma chave \
           de segurança) e que confirme com o PIN, a digital ou o rosto.",
    button: "Criar a chave de acesso",
    back: SECURITY_PATH,
    back_label: "Voltar à segurança da conta",
};

/// The ceremony page for `started`, posting back to `action` with
/// `hidden` (and `etapa=concluir`, the ceremony's id), under a policy that
/// runs the script at the passkey origin and nothing else.
fn ceremony_page<'a>(
    passkeys: &PasskeyService,
    started: &'a StartedCeremony,
    wording: &Wording,
    action: &str,
    registering: bool,
    mut hidden: Vec<(&'static str, &'a str)>,
    message: Option<&str>,
) -> HttpResponse {
    hidden.push(("etapa", "concluir"));
    hidden.push(("cerimonia", &started.id));
    let origin = passkeys.origin().origin().ascii_serialization();
    let page = CeremonyPage {
        site: &PROVIDER,
        title: wording.title,
        lead: wording.lead,
        message,
        action,
        ceremony: if registering { "registrar" } else { "usar" },
        options: &started.options,
        hidden,
        button: wording.button,
        back: wording.back,
        back_label: wording.back_label,
        script: SCRIPT_PATH,
    };
    let mut builder = html::response(StatusCode::OK);
    if let Ok(csp) = HeaderValue::from_str(&format!("{}; script-src {origin}{SCRIPT_PATH}", html::CSP)) {
        builder.insert_header((header::CONTENT_SECURITY_POLICY, csp));
    }
    html::html(builder, &page)
}

fn field<'a>(fields: &'a FormFields, name: &str) -> &'a str {
    fields.get(name).ok().flatten().unwrap_or("")
}

// ----------------------------------------------------------- login alone

/// `POST /conta/entrar/chave/`: a login by passkey alone, started from a
/// login form (its anti-forgery token) and finished on the ceremony page;
/// then to `next` (an account page, or back to `/oauth/authorize/`).
async fn login(
    req: HttpRequest,
    payload: web::Payload,
    sessions: web::Data<SessionService>,
    cookies: web::Data<CookiePolicy>,
) -> HttpResponse {
    let fields = or_answer!(posted_form(&req, payload).await);
    let Some(passkeys) = sessions.passkeys() else {
        return super::not_offered(NOT_OFFERED);
    };
    let next = safe_next_after_factor(fields.get("next").ok().flatten());
    let token = field(&fields, "csrf_token");
    if !login_form_token_matches(&req, &sessions, token) {
        return refused(StatusCode::FORBIDDEN, FORM_EXPIRED);
    }
    let hidden = vec![("csrf_token", token), ("next", next.as_str())];
    let again = |message| async move {
        match passkeys.start_login().await {
            Ok(started) => {
                ceremony_page(passkeys, &started, &LOGIN_WORDING, LOGIN_PASSKEY_PATH, false, hidden, message)
            }
            Err(e) => html::failure_page(e),
        }
    };
    if field(&fields, "etapa") != "concluir" {
        return again(None).await;
    }
    let via = if next.starts_with("/oauth/") { LoginVia::OAuth } else { LoginVia::Account };
    let credential = field(&fields, "credencial");
    match sessions.log_in_with_passkey(via, field(&fields, "cerimonia"), credential, &origin(&req)).await {
        Ok(Some(signed)) if signed.session.must_change_password => {
            with_session(&req, &cookies, see_other(super::MUST_CHANGE_LOCATION), &signed)
        }
        Ok(Some(signed)) => with_session(&req, &cookies, see_other(&next), &signed),
        Ok(None) => again(Some(NOT_RECOGNISED)).await,
        Err(ServiceError::Invalid(_)) => again(Some(GONE)).await,
        Err(e) => html::failure_page(e),
    }
}

// --------------------------------------------------------- second factor

/// `POST /conta/entrar/verificar/chave/`: the second factor by passkey;
/// then a new session, and `next`.
async fn second_factor(
    req: HttpRequest,
    payload: web::Payload,
    sessions: web::Data<SessionService>,
    cookies: web::Data<CookiePolicy>,
) -> HttpResponse {
    let fields = or_answer!(posted_form(&req, payload).await);
    let Some(passkeys) = sessions.passkeys() else {
        return super::not_offered(NOT_OFFERED);
    };
    let next = safe_next_after_factor(fields.get("next").ok().flatten());
    let session = or_answer!(security::waiting(&req, &next).await);
    let token = session.account_form_token();
    if !session.account_form_token_matches(field(&fields, "csrf_token")) {
        return refused(StatusCode::FORBIDDEN, FORM_EXPIRED);
    }
    let hidden = vec![("csrf_token", token.as_str()), ("next", next.as_str())];
    let user = session.user_id;
    let again = |message| async move {
        match passkeys.start_second_factor(user).await {
            Ok(Some(started)) => {
                ceremony_page(passkeys, &started, &VERIFY_WORDING, VERIFY_PASSKEY_PATH, false, hidden, message)
            }
            Ok(None) => refused(StatusCode::BAD_REQUEST, "A sua conta não tem chaves de acesso."),
            Err(e) => html::failure_page(e),
        }
    };
    if field(&fields, "etapa") != "concluir" {
        return again(None).await;
    }
    let (ceremony, credential) = (field(&fields, "cerimonia"), field(&fields, "credencial"));
    match sessions.complete_second_factor_with_passkey(&session, ceremony, credential, &origin(&req)).await {
        Ok(Some(signed)) => {
            super::federation::carry_upstream_session(&req, &session, &signed).await;
            with_session(&req, &cookies, see_other(&next), &signed)
        }
        Ok(None) => again(Some(NOT_RECOGNISED)).await,
        Err(ServiceError::Invalid(_)) => again(Some(GONE)).await,
        Err(e) => html::failure_page(e),
    }
}

// ---------------------------------------------------------- registration

/// `POST /conta/seguranca/chave/`: registering a passkey. The start asks
/// the password again (a change of factors) and the name; the end stores
/// the passkey and shows the security page (with the recovery codes when
/// it is the account's first factor, and the offer to end the other
/// sessions).
async fn enrol(req: HttpRequest, payload: web::Payload, sessions: web::Data<SessionService>) -> HttpResponse {
    let (session, fields) = or_answer!(signed_post(&req, payload).await);
    let (Some(passkeys), Some(factors)) = (offered(&req), security::factors_of(&req)) else {
        return super::not_offered(NOT_OFFERED);
    };
    let user = session.user_id;
    let name = field(&fields, "nome").trim();
    let token = session.account_form_token();
    if field(&fields, "etapa") != "concluir" {
        let password = SecretString::from(field(&fields, "senha").to_owned());
        if let Err(answer) = security::reauthenticate(&req, &factors, &sessions, &session, password).await {
            return answer;
        }
        if name.is_empty() || name.chars().count() > credencial_application::passkey::MAX_NAME_CHARS {
            let shown =
                Shown { message: Some("Dê à chave de acesso um nome de até 60 caracteres."), ..Shown::default() };
            return security::page(&req, &factors, &sessions, &session, shown, StatusCode::UNPROCESSABLE_ENTITY).await;
        }
        let account = match factors.credentials().username_of(user).await {
            Ok(account) => account,
            Err(e) => return service_failure(&req, e),
        };
        return match passkeys.start_registration(user, &account, &account).await {
            Ok(started) => {
                let hidden = vec![("csrf_token", token.as_str()), ("nome", name)];
                ceremony_page(passkeys, &started, &REGISTER_WORDING, REGISTER_PASSKEY_PATH, true, hidden, None)
            }
            Err(ServiceError::Invalid(reason)) => refused(StatusCode::CONFLICT, &capitalised(&reason)),
            Err(e) => service_failure(&req, e),
        };
    }
    let (ceremony, credential) = (field(&fields, "cerimonia"), field(&fields, "credencial"));
    match passkeys.finish_registration(user, ceremony, credential, name).await {
        Ok(codes) => {
            let shown = Shown {
                notice: Some("Chave de acesso cadastrada. Você já pode entrar com ela, sem a senha."),
                recovery_codes: codes,
                offer_end_others: true,
                ..Shown::default()
            };
            security::page(&req, &factors, &sessions, &session, shown, StatusCode::OK).await
        }
        Err(ServiceError::Invalid(reason)) => {
            let message = format!("A chave de acesso não foi cadastrada: {reason}. Tente de novo.");
            let shown = Shown { message: Some(&message), ..Shown::default() };
            security::page(&req, &factors, &sessions, &session, shown, StatusCode::UNPROCESSABLE_ENTITY).await
        }
        Err(e) => service_failure(&req, e),
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => format!("{}{}.", first.to_uppercase(), chars.as_str()),
        None => String::new(),
    }
}
