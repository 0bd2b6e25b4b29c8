//! Creating an account in the panel (`/admin/usuarios/novo/`): username,
//! name, e-mail, CPF (optional) and staff; the account gets a generated
//! temporary password, shown once on the answer, that the person must
//! change at the first login. `credencial user create
//! --temporary-password` does the same through the same use case.
//!
//! | method | answer |
//! |---|---|
//! | GET | the form |
//! | POST | 201, the account's data (CPF masked) and the password, once (`no-store`, never in a URL); 422 the form with field errors; 409 the form with the taken username, CPF or e-mail marked; nothing written on either |

// A page's early answer is the `Err` of the helpers (see the parent).
#![allow(clippy::result_large_err)]

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, Resource};
use askama::Template;
use credencial_application::admin::{AccountFields, TakenField, TemporaryAccountOutcome};
use credencial_application::{AccountAdminService, StaffService};
use credencial_domain::account::registration::parse_chosen_username;
use credencial_domain::account::{AccountDetails, DetailsForm};
use credencial_domain::{Cpf, UserData};
use secrecy::ExposeSecret;

use super::users::USERS_PATH;
use super::{staff_post, staff_signed_in};
use crate::account::{form_refused, text_fields};
use crate::html::Frame;
use crate::html::{self, Site, PROVIDER};
use crate::routes::{self, resource};

/// The form's path.
pub const NEW_USER_PATH: &str = "/admin/usuarios/novo/";

const CHECK_FIELDS: &str = "Nada foi gravado. Confira os campos indicados no formulário.";
const BAD_CPF: &str =
    "Informe um CPF válido (11 dígitos, com os dígitos verificadores certos), ou deixe o campo vazio.";

/// Registers the form; `with_data` gives it the panel's application data.
/// Before `/admin/usuarios/{id}/`: "novo" is the form, not an account.
pub fn register(config: &mut AppService, with_data: impl Fn(Resource) -> Resource) {
    with_data(resource(NEW_USER_PATH, "GET, POST"))
        .route(routes::get().to(form))
        .route(web::post().to(create))
        .register(config);
}

/// The form's values as typed and their errors.
#[derive(Debug, Default)]
pub struct NewUserForm {
    /// The username, as typed.
    pub username: String,
    /// The name, as typed.
    pub name: String,
    /// The e-mail address, as typed.
    pub email: String,
    /// The CPF, as typed.
    pub cpf: String,
    /// Whether staff is checked.
    pub staff: bool,
    /// The username's error.
    pub username_error: Option<String>,
    /// The name's error.
    pub name_error: Option<String>,
    /// The e-mail's error.
    pub email_error: Option<String>,
    /// The CPF's error.
    pub cpf_error: Option<String>,
}

/// The form (`templates/admin/user_new.html`).
#[derive(Debug, Template)]
#[template(path = "admin/user_new.html")]
pub struct NewUserPage<'a> {
    /// Who the page speaks for.
    pub site: &'static Site,
    /// The page title.
    pub title: &'a str,
    /// The panel frame.
    pub frame: Frame,
    /// The session's form token.
    pub csrf_token: &'a str,
    /// A refusal to announce, if any.
    pub message: Option<&'a str>,
    /// The values and errors.
    pub form: NewUserForm,
}

/// The answer to a creation: the account and its temporary password,
/// shown once (`templates/admin/user_created.html`).
#[derive(Template)]
#[template(path = "admin/user_created.html")]
pub struct CreatedPage<'a> {
    /// Who the page speaks for.
    pub site: &'static Site,
    /// The page title.
    pub title: &'a str,
    /// The panel frame.
    pub frame: Frame,
    /// The username.
    pub username: &'a str,
    /// The name.
    pub name: &'a str,
    /// The e-mail address.
    pub email: &'a str,
    /// The CPF, masked.
    pub cpf: Option<String>,
    /// Whether it is staff.
    pub staff: bool,
    /// The temporary password.
    pub password: &'a str,
    /// The account's page.
    pub account_path: String,
}

/// `GET /admin/usuarios/novo/`.
async fn form(req: HttpRequest, staff: web::Data<StaffService>) -> HttpResponse {
    let (session, _) = or_answer!(staff_signed_in(&req, &staff).await);
    let token = session.account_form_token();
    form_page(&token, None, NewUserForm::default(), StatusCode::OK)
}

