//! The person's experiences (`/conta/experiencias/`) and degrees
//! (`/conta/formacoes/`), one set of handlers for both:
//!
//! | path | GET | POST |
//! |---|---|---|
//! | `{list}` | the list and the add form | adds, 303 back to the list |
//! | `{list}{id}/` | the edit form | saves, 303 back to the list |
//! | `{list}{id}/excluir/` | asks to confirm | deletes, 303 back to the list |
//!
//! A refused form is shown again as typed, with each refused field's
//! message (422). An `id` that is not a number, or not one of the person's
//! entries of that kind, is a 404 page, for POSTs too. Every POST passes
//! the account's fences first (same origin, `csrf_token`).

// A page's early answer is the `Err` of the helpers (see the parent).
#![allow(clippy::result_large_err)]

pub mod pages;

use actix_web::dev::AppService;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, Resource};
use credencial_application::{EntrySave, LoginSession, OwnEntryService};
use credencial_domain::account::{EntryForm, EntryId, FieldErrors};

use self::pages::{delete_page, entries_page, entry_page, form_view, Section, DEGREES, EXPERIENCES};
use super::{see_other, service_failure, signed_in, signed_post};
use crate::form::FormFields;
use crate::html::{self, ErrorPage, PROVIDER};
use crate::routes::{self, resource};

/// Registers the pages of both kinds; `with_data` gives each resource the
/// account's application data.
pub fn register(config: &mut AppService, with_data: impl Fn(Resource) -> Resource) {
    use actix_web::dev::HttpServiceFactory;
    for section in [&EXPERIENCES, &DEGREES] {
        let section = web::Data::new(section);
        with_data(resource(section.path, "GET, POST"))
            .app_data(section.clone())
            .route(routes::get().to(list))
            .route(web::post().to(add))
            .register(config);
        with_data(resource(&format!("{}{{id}}/", section.path), "GET, POST"))
            .app_data(section.clone())
            .route(routes::get().to(edit_form))
            .route(web::post().to(save))
            .register(config);
        with_data(resource(&format!("{}{{id}}/excluir/", section.path), "GET, POST"))
            .app_data(section)
            .route(routes::get().to(confirm_delete))
            .route(web::post().to(delete))
            .register(config);
    }
}

type Kind = web::Data<&'static Section>;

/// The 404 page of an entry that is not the person's (or not a number).
fn not_found(section: &Section) -> HttpResponse {
    let page = ErrorPage {
        site: &PROVIDER,
        title: "Registro não encontrado",
        reason: "Este registro não existe na sua conta.",
        hint: "Nada foi alterado.",
        retry: Some(section.path),
    };
    html::html(html::response(StatusCode::NOT_FOUND), &page)
}

/// The `{id}` of the path: digits only (no sign, no spaces), else the 404
/// page.
fn entry_id(req: &HttpRequest, section: &Section) -> Result<EntryId, HttpResponse> {
    req.match_info()
        .get("id")
        .filter(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|id| id.parse::<i64>().ok())
        .map(EntryId)
        .ok_or_else(|| not_found(section))
}

/// The typed form of `section`'s kind; a field sent twice is refused
/// (400 page).
fn typed<'a>(fields: &'a FormFields, section: &Section) -> Result<EntryForm<'a>, HttpResponse> {
    for name in section.kind.fields() {
        fields.get(name).map_err(super::form_refused)?;
    }
    Ok(EntryForm::read(section.kind, |name| fields.get(name).ok().flatten()))
}

fn page(status: StatusCode, page: &impl askama::Template) -> HttpResponse {
    html::html(html::response(status), page)
}

/// The list page with `form` (empty, or as typed and refused).
async fn list_page(
    req: &HttpRequest,
    entries: &OwnEntryService,
    section: &Section,
    session: &LoginSession,
    form: &EntryForm<'_>,
    errors: Option<&FieldErrors>,
) -> HttpResponse {
    let items = match entries.list(session.user_id, section.kind).await {
        Ok(items) => items,
        Err(e) => return service_failure(req, e),
    };
    let query = FormFields::parse(req.query_string().as_bytes()).unwrap_or_default();
    let notice = match errors {
        None => query.get("ok").ok().flatten().and_then(|ok| section.notice(ok)),
        Some(_) => None,
    };
    let token = session.account_form_token();
    let form = form_view(section, section.path.to_owned(), &token, form, errors, "Adicionar");
    let status = if errors.is_some() { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::OK };
    page(status, &entries_page(section, &items, notice, form, errors.is_some()))
}

