//! The pages anyone may open without logging in: the home page (`/`), the
//! privacy notice (`/privacidade/`) and the favicon.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;

use credencial_domain::admin::page::thousands;

use crate::html::{html, response, Site, PROVIDER};
use crate::routes::{self, resource};

/// The path of the home page.
pub const HOME_PATH: &str = "/";

/// The path of the privacy notice.
pub const PRIVACY_PATH: &str = "/privacidade/";

/// What the privacy notice says about how long data is kept (the
/// service's settings).
#[derive(Debug, Clone, Copy)]
pub struct PrivacyFacts {
    /// Days an entry of the access report is kept.
    pub access_log_days: u32,
    /// Days a sent mail is kept in the outbox.
    pub mail_days: i64,
    /// A session's inactivity limit, in seconds.
    pub session_idle_secs: i64,
    /// A session's absolute limit, in seconds.
    pub session_absolute_secs: i64,
}

impl Default for PrivacyFacts {
    fn default() -> Self {
        Self {
            access_log_days: credencial_domain::account::DEFAULT_ACCESS_LOG_RETENTION_DAYS,
            mail_days: credencial_application::mail::DEFAULT_MAIL_RETENTION_DAYS,
            session_idle_secs: credencial_domain::session::DEFAULT_IDLE_SECS,
            session_absolute_secs: credencial_domain::session::DEFAULT_ABSOLUTE_SECS,
        }
    }
}

#[derive(Template)]
#[template(path = "public/home.html")]
struct Home {
    site: &'static Site,
    title: &'static str,
    signup: bool,
}

#[derive(Template)]
#[template(path = "public/privacy.html")]
struct Privacy {
    site: &'static Site,
    title: &'static str,
    access_log_days: String,
    mail_days: String,
    idle_minutes: i64,
    absolute_hours: i64,
}

/// The favicon: the service's mark (a white "c" on the header bar's blue),
/// an SVG, which browsers also take at `/favicon.ico`.
const FAVICON: &str = include_str!("../templates/public/favicon.svg");

/// The resources: the home page (which offers "Criar uma conta" when
/// sign-up is open), the privacy notice with `facts`, the favicon.
pub fn resources(facts: PrivacyFacts) -> impl actix_web::dev::HttpServiceFactory {
    let home = |req: HttpRequest| async move {
        let signup = crate::account::signup::offered(&req);
        html(response(StatusCode::OK), &Home { site: &PROVIDER, title: "Início", signup })
    };
    let privacy = move || async move {
        html(
            response(StatusCode::OK),
            &Privacy {
                site: &PROVIDER,
                title: "Aviso de privacidade",
                access_log_days: thousands(u64::from(facts.access_log_days)),
                mail_days: thousands(u64::try_from(facts.mail_days).unwrap_or(0)),
                idle_minutes: facts.session_idle_secs / 60,
                absolute_hours: facts.session_absolute_secs / 3600,
            },
        )
    };
    (
        resource(HOME_PATH, "GET").route(routes::get().to(home)),
        resource(PRIVACY_PATH, "GET").route(routes::get().to(privacy)),
        resource("/favicon.ico", "GET").route(routes::get().to(favicon)),
        resource("/favicon.svg", "GET").route(routes::get().to(favicon)),
    )
}

/// The favicon, cached for a day.
async fn favicon() -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, HeaderValue::from_static("image/svg+xml")))
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=86400")))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")))
        .body(FAVICON)
}
