//! The overview's details form (`POST /conta/`): name, e-mail and avatar
//! URL. A refused form is the overview again (422) with the fields'
//! messages and what was typed; a saved one goes back to the overview
//! (303), which announces the change.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use credencial_application::{AccountEditService, AccountService, DetailsOutcome, ServiceError};
use credencial_domain::account::{AccountDetails, DetailsForm, FieldErrors};

use super::pages::{self, DetailsValues};
use super::{form_refused, see_other, service_failure, signed_post, text_fields, throttled_text, with_retry_after};
use crate::form::FormFields;
use crate::html;

/// Where a saved form goes: the overview, told to announce the change.
const SAVED_LOCATION: &str = "/conta/?salvo=1";
/// What the overview announces after a change.
const SAVED: &str = "Seus dados foram atualizados.";
/// What a refused form says above the overview.
const CHECK_FIELDS: &str = "Os dados não foram alterados. Confira os campos indicados no formulário.";

/// The success to announce on the overview, if its query asks for it.
pub fn notice(req: &HttpRequest) -> Option<&'static str> {
    let query = FormFields::parse(req.query_string().as_bytes()).ok()?;
    match query.get("confirmacao").ok().flatten() {
        Some("enviada") => return Some("Enviamos um link de confirmação para o seu e-mail. Ele vale por 24 horas."),
        Some("aguarde") => {
            return Some("Um link de confirmação acabou de ser enviado: confira a sua caixa de entrada.")
        }
        Some("troca") => {
            return Some(
                "Enviamos um link para o novo endereço. O e-mail da conta só muda quando você abrir o link, em até 24 horas.",
            )
        }
        Some("troca-aguarde") => {
            return Some("Você pediu outra troca de e-mail há menos de um minuto: aguarde um pouco e envie de novo.")
        }
        Some("troca-cancelada") => return Some("A troca de e-mail foi cancelada. O e-mail da conta não mudou."),
        _ => {}
    }
    (query.get("salvo").ok().flatten() == Some("1")).then_some(SAVED)
}

/// `POST /conta/`: checks the fences and the fields, and stores them.
pub async fn update(
    req: HttpRequest,
    payload: web::Payload,
    accounts: web::Data<AccountService>,
    edits: web::Data<AccountEditService>,
) -> HttpResponse {
    let (session, fields) = or_answer!(signed_post(&req, payload).await);
    let [nome, email, avatar] = match text_fields(&fields, ["nome", "email", "avatar"]) {
        Ok(values) => values,
        Err(e) => return form_refused(e),
    };
    let typed = DetailsValues { nome, email, avatar };
    let (r, a, s) = (&req, &accounts, &session);
    let refused_with = move |errors: FieldErrors, message: String, status: StatusCode| async move {
        match a.overview(s.user_id).await {
            Ok(account) => {
                let token = s.account_form_token();
                let mut page = pages::overview(&account, &token, None);
                super::email::show_state(&mut page, r, s.user_id).await;
                page.message = Some(&message);
                page.form = typed;
                page.errors = errors;
                html::html(html::response(status), &page)
            }
            Err(e) => service_failure(r, e),
        }
    };
    let details = match AccountDetails::parse(DetailsForm { nome, email, avatar }) {
        Ok(d) => d,
        Err(errors) => return refused_with(errors, CHECK_FIELDS.into(), StatusCode::UNPROCESSABLE_ENTITY).await,
    };
    // A new e-mail address asks for a recent authentication (it is where
    // the account's messages go).
    let current = match accounts.overview(session.user_id).await {
        Ok(account) => account.email,
        Err(e) => return service_failure(&req, e),
    };
    if !current.eq_ignore_ascii_case(details.email.as_str()) {
        or_answer!(
            crate::session::recent_authentication(&req, &session, &fields, "trocar o e-mail", super::HOME_PATH).await
        );
    }
    match edits.update_details(session.user_id, &details, &crate::session::origin(&req)).await {
        Ok(DetailsOutcome::Saved) => see_other(SAVED_LOCATION),
        Ok(DetailsOutcome::ChangePending) => see_other("/conta/?confirmacao=troca"),
        Ok(DetailsOutcome::ChangeTooSoon) => see_other("/conta/?confirmacao=troca-aguarde"),
        Ok(DetailsOutcome::Refused(errors)) => {
            refused_with(errors, CHECK_FIELDS.into(), StatusCode::UNPROCESSABLE_ENTITY).await
        }
        Err(ServiceError::Throttled { retry_after_secs }) => {
            let text = throttled_text(retry_after_secs);
            let answer = refused_with(FieldErrors::new(), text, StatusCode::TOO_MANY_REQUESTS).await;
            with_retry_after(answer, retry_after_secs)
        }
        Err(e) => service_failure(&req, e),
    }
}
