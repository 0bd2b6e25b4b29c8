//! An application's access to the user-management API
//! (`/admin/aplicativos/{client_id}/api/`): which permissions it has,
//! whether it may get tokens for itself (`client_credentials`) and whether
//! a static token was issued. A POST with `acao=acesso` saves the checked
//! permissions and the `client_credentials` choice (asking first when it
//! turns the grant on); any other POST issues a new static token with the
//! checked permissions (replacing the old one at once) and shows it once,
//! on the answer itself (never in a URL, never again).

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, Resource};
use askama::Template;
use credencial_application::{ApiAccessChange, ApiTokenService, LoginSession, StaffService};
use credencial_domain::admin::{Actor, ApiPermission, ApiPermissions};
use credencial_domain::oauth::ClientId;
use secrecy::ExposeSecret;

use super::{refused, staff_post, staff_signed_in};
use crate::account::form_refused;
use crate::form::FormFields;
use crate::html::Frame;
use crate::html::{self, Site, PROVIDER};
use crate::routes::{self, resource};

/// The section the page belongs to.
const SECTION: &str = "/admin/aplicativos/";

const UNKNOWN_CLIENT: &str = "Não há aplicação com este identificador.";

/// The page's path for `client_id`.
pub fn path_of(client_id: &str) -> String {
    format!("/admin/aplicativos/{client_id}/api/")
}

/// Registers the page; `with_data` gives it the panel's application data.
pub fn register(config: &mut AppService, with_data: impl Fn(Resource) -> Resource) {
    with_data(resource("/admin/aplicativos/{client_id}/api/", "GET, POST"))
        .route(routes::get().to(show))
        .route(web::post().to(issue))
        .register(config);
}

/// One permission's checkbox.
#[derive(Debug)]
pub struct PermissionBox {
    /// The form field (`users_read`, `users_create`).
    pub field: &'static str,
    /// The permission's stored name.
    pub name: &'static str,
    /// What it allows, in Portuguese.
    pub label: &'static str,
    /// Whether the application has it.
    pub checked: bool,
}

/// The page (`templates/admin/api_token.html`).
#[derive(Debug, Template)]
#[template(path = "admin/api_token.html")]
pub struct ApiTokenPage<'a> {
    /// Who the page speaks for.
    pub site: &'static Site,
    /// The page title.
    pub title: &'a str,
    /// The panel frame.
    pub frame: Frame,
    /// The application's client id.
    pub client_id: &'a str,
    /// The application's name.
    pub name: &'a str,
    /// The permissions, checked as the application has them.
    pub permissions: Vec<PermissionBox>,
    /// Whether a token was issued.
    pub has_token: bool,
    /// Whether the application may get tokens for itself.
    pub client_credentials: bool,
    /// Whether it is a confidential client (only those may).
    pub confidential: bool,
    /// What was just saved, if anything.
    pub saved: Option<&'static str>,
    /// Why the last change was refused, if it was.
    pub refusal: Option<&'static str>,
    /// The token just issued (shown once), if any.
    pub issued: Option<&'a str>,
    /// The form's action.
    pub action: String,
    /// The session's form token.
    pub csrf_token: &'a str,
}

fn field_of(permission: ApiPermission) -> &'static str {
    match permission {
        ApiPermission::UsersRead => "users_read",
        ApiPermission::UsersCreate => "users_create",
    }
}

fn boxes(permissions: ApiPermissions) -> Vec<PermissionBox> {
    ApiPermission::ALL
        .into_iter()
        .map(|p| PermissionBox {
            field: field_of(p),
            name: p.name(),
            label: p.label(),
            checked: permissions.contains(p),
        })
        .collect()
}

/// What `permissions` let a token do, as a Portuguese list ("consultar
/// usuários e pré-cadastrar usuários").
fn what_they_do(permissions: ApiPermissions) -> String {
    let labels: Vec<String> = permissions.iter().map(|p| p.label().to_lowercase()).collect();
    crate::html::listed(&labels)
}

