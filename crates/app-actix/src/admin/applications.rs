//! The registered applications (`/admin/aplicativos/`): the list, the
//! registration form, and each application's page with its forms — name
//! and exact redirect URIs, the eight scopes, PKCE, the second factor and
//! the minimum gov.br level required of its users, a new secret,
//! deactivation and reactivation. Every form calls
//! [`ClientAdminService`] (the CLI's `credencial client …` does too), which
//! records the change in the audit trail.
//!
//! A secret (after a registration or a rotation) is shown once on the
//! answer to the POST (`no-store`, never in a URL); every other change
//! answers 303 to the application's page, which announces it. A refused
//! form is its page again (422) with the field's message and what was
//! typed, and nothing changed.

// A page's early answer is the `Err` of the helpers: one per request.
#![allow(clippy::result_large_err)]

pub mod pages;

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, Resource};
use credencial_application::admin::{ClientChanges, CreateOutcome, NewClient};
use credencial_application::{ClientAdminService, ServiceError, StaffService};
use credencial_domain::admin::{Actor, BackchannelLogoutUri, ClientName, PostLogoutRedirectUris, RedirectUris};
use credencial_domain::federation::ReliabilityLevel;
use credencial_domain::oauth::ClientId;
use credencial_domain::{Scope, ScopeSet};
use credencial_ports::OAuthClient;
use secrecy::{ExposeSecret, SecretString};

use self::pages::{
    level_options, scope_boxes, ClientView, DetailPage, ListPage, NewForm, NewPage, SecretPage, NO_LEVEL,
};
use super::{refused, staff_post, staff_signed_in};
use crate::account::{form_refused, see_other, text_fields};
use crate::confirmation::Words;
use crate::form::FormFields;
use crate::html::Frame;
use crate::html::{self, ErrorPage, PROVIDER};
use crate::routes::{self, resource};

/// The list's path.
pub const LIST_PATH: &str = "/admin/aplicativos/";
/// The registration form's path.
pub const NEW_PATH: &str = "/admin/aplicativos/novo/";

/// The forms of an application's page: path segment and the change it makes.
const ACTIONS: [(&str, Action); 7] = [
    ("dados", Action::Details),
    ("escopos", Action::Scopes),
    ("pkce", Action::Pkce),
    ("segundo-fator", Action::SecondFactor),
    ("nivel-govbr", Action::Level),
    ("segredo", Action::RotateSecret),
    ("ativacao", Action::Activation),
];

/// What a form of an application's page changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Details,
    Scopes,
    Pkce,
    SecondFactor,
    Level,
    RotateSecret,
    Activation,
}

const CHECK_FIELDS: &str = "Nada foi alterado. Confira os campos indicados no formulário.";
const ID_TAKEN: &str = "Já existe uma aplicação com este identificador.";
const BAD_CLIENT_ID: &str =
    "Use de 1 a 100 caracteres entre letras sem acento, números, hífen, ponto, sublinhado e til.";

/// Registers the pages; `with_data` gives them the panel's application data.
pub fn register(config: &mut AppService, with_data: impl Fn(Resource) -> Resource) {
    with_data(resource(LIST_PATH, "GET")).route(routes::get().to(list)).register(config);
    // Before `{client_id}/`: "novo" is the form, not an application.
    with_data(resource(NEW_PATH, "GET, POST"))
        .route(routes::get().to(new_form))
        .route(web::post().to(create))
        .register(config);
    with_data(resource("/admin/aplicativos/{client_id}/", "GET")).route(routes::get().to(detail)).register(config);
    for (segment, action) in ACTIONS {
        with_data(resource(&format!("/admin/aplicativos/{{client_id}}/{segment}/"), "POST"))
            .app_data(web::Data::new(action))
            .route(web::post().to(act))
            .register(config);
    }
}

/// The path of `client`'s page.
pub fn detail_path(client: &ClientId) -> String {
    format!("{LIST_PATH}{client}/")
}

