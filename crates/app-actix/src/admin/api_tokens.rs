//! An application's token for the user-management API
//! (`/admin/aplicativos/{client_id}/api/`): which permissions it has and
//! whether a token was issued; a POST issues a new token with the checked
//! permissions (replacing the old one at once) and shows it once, on the
//! answer itself (never in a URL, never again).

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, Resource};
use askama::Template;
use credencial_application::{ApiTokenService, StaffService};
use credencial_domain::admin::{ApiPermission, ApiPermissions};
use credencial_domain::oauth::ClientId;
use secrecy::ExposeSecret;

use super::{refused, staff_post, staff_signed_in};
use crate::account::form_refused;
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
    let state = match api_tokens.state(client).await {
        Ok(Some(state)) => state,
        Ok(None) => return not_found(),
        Err(e) => return html::failure_page(e),
    };
    let page = ApiTokenPage {
        site: &PROVIDER,
        title: "Token da API de usuários",
        frame: Frame::admin(SECTION),
        client_id: client.as_str(),
        name: &state.name,
        permissions: boxes(state.permissions),
        has_token: state.has_token || issued.is_some(),
        issued,
        action: path_of(client.as_str()),
        csrf_token,
    };
    html::html(html::response(StatusCode::OK), &page)
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

/// `POST /admin/aplicativos/{client_id}/api/`: a new token with the
/// checked permissions, shown once.
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
        let granted: Vec<String> = permissions.iter().map(|p| p.label().to_lowercase()).collect();
        let can = match granted.is_empty() {
            true => "Nenhuma permissão foi marcada: o token não poderá fazer nada.".to_owned(),
            false => format!("Quem tiver o token poderá {} pela API.", crate::html::listed(&granted)),
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
