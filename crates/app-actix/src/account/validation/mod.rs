//! The tax-id validation page (`/conta/validacao/`): GET shows where the
//! account stands (validated, no CPF, attempts used up, or the form); POST
//! makes one attempt with `data_nascimento` and `nome_mae`.
//!
//! | outcome of a POST | answer |
//! |---|---|
//! | match (or validated already) | 303 to the page, which says so |
//! | a field refused | 422, the form as typed with the field's message |
//! | mismatch | 422, the form as typed, attempts left (none: the wait) |
//! | attempts used up | 429 + `Retry-After`, the wait |
//! | registry down or not configured | 503 + `Retry-After`, nothing changed |
//! | no CPF on the account | 409 |
//!
//! What was typed is shown back only to its author (the page is never
//! cached) and never logged.

// A page's early answer is the `Err` of the helpers (see the parent).
#![allow(clippy::result_large_err)]

pub mod pages;

use actix_web::dev::AppService;
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, Resource};
use credencial_application::{LoginSession, TaxIdValidationService, ValidationOutcome};
use credencial_domain::account::{FieldErrors, TaxIdClaim};

use self::pages::{attempts_left, unavailable, validation_page, ClaimForm, MISMATCH, PATH};
use super::{form_refused, see_other, service_failure, signed_in, signed_post};
use crate::html;
use crate::routes::{self, resource};

/// How long to tell the browser to wait when the registry is down.
const REGISTRY_RETRY_AFTER_SECS: u32 = 30;

/// Registers the page; `with_data` gives it the account's application data.
pub fn register(config: &mut AppService, with_data: impl Fn(Resource) -> Resource) {
    use actix_web::dev::HttpServiceFactory;
    with_data(resource(PATH, "GET, POST"))
        .route(routes::get().to(show))
        .route(web::post().to(attempt))
        .register(config);
}

#[allow(clippy::too_many_arguments)]
/// The page as the account stands now, with `message`, the typed values
/// and their refusals, answered with `status`.
async fn current_page(
    req: &HttpRequest,
    validation: &TaxIdValidationService,
    session: &LoginSession,
    message: Option<String>,
    typed: (&str, &str),
    errors: Option<&FieldErrors>,
    status: StatusCode,
) -> HttpResponse {
    let state = match validation.state(session.user_id).await {
        Ok(state) => state,
        Err(e) => return service_failure(req, e),
    };
    let token = session.account_form_token();
    let page = validation_page(state, message, ClaimForm::new(&token, typed, errors, 0));
    html::html(html::response(status), &page)
}

/// `GET /conta/validacao/`.
async fn show(req: HttpRequest, validation: web::Data<TaxIdValidationService>) -> HttpResponse {
    let session = or_answer!(signed_in(&req).await);
    current_page(&req, &validation, &session, None, ("", ""), None, StatusCode::OK).await
}

/// `POST /conta/validacao/`: one attempt.
async fn attempt(
    req: HttpRequest,
    payload: web::Payload,
    validation: web::Data<TaxIdValidationService>,
) -> HttpResponse {
    let (session, fields) = or_answer!(signed_post(&req, payload).await);
    let (data_nascimento, nome_mae) = match (fields.get("data_nascimento"), fields.get("nome_mae")) {
        (Ok(date), Ok(name)) => (date.unwrap_or(""), name.unwrap_or("")),
        (Err(e), _) | (_, Err(e)) => return form_refused(e),
    };
    let typed = (data_nascimento, nome_mae);
    let (req, validation, session) = (&req, &validation, &session);
    let page = |message, status| current_page(req, validation, session, message, typed, None, status);
    let claim = match TaxIdClaim::parse(data_nascimento, nome_mae) {
        Ok(claim) => claim,
        Err(errors) => {
            return current_page(req, validation, session, None, typed, Some(&errors), StatusCode::UNPROCESSABLE_ENTITY)
                .await
        }
    };
    match validation.validate(session.user_id, &claim).await {
        Ok(ValidationOutcome::Validated | ValidationOutcome::AlreadyValidated) => see_other(PATH),
        Ok(ValidationOutcome::Mismatch { remaining }) => {
            let message = match remaining {
                0 => MISMATCH.to_owned(),
                n => format!("{MISMATCH} {}", attempts_left(n)),
            };
            page(Some(message), StatusCode::UNPROCESSABLE_ENTITY).await
        }
        Ok(ValidationOutcome::Limited { retry_after_secs }) => {
            let mut answer = page(None, StatusCode::TOO_MANY_REQUESTS).await;
            if let Ok(value) = HeaderValue::from_str(&retry_after_secs.max(1).to_string()) {
                answer.headers_mut().insert(header::RETRY_AFTER, value);
            }
            answer
        }
        Ok(ValidationOutcome::Unavailable { erro }) => {
            let mut answer = page(Some(unavailable(&erro)), StatusCode::SERVICE_UNAVAILABLE).await;
            answer.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(REGISTRY_RETRY_AFTER_SECS));
            answer
        }
        Ok(ValidationOutcome::NoCpf) => page(None, StatusCode::CONFLICT).await,
        Err(e) => service_failure(req, e),
    }
}
