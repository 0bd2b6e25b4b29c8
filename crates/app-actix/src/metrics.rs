//! `GET /metrics` in the Prometheus text format, and the per-route HTTP
//! series the request middleware records.
//!
//! [`MetricsExporter`] owns the Prometheus recorder (`metrics-exporter-
//! prometheus`, no listener of its own) and the [`Metrics`] the use cases
//! count with. The endpoint is served on the main listener
//! ([`HttpSettings::metrics`](crate::HttpSettings::metrics) with
//! `metrics_route`) or on a listener of its own ([`metrics_server`]).
//! [`RouteTable`] keeps, per worker, the handles of each route template
//! and method the server has answered, so that recording a request looks
//! up a route template and bumps two atomics: no lock, and no allocation
//! once the route has been seen.

use std::cell::RefCell;
use std::collections::HashMap;
use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::Server;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, App, HttpResponse, HttpServer};
use credencial_application::metrics::{method_label, SharedRecorder};
use credencial_application::Metrics;
use credencial_ports::PoolStatus;
use metrics::{Counter, Histogram};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

use crate::routes::{self, not_found, resource};
use crate::telemetry::RequestLog;

/// Where the metrics are served.
pub const PATH: &str = "/metrics";

/// The Prometheus text format's content type.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The `route` label of a request that matched no route.
pub const UNMATCHED: &str = "unmatched";

/// Upper bounds (seconds) of the latency histograms' buckets: from 250 µs
/// (a `verify`) to 10 s (an upstream at its time-out).
pub const BUCKETS: [f64; 15] =
    [0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

/// How often [`MetricsExporter::run_upkeep`] should run when nobody
/// scrapes (it folds the histograms' samples, so memory stays bounded).
pub const UPKEEP_INTERVAL: Duration = Duration::from_secs(5);

/// The Prometheus recorder, its rendering handle, and the metrics recorded
/// into it. Cloning shares them.
#[derive(Clone)]
pub struct MetricsExporter {
    handle: PrometheusHandle,
    metrics: Metrics,
}

impl std::fmt::Debug for MetricsExporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsExporter").finish_non_exhaustive()
    }
}

impl MetricsExporter {
    /// A new recorder (not installed globally: each exporter counts on its
    /// own) with every series known in advance registered; `pool`, if
    /// given, is read at each scrape for the database pool's gauges.
    pub fn new(pool: Option<Arc<dyn PoolStatus>>) -> Self {
        // Only an empty list is refused, and BUCKETS is not empty (else:
        // summaries instead of histograms).
        let builder = PrometheusBuilder::new().set_buckets(&BUCKETS).unwrap_or_else(|_| PrometheusBuilder::new());
        let recorder = builder.build_recorder();
        let handle = recorder.handle();
        let recorder: SharedRecorder = Arc::new(recorder);
        Self { handle, metrics: Metrics::recording(recorder, pool) }
    }

    /// The metrics to hand to the use cases and the request middleware.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Every series now, in the Prometheus text format (the sampled gauges
    /// are read first).
    pub fn render(&self) -> String {
        self.metrics.sample();
        self.handle.render()
    }

    /// Folds the histograms' recent samples; run it every
    /// [`UPKEEP_INTERVAL`] (a scrape does it too).
    pub fn run_upkeep(&self) {
        self.handle.run_upkeep();
    }
}

/// `GET /metrics` → the Prometheus text format, never cached.
pub async fn scrape(exporter: web::Data<MetricsExporter>) -> HttpResponse {
    let body = exporter.render();
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE)))
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .body(body)
}

/// The `/metrics` resource (GET; other methods answer 405) on `exporter`.
pub fn resource_for(exporter: MetricsExporter) -> actix_web::Resource {
    resource(PATH, "GET").app_data(web::Data::new(exporter)).route(routes::get().to(scrape))
}

/// A server of its own for `/metrics` on `listener` (the `metrics_bind`
/// setting): every other path answers 404. Like the main server it does
/// not listen to signals; stop it through its handle, which gives a scrape
/// in flight `shutdown_timeout_secs` to finish.
pub fn metrics_server(
    listener: TcpListener,
    exporter: MetricsExporter,
    shutdown_timeout_secs: u64,
) -> std::io::Result<Server> {
    Ok(HttpServer::new(move || {
        App::new()
            .wrap(RequestLog::default())
            .service(resource_for(exporter.clone()))
            .default_service(web::to(not_found))
    })
    .listen(listener)?
    .workers(1)
    .disable_signals()
    .shutdown_timeout(shutdown_timeout_secs)
    .run())
}

/// The HTTP series of one worker: the handles of every route template and
/// method answered so far, registered on first use.
#[derive(Debug)]
pub struct RouteTable {
    metrics: Metrics,
    routes: RefCell<HashMap<Box<str>, RouteSeries>>,
}

/// The series of one route template.
#[derive(Debug)]
struct RouteSeries {
    /// The `route` label.
    label: Box<str>,
    methods: Vec<MethodSeries>,
}

/// The series of one route template and method.
#[derive(Debug)]
struct MethodSeries {
    method: &'static str,
    duration: Histogram,
    statuses: Vec<(u16, Counter)>,
}

