//! The authorized applications (`/conta/aplicativos/`: each client with its
//! scopes and dates, and *Revogar*) and the access report
//! (`/conta/acessos/`: every answered profile read, newest first, 50 a
//! page).
//!
//! Revoking posts `client_id` with the form token: 303 back to the list
//! with a notice; a client the person has not authorized is a 404 page
//! (nothing to revoke), a malformed id a 400 page.

// A page's early answer is the `Err` of the helpers (see the parent).
#![allow(clippy::result_large_err)]

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, Resource};
use askama::Template;
use credencial_application::GrantService;
use credencial_domain::account::AccessLogPage;
use credencial_domain::oauth::ClientId;
use credencial_domain::ScopeSet;

use super::{form_refused, refused, see_other, service_failure, signed_in, signed_post};
use crate::form::FormFields;
use crate::html::Frame;
use crate::html::{self, Site, PROVIDER};
use crate::routes::{self, resource};

/// The authorized applications' path.
pub const APPLICATIONS_PATH: &str = "/conta/aplicativos/";
/// The access report's path.
pub const ACCESSES_PATH: &str = "/conta/acessos/";

/// Registers both pages; `with_data` gives them the account's application
/// data (the grant service is the application's).
pub fn register(config: &mut AppService, with_data: impl Fn(Resource) -> Resource) {
    with_data(resource(APPLICATIONS_PATH, "GET, POST"))
        .route(routes::get().to(applications))
        .route(web::post().to(revoke))
        .register(config);
    with_data(resource(ACCESSES_PATH, "GET")).route(routes::get().to(accesses)).register(config);
}

/// One authorized application as the page shows it.
#[derive(Debug)]
pub struct AppView {
    /// The client's id (the revoke form's value).
    pub client_id: String,
    /// The client's name.
    pub name: String,
    /// What it may read, in plain words.
    pub scopes: Vec<&'static str>,
    /// When it was first authorized (Brasília time).
    pub first_granted: String,
    /// When it last used the authorization (Brasília time).
    pub last_used: String,
}

/// `templates/account/applications.html`.
#[derive(Debug, Template)]
#[template(path = "account/applications.html")]
pub struct ApplicationsPage<'a> {
    site: &'static Site,
    title: &'a str,
    frame: Frame,
    csrf_token: &'a str,
    apps: Vec<AppView>,
    revoked: bool,
}

/// One row of the access report as the page shows it.
#[derive(Debug)]
pub struct AccessView {
    /// When (Brasília time).
    pub at: String,
    /// The client's name.
    pub client: String,
    /// The scopes answered, in plain words.
    pub scopes: Vec<&'static str>,
    /// The request id (as in `X-Request-Id` and the service's log).
    pub request_id: String,
}

/// `templates/account/accesses.html`.
#[derive(Debug, Template)]
#[template(path = "account/accesses.html")]
pub struct AccessesPage<'a> {
    site: &'static Site,
    title: &'a str,
    frame: Frame,
    rows: Vec<AccessView>,
    page: u64,
    pages: u64,
    total: u64,
    retention: String,
}

fn described(scopes: ScopeSet) -> Vec<&'static str> {
    scopes.iter().map(|s| s.description()).collect()
}

/// `GET /conta/aplicativos/` (`?revogado=1` after a revocation).
async fn applications(req: HttpRequest, grants: web::Data<GrantService>) -> HttpResponse {
    let session = or_answer!(signed_in(&req).await);
    let list = match grants.authorized_applications(session.user_id).await {
        Ok(list) => list,
        Err(e) => return service_failure(&req, e),
    };
    let query = FormFields::parse(req.query_string().as_bytes()).unwrap_or_default();
    let token = session.account_form_token();
    let page = ApplicationsPage {
        site: &PROVIDER,
        title: "Aplicativos autorizados",
        frame: Frame::account(APPLICATIONS_PATH),
        csrf_token: &token,
        apps: list
            .into_iter()
            .map(|g| AppView {
                client_id: g.client_id.to_string(),
                name: g.client_name,
                scopes: described(g.scopes),
                first_granted: html::brasilia_time(g.first_granted_at),
                last_used: html::brasilia_time(g.last_used_at),
            })
            .collect(),
        revoked: query.get("revogado").ok().flatten() == Some("1"),
    };
    html::html(html::response(StatusCode::OK), &page)
}