/// `GET /admin/aplicativos/`.
async fn list(
    req: HttpRequest,
    staff: web::Data<StaffService>,
    clients: web::Data<ClientAdminService>,
) -> HttpResponse {
    or_answer!(staff_signed_in(&req, &staff).await);
    let all = match clients.list().await {
        Ok(all) => all,
        Err(e) => return html::failure_page(e),
    };
    let page = ListPage {
        site: &PROVIDER,
        title: "Aplicativos",
        frame: Frame::admin(LIST_PATH),
        clients: all.iter().map(ClientView::of).collect(),
    };
    html::html(html::response(StatusCode::OK), &page)
}

/// `GET /admin/aplicativos/novo/`.
async fn new_form(req: HttpRequest, staff: web::Data<StaffService>) -> HttpResponse {
    let (session, _) = or_answer!(staff_signed_in(&req, &staff).await);
    let token = session.account_form_token();
    let page = new_page(&token, None, NewForm::default(), ScopeSet::empty());
    html::html(html::response(StatusCode::OK), &page)
}

fn new_page<'a>(csrf_token: &'a str, message: Option<&'a str>, form: NewForm, scopes: ScopeSet) -> NewPage<'a> {
    NewPage {
        site: &PROVIDER,
        title: "Nova aplicação",
        frame: Frame::admin(LIST_PATH),
        csrf_token,
        message,
        form,
        scopes: scope_boxes(scopes),
    }
}

/// The optional scopes checked in `fields` (`escopo_<name>`); the required
/// ones are always granted.
fn checked_scopes(fields: &FormFields) -> ScopeSet {
    Scope::ALL
        .into_iter()
        .filter(|s| !s.is_required() && fields.get(&format!("escopo_{}", s.name())).ok().flatten().is_some())
        .collect()
}

fn checked(fields: &FormFields, name: &str) -> bool {
    fields.get(name).ok().flatten().is_some_and(|v| !v.is_empty())
}

/// The minimum gov.br level chosen in `fields` (`minimum_govbr_level`:
/// `nenhum`, or a level's name); `None` when the form is not one the page
/// sends.
fn chosen_level(fields: &FormFields) -> Option<Option<ReliabilityLevel>> {
    match fields.get("minimum_govbr_level").ok().flatten()? {
        NO_LEVEL => Some(None),
        name => ReliabilityLevel::ALL.into_iter().find(|level| level.name() == name).map(Some),
    }
}

/// `POST /admin/aplicativos/novo/`: registers the application and shows
/// its secret once (a public one goes to its page).
async fn create(
    req: HttpRequest,
    payload: web::Payload,
    staff: web::Data<StaffService>,
    clients: web::Data<ClientAdminService>,
) -> HttpResponse {
    let (session, actor, fields) = or_answer!(staff_post(&req, payload, &staff).await);
    let [client_id, name, uris, kind] = match text_fields(&fields, ["client_id", "nome", "redirect_uris", "tipo"]) {
        Ok(values) => values,
        Err(e) => return form_refused(e),
    };
    let scopes = checked_scopes(&fields);
    let mut form = NewForm {
        client_id: client_id.trim().to_owned(),
        name: name.to_owned(),
        redirect_uris: uris.to_owned(),
        public: kind == "publica",
        require_pkce: checked(&fields, "require_pkce"),
        ..NewForm::default()
    };
    let id = ClientId::parse(&form.client_id).map_err(|_| BAD_CLIENT_ID.to_owned());
    let parsed_name = ClientName::parse(name).map_err(|e| e.message_pt());
    let parsed_uris = RedirectUris::parse_lines(uris, false).map_err(|e| e.message_pt());
    let token = session.account_form_token();
    let (id, parsed_name, parsed_uris) = match (id, parsed_name, parsed_uris) {
        (Ok(id), Ok(n), Ok(u)) => (id, n, u),
        (id, n, u) => {
            form.client_id_error = id.err();
            form.name_error = n.err();
            form.uris_error = u.err();
            let page = new_page(&token, Some(CHECK_FIELDS), form, scopes);
            return html::html(html::response(StatusCode::UNPROCESSABLE_ENTITY), &page);
        }
    };
    let new = NewClient {
        client_id: id,
        name: parsed_name,
        redirect_uris: parsed_uris,
        post_logout_redirect_uris: PostLogoutRedirectUris::none(),
        confidential: !form.public,
        require_pkce: form.require_pkce,
        minimum_govbr_level: None,
        scopes,
    };
    match clients.create(&actor, new).await {
        Ok(CreateOutcome::Created { client, secret: Some(secret) }) => {
            secret_page(&client, &secret, "Aplicação cadastrada", StatusCode::CREATED)
        }
        Ok(CreateOutcome::Created { client, secret: None }) => {
            see_other(&format!("{}?aviso=criada", detail_path(&client.client_id)))
        }
        Ok(CreateOutcome::IdTaken) => {
            form.client_id_error = Some(ID_TAKEN.to_owned());
            let page = new_page(&token, Some(CHECK_FIELDS), form, scopes);
            html::html(html::response(StatusCode::CONFLICT), &page)
        }
        Err(e) => html::failure_page(e),
    }
}

