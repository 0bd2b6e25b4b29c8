//! The password page (`/conta/senha/`): the current password, the new one
//! and its confirmation. A change revokes every refresh token of the
//! account and ends every session of it on the server; this browser gets
//! a new session cookie and the page again (303), announcing the change.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use credencial_application::{AccountEditService, PasswordOutcome, ServiceError};
use credencial_domain::account::registration::MSG_CONFIRMACAO;
use credencial_domain::account::FieldErrors;
use secrecy::SecretString;

use super::{
    form_refused, see_other, service_failure, signed_in, signed_post, text_fields, throttled_text, with_retry_after,
    with_session, PASSWORD_PATH,
};
use crate::cookies::CookiePolicy;
use crate::form::FormFields;
use crate::html::Frame;
use crate::html::{self, Site, PROVIDER};

/// Where a changed password goes: this page, told to announce it.
const CHANGED_LOCATION: &str = "/conta/senha/?alterada=1";
/// What the page announces after a change.
const CHANGED: &str =
    "Senha alterada. As sessões abertas em outros navegadores foram encerradas e os aplicativos precisarão que você \
     entre de novo.";
/// What the page says to an account whose password an administrator set.
const MUST_CHANGE: &str = "A sua senha foi definida pela administração do serviço e é temporária. Escolha uma senha \
     nova para continuar: até lá, as outras páginas e os aplicativos não aceitam a sua conta.";
/// What a refused form says above its fields.
const CHECK_FIELDS: &str = "A senha não foi alterada. Confira os campos indicados abaixo.";

/// The password page (`templates/account/password.html`).
#[derive(Debug, Template)]
#[template(path = "account/password.html")]
pub struct PasswordPage<'a> {
    /// Who the page speaks for.
    pub site: &'static Site,
    /// The page title.
    pub title: &'a str,
    /// The account frame.
    pub frame: Frame,
    /// Where the form posts.
    pub action: &'a str,
    /// A message to announce (refused form, limits), if any.
    pub message: Option<&'a str>,
    /// A success to announce, if any.
    pub notice: Option<&'a str>,
    /// The anti-forgery token.
    pub hidden: Vec<(&'static str, &'a str)>,
    /// The refused fields.
    pub errors: &'a FieldErrors,
}

/// `GET /conta/senha/`: the form.
pub async fn form(req: HttpRequest) -> HttpResponse {
    let session = or_answer!(signed_in(&req).await);
    let query = FormFields::parse(req.query_string().as_bytes()).unwrap_or_default();
    let notice = (query.get("alterada").ok().flatten() == Some("1")).then_some(CHANGED);
    // Said whenever the flag stands, however the browser got here.
    let message = session.must_change_password.then_some(MUST_CHANGE);
    let token = session.account_form_token();
    page(&token, &FieldErrors::new(), message, notice, StatusCode::OK)
}

/// `POST /conta/senha/`: checks the fences, the fields and the current
/// password, and changes it.
pub async fn change(
    req: HttpRequest,
    payload: web::Payload,
    edits: web::Data<AccountEditService>,
    cookies: web::Data<CookiePolicy>,
) -> HttpResponse {
    let (session, fields) = or_answer!(signed_post(&req, payload).await);
    let [current, new, confirmation] =
        match text_fields(&fields, ["password_atual", "password", "password_confirmacao"]) {
            Ok(values) => values,
            Err(e) => return form_refused(e),
        };
    let token = session.account_form_token();
    let mut errors = FieldErrors::new();
    if current.is_empty() {
        errors.push("password_atual", "Informe a senha atual.");
    }
    if new.is_empty() {
        errors.push("password", "Informe a nova senha.");
    } else if confirmation != new {
        errors.push("password_confirmacao", MSG_CONFIRMACAO);
    }
    if !errors.is_empty() {
        return page(&token, &errors, Some(CHECK_FIELDS), None, StatusCode::UNPROCESSABLE_ENTITY);
    }
    let (current, new) = (SecretString::from(current.to_owned()), SecretString::from(new.to_owned()));
    match edits.change_password(session.user_id, current, new, &crate::session::origin(&req)).await {
        Ok(PasswordOutcome::Changed { session: signed, .. }) => {
            with_session(&req, &cookies, see_other(CHANGED_LOCATION), &signed)
        }
        Ok(PasswordOutcome::Refused(errors)) => {
            page(&token, &errors, Some(CHECK_FIELDS), None, StatusCode::UNPROCESSABLE_ENTITY)
        }
        Err(ServiceError::Throttled { retry_after_secs }) => {
            let text = throttled_text(retry_after_secs);
            let answer = page(&token, &FieldErrors::new(), Some(&text), None, StatusCode::TOO_MANY_REQUESTS);
            with_retry_after(answer, retry_after_secs)
        }
        Err(e) => service_failure(&req, e),
    }
}

fn page(
    form_token: &str,
    errors: &FieldErrors,
    message: Option<&str>,
    notice: Option<&str>,
    status: StatusCode,
) -> HttpResponse {
    let page = PasswordPage {
        site: &PROVIDER,
        title: "Alterar senha",
        frame: Frame::account(PASSWORD_PATH),
        action: PASSWORD_PATH,
        message,
        notice,
        hidden: vec![("csrf_token", form_token)],
        errors,
    };
    html::html(html::response(status), &page)
}