/// `GET {list}`: the entries and an empty add form.
async fn list(req: HttpRequest, entries: web::Data<OwnEntryService>, section: Kind) -> HttpResponse {
    let session = or_answer!(signed_in(&req).await);
    list_page(&req, &entries, &section, &session, &EntryForm::default(), None).await
}

/// `POST {list}`: adds the entry, or shows the list with the form as typed.
async fn add(
    req: HttpRequest,
    payload: web::Payload,
    entries: web::Data<OwnEntryService>,
    section: Kind,
) -> HttpResponse {
    let (session, fields) = or_answer!(signed_post(&req, payload).await);
    let form = or_answer!(typed(&fields, &section));
    match entries.add(session.user_id, section.kind, &form).await {
        Ok(EntrySave::Saved(_)) => see_other(&format!("{}?ok=adicionada", section.path)),
        Ok(EntrySave::Refused(errors)) => list_page(&req, &entries, &section, &session, &form, Some(&errors)).await,
        Ok(EntrySave::NotFound) => not_found(&section),
        Err(e) => service_failure(&req, e),
    }
}

/// `GET {list}{id}/`: the edit form, filled with the stored entry.
async fn edit_form(req: HttpRequest, entries: web::Data<OwnEntryService>, section: Kind) -> HttpResponse {
    let session = or_answer!(signed_in(&req).await);
    let id = or_answer!(entry_id(&req, &section));
    match entries.find(session.user_id, section.kind, id).await {
        Ok(Some(entry)) => {
            let token = session.account_form_token();
            let form = form_view(&section, section.entry_path(id.0), &token, &entry.form(), None, "Salvar");
            page(StatusCode::OK, &entry_page(&section, id.0, entry.from_cnes, form, false))
        }
        Ok(None) => not_found(&section),
        Err(e) => service_failure(&req, e),
    }
}

/// `POST {list}{id}/`: saves the entry, or shows the form as typed.
async fn save(
    req: HttpRequest,
    payload: web::Payload,
    entries: web::Data<OwnEntryService>,
    section: Kind,
) -> HttpResponse {
    let (session, fields) = or_answer!(signed_post(&req, payload).await);
    let id = or_answer!(entry_id(&req, &section));
    let form = or_answer!(typed(&fields, &section));
    match entries.update(session.user_id, section.kind, id, &form).await {
        Ok(EntrySave::Saved(_)) => see_other(&format!("{}?ok=salva", section.path)),
        Ok(EntrySave::Refused(errors)) => {
            // (The CNES note is left out of a refused form.)
            let token = session.account_form_token();
            let view = form_view(&section, section.entry_path(id.0), &token, &form, Some(&errors), "Salvar");
            page(StatusCode::UNPROCESSABLE_ENTITY, &entry_page(&section, id.0, false, view, true))
        }
        Ok(EntrySave::NotFound) => not_found(&section),
        Err(e) => service_failure(&req, e),
    }
}

/// `GET {list}{id}/excluir/`: asks to confirm the delete.
async fn confirm_delete(req: HttpRequest, entries: web::Data<OwnEntryService>, section: Kind) -> HttpResponse {
    let session = or_answer!(signed_in(&req).await);
    let id = or_answer!(entry_id(&req, &section));
    match entries.find(session.user_id, section.kind, id).await {
        Ok(Some(entry)) => {
            let token = session.account_form_token();
            page(StatusCode::OK, &delete_page(&section, &entry, &token))
        }
        Ok(None) => not_found(&section),
        Err(e) => service_failure(&req, e),
    }
}

/// `POST {list}{id}/excluir/`: deletes the entry.
async fn delete(
    req: HttpRequest,
    payload: web::Payload,
    entries: web::Data<OwnEntryService>,
    section: Kind,
) -> HttpResponse {
    let (session, _) = or_answer!(signed_post(&req, payload).await);
    let id = or_answer!(entry_id(&req, &section));
    match entries.delete(session.user_id, section.kind, id).await {
        Ok(true) => see_other(&format!("{}?ok=excluida", section.path)),
        Ok(false) => not_found(&section),
        Err(e) => service_failure(&req, e),
    }
}