impl RouteTable {
    /// An empty table recording into `metrics`.
    pub fn new(metrics: Metrics) -> Self {
        Self { metrics, routes: RefCell::new(HashMap::new()) }
    }

    /// Records one request to `pattern` (the matched route template;
    /// `None` when no route matched), with `method`, answered with
    /// `status` after `elapsed`.
    pub fn record(&self, pattern: Option<&str>, method: &str, status: u16, elapsed: Duration) {
        let method = method_label(method);
        let mut routes = self.routes.borrow_mut();
        let key = pattern.unwrap_or("");
        if let Some(route) = routes.get_mut(key) {
            route.record(&self.metrics, method, status, elapsed);
            return;
        }
        let mut route = RouteSeries { label: route_label(pattern).into(), methods: Vec::new() };
        route.record(&self.metrics, method, status, elapsed);
        routes.insert(key.into(), route);
    }
}

impl RouteSeries {
    /// Records one request with `method` answered with `status` after
    /// `elapsed`, registering the series it is the first of.
    fn record(&mut self, metrics: &Metrics, method: &'static str, status: u16, elapsed: Duration) {
        let at = match self.methods.iter().position(|m| m.method == method) {
            Some(at) => at,
            None => {
                let duration = metrics.http_duration(&self.label, method);
                self.methods.push(MethodSeries { method, duration, statuses: Vec::new() });
                self.methods.len() - 1
            }
        };
        let series = &mut self.methods[at];
        series.duration.record(elapsed.as_secs_f64());
        match series.statuses.iter().find(|(s, _)| *s == status) {
            Some((_, counter)) => counter.increment(1),
            None => {
                let counter = metrics.http_requests(&self.label, method, status);
                counter.increment(1);
                series.statuses.push((status, counter));
            }
        }
    }
}

/// The `route` label of a matched pattern: the template as documented,
/// with its trailing slash (every route answers with and without it), or
/// [`UNMATCHED`].
fn route_label(pattern: Option<&str>) -> String {
    match pattern {
        None | Some("") => UNMATCHED.to_owned(),
        Some(p) if p.ends_with('/') => p.to_owned(),
        Some(p) => format!("{p}/"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn route_labels_are_templates_with_their_trailing_slash() {
        assert_eq!(route_label(Some("/api/token/pair")), "/api/token/pair/");
        assert_eq!(route_label(Some("/admin/usuarios/{id}/")), "/admin/usuarios/{id}/");
        assert_eq!(route_label(Some("/")), "/");
        assert_eq!(route_label(None), UNMATCHED);
    }

    fn line<'a>(text: &'a str, starts: &str) -> Option<&'a str> {
        text.lines().find(|l| l.starts_with(starts))
    }

    #[test]
    fn the_table_counts_by_template_method_and_status_and_folds_unknown_methods() {
        let exporter = MetricsExporter::new(None);
        let table = RouteTable::new(exporter.metrics().clone());
        let ms = Duration::from_millis(1);
        table.record(Some("/api/token/pair"), "POST", 200, ms);
        table.record(Some("/api/token/pair"), "POST", 401, ms);
        table.record(Some("/api/token/pair"), "POST", 401, ms);
        table.record(Some("/api/token/pair"), "BREW", 405, ms);
        table.record(None, "GET", 404, ms);
        let text = exporter.render();
        let counter = |labels: &str| line(&text, &format!("credencial_http_requests_total{{{labels}}}"));
        assert_eq!(
            counter(r#"method="POST",route="/api/token/pair/",status="200""#).map(|l| l.ends_with(" 1")),
            Some(true)
        );
        assert_eq!(
            counter(r#"method="POST",route="/api/token/pair/",status="401""#).map(|l| l.ends_with(" 2")),
            Some(true)
        );
        assert!(counter(r#"method="other",route="/api/token/pair/",status="405""#).is_some(), "{text}");
        assert!(counter(r#"method="GET",route="unmatched",status="404""#).is_some(), "{text}");
        let count =
            line(&text, r#"credencial_http_request_duration_seconds_count{method="POST",route="/api/token/pair/"}"#);
        assert_eq!(count.map(|l| l.ends_with(" 3")), Some(true), "{text}");
    }

    #[actix_web::test]
    async fn the_endpoint_answers_the_text_format_never_cached() {
        let exporter = MetricsExporter::new(None);
        let app = actix_web::test::init_service(App::new().service(resource_for(exporter))).await;
        let r =
            actix_web::test::call_service(&app, actix_web::test::TestRequest::get().uri("/metrics").to_request()).await;
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers().get(header::CONTENT_TYPE).map(|v| v.as_bytes()), Some(CONTENT_TYPE.as_bytes()));
        assert_eq!(r.headers().get(header::CACHE_CONTROL).map(|v| v.as_bytes()), Some(&b"no-store"[..]));
        let body = actix_web::test::read_body(r).await;
        let text = std::str::from_utf8(&body).expect("UTF-8");
        assert!(text.contains("# TYPE credencial_logins_total counter"), "{text}");
        let r = actix_web::test::call_service(&app, actix_web::test::TestRequest::post().uri("/metrics").to_request())
            .await;
        assert_eq!(r.status(), 405);
    }
}
