//! The audit trail (`/admin/auditoria/`): every administrative change,
//! newest first, 50 a page, filterable by actor and by target
//! (`?ator=…&alvo=…`, names matched exactly, ignoring case), paged by key
//! (`&antes=<id>`: the entries older than that one).

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
    /// How many entries the filter selects ("1.234 registros", "mais de
    /// 1.000 registros").
    pub tally: String,
    /// Whether this page continues the list (it is not the newest).
    pub continued: bool,
    /// The query string of the filter, for the first page's link.
    pub filter_query: String,
    /// The query string of the next (older) page, if there is one.
    pub next_query: Option<String>,
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
    // Junk in `antes` shows the newest page, never an error.
    let before = value("antes").parse::<i64>().ok();
    let filter = AuditFilter {
        actor: (!actor.is_empty()).then(|| actor.clone()),
        target: (!target.is_empty()).then(|| target.clone()),
    };
    let listed = match staff.trail(&filter, before).await {
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
            changes: e.change_labels().into_iter().map(|(f, v)| (f.to_owned(), v.to_owned())).collect(),
            request_id: e.request_id.clone().unwrap_or_default(),
        })
        .collect();
    let pair = [("ator", actor.as_str()), ("alvo", target.as_str())];
    let filter_query = serde_urlencoded::to_string(pair).unwrap_or_default();
    let next_query = listed.next.map(|id| {
        let id = id.to_string();
        serde_urlencoded::to_string([pair[0], pair[1], ("antes", id.as_str())]).unwrap_or_default()
    });
    let view = AuditPageView {
        site: &PROVIDER,
        title: "Auditoria",
        frame: Frame::admin(AUDIT_PATH),
        actor: &actor,
        target: &target,
        rows,
        tally: listed.tally.describe("registro", "registros"),
        continued: before.is_some(),
        filter_query,
        next_query,
    };
    html::html(html::response(StatusCode::OK), &view)
}
