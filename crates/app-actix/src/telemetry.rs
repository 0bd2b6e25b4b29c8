//! The request log and the request id, as one middleware ([`RequestLog`]):
//! every request gets an id (a UUID v4 the server generates; an incoming
//! `X-Request-Id` is ignored), a span that carries only that id (so that
//! whatever is logged inside the request can name it), the `X-Request-Id`
//! response header, and one line when its answer is ready: method, route
//! template (never the path or the query string, which can carry
//! authorization codes, state or personal data), status, latency (in
//! microseconds) and request id.

use std::future::{ready, Future, Ready};
use std::pin::Pin;
use std::time::Instant;

use actix_web::dev::{Service, ServiceRequest, ServiceResponse, Transform};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::{Error, HttpMessage};
use uuid::Uuid;

/// The target of the request spans (INFO level). A log filter must enable
/// it for the request id to reach the lines written inside a request; the
/// binary's subscriber always does, and never formats the spans themselves.
pub const REQUEST_SPAN_TARGET: &str = module_path!();

/// The target of the one line written when a request ends (INFO level), so
/// that a filter can keep or drop the request log on its own
/// (`RUST_LOG=info,credencial::request=warn` drops it).
pub const REQUEST_LOG_TARGET: &str = "credencial::request";

/// The response header that carries the request id.
pub const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");

/// A request id as text (a hyphenated UUID v4), formatted once per request
/// for the span, the response header and the request line; handlers read
/// it from the request's extensions (the profile read logs it).
#[derive(Debug, Clone, Copy)]
pub struct RequestIdText([u8; 36]);

impl RequestIdText {
    /// A new random id (the thread's CSPRNG: no system call per request).
    pub fn generate() -> Self {
        let id: Uuid = uuid::Builder::from_random_bytes(rand::random()).into_uuid();
        let mut text = [0; 36];
        id.hyphenated().encode_lower(&mut text);
        Self(text)
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// Middleware: the request id, its span, its `X-Request-Id` header and the
/// request line. Wrap the whole application in it (outermost), so that
/// every answer, the other middlewares' included, gets the header and the
/// line.
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestLog;

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
        ready(Ok(RequestLogService { service }))
    }
}

/// The service [`RequestLog`] wraps around the application.
#[derive(Debug)]
pub struct RequestLogService<S> {
    service: S,
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
        let id = RequestIdText::generate();
        request.extensions_mut().insert(id);
        // The id only: the span exists so that the lines written inside the
        // request carry it (the binary's subscriber keeps the id of the
        // entered request per thread); the request line holds the rest.
        let span = tracing::info_span!(target: REQUEST_SPAN_TARGET, "HTTP request", request_id = id.as_str());
        let answer = span.in_scope(|| self.service.call(request));
        Box::pin(async move {
            let mut answer = std::pin::pin!(answer);
            // Entered while the request's own work runs, not while its
            // body is sent (nothing is logged there).
            let outcome = std::future::poll_fn(|cx| span.in_scope(|| answer.as_mut().poll(cx))).await;
            // Handlers' and extractors' errors arrive as responses; an `Err`
            // here carries no request, and gets neither line nor header.
            let mut response = outcome?;
            log_request(&response, started, &id);
            if let Ok(value) = HeaderValue::from_str(id.as_str()) {
                response.headers_mut().insert(REQUEST_ID_HEADER, value);
            }
            Ok(response)
        })
    }
}

/// Writes the request line of a finished request (at INFO, target
/// [`REQUEST_LOG_TARGET`]); nothing is looked up when the filter drops it.
fn log_request<B>(response: &ServiceResponse<B>, started: Instant, id: &RequestIdText) {
    if !tracing::enabled!(target: REQUEST_LOG_TARGET, tracing::Level::INFO) {
        return;
    }
    let request = response.request();
    let latency_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    // After routing the template is a lookup by the matched resource's
    // index; only a request that matched no route walks the routes.
    let route = request.match_pattern();
    // Every value a string or an integer: the formatter writes them as they
    // are, without the formatting machinery.
    tracing::event!(
        target: REQUEST_LOG_TARGET,
        tracing::Level::INFO,
        http.method = request.method().as_str(),
        http.route = route.as_deref().unwrap_or("unmatched"),
        http.status_code = u64::from(response.status().as_u16()),
        latency_us = latency_us,
        request_id = id.as_str(),
        "request finished"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_are_random_uuid_v4s() {
        let [a, b] = [RequestIdText::generate(), RequestIdText::generate()];
        assert_ne!(a.as_str(), b.as_str());
        let parsed = Uuid::parse_str(a.as_str()).expect("a UUID");
        assert_eq!(parsed.get_version_num(), 4);
        assert_eq!(parsed.hyphenated().to_string(), a.as_str());
    }
}