fn not_found() -> HttpResponse {
    refused(StatusCode::NOT_FOUND, UNKNOWN_CLIENT)
}

/// The token page of `client` as stored, with the token just `issued`
/// (shown once) if any; the 404 page when there is no such application.
async fn token_page(
    api_tokens: &ApiTokenService,
    client: &ClientId,
    issued: Option<&str>,
    csrf_token: &str,
) -> HttpResponse {
    access_page(api_tokens, client, Outcome { issued, ..Outcome::default() }, csrf_token).await
}

/// What the last POST did, for the page that answers it.
#[derive(Debug, Default, Clone, Copy)]
struct Outcome<'a> {
    /// The token just issued (shown once).
    issued: Option<&'a str>,
    /// The notice of a saved change.
    saved: Option<&'static str>,
    /// Why a change was refused (answered 422).
    refusal: Option<&'static str>,
}

/// The page of `client` as stored, after `outcome`; the 404 page when
/// there is no such application.
async fn access_page(
    api_tokens: &ApiTokenService,
    client: &ClientId,
    outcome: Outcome<'_>,
    csrf_token: &str,
) -> HttpResponse {
    let Outcome { issued, saved, refusal } = outcome;
    let state = match api_tokens.state(client).await {
        Ok(Some(state)) => state,
        Ok(None) => return not_found(),
        Err(e) => return html::failure_page(e),
    };
    let page = ApiTokenPage {
        site: &PROVIDER,
        title: "Acesso à API de usuários",
        frame: Frame::admin(SECTION),
        client_id: client.as_str(),
        name: &state.name,
        permissions: boxes(state.permissions),
        has_token: state.has_token || issued.is_some(),
        client_credentials: state.client_credentials,
        confidential: state.confidential,
        saved,
        refusal,
        issued,
        action: path_of(client.as_str()),
        csrf_token,
    };
    let status = if refusal.is_some() { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::OK };
    html::html(html::response(status), &page)
}

/// `GET /admin/aplicativos/{client_id}/api/`.
async fn show(
    req: HttpRequest,
    client_id: web::Path<String>,
    staff: web::Data<StaffService>,
    api_tokens: web::Data<ApiTokenService>,
) -> HttpResponse {
    let (session, _) = or_answer!(staff_signed_in(&req, &staff).await);
    let Ok(client) = ClientId::parse(&client_id) else {
        return not_found();
    };
    token_page(&api_tokens, &client, None, &session.account_form_token()).await
}

/// `POST /admin/aplicativos/{client_id}/api/`: with `acao=acesso`, the
/// checked permissions and the `client_credentials` choice saved;
/// otherwise a new token with the checked permissions, shown once.
async fn issue(
    req: HttpRequest,
    payload: web::Payload,
    client_id: web::Path<String>,
    staff: web::Data<StaffService>,
    api_tokens: web::Data<ApiTokenService>,
) -> HttpResponse {
    let (session, actor, fields) = or_answer!(staff_post(&req, payload, &staff).await);
    let Ok(client) = ClientId::parse(&client_id) else {
        return not_found();
    };
    let mut permissions = ApiPermissions::NONE;
    for permission in ApiPermission::ALL {
        match fields.get(field_of(permission)) {
            Ok(Some(_)) => permissions = permissions.with(permission),
            Ok(None) => {}
            Err(e) => return form_refused(e),
        }
    }
    let action = match fields.get("acao") {
        Ok(action) => action,
        Err(e) => return form_refused(e),
    };
    if action == Some("acesso") {
        let allowed = match fields.get("client_credentials") {
            Ok(value) => value.is_some(),
            Err(e) => return form_refused(e),
        };
        return save_access(&req, &fields, &api_tokens, (&session, &actor), &client, (permissions, allowed)).await;
    }
    // Issuing a token with any permission is a privilege handed out; one
    // that replaces a token ends the old one: both ask first.
    if !crate::confirmation::given(&fields) {
        let state = match api_tokens.state(&client).await {
            Ok(Some(state)) => state,
            Ok(None) => return not_found(),
            Err(e) => return html::failure_page(e),
        };
        let back = path_of(client.as_str());
        let replaced = match state.has_token {
            true => " O token atual deixa de valer na hora.",
            false => "",
        };
        let can = match permissions.is_empty() {
            true => "Nenhuma permissão foi marcada: o token não poderá fazer nada.".to_owned(),
            false => format!("Quem tiver o token poderá {} pela API.", what_they_do(permissions)),
        };
        let ask = crate::confirmation::Ask {
            question: format!("Emitir um token da API de usuários para {}?", state.name),
            consequence: format!("{can}{replaced} O token aparece uma única vez."),
            button: "Emitir token",
            back: &back,
            frame: Frame::admin(SECTION),
        };
        return crate::confirmation::page(&req, &fields, ask);
    }
    let issued = match api_tokens.issue(&actor, &client, permissions).await {
        Ok(Some(issued)) => issued,
        Ok(None) => return not_found(),
        Err(e) => return html::failure_page(e),
    };
    token_page(&api_tokens, &client, Some(issued.expose_secret()), &session.account_form_token()).await
}