/// The page that shows `secret` once, with `status`.
fn secret_page(client: &OAuthClient, secret: &SecretString, heading: &str, status: StatusCode) -> HttpResponse {
    let page = SecretPage {
        site: &PROVIDER,
        title: heading,
        frame: Frame::admin(LIST_PATH),
        heading,
        client: ClientView::of(client),
        secret: secret.expose_secret(),
    };
    html::html(html::response(status), &page)
}

/// The 404 page of an application that is not registered.
fn unknown_client() -> HttpResponse {
    let page = ErrorPage {
        site: &PROVIDER,
        title: "Aplicação não encontrada",
        reason: "Não há aplicação cadastrada com este identificador.",
        hint: "Nada foi alterado.",
        retry: Some(LIST_PATH),
    };
    html::html(html::response(StatusCode::NOT_FOUND), &page)
}

/// The `{client_id}` of the path, if it is a valid one; else the 404 page.
fn path_client(req: &HttpRequest) -> Result<ClientId, HttpResponse> {
    req.match_info().get("client_id").and_then(|id| ClientId::parse(id).ok()).ok_or_else(unknown_client)
}

/// The announcement of the `aviso` in the query.
fn notice(req: &HttpRequest) -> Option<&'static str> {
    let query = FormFields::parse(req.query_string().as_bytes()).ok()?;
    Some(match query.get("aviso").ok().flatten()? {
        "criada" => "Aplicação cadastrada.",
        "dados" => "Nome e endereços de retorno salvos.",
        "escopos" => "Escopos salvos. Eles valem a partir da próxima leitura de perfil da aplicação.",
        "pkce" => "Exigência de PKCE salva.",
        "segundo-fator" => "Exigência de segundo fator salva. Ela vale a partir da próxima autorização.",
        "nivel-govbr" => "Nível mínimo da conta gov.br salvo. Ele vale a partir da próxima autorização.",
        "desativada" => {
            "Aplicação desativada: ela não consegue mais autorizar, trocar códigos, renovar tokens nem ler perfis."
        }
        "reativada" => "Aplicação reativada.",
        _ => return None,
    })
}

/// `GET /admin/aplicativos/{client_id}/`.
async fn detail(
    req: HttpRequest,
    staff: web::Data<StaffService>,
    clients: web::Data<ClientAdminService>,
) -> HttpResponse {
    let (session, _) = or_answer!(staff_signed_in(&req, &staff).await);
    let id = or_answer!(path_client(&req));
    let client = match clients.find(&id).await {
        Ok(Some(client)) => client,
        Ok(None) => return unknown_client(),
        Err(e) => return html::failure_page(e),
    };
    let token = session.account_form_token();
    let page = detail_page(&req, &token, notice(&req), None, &client);
    html::html(html::response(StatusCode::OK), &page)
}

fn detail_page<'a>(
    req: &HttpRequest,
    csrf_token: &'a str,
    notice: Option<&'a str>,
    message: Option<&'a str>,
    client: &OAuthClient,
) -> DetailPage<'a> {
    DetailPage {
        site: &PROVIDER,
        title: "Aplicação",
        frame: Frame::admin(LIST_PATH),
        csrf_token,
        notice,
        message,
        client: ClientView::of(client),
        name: client.name.clone(),
        redirect_uris: client.redirect_uris.join("\n"),
        post_logout_redirect_uris: client.post_logout_redirect_uris.join("\n"),
        backchannel_logout_uri: client.backchannel_logout_uri.clone().unwrap_or_default(),
        name_error: None,
        uris_error: None,
        post_logout_error: None,
        backchannel_error: None,
        scopes: scope_boxes(client.enabled_scopes),
        levels: level_options(client.minimum_govbr_level),
        govbr_offered: crate::account::federation::offers_govbr(req),
    }
}

