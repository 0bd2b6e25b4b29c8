//! Logging, initialised once per process: readable text, or JSON lines
//! (`SERVICE_LOG_FORMAT=json`) where every line written while a request is
//! handled carries `"request_id"` at the top level. Lines are formatted on
//! the thread that logs them and written to standard output by a thread of
//! their own ([`init`]), so a request never waits for the output.

use credencial_app_actix::telemetry::{RequestLine, RequestLineWriter};
use tracing::Subscriber;
use tracing_subscriber::fmt::{self, MakeWriter};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer, Registry};

use crate::log_format::{JsonLine, TextLine};
use crate::log_writer::{off_thread, LogWriter, LogWriterGuard};

/// The field that holds a request's id: added to every line written inside
/// a request (the id the HTTP layer set as the current request,
/// `credencial_application::request_context`), unless the event has its
/// own (the request line).
pub const REQUEST_ID_FIELD: &str = "request_id";

/// The filter when `RUST_LOG` is not set: INFO, which includes one line per
/// finished request (`credencial::request`).
const DEFAULT_FILTER: &str = "info,sqlx=warn,actix_server=warn";

/// Installs the global subscriber of the service (`serve`, `demo`):
/// `RUST_LOG` (default `info`) filters, `json` picks JSON lines (for
/// production), anything else readable text; lines go to standard output
/// through a writer thread ([`crate::log_writer`]; the other commands log to standard error:
/// [`init_for_command`]). Keep the guard for as long as the process logs:
/// dropping it (at the end of a graceful stop) writes out the lines still
/// queued.
#[must_use = "dropping the guard stops the log writer"]
pub fn init(format: &str) -> LogWriterGuard {
    let colours = std::io::IsTerminal::is_terminal(&std::io::stdout());
    let (writer, guard) = off_thread(std::io::stdout());
    // A second call (tests) keeps the first subscriber.
    if build(format, default_filter(), writer.clone(), colours).try_init().is_ok() && !colours {
        let lines = DirectRequestLines { json: format == "json", writer };
        drop(REQUEST_LINES.set(std::sync::Arc::new(lines)));
    }
    guard
}

/// The service's request-line writer, once [`init`] has installed the
/// service's subscriber (without colours): the HTTP layer writes the request
/// lines through it, straight to the log output (see
/// [`RequestLineWriter`]). `None` otherwise: the lines are tracing events.
pub fn request_line_writer() -> Option<std::sync::Arc<dyn RequestLineWriter>> {
    REQUEST_LINES.get().cloned()
}

static REQUEST_LINES: std::sync::OnceLock<std::sync::Arc<dyn RequestLineWriter>> = std::sync::OnceLock::new();

/// Request lines formatted by [`crate::log_format::request_line`] and
/// appended to the log output.
#[derive(Debug)]
struct DirectRequestLines {
    json: bool,
    writer: LogWriter,
}

impl RequestLineWriter for DirectRequestLines {
    fn write(&self, line: &RequestLine<'_>) {
        thread_local! {
            /// The line being formatted (kept: no allocation per line).
            static LINE: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
        }
        LINE.with(|buffer| {
            let Ok(mut buffer) = buffer.try_borrow_mut() else { return };
            buffer.clear();
            if crate::log_format::request_line(&mut buffer, self.json, line).is_ok() {
                self.writer.write_line(buffer.as_bytes());
            }
        });
    }
}

/// Installs the global subscriber of a command (anything but `serve` and
/// `demo`): the same filter and formats as [`init`], but every line goes
/// straight to standard error, so that standard output holds the command's
/// data alone (`TOKEN=$(credencial client update … | tail -n 1)`). A
/// command logs a few lines: they are written on the spot, in order with
/// its other messages on standard error, with no writer thread.
pub fn init_for_command(format: &str) {
    let colours = std::io::IsTerminal::is_terminal(&std::io::stderr());
    // A second call (tests) keeps the first subscriber.
    drop(build(format, default_filter(), std::io::stderr, colours).try_init());
}

/// `RUST_LOG`, or the service's default filter.
pub fn default_filter() -> EnvFilter {
    EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER))
}

/// The subscriber the service logs with, writing to `sink` (tests capture
/// the lines with their own sink): `filter` chooses what is logged, `format`
/// how (`json` or text). One line per event; a finished request writes one
/// line (`credencial::request`, INFO: method, route, status, latency, id)
/// where `filter` lets it through. Every line written inside a request
/// carries its id, whatever `filter` says (`RUST_LOG=warn` included): in
/// JSON as the first member, in text as the last field. Text without colours.
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
        Box::new(fmt::layer().event_format(JsonLine).with_writer(sink))
    } else {
        Box::new(fmt::layer().with_ansi(colours).event_format(TextLine).with_writer(sink))
    };
    // No span carries the request id (the formatters read it from the
    // request context), so one filter for everything suffices.
    Registry::default().with(filter).with(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_sink::Kept;

    #[test]
    fn the_service_subscriber_through_the_writer_thread_loses_no_line_and_writes_out_the_rest_when_its_guard_is_dropped(
    ) {
        let kept = Kept::slow(std::time::Duration::from_micros(20));
        let (writer, guard) = off_thread(kept.clone());
        let subscriber = subscriber("json", EnvFilter::new("info"), writer);
        tracing::subscriber::with_default(subscriber, || {
            for n in 0..2_000 {
                tracing::info!(n, "line");
            }
        });
        drop(guard);
        let text = kept.text();
        let numbers: Vec<u64> = text
            .lines()
            .map(|line| serde_json::from_str::<serde_json::Value>(line).expect("JSON")["n"].as_u64().expect("n"))
            .collect();
        assert_eq!(numbers, (0..2_000).collect::<Vec<u64>>());
    }
}