fn form_page(csrf_token: &str, message: Option<&str>, form: NewUserForm, status: StatusCode) -> HttpResponse {
    let page = NewUserPage {
        site: &PROVIDER,
        title: "Nova conta",
        frame: Frame::admin(USERS_PATH),
        csrf_token,
        message,
        form,
    };
    html::html(html::response(status), &page)
}

/// `POST /admin/usuarios/novo/`: creates the account and shows its
/// temporary password once.
async fn create(
    req: HttpRequest,
    payload: web::Payload,
    staff: web::Data<StaffService>,
    accounts: web::Data<AccountAdminService>,
) -> HttpResponse {
    let (session, actor, fields) = or_answer!(staff_post(&req, payload, &staff).await);
    let [username, name, email, cpf, staff_box] =
        match text_fields(&fields, ["username", "nome", "email", "cpf", "equipe"]) {
            Ok(values) => values,
            Err(e) => return form_refused(e),
        };
    let mut form = NewUserForm {
        username: username.trim().to_owned(),
        name: name.to_owned(),
        email: email.to_owned(),
        cpf: cpf.trim().to_owned(),
        staff: !staff_box.is_empty(),
        ..NewUserForm::default()
    };
    let parsed_username = parse_chosen_username(username);
    let details = AccountDetails::parse(DetailsForm { nome: name, email, avatar: "" });
    let parsed_cpf = if form.cpf.is_empty() { Ok(None) } else { Cpf::parse(&form.cpf).map(Some) };
    let token = session.account_form_token();
    let (username, details, cpf) = match (parsed_username, details, parsed_cpf) {
        (Ok(u), Ok(d), Ok(c)) => (u, d, c),
        (u, d, c) => {
            form.username_error = u.err().map(str::to_owned);
            if let Err(errors) = &d {
                form.name_error = errors.get("nome").map(str::to_owned);
                form.email_error = errors.get("email").map(str::to_owned);
            }
            form.cpf_error = c.err().map(|_| BAD_CPF.to_owned());
            return form_page(&token, Some(CHECK_FIELDS), form, StatusCode::UNPROCESSABLE_ENTITY);
        }
    };
    let account = AccountFields {
        username,
        cpf,
        name: details.name,
        data: UserData { email: details.email.as_str().to_owned(), ..UserData::default() },
        is_active: true,
        is_staff: form.staff,
    };
    let masked_cpf = account.cpf.as_ref().map(Cpf::masked);
    let (name, email) = (account.name.clone(), account.data.email.clone());
    match accounts.create_with_temporary_password(&actor, account).await {
        Ok(TemporaryAccountOutcome::Created { id, password }) => {
            let page = CreatedPage {
                site: &PROVIDER,
                title: "Conta cadastrada",
                frame: Frame::admin(USERS_PATH),
                username: &password.username,
                name: &name,
                email: &email,
                cpf: masked_cpf,
                staff: form.staff,
                password: password.password.expose_secret(),
                account_path: format!("{USERS_PATH}{}/", id.0),
            };
            // Shown once: `no-store`, like every page (html::response); no
            // redirect, so that the password is never in a URL.
            html::html(html::response(StatusCode::CREATED), &page)
        }
        Ok(TemporaryAccountOutcome::Taken(field)) => {
            match field {
                TakenField::Username => {
                    form.username_error = Some("Já existe uma conta com este nome de usuário.".into())
                }
                TakenField::Cpf => form.cpf_error = Some("Já existe uma conta com este CPF.".into()),
                TakenField::Email => form.email_error = Some("Já existe uma conta com este e-mail.".into()),
            }
            form_page(&token, Some(CHECK_FIELDS), form, StatusCode::CONFLICT)
        }
        Err(e) => html::failure_page(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_marks_each_field_error_next_to_its_field_and_escapes_values() {
        let form = NewUserForm {
            username: "<b>".into(),
            cpf_error: Some("cpf ruim".into()),
            username_error: Some("usuário ruim".into()),
            ..NewUserForm::default()
        };
        let page = NewUserPage {
            site: &PROVIDER,
            title: "t",
            frame: Frame::admin(USERS_PATH),
            csrf_token: "tok",
            message: Some(CHECK_FIELDS),
            form,
        }
        .render()
        .expect("renders");
        assert!(!page.contains("<b>"), "{page}");
        assert!(page.contains("id=\"erro-username\"") && page.contains("id=\"erro-cpf\""), "{page}");
        assert!(!page.contains("id=\"erro-email\""), "{page}");
        assert!(page.contains("name=\"csrf_token\" value=\"tok\""), "{page}");
    }
}
