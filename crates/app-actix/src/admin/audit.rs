//! The audit trail (`/admin/auditoria/`): every administrative change,
//! newest first, 50 a page, filterable by actor and by target
//! (`?ator=…&alvo=…&pagina=N`, names matched exactly, ignoring case).

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, Resource};
use askama::Template;
use credencial_application::StaffService;
use credencial_domain::admin::AuditFilter;

use super::{filter_query, staff_signed_in};
use crate::html::Frame;
use crate::html::{self, Site, PROVIDER};
use crate::routes::{self, resource};

/// The audit trail's path.
pub const AUDIT_PATH: &str = "/admin/auditoria/";

/// Longest filter value kept (longer ones cannot match a stored name).
const MAX_FILTER_CHARS: usize = 200;

/// Registers the page; `with_data` gives it the panel's application data.
pub fn register(config: &mut AppService, with_data: impl Fn(Resource) -> Resource) {
    with_data(resource(AUDIT_PATH, "GET")).route(routes::get().to(trail)).register(config);
}

/// One entry as the page shows it.
#[derive(Debug)]
pub struct Row {
    /// When, in Brasília time.
    pub at: String,
    /// The actor's kind, in Portuguese.
    pub actor_kind: String,
    /// The actor's name.
    pub actor: String,
    /// What was done.
    pub action: String,
    /// To what (`—` for nothing in particular).
    pub target: String,
    /// The changed fields and their new values.
    pub changes: Vec<(String, String)>,
    /// The request id, if the change came over HTTP.
    pub request_id: String,
}

/// The audit page (`templates/admin/audit.html`).
#[derive(Debug, Template)]
#[template(path = "admin/audit.html")]
pub struct AuditPageView<'a> {
    /// Who the page speaks for.
    pub site: &'static Site,
    /// The page title.
    pub title: &'a str,
    /// The panel frame.
    pub frame: Frame,
    /// The actor filter, as typed.
    pub actor: &'a str,
    /// The target filter, as typed.
    pub target: &'a str,
    /// The entries of this page.
    pub rows: Vec<Row>,
    /// This page's number.
    pub page: u64,
    /// How many pages.
    pub pages: u64,
    /// How many entries the filter selects.
    pub total: u64,
    /// The query string of the filter, for the pager's links.
    pub filter_query: String,
}

/// `GET /admin/auditoria/`.
async fn trail(req: HttpRequest, staff: web::Data<StaffService>) -> HttpResponse {
    or_answer!(staff_signed_in(&req, &staff).await);
    let query = or_answer!(filter_query(&req));
    let value = |name| {
        let v: &str = query.get(name).ok().flatten().unwrap_or("").trim();
        v.chars().take(MAX_FILTER_CHARS).collect::<String>()
    };
    let (actor, target) = (value("ator"), value("alvo"));
    let page = value("pagina").parse::<u32>().unwrap_or(1);
    let filter = AuditFilter {
        actor: (!actor.is_empty()).then(|| actor.clone()),
        target: (!target.is_empty()).then(|| target.clone()),
    };
    let listed = match staff.trail(&filter, page).await {
        Ok(listed) => listed,
        Err(e) => return html::failure_page(e),
    };
    let rows = listed
        .entries
        .iter()
        .map(|e| Row {
            at: html::brasilia_time(e.at),
            actor_kind: e.actor_kind_label().to_owned(),
            actor: e.actor.clone(),
            action: e.action_label().to_owned(),
            target: if e.target.is_empty() { "—".to_owned() } else { e.target.clone() },
            changes: e.changes.clone(),
            request_id: e.request_id.clone().unwrap_or_default(),
        })
        .collect();
    let filter_query =
        serde_urlencoded::to_string([("ator", actor.as_str()), ("alvo", target.as_str())]).unwrap_or_default();
    let view = AuditPageView {
        site: &PROVIDER,
        title: "Auditoria",
        frame: Frame::admin(AUDIT_PATH),
        actor: &actor,
        target: &target,
        rows,
        page: u64::from(listed.page),
        pages: listed.pages,
        total: listed.total,
        filter_query,
    };
    html::html(html::response(StatusCode::OK), &view)
}