/// `POST /conta/aplicativos/`: revokes the application `client_id`.
async fn revoke(req: HttpRequest, payload: web::Payload, grants: web::Data<GrantService>) -> HttpResponse {
    let (session, fields) = or_answer!(signed_post(&req, payload).await);
    let client = match fields.get("client_id") {
        Ok(Some(raw)) => match ClientId::parse(raw) {
            Ok(client) => client,
            Err(_) => return refused(StatusCode::BAD_REQUEST, "O aplicativo informado é inválido."),
        },
        Ok(None) => return refused(StatusCode::BAD_REQUEST, "Informe o aplicativo a revogar."),
        Err(e) => return form_refused(e),
    };
    if !crate::confirmation::given(&fields) {
        // The confirmation names the application (and a grant that is not
        // the person's is refused before it).
        let granted = match grants.authorized_applications(session.user_id).await {
            Ok(granted) => granted,
            Err(e) => return service_failure(&req, e),
        };
        let Some(app) = granted.into_iter().find(|g| g.client_id == client) else {
            return refused(StatusCode::NOT_FOUND, "Você não autorizou este aplicativo.");
        };
        let ask = crate::confirmation::Ask {
            question: format!("Revogar o acesso de {}?", app.client_name),
            consequence: format!(
                "O aplicativo {} deixa de ler os seus dados: os tokens que recebeu são revogados, e na próxima vez \
                 que você entrar por ele a sua autorização será pedida de novo.",
                app.client_name
            ),
            button: "Revogar",
            back: APPLICATIONS_PATH,
            frame: Frame::account(APPLICATIONS_PATH),
        };
        return crate::confirmation::page(&req, &fields, ask);
    }
    match grants.revoke(session.user_id, &client).await {
        Ok(true) => see_other(&format!("{APPLICATIONS_PATH}?revogado=1")),
        Ok(false) => refused(StatusCode::NOT_FOUND, "Você não autorizou este aplicativo."),
        Err(e) => service_failure(&req, e),
    }
}

/// `GET /conta/acessos/?pagina=N`.
async fn accesses(req: HttpRequest, grants: web::Data<GrantService>) -> HttpResponse {
    let session = or_answer!(signed_in(&req).await);
    let query = FormFields::parse(req.query_string().as_bytes()).unwrap_or_default();
    // Junk or a number past the end shows a page, never an error.
    let number = query.get("pagina").ok().flatten().and_then(|n| n.parse::<u32>().ok()).unwrap_or(1);
    let report = match grants.access_report(session.user_id, AccessLogPage::new(number)).await {
        Ok(report) => report,
        Err(e) => return service_failure(&req, e),
    };
    let page = AccessesPage {
        site: &PROVIDER,
        title: "Quem acessou meus dados",
        frame: Frame::account(ACCESSES_PATH),
        rows: report
            .entries
            .into_iter()
            .map(|row| AccessView {
                at: html::brasilia_time(row.at),
                client: row.client_name,
                scopes: described(row.scopes),
                request_id: row.request_id,
            })
            .collect(),
        page: u64::from(report.page.number()),
        pages: report.pages,
        total: report.total,
        retention: retention_text(grants.retention_days()),
    };
    html::html(html::response(StatusCode::OK), &page)
}

/// `1825` → "5 anos", `30` → "30 dias".
fn retention_text(days: u32) -> String {
    match days {
        365 => "1 ano".into(),
        d if d % 365 == 0 => format!("{} anos", d / 365),
        1 => "1 dia".into(),
        d => format!("{d} dias"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_reads_in_years_when_it_can() {
        assert_eq!(retention_text(1825), "5 anos");
        assert_eq!(retention_text(365), "1 ano");
        assert_eq!(retention_text(30), "30 dias");
        assert_eq!(retention_text(1), "1 dia");
    }

    #[test]
    fn the_report_escapes_client_names_and_pages_both_ways() {
        let page = AccessesPage {
            site: &PROVIDER,
            title: "t",
            frame: Frame::account(ACCESSES_PATH),
            rows: vec![AccessView {
                at: "01/02/2026 10:00".into(),
                client: "<b>App</b>".into(),
                scopes: vec!["Seu CPF"],
                request_id: "r-1".into(),
            }],
            page: 2,
            pages: 3,
            total: 120,
            retention: "5 anos".into(),
        }
        .render()
        .expect("renders");
        assert!(!page.contains("<b>App</b>") && page.contains("&#60;b&#62;App"), "{page}");
        assert!(page.contains("href=\"/conta/acessos/?pagina=1\" rel=\"prev\""), "{page}");
        assert!(page.contains("href=\"/conta/acessos/?pagina=3\" rel=\"next\""), "{page}");
        assert!(page.contains("Página 2 de 3 (120 leituras)"), "{page}");
    }
}
