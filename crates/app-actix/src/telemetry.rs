//! The request log and the request id, as one middleware ([`RequestLog`]):
//! every request gets an id (a UUID v4 the server generates; an incoming
//! `X-Request-Id` is ignored), set as the current request
//! ([`request_context`]) while the request's own work runs, so that whatever
//! is logged inside the request can name it; the `X-Request-Id` response
//! header; and one line when its answer is ready: method, route template
//! (never the path or the query string, which can carry authorization
//! codes, state or personal data), status, latency (in microseconds) and
//! request id. With metrics on, the same middleware records the request in
//! the HTTP series ([`RouteTable`]), from the same route template.

use std::future::{ready, Future, Ready};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use actix_web::dev::{Service, ServiceRequest, ServiceResponse, Transform};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::Error;
use credencial_application::request_context::{self, RequestId};
use credencial_application::Metrics;

use crate::metrics::RouteTable;

/// The target of the one line written when a request ends (INFO level), so
/// that a filter can keep or drop the request log on its own
/// (`RUST_LOG=info,credencial::request=warn` drops it).
pub const REQUEST_LOG_TARGET: &str = "credencial::request";

/// The message of the request line (the event below spells it as a
/// literal, which tracing records without formatting).
pub const REQUEST_LINE_MESSAGE: &str = "request finished";

/// The response header that carries the request id.
pub const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");

/// A new request id: a random UUID v4 from the thread's CSPRNG (no system
/// call per request), formatted once for the log lines, the response header
/// and the request line.
fn generate_request_id() -> RequestId {
    RequestId::from_uuid(uuid::Builder::from_random_bytes(rand::random()).into_uuid())
}

/// One finished request, as its request line reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestLine<'a> {
    /// The method.
    pub method: &'a str,
    /// The route template without its trailing slash, or `unmatched`.
    pub route: &'a str,
    /// The answer's status.
    pub status: u16,
    /// How long the answer took, in microseconds.
    pub latency_us: u64,
    /// The request id.
    pub request_id: &'a str,
}

/// Writes request lines itself, in the shape the service's log subscriber
/// gives the same event, instead of the event going through tracing's
/// dispatch and formatter: the request line is the one line of every
/// request, and that path cost several microseconds of a token check's
/// CPU (docs/performance.md). The filter still decides: the line is
/// written only where `credencial::request` is enabled at INFO.
pub trait RequestLineWriter: Send + Sync + std::fmt::Debug {
    /// Writes `line`.
    fn write(&self, line: &RequestLine<'_>);
}

/// Middleware: the request id, the current request, its `X-Request-Id`
/// header, the request line and (when `metrics` records) the HTTP series.
/// Wrap the whole application in it (outermost), so that every answer, the
/// other middlewares' included, gets the header and the line.
#[derive(Debug, Clone, Default)]
pub struct RequestLog {
    metrics: Metrics,
    lines: Option<Arc<dyn RequestLineWriter>>,
}

impl RequestLog {
    /// The middleware, recording every request in `metrics` too.
    pub fn with_metrics(metrics: Metrics) -> Self {
        Self { metrics, lines: None }
    }

