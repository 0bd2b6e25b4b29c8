//! RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0):
//! `GET /oauth/logout/` and the confirmation form's `POST /oauth/logout/`.
//!
//! - With an `id_token_hint` that names the browser's session user (or
//!   without any session), the login session ends at once (its cookie is
//!   cleared) and the browser goes to the client's registered
//!   `post_logout_redirect_uri` (with `state`), or to our "você saiu" page.
//! - Without such a hint and with a session, the person confirms on our
//!   page first (a form with an anti-forgery token bound to the request; a
//!   post from another site is refused), so that a bare link of another
//!   site cannot log anybody out.
//! - A `post_logout_redirect_uri` that is not registered for the client,
//!   exactly, is never followed: our page is shown.
//! - An `id_token_hint` that is not one of our ID tokens (a forged or
//!   foreign one), or a `client_id` that contradicts it, gets a 400 page:
//!   nothing ends, nothing is redirected.

use actix_web::http::header;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use credencial_application::{LoginSession, LogoutStep, OAuthService, ServiceError};
use credencial_domain::oauth::logout::LogoutParams;
use credencial_domain::oauth::OAuthError;

use super::pages;
use crate::form::{read_form, FormError, FormFields};
use crate::html;
use crate::session::{log_out, session_of};

/// The route's path (a trailing slash is optional).
pub const LOGOUT_PATH: &str = "/oauth/logout";

const INVALID_FORM: &str = "O formulário de saída é inválido ou expirou. Volte ao aplicativo e tente sair de novo.";
const FROM_ANOTHER_SITE: &str = "O pedido de saída foi enviado a partir de outro site.";
const BACK: &str = "Volte ao aplicativo de onde você veio.";

/// The logout request's parameters. Errors: a repeated parameter.
fn logout_params(fields: &FormFields) -> Result<LogoutParams, FormError> {
    Ok(LogoutParams {
        id_token_hint: fields.owned("id_token_hint")?,
        post_logout_redirect_uri: fields.owned("post_logout_redirect_uri")?,
        state: fields.owned("state")?,
        client_id: fields.owned("client_id")?,
    })
}

/// The present parameters, in a fixed order (the confirmation form's
/// hidden fields).
fn logout_pairs(params: &LogoutParams) -> Vec<(&'static str, &str)> {
    [
        ("id_token_hint", &params.id_token_hint),
        ("post_logout_redirect_uri", &params.post_logout_redirect_uri),
        ("state", &params.state),
        ("client_id", &params.client_id),
    ]
    .into_iter()
    .filter_map(|(name, value)| value.as_deref().map(|v| (name, v)))
    .collect()
}

/// `GET /oauth/logout/`.
pub async fn logout_get(req: HttpRequest, oauth: web::Data<OAuthService>) -> HttpResponse {
    let params = match FormFields::parse(req.query_string().as_bytes()).and_then(|f| logout_params(&f)) {
        Ok(params) => params,
        Err(e) => return refused_page(&e.message()),
    };
    let session = match session_of(&req).await {
        Ok(session) => session,
        Err(e) => return html::failure_page(e),
    };
    match oauth.logout(session.as_ref(), &params).await {
        Ok(LogoutStep::Confirm { client_name, .. }) => match &session {
            Some(session) => confirm_page(&oauth, session, &params, client_name.as_deref()),
            None => html::failure_page(ServiceError::Internal("a logout confirmation without a session".into())),
        },
        other => step_response(&req, &params, other, StatusCode::FOUND).await,
    }
}

