//! The sign-up page (`/conta/cadastro/`), offered only when the setting
//! `signup_enabled` is on (otherwise a 404 page).
//!
//! The form has no session yet, so its anti-forgery token is the login
//! form's double-submit token (a random key in an HttpOnly cookie); a post
//! the browser marks as from another origin is refused. A refused form is
//! shown again (422) with every field's message and what was typed, except
//! the passwords. A new account is signed in (the session cookie, as the
//! login form sets it) and lands on the overview, or on `next` — an account
//! page or the authorization request the person came from (the
//! application's login form links here with it).

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use credencial_application::EmailConfirmationService;
use credencial_application::{ServiceError, SessionService, SignupOutcome, SignupService};
use credencial_domain::account::{FieldErrors, Registration, SignupForm};
use secrecy::SecretString;

use super::{
    form_refused, not_offered, see_other, text_fields, throttled_text, with_retry_after, with_session, AccountSettings,
    HOME_PATH, LOGIN_PATH, SIGNUP_PATH,
};
use crate::cookies::CookiePolicy;
use crate::html::{self, Site, PROVIDER};
use crate::session::{
    login_form, login_form_token_matches, origin, safe_next_after_factor, session_of, with_next, FORM_EXPIRED,
};

/// What the 404 page says when sign-up is off.
const SIGNUP_OFF: &str = "O cadastro de novas contas não está aberto neste serviço.";
/// What a refused form says above its fields.
const CHECK_FIELDS: &str = "Não foi possível criar a conta. Confira os campos indicados abaixo.";

/// The sign-up form (`templates/account/signup.html`).
#[derive(Debug, Template)]
#[template(path = "account/signup.html")]
pub struct Signup<'a> {
    /// Who the page speaks for.
    pub site: &'static Site,
    /// The page title.
    pub title: &'a str,
    /// Where the form posts.
    pub action: &'a str,
    /// A message above the form (refused fields, expired form, limits).
    pub message: Option<&'a str>,
    /// Hidden fields: the anti-forgery token.
    pub hidden: Vec<(&'static str, &'a str)>,
    /// What was typed (never the passwords).
    pub form: SignupValues<'a>,
    /// The refused fields.
    pub errors: &'a FieldErrors,
    /// The login form's path.
    pub login_path: &'a str,
}

/// Whether the service offers sign-up (for the other login forms' links).
pub fn offered(req: &HttpRequest) -> bool {
    req.app_data::<web::Data<AccountSettings>>().is_some_and(|s| s.signup_enabled)
}

/// The sign-up page's path with `next` (where the new account goes).
pub fn path_with_next(next: &str) -> String {
    with_next(SIGNUP_PATH, next)
}

/// The values the sign-up form shows again.
#[derive(Debug, Clone, Copy, Default)]
pub struct SignupValues<'a> {
    /// CPF as typed.
    pub cpf: &'a str,
    /// Name as typed.
    pub nome: &'a str,
    /// E-mail as typed.
    pub email: &'a str,
    /// Username as typed.
    pub username: &'a str,
    /// Where the new account goes (an account page or the authorization
    /// endpoint, else the overview: [`safe_next_after_factor`]), carried by
    /// the form.
    pub next: &'a str,
}

/// `GET /conta/cadastro/`: the form; a signed-in browser goes to the
/// overview.
pub async fn form(
    req: HttpRequest,
    sessions: web::Data<SessionService>,
    cookies: web::Data<CookiePolicy>,
    settings: web::Data<AccountSettings>,
) -> HttpResponse {
    if !settings.signup_enabled {
        return not_offered(SIGNUP_OFF);
    }
    let query = web::Query::<std::collections::HashMap<String, String>>::from_query(req.query_string()).ok();
    let next = safe_next_after_factor(query.as_ref().and_then(|q| q.get("next")).map(String::as_str));
    match session_of(&req).await {
        Ok(Some(_)) => see_other(&next),
        Ok(None) => {
            let typed = SignupValues { next: &next, ..SignupValues::default() };
            page(&req, &sessions, &cookies, typed, &FieldErrors::new(), None, StatusCode::OK)
        }
        Err(e) => html::failure_page(e),
    }
}