/// `POST /admin/aplicativos/{client_id}/{dados,escopos,pkce,segundo-fator,nivel-govbr,segredo,ativacao}/`.
async fn act(
    req: HttpRequest,
    payload: web::Payload,
    action: web::Data<Action>,
    staff: web::Data<StaffService>,
    clients: web::Data<ClientAdminService>,
) -> HttpResponse {
    let (session, actor, fields) = or_answer!(staff_post(&req, payload, &staff).await);
    let id = or_answer!(path_client(&req));
    let (changes, done) = match **action {
        Action::Details => match details_changes(&fields) {
            Ok(changes) => (changes, "dados"),
            Err(Refusal::Form(answer)) => return answer,
            Err(Refusal::Fields(typed)) => {
                let client = match clients.find(&id).await {
                    Ok(Some(client)) => client,
                    Ok(None) => return unknown_client(),
                    Err(e) => return html::failure_page(e),
                };
                let token = session.account_form_token();
                let mut page = detail_page(&req, &token, None, Some(CHECK_FIELDS), &client);
                let DetailsTyped { name, uris, post_logout, backchannel, errors } = *typed;
                (page.name, page.redirect_uris, page.post_logout_redirect_uris) = (name, uris, post_logout);
                page.backchannel_logout_uri = backchannel;
                [page.name_error, page.uris_error, page.post_logout_error, page.backchannel_error] = errors;
                return html::html(html::response(StatusCode::UNPROCESSABLE_ENTITY), &page);
            }
        },
        Action::Scopes => (ClientChanges { scopes: Some(checked_scopes(&fields)), ..Default::default() }, "escopos"),
        Action::Pkce => {
            let pkce = checked(&fields, "require_pkce");
            (ClientChanges { require_pkce: Some(pkce), ..Default::default() }, "pkce")
        }
        Action::SecondFactor => {
            let required = checked(&fields, "requires_second_factor");
            (ClientChanges { requires_second_factor: Some(required), ..Default::default() }, "segundo-fator")
        }
        Action::Level => match chosen_level(&fields) {
            Some(level) => (ClientChanges { minimum_govbr_level: Some(level), ..Default::default() }, "nivel-govbr"),
            None => return refused(StatusCode::BAD_REQUEST, "O formulário enviado é inválido."),
        },
        Action::RotateSecret => (ClientChanges { rotate_secret: true, ..Default::default() }, ""),
        Action::Activation => match fields.get("ativo").ok().flatten() {
            Some("1") => (ClientChanges { active: Some(true), ..Default::default() }, "reativada"),
            Some("0") => (ClientChanges { active: Some(false), ..Default::default() }, "desativada"),
            _ => return refused(StatusCode::BAD_REQUEST, "O formulário enviado é inválido."),
        },
    };
    // A new secret and a change of status ask first.
    let asked = match (changes.rotate_secret, changes.active) {
        (true, _) => Some(Words {
            question: "Gerar um novo segredo para {}?",
            consequence: "O segredo atual deixa de valer na hora: a aplicação não consegue mais trocar códigos nem \
                          renovar tokens até ser configurada com o novo, que aparece uma única vez.",
            button: "Gerar novo segredo",
        }),
        (_, Some(false)) => Some(Words {
            question: "Desativar a aplicação {}?",
            consequence: "Novas autorizações, trocas de código, renovações e leituras de perfil com tokens já \
                          emitidos passam a ser recusadas na hora. Nada é apagado: reativar devolve tudo como estava.",
            button: "Desativar aplicação",
        }),
        (_, Some(true)) => Some(Words {
            question: "Reativar a aplicação {}?",
            consequence: "A aplicação volta a pedir autorizações e a ler perfis com os tokens que já tem.",
            button: "Reativar aplicação",
        }),
        _ => None,
    };
    if let (Some(asked), false) = (asked, crate::confirmation::given(&fields)) {
        let client = match clients.find(&id).await {
            Ok(Some(client)) => client,
            Ok(None) => return unknown_client(),
            Err(e) => return html::failure_page(e),
        };
        if changes.rotate_secret && !client.confidential {
            // Nothing to confirm: a public client has no secret (refused at once).
            return apply(&clients, &actor, &id, changes, done).await;
        }
        let back = detail_path(&id);
        return crate::confirmation::page(&req, &fields, asked.about(&client.name, &back, Frame::admin(LIST_PATH)));
    }
    apply(&clients, &actor, &id, changes, done).await
}

