//! Logging, initialised once per process: readable text, or JSON lines
//! (`SERVICE_LOG_FORMAT=json`) where every line written while a request is
//! handled carries `"request_id"` at the top level.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::sync::Arc;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::fmt::format::{FmtSpan, Writer};
use tracing_subscriber::fmt::{self, FmtContext, FormatEvent, FormatFields, MakeWriter};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer, Registry};

use credencial_app_actix::telemetry::REQUEST_SPAN_TARGET;

/// The span field that holds a request's id (set by the HTTP layer's root span).
pub const REQUEST_ID_FIELD: &str = "request_id";

/// The filter when `RUST_LOG` is not set.
const DEFAULT_FILTER: &str = "info,sqlx=warn,actix_server=warn";

/// Installs the global subscriber: `RUST_LOG` (default `info`) filters,
/// `json` picks JSON lines (for production), anything else readable text;
/// lines go to standard output.
pub fn init(format: &str) {
    let colours = std::io::IsTerminal::is_terminal(&std::io::stdout());
    // A second call (tests) keeps the first subscriber.
    drop(build(format, default_filter(), std::io::stdout, colours).try_init());
}

/// `RUST_LOG`, or the service's default filter.
pub fn default_filter() -> EnvFilter {
    EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER))
}

/// The subscriber the service logs with, writing to `sink` (tests capture
/// the lines with their own sink): `filter` chooses what is logged, `format`
/// how (`json` or text). One line per event, and one when a request ends
/// (its span closes: status, `time.busy`, `time.idle`) where `filter` lets
/// the request spans through (INFO for `credencial_app_actix::telemetry`).
/// In JSON, every line written inside a request carries its id, whatever
/// `filter` says (`RUST_LOG=warn` included). Text without colours.
pub fn subscriber<W>(format: &str, filter: EnvFilter, sink: W) -> impl Subscriber + Send + Sync
where
    W: for<'writer> MakeWriter<'writer> + Send + Sync + 'static,
{
    build(format, filter, sink, false)
}

/// [`subscriber`], with ANSI colours in text when `colours`.
fn build<W>(format: &str, filter: EnvFilter, sink: W, colours: bool) -> impl Subscriber + Send + Sync
where
    W: for<'writer> MakeWriter<'writer> + Send + Sync + 'static,
{
    let lines: Box<dyn Layer<_> + Send + Sync> = if format == "json" {
        let json = fmt::format().json().flatten_event(true).with_target(false).with_span_list(false);
        Box::new(
            fmt::layer().json().with_span_events(FmtSpan::CLOSE).event_format(WithRequestId(json)).with_writer(sink),
        )
    } else {
        Box::new(fmt::layer().with_target(false).with_ansi(colours).with_span_events(FmtSpan::CLOSE).with_writer(sink))
    };
    // Two filters: `filter` decides what the lines show; the request spans
    // exist whatever it says, for `RequestIds` alone, so that with
    // `RUST_LOG=warn` the warnings of a request still carry its id while the
    // formatter neither formats those spans nor writes their `close` lines.
    let request_spans = Targets::new().with_target(REQUEST_SPAN_TARGET, Level::INFO);
    Registry::default().with(RequestIds.with_filter(request_spans)).with(lines.with_filter(filter))
}

thread_local! {
    /// The ids of the request spans entered on this thread, innermost last
    /// (a request's future enters its span each time it is polled, and the
    /// hashing threads enter it around their work).
    static ENTERED_REQUEST_IDS: RefCell<Vec<Arc<str>>> = const { RefCell::new(Vec::new()) };
}

/// The id of the request whose span is entered on this thread, if any.
fn current_request_id() -> Option<Arc<str>> {
    ENTERED_REQUEST_IDS.with(|ids| ids.borrow().last().cloned())
}

/// The request id of a span, kept in its extensions by [`RequestIds`].
#[derive(Debug, Clone)]
struct SpanRequestId(Arc<str>);

/// Keeps the `request_id` field of the request spans, and which of them are
/// entered on each thread, so that the JSON formatter can put the id on
/// every line written inside a request.
struct RequestIds;

impl<S> Layer<S> for RequestIds
where
    S: Subscriber + for<'lookup> LookupSpan<'lookup>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if attrs.metadata().fields().field(REQUEST_ID_FIELD).is_none() {
            return;
        }
        let mut visitor = RequestIdVisitor(None);
        attrs.record(&mut visitor);
        if let (Some(request_id), Some(span)) = (visitor.0, ctx.span(id)) {
            span.extensions_mut().insert(SpanRequestId(request_id.into()));
        }
    }

    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        if let Some(SpanRequestId(request_id)) =
            ctx.span(id).and_then(|s| s.extensions().get::<SpanRequestId>().cloned())
        {
            ENTERED_REQUEST_IDS.with(|ids| ids.borrow_mut().push(request_id));
        }
    }

    fn on_exit(&self, id: &Id, ctx: Context<'_, S>) {
        if ctx.span(id).is_some_and(|s| s.extensions().get::<SpanRequestId>().is_some()) {
            ENTERED_REQUEST_IDS.with(|ids| ids.borrow_mut().pop());
        }
    }
}

/// Reads the `request_id` field (recorded with `%` or as a string).
struct RequestIdVisitor(Option<String>);

impl Visit for RequestIdVisitor {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == REQUEST_ID_FIELD && !value.is_empty() {
            self.0 = Some(value.to_owned());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == REQUEST_ID_FIELD {
            let mut text = String::new();
            if write!(text, "{value:?}").is_ok() && !text.is_empty() {
                self.0 = Some(text);
            }
        }
    }
}

/// tracing-subscriber's JSON line, with the request id of the innermost
/// enclosing span that has one as the object's first member
/// (`{"request_id":"…",…}`); lines outside a request are left as they are.
struct WithRequestId<F>(F);

impl<S, N, F> FormatEvent<S, N> for WithRequestId<F>
where
    S: Subscriber + for<'lookup> LookupSpan<'lookup>,
    N: for<'writer> FormatFields<'writer> + 'static,
    F: FormatEvent<S, N>,
{
    fn format_event(&self, ctx: &FmtContext<'_, S, N>, mut writer: Writer<'_>, event: &Event<'_>) -> std::fmt::Result {
        // The enclosing request span, where this layer's filter lets it
        // through (it also covers the `close` line, written after the span
        // was last exited); else the request span entered on this thread.
        let in_scope = ctx
            .event_scope()
            .and_then(|mut scope| scope.find_map(|span| span.extensions().get::<SpanRequestId>().cloned()));
        let Some(request_id) = in_scope.map(|SpanRequestId(id)| id).or_else(current_request_id) else {
            return self.0.format_event(ctx, writer, event);
        };
        let mut line = String::new();
        self.0.format_event(ctx, Writer::new(&mut line), event)?;
        // The JSON formatter writes one object per line, `{…}\n`, never `{}`.
        match line.strip_prefix('{') {
            Some(rest) => {
                let id = serde_json::Value::String(request_id.to_string());
                write!(writer, "{{\"{REQUEST_ID_FIELD}\":{id},{rest}")
            }
            None => writer.write_str(&line),
        }
    }
}