/// Saves `permissions` and the `client_credentials` choice of `client`
/// (asking first when the grant is turned on) and answers the page with
/// what was done: a notice, or 422 for a public client.
async fn save_access(
    req: &HttpRequest,
    fields: &FormFields,
    api_tokens: &ApiTokenService,
    (session, actor): (&LoginSession, &Actor),
    client: &ClientId,
    (permissions, allowed): (ApiPermissions, bool),
) -> HttpResponse {
    let state = match api_tokens.state(client).await {
        Ok(Some(state)) => state,
        Ok(None) => return not_found(),
        Err(e) => return html::failure_page(e),
    };
    // Letting an application act on its own behalf, or giving it a
    // permission it did not have (its static and its own tokens share
    // them), is a privilege handed out: asked first. A public client asking
    // for the grant is refused below without asking.
    let turns_on = allowed && !state.client_credentials && state.confidential;
    let widens = permissions.iter().any(|p| !state.permissions.contains(p)) && (!allowed || state.confidential);
    if (turns_on || widens) && !crate::confirmation::given(fields) {
        let back = path_of(client.as_str());
        let listed = what_they_do(permissions);
        let (question, button) = match turns_on {
            true => (format!("Permitir que {} obtenha tokens próprios (client_credentials)?", state.name), "Permitir"),
            false => (format!("Ampliar as permissões de {} na API?", state.name), "Ampliar"),
        };
        let consequence = match (turns_on, permissions.is_empty()) {
            (true, true) => "Nenhuma permissão foi marcada: os tokens não poderão fazer nada.".to_owned(),
            (true, false) => format!("Com o próprio segredo, ela poderá {listed} pela API."),
            (false, _) => {
                format!("O token estático e os tokens próprios da aplicação passam a poder {listed} pela API.")
            }
        };
        let ask = crate::confirmation::Ask { question, consequence, button, back: &back, frame: Frame::admin(SECTION) };
        return crate::confirmation::page(req, fields, ask);
    }
    let csrf = session.account_form_token();
    let outcome = match api_tokens.set_access(actor, client, permissions, allowed).await {
        Ok(ApiAccessChange::Saved) => Outcome { saved: Some("Acesso à API salvo."), ..Outcome::default() },
        Ok(ApiAccessChange::UnknownClient) => return not_found(),
        Ok(ApiAccessChange::PublicClient) => Outcome {
            refusal: Some("Só uma aplicação confidencial (com segredo) pode obter tokens próprios."),
            ..Outcome::default()
        },
        Err(e) => return html::failure_page(e),
    };
    access_page(api_tokens, client, outcome, &csrf).await
}