/// Runs `changes` and answers: the secret page after a rotation, else 303
/// to the application's page announcing `done`.
async fn apply(
    clients: &ClientAdminService,
    actor: &Actor,
    id: &ClientId,
    changes: ClientChanges,
    done: &str,
) -> HttpResponse {
    match clients.change(actor, id, changes).await {
        Ok(Some(changed)) => match changed.secret {
            Some(secret) => secret_page(&changed.client, &secret, "Novo segredo gerado", StatusCode::OK),
            None => see_other(&format!("{}?aviso={done}", detail_path(id))),
        },
        Ok(None) => unknown_client(),
        Err(ServiceError::Invalid(_)) => {
            refused(StatusCode::BAD_REQUEST, "Esta aplicação é pública: ela não tem segredo para trocar.")
        }
        Err(e) => html::failure_page(e),
    }
}

/// Why the details form was refused.
enum Refusal {
    /// Unreadable: the page to answer.
    Form(HttpResponse),
    /// A field is wrong: what was typed and the fields' messages.
    Fields(Box<DetailsTyped>),
}

/// The details form's back-channel logout URI field.
const BACKCHANNEL_FIELD: &str = "backchannel_logout_uri";

/// What was typed in the details form, and each field's message (name,
/// redirect URIs, post-logout URIs, back-channel logout URI).
struct DetailsTyped {
    name: String,
    uris: String,
    post_logout: String,
    backchannel: String,
    errors: [Option<String>; 4],
}

/// The name, redirect URIs, post-logout redirect URIs and back-channel
/// logout URI of the details form, validated together (the post-logout
/// list and the back-channel URI may be empty; a form without the
/// back-channel field leaves it as it is).
fn details_changes(fields: &FormFields) -> Result<ClientChanges, Refusal> {
    let [name, uris, post_logout] = text_fields(fields, ["nome", "redirect_uris", "post_logout_redirect_uris"])
        .map_err(|e| Refusal::Form(form_refused(e)))?;
    // Sent empty: removed; not sent at all: left as it is.
    let backchannel = match fields.get(BACKCHANNEL_FIELD).map_err(|e| Refusal::Form(form_refused(e)))? {
        None if fields.pairs().any(|(key, _)| key == BACKCHANNEL_FIELD) => Some(""),
        sent => sent,
    };
    let parsed = (
        ClientName::parse(name),
        RedirectUris::parse_lines(uris, false),
        PostLogoutRedirectUris::parse_lines(post_logout, false),
        backchannel
            .map(|raw| match raw.trim() {
                "" => Ok(None),
                uri => BackchannelLogoutUri::parse(uri, false).map(Some),
            })
            .transpose(),
    );
    match parsed {
        (Ok(name), Ok(uris), Ok(post_logout), Ok(backchannel)) => Ok(ClientChanges {
            name: Some(name),
            redirect_uris: Some(uris),
            post_logout_redirect_uris: Some(post_logout),
            backchannel_logout_uri: backchannel,
            ..Default::default()
        }),
        (n, u, p, b) => Err(Refusal::Fields(Box::new(DetailsTyped {
            name: name.to_owned(),
            uris: uris.to_owned(),
            post_logout: post_logout.to_owned(),
            backchannel: backchannel.unwrap_or_default().to_owned(),
            errors: [
                n.err().map(|e| e.message_pt()),
                u.err().map(|e| e.message_pt()),
                p.err().map(|e| e.message_pt()),
                b.err().map(|e| e.message_pt()),
            ],
        }))),
    }
}
