//! The outbox as staff see it (`/admin/emails/`): how many mails wait,
//! and the ones the sender gave up on, newest first, 50 a page by key
//! (`?antes=<id>`), each with its last error and a "Tentar de novo" button
//! (`POST /admin/emails/{id}/tentar/`, audited before it is done).

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, Resource};
use askama::Template;
use credencial_application::admin::audit_entry;
use credencial_application::{MailSender, StaffService};
use credencial_domain::admin::{AuditAction, AuditTarget};

use super::{filter_query, staff_post, staff_signed_in};
use crate::html::{self, brasilia_time, Frame, Site, PROVIDER};
use crate::routes::{self, resource};
use crate::session::see_other;

/// The page's path.
pub const MAIL_PATH: &str = "/admin/emails/";
/// How many failed mails a page lists.
const PAGE_SIZE: u32 = 50;

/// Registers the page; `with_data` gives it the panel's application data.
pub fn register(config: &mut AppService, with_data: impl Fn(Resource) -> Resource) {
    with_data(resource(MAIL_PATH, "GET")).route(routes::get().to(outbox)).register(config);
    with_data(resource(&format!("{MAIL_PATH}{{id}}/tentar/"), "POST")).route(web::post().to(retry)).register(config);
}

struct Row {
    id: i64,
    created: String,
    failed: String,
    to: String,
    kind: &'static str,
    attempts: u32,
    error: String,
    action: String,
}

#[derive(Template)]
#[template(path = "admin/emails.html")]
struct OutboxPage<'a> {
    site: &'static Site,
    title: &'a str,
    frame: Frame,
    notice: Option<&'a str>,
    enabled: bool,
    waiting: u64,
    rows: Vec<Row>,
    paged: bool,
    next: Option<i64>,
    csrf_token: String,
}

/// `GET /admin/emails/`.
async fn outbox(req: HttpRequest, staff: web::Data<StaffService>) -> HttpResponse {
    let (session, _) = or_answer!(staff_signed_in(&req, &staff).await);
    let query = or_answer!(filter_query(&req));
    let before = query.get("antes").ok().flatten().and_then(|v| v.parse::<i64>().ok());
    let notice = (query.get("posta").ok().flatten() == Some("1")).then_some("A mensagem voltou para a fila de envio.");
    let mut page = OutboxPage {
        site: &PROVIDER,
        title: "E-mails",
        frame: Frame::admin(MAIL_PATH),
        notice,
        enabled: false,
        waiting: 0,
        rows: Vec::new(),
        paged: before.is_some(),
        next: None,
        csrf_token: session.account_form_token(),
    };
    if let Some(mail) = req.app_data::<web::Data<MailSender>>() {
        let (waiting, failed) = match (mail.waiting().await, mail.failed(before, PAGE_SIZE).await) {
            (Ok(waiting), Ok(failed)) => (waiting, failed),
            (Err(e), _) | (_, Err(e)) => return html::failure_page(e),
        };
        page.enabled = true;
        page.waiting = waiting;
        page.next = (failed.len() == PAGE_SIZE as usize).then(|| failed.last().map(|f| f.id)).flatten();
        page.rows = failed
            .into_iter()
            .map(|f| Row {
                id: f.id,
                created: brasilia_time(f.created_at),
                failed: brasilia_time(f.failed_at),
                to: f.to,
                kind: f.kind.label(),
                attempts: f.attempts,
                error: f.last_error,
                action: format!("{MAIL_PATH}{}/tentar/", f.id),
            })
            .collect();
    }
    html::html(html::response(StatusCode::OK), &page)
}

fn not_found() -> HttpResponse {
    crate::session::refused(StatusCode::NOT_FOUND, "Esta mensagem não existe ou não está entre as que falharam.")
}

/// `POST /admin/emails/{id}/tentar/`: back in the queue, audited first.
async fn retry(
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
    staff: web::Data<StaffService>,
) -> HttpResponse {
    let (_, actor, _) = or_answer!(staff_post(&req, payload, &staff).await);
    let Some(mail) = req.app_data::<web::Data<MailSender>>() else { return not_found() };
    let Ok(id) = path.parse::<i64>() else { return not_found() };
    let entry = audit_entry(&actor, AuditAction::MailRetry, AuditTarget::None).with("mensagem", id.to_string());
    if let Err(e) = staff.record(&entry).await {
        return html::failure_page(e);
    }
    match mail.retry(id).await {
        Ok(true) => see_other(&format!("{MAIL_PATH}?posta=1")),
        Ok(false) => not_found(),
        Err(e) => html::failure_page(e),
    }
}