/// `POST /conta/cadastro/`: checks the fences and the fields, creates the
/// account and signs it in (303 to the overview).
pub async fn create(
    req: HttpRequest,
    payload: web::Payload,
    signup: web::Data<SignupService>,
    sessions: web::Data<SessionService>,
    cookies: web::Data<CookiePolicy>,
    settings: web::Data<AccountSettings>,
) -> HttpResponse {
    if !settings.signup_enabled {
        return not_offered(SIGNUP_OFF);
    }
    let fields = or_answer!(crate::session::posted_form(&req, payload).await);
    let names = ["csrf_token", "cpf", "nome", "email", "username", "password", "password_confirmacao", "next"];
    let [csrf_token, cpf, nome, email, username, password, password_confirmacao, next] =
        match text_fields(&fields, names) {
            Ok(values) => values,
            Err(e) => return form_refused(e),
        };
    let next = safe_next_after_factor(Some(next).filter(|n| !n.is_empty()));
    let typed = SignupValues { cpf, nome, email, username, next: &next };
    let none = FieldErrors::new();
    if !login_form_token_matches(&req, &sessions, csrf_token) {
        return page(&req, &sessions, &cookies, typed, &none, Some(FORM_EXPIRED), StatusCode::BAD_REQUEST);
    }
    let form = SignupForm { cpf, nome, email, username, password, password_confirmacao };
    let registration = match Registration::parse(form) {
        Ok(r) => r,
        Err(errors) => {
            return page(
                &req,
                &sessions,
                &cookies,
                typed,
                &errors,
                Some(CHECK_FIELDS),
                StatusCode::UNPROCESSABLE_ENTITY,
            )
        }
    };
    let password = SecretString::from(password.to_owned());
    match signup.sign_up(registration, password, &origin(&req)).await {
        Ok(SignupOutcome::SignedIn(signed)) => {
            // A new account is asked to confirm its address; the account
            // exists whether or not the link could be written.
            if let Some(confirmations) = req.app_data::<web::Data<EmailConfirmationService>>() {
                if let Err(e) = confirmations.send(signed.session.user_id).await {
                    tracing::warn!(error = %e, "the confirmation link of a new account was not written");
                }
            }
            with_session(&req, &cookies, see_other(&next), &signed)
        }
        Ok(SignupOutcome::Taken(errors)) => {
            page(&req, &sessions, &cookies, typed, &errors, Some(CHECK_FIELDS), StatusCode::UNPROCESSABLE_ENTITY)
        }
        Err(ServiceError::Throttled { retry_after_secs }) => {
            let text = throttled_text(retry_after_secs);
            let answer = page(&req, &sessions, &cookies, typed, &none, Some(&text), StatusCode::TOO_MANY_REQUESTS);
            with_retry_after(answer, retry_after_secs)
        }
        Err(e) => html::failure_page(e),
    }
}

/// The form with `typed` values, `errors` and `message`, and a fresh
/// anti-forgery token (keeping the browser's key when it has one).
fn page(
    req: &HttpRequest,
    sessions: &SessionService,
    cookies: &CookiePolicy,
    typed: SignupValues<'_>,
    errors: &FieldErrors,
    message: Option<&str>,
    status: StatusCode,
) -> HttpResponse {
    let next = typed.next;
    let (token, builder) = login_form(req, sessions, cookies, status);
    let mut hidden = vec![("csrf_token", token.as_str())];
    if next != HOME_PATH {
        hidden.push(("next", next));
    }
    let page = Signup {
        site: &PROVIDER,
        title: "Criar conta",
        action: SIGNUP_PATH,
        message,
        hidden,
        form: typed,
        errors,
        login_path: LOGIN_PATH,
    };
    html::html(builder, &page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_field_is_announced_tied_to_its_input_and_typed_values_are_escaped() {
        let mut errors = FieldErrors::new();
        errors.push("cpf", "CPF inválido.");
        let page = Signup {
            site: &PROVIDER,
            title: "Criar conta",
            action: SIGNUP_PATH,
            message: Some(CHECK_FIELDS),
            hidden: vec![("csrf_token", "tok")],
            form: SignupValues { cpf: "\"><b>", nome: "Carla", email: "", username: "", next: "/conta/" },
            errors: &errors,
            login_path: LOGIN_PATH,
        }
        .render()
        .expect("renders");
        assert!(page.contains("<p class=\"field-error\" id=\"cpf-erro\">CPF inválido.</p>"), "{page}");
        assert!(
            page.contains(
                "inputmode=\"numeric\" aria-invalid=\"true\" autofocus aria-describedby=\"cpf-dica cpf-erro\" required>"
            ),
            "the CPF's keypad is numeric, and the refused input takes the focus and names its hint and error: {page}"
        );
        assert_eq!(page.matches(" autofocus").count(), 1, "one field takes the focus: {page}");
        assert!(!page.contains("\"><b>") && page.contains("value=\"&#34;&#62;&#60;b&#62;\""), "{page}");
        assert!(page.contains("<label for=\"password_confirmacao\">Confirme a senha</label>"), "{page}");
        assert_eq!(page.matches("aria-invalid=\"true\"").count(), 1, "only the refused field: {page}");
        assert!(page.contains("name=\"password\" value=\"\""), "passwords are never shown again: {page}");
    }
}