/// `POST /oauth/logout/`: the confirmation.
pub async fn logout_post(req: HttpRequest, payload: web::Payload, oauth: web::Data<OAuthService>) -> HttpResponse {
    if html::posted_from_another_origin(&req) {
        return refused_page(FROM_ANOTHER_SITE);
    }
    let fields = match read_form(&req, payload).await {
        Ok(fields) => fields,
        Err(e) => return refused_page(&e.message()),
    };
    let params = match logout_params(&fields) {
        Ok(params) => params,
        Err(e) => return refused_page(&e.message()),
    };
    match session_of(&req).await {
        // A session ends only with this session's own form.
        Ok(Some(session)) => {
            let presented = fields.get("csrf_token").ok().flatten().unwrap_or("");
            if !oauth.logout_form_token_matches(&session, &params, presented) {
                return refused_page(INVALID_FORM);
            }
        }
        // No session (it expired meanwhile): nothing to end, nothing to forge.
        Ok(None) => {}
        Err(e) => return html::failure_page(e),
    }
    let step = oauth.confirm_logout(&params).await;
    step_response(&req, &params, step, StatusCode::SEE_OTHER).await
}

/// The answer to a step other than a confirmation: the error page, or the
/// session's end (on the server, and its cookie cleared) with a redirect
/// (`redirect_status`) or our page; a failure page when the session could
/// not be ended.
async fn step_response(
    req: &HttpRequest,
    params: &LogoutParams,
    step: Result<LogoutStep, ServiceError>,
    redirect_status: StatusCode,
) -> HttpResponse {
    let (location, client_name) = match step {
        Ok(LogoutStep::Done { location, client_name }) => (location, client_name),
        Ok(LogoutStep::Refused(e)) => return refused(&e),
        Ok(LogoutStep::Confirm { .. }) => {
            return html::failure_page(ServiceError::Internal("an unexpected logout confirmation".into()))
        }
        Err(e) => return html::failure_page(e),
    };
    let answer = match location {
        Some(location) => {
            let mut builder = html::response(redirect_status);
            builder.insert_header((header::LOCATION, location));
            builder.finish()
        }
        None => {
            let unregistered = params.post_logout_redirect_uri.is_some();
            let page = pages::logged_out(client_name.as_deref(), unregistered);
            html::html(html::response(StatusCode::OK), &page)
        }
    };
    let answer = match log_out(req, answer).await {
        Ok(answer) => answer,
        Err(e) => return html::failure_page(e),
    };
    tracing::info!(redirected = answer.status().is_redirection(), "provider session ended by a logout request");
    answer
}

fn confirm_page(
    oauth: &OAuthService,
    session: &LoginSession,
    params: &LogoutParams,
    client_name: Option<&str>,
) -> HttpResponse {
    let token = oauth.logout_form_token(session, params);
    let mut hidden = logout_pairs(params);
    hidden.push(("csrf_token", &token));
    let page = pages::logout_confirm(client_name, hidden);
    html::html(html::response(StatusCode::OK), &page)
}

fn refused(e: &OAuthError) -> HttpResponse {
    let hint = html::refusal_hint(BACK, &e.description(), e.error_code());
    let page = pages::error("Não foi possível sair", "O pedido de saída é inválido.", &hint);
    html::html(html::response(StatusCode::BAD_REQUEST), &page)
}

fn refused_page(reason: &str) -> HttpResponse {
    html::html(html::response(StatusCode::BAD_REQUEST), &pages::error("Pedido inválido", reason, BACK))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parameters_round_trip_through_the_hidden_fields() {
        let fields =
            FormFields::parse(b"state=s%261&client_id=portal&post_logout_redirect_uri=https%3A%2F%2Fa.example%2F&x=1")
                .expect("form");
        let params = logout_params(&fields).expect("params");
        assert_eq!(params.state.as_deref(), Some("s&1"));
        assert_eq!(params.id_token_hint, None);
        assert_eq!(
            logout_pairs(&params),
            [("post_logout_redirect_uri", "https://a.example/"), ("state", "s&1"), ("client_id", "portal")]
        );
        let twice = FormFields::parse(b"state=a&state=b").expect("form");
        assert_eq!(logout_params(&twice), Err(FormError::Repeated("state".into())));
    }
}