    /// The same, with request lines written by `lines` (see
    /// [`RequestLineWriter`]) rather than as tracing events.
    pub fn writing_lines_with(mut self, lines: Option<Arc<dyn RequestLineWriter>>) -> Self {
        self.lines = lines;
        self
    }
}

impl<S, B> Transform<S, ServiceRequest> for RequestLog
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = Error> + 'static,
    S::Future: 'static,
    B: 'static,
{
    type Response = ServiceResponse<B>;
    type Error = Error;
    type Transform = RequestLogService<S>;
    type InitError = ();
    type Future = Ready<Result<Self::Transform, Self::InitError>>;

    fn new_transform(&self, service: S) -> Self::Future {
        // One table per worker (each builds its own application): no lock.
        let routes = self.metrics.is_enabled().then(|| Rc::new(RouteTable::new(self.metrics.clone())));
        ready(Ok(RequestLogService { service, routes, lines: self.lines.clone() }))
    }
}

/// The service [`RequestLog`] wraps around the application.
#[derive(Debug)]
pub struct RequestLogService<S> {
    service: S,
    /// The worker's HTTP series, when metrics are on.
    routes: Option<Rc<RouteTable>>,
    /// Who writes the request lines, when not tracing.
    lines: Option<Arc<dyn RequestLineWriter>>,
}

impl<S, B> Service<ServiceRequest> for RequestLogService<S>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = Error> + 'static,
    S::Future: 'static,
    B: 'static,
{
    type Response = ServiceResponse<B>;
    type Error = Error;
    type Future = Pin<Box<dyn Future<Output = Result<ServiceResponse<B>, Error>>>>;

    actix_web::dev::forward_ready!(service);

    fn call(&self, request: ServiceRequest) -> Self::Future {
        let started = Instant::now();
        let id = generate_request_id();
        // The current request while the request's own work runs (the inner
        // services' `call` and every poll of the answer), not while its body
        // is sent (nothing is logged there).
        let answer = request_context::sync_scope(Some(id), || self.service.call(request));
        let answer = request_context::scope(Some(id), answer);
        let routes = self.routes.clone();
        let lines = self.lines.clone();
        Box::pin(async move {
            // Handlers' and extractors' errors arrive as responses; an `Err`
            // here carries no request, and gets neither line nor header.
            let mut response = answer.await?;
            log_request(&response, started, id, routes.as_deref(), lines.as_deref());
            if let Ok(value) = HeaderValue::from_str(id.as_str()) {
                response.headers_mut().insert(REQUEST_ID_HEADER, value);
            }
            Ok(response)
        })
    }
}

/// Writes the request line of a finished request (at INFO, target
/// [`REQUEST_LOG_TARGET`]; through `lines` when given) and records it in
/// `routes`; nothing is looked up when the filter drops the line and
/// metrics are off.
fn log_request<B>(
    response: &ServiceResponse<B>,
    started: Instant,
    id: RequestId,
    routes: Option<&RouteTable>,
    lines: Option<&dyn RequestLineWriter>,
) {
    let log = tracing::enabled!(target: REQUEST_LOG_TARGET, tracing::Level::INFO);
    if !log && routes.is_none() {
        return;
    }
    let request = response.request();
    let elapsed = started.elapsed();
    // After routing the template is a lookup by the matched resource's
    // index; only a request that matched no route walks the routes.
    let route = request.match_pattern();
    if let Some(routes) = routes {
        routes.record(route.as_deref(), request.method().as_str(), response.status().as_u16(), elapsed);
    }
    if !log {
        return;
    }
    let latency_us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
    let line = RequestLine {
        method: request.method().as_str(),
        route: route.as_deref().map_or("unmatched", template_without_slash),
        status: response.status().as_u16(),
        latency_us,
        request_id: id.as_str(),
    };
    match lines {
        Some(lines) => lines.write(&line),
        None => trace_request_line(&line),
    }
}

/// The request line as a tracing event (target [`REQUEST_LOG_TARGET`],
/// INFO, message [`REQUEST_LINE_MESSAGE`]), for the subscriber to filter
/// and format. Every value a string or an integer: the formatters write
/// them as they are, without the formatting machinery.
pub fn trace_request_line(line: &RequestLine<'_>) {
    tracing::event!(
        target: REQUEST_LOG_TARGET,
        tracing::Level::INFO,
        http.method = line.method,
        http.route = line.route,
        http.status_code = u64::from(line.status),
        latency_us = line.latency_us,
        request_id = line.request_id,
        "request finished"
    );
}

/// A route template as the request line names it: without its trailing
/// slash (every route answers with and without it, and a hot route is two
/// resources, one per form: `routes::two_forms`), `/` for the root.
fn template_without_slash(template: &str) -> &str {
    match template.trim_end_matches('/') {
        "" => "/",
        bare => bare,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_line_names_a_template_without_its_trailing_slash() {
        assert_eq!(template_without_slash("/api/token/verify/"), "/api/token/verify");
        assert_eq!(template_without_slash("/api/token/verify"), "/api/token/verify");
        assert_eq!(template_without_slash("/admin/usuarios/{id}/"), "/admin/usuarios/{id}");
        assert_eq!(template_without_slash("/"), "/");
        assert_eq!(template_without_slash("//"), "/");
    }

    #[test]
    fn request_ids_are_random_uuid_v4s() {
        let [a, b] = [generate_request_id(), generate_request_id()];
        assert_ne!(a, b);
        let parsed = uuid::Uuid::parse_str(a.as_str()).expect("a UUID");
        assert_eq!(parsed.get_version_num(), 4);
        assert_eq!(parsed.hyphenated().to_string(), a.as_str());
    }
}
