//! The two shapes of a log line, written straight into the line's buffer in
//! one pass (no intermediate map, string or second formatting):
//!
//! - JSON: `{"request_id":"…","timestamp":"…","level":"INFO","message":"…",<fields>}`
//!   (`request_id` first when the line is written inside a request and does
//!   not carry its own);
//! - text: `<timestamp> <LEVEL> <message> name=value … request_id=…`.
//!
//! Timestamps are RFC 3339 in UTC with microseconds. Values are escaped: a
//! JSON string escapes what RFC 8259 requires; a text value has its line
//! breaks and escape characters escaped, so that no value can forge a line.

use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

use credencial_app_actix::telemetry::{RequestLine, REQUEST_LINE_MESSAGE};
use credencial_application::request_context::{self, RequestId};

use crate::telemetry::REQUEST_ID_FIELD;

/// Whether an event carries a request id of its own (the request line).
fn has_own_request_id(event: &Event<'_>) -> bool {
    event.metadata().fields().field(REQUEST_ID_FIELD).is_some()
}

/// The request id to add to a line: the one of the request whose work is
/// running (the request context), unless the event has its own.
fn context_request_id(event: &Event<'_>) -> Option<RequestId> {
    if has_own_request_id(event) {
        None
    } else {
        request_context::current()
    }
}

/// JSON lines (`SERVICE_LOG_FORMAT=json`).
pub(crate) struct JsonLine;

impl<S, N> FormatEvent<S, N> for JsonLine
where
    S: Subscriber + for<'lookup> LookupSpan<'lookup>,
    N: for<'writer> FormatFields<'writer> + 'static,
{
    fn format_event(&self, _ctx: &FmtContext<'_, S, N>, mut writer: Writer<'_>, event: &Event<'_>) -> fmt::Result {
        writer.write_char('{')?;
        if let Some(request_id) = context_request_id(event) {
            writer.write_char('"')?;
            writer.write_str(REQUEST_ID_FIELD)?;
            // Hexadecimal digits and hyphens: nothing to escape.
            writer.write_str("\":\"")?;
            writer.write_str(request_id.as_str())?;
            writer.write_str("\",")?;
        }
        writer.write_str("\"timestamp\":\"")?;
        write_timestamp(&mut writer, std::time::SystemTime::now())?;
        writer.write_str("\",\"level\":\"")?;
        writer.write_str(event.metadata().level().as_str())?;
        writer.write_char('"')?;
        let mut fields = JsonFields { writer: &mut writer, result: Ok(()) };
        event.record(&mut fields);
        fields.result?;
        writer.write_str("}\n")
    }
}

/// Appends the request line of `line` to `buffer`, in JSON or in text
/// without colours: exactly what [`JsonLine`] or [`TextLine`] write for the
/// event the HTTP layer's request log gives tracing (a test compares them),
/// without the event's dispatch and field visits.
pub(crate) fn request_line(buffer: &mut String, json: bool, line: &RequestLine<'_>) -> fmt::Result {
    let mut writer = Writer::new(buffer);
    let w = &mut writer;
    let (mut status, mut latency) = (itoa::Buffer::new(), itoa::Buffer::new());
    let (status, latency) = (status.format(line.status), latency.format(line.latency_us));
    if json {
        w.write_str("{\"timestamp\":\"")?;
        write_timestamp(w, std::time::SystemTime::now())?;
        w.write_str("\",\"level\":\"INFO\",\"message\":")?;
        json_string(w, REQUEST_LINE_MESSAGE)?;
        w.write_str(",\"http.method\":")?;
        json_string(w, line.method)?;
        w.write_str(",\"http.route\":")?;
        json_string(w, line.route)?;
        w.write_str(",\"http.status_code\":")?;
        w.write_str(status)?;
        w.write_str(",\"latency_us\":")?;
        w.write_str(latency)?;
        w.write_str(",\"request_id\":")?;
        json_string(w, line.request_id)?;
        return w.write_str("}\n");
    }
    write_timestamp(w, std::time::SystemTime::now())?;
    w.write_char(' ')?;
    w.write_str(padded(Level::INFO))?;
    w.write_char(' ')?;
    TextEscaped(w).write_str(REQUEST_LINE_MESSAGE)?;
    w.write_str(" http.method=")?;
    text_str_value(&mut TextEscaped(w), line.method)?;
    w.write_str(" http.route=")?;
    text_str_value(&mut TextEscaped(w), line.route)?;
    w.write_str(" http.status_code=")?;
    w.write_str(status)?;
    w.write_str(" latency_us=")?;
    w.write_str(latency)?;
    w.write_str(" request_id=")?;
    text_str_value(&mut TextEscaped(w), line.request_id)?;
    w.write_char('\n')
}

/// Writes an event's fields as JSON members, each preceded by a comma.
struct JsonFields<'a, 'w> {
    writer: &'a mut Writer<'w>,
    result: fmt::Result,
}

impl JsonFields<'_, '_> {
    /// `,"name":` then the value `write` writes, unless an earlier write failed.
    fn member(&mut self, field: &Field, write: impl FnOnce(&mut Writer<'_>) -> fmt::Result) {
        if self.result.is_ok() {
            self.result = write_member(self.writer, field, write);
        }
    }
}

/// One member of [`JsonFields`].
fn write_member(
    writer: &mut Writer<'_>,
    field: &Field,
    write: impl FnOnce(&mut Writer<'_>) -> fmt::Result,
) -> fmt::Result {
    writer.write_char(',')?;
    json_string(writer, field.name())?;
    writer.write_char(':')?;
    write(writer)
}

impl Visit for JsonFields<'_, '_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.member(field, |w| json_string(w, value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.member(field, |w| w.write_str(itoa::Buffer::new().format(value)));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.member(field, |w| w.write_str(itoa::Buffer::new().format(value)));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.member(field, |w| write!(w, "{value}"));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        if value.is_finite() {
            self.member(field, |w| write!(w, "{value}"));
        } else {
            self.member(field, |w| w.write_str("null"));
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.member(field, |w| {
            w.write_char('"')?;
            write!(JsonEscaped(w), "{value:?}")?;
            w.write_char('"')
        });
    }
}

/// `value` as a JSON string, quotes included.
fn json_string(writer: &mut Writer<'_>, value: &str) -> fmt::Result {
    writer.write_char('"')?;
    JsonEscaped(writer).write_str(value)?;
    writer.write_char('"')
}

/// Passes text on with what a JSON string must escape escaped (RFC 8259:
/// the quote, the backslash and the control characters).
struct JsonEscaped<'a, 'w>(&'a mut Writer<'w>);

impl fmt::Write for JsonEscaped<'_, '_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let mut start = 0;
        for (i, byte) in s.bytes().enumerate() {
            let escape = match byte {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                0..=0x1f => "",
                _ => continue,
            };
            self.0.write_str(&s[start..i])?;
            if escape.is_empty() {
                write!(self.0, "\\u{byte:04x}")?;
            } else {
                self.0.write_str(escape)?;
            }
            start = i + 1;
        }
        self.0.write_str(&s[start..])
    }
}

/// Readable text lines (the default format).
pub(crate) struct TextLine;

impl<S, N> FormatEvent<S, N> for TextLine
where
    S: Subscriber + for<'lookup> LookupSpan<'lookup>,
    N: for<'writer> FormatFields<'writer> + 'static,
{
    fn format_event(&self, ctx: &FmtContext<'_, S, N>, mut writer: Writer<'_>, event: &Event<'_>) -> fmt::Result {
        let level = *event.metadata().level();
        let ansi = writer.has_ansi_escapes();
        if ansi {
            writer.write_str("\x1b[2m")?;
        }
        write_timestamp(&mut writer, std::time::SystemTime::now())?;
        if ansi {
            let colour = match level {
                Level::ERROR => "31",
                Level::WARN => "33",
                Level::INFO => "32",
                Level::DEBUG => "34",
                Level::TRACE => "35",
            };
            write!(writer, "\x1b[0m \x1b[{colour}m{}\x1b[0m ", padded(level))?;
        } else {
            writer.write_char(' ')?;
            writer.write_str(padded(level))?;
            writer.write_char(' ')?;
        }
        // Spans: none of ours, perhaps a dependency's.
        if let Some(scope) = ctx.event_scope() {
            for span in scope.from_root() {
                writer.write_str(span.name())?;
                let extensions = span.extensions();
                if let Some(fields) = extensions.get::<FormattedFields<N>>().filter(|f| !f.is_empty()) {
                    write!(writer, "{{{fields}}}")?;
                }
                writer.write_str(": ")?;
            }
        }
        let mut fields = TextFields { writer: &mut writer, first: true, result: Ok(()) };
        event.record(&mut fields);
        fields.result?;
        if let Some(request_id) = context_request_id(event) {
            writer.write_char(' ')?;
            writer.write_str(REQUEST_ID_FIELD)?;
            writer.write_char('=')?;
            // Hexadecimal digits and hyphens: nothing to escape.
            writer.write_str(request_id.as_str())?;
        }
        writer.write_char('\n')
    }
}

/// A level's name right-aligned in five characters, as tracing-subscriber
/// writes it.
fn padded(level: Level) -> &'static str {
    match level {
        Level::ERROR => "ERROR",
        Level::WARN => " WARN",
        Level::INFO => " INFO",
        Level::DEBUG => "DEBUG",
        Level::TRACE => "TRACE",
    }
}

/// Writes an event's fields as text: the message as it is, then
/// ` name=value` for the others (strings quoted).
struct TextFields<'a, 'w> {
    writer: &'a mut Writer<'w>,
    first: bool,
    result: fmt::Result,
}

impl TextFields<'_, '_> {
    /// The message, or ` name=` then the value `write` writes, escaped.
    fn field(&mut self, field: &Field, write: impl FnOnce(&mut TextEscaped<'_, '_>) -> fmt::Result) {
        if self.result.is_err() {
            return;
        }
        let separator = if std::mem::take(&mut self.first) { "" } else { " " };
        self.result = write_text_field(self.writer, separator, field, write);
    }
}

/// One field of [`TextFields`].
fn write_text_field(
    writer: &mut Writer<'_>,
    separator: &str,
    field: &Field,
    write: impl FnOnce(&mut TextEscaped<'_, '_>) -> fmt::Result,
) -> fmt::Result {
    writer.write_str(separator)?;
    if field.name() != "message" {
        writer.write_str(field.name())?;
        writer.write_char('=')?;
    }
    write(&mut TextEscaped(writer))
}

impl Visit for TextFields<'_, '_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" && !is_bare_word(value) {
            self.field(field, |w| w.write_str(value));
        } else {
            self.field(field, |w| text_str_value(w, value));
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.field(field, |w| w.verbatim(itoa::Buffer::new().format(value)));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.field(field, |w| w.verbatim(itoa::Buffer::new().format(value)));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.field(field, |w| write!(w, "{value}"));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.field(field, |w| write!(w, "{value}"));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.field(field, |w| write!(w, "{value:?}"));
    }
}

/// A string field's value in text: as it is when it is a bare word, quoted
/// and escaped otherwise.
fn text_str_value(writer: &mut TextEscaped<'_, '_>, value: &str) -> fmt::Result {
    if is_bare_word(value) {
        writer.verbatim(value)
    } else {
        write!(writer, "{value:?}")
    }
}

/// Whether a text value reads unambiguously without quotes: not empty, and
/// no space, quote, backslash, `=` or control character (so nothing that
/// [`TextEscaped`] escapes either).
fn is_bare_word(value: &str) -> bool {
    !value.is_empty() && value.bytes().all(|b| b > b' ' && b != b'"' && b != b'\\' && b != b'=' && b != 0x7f)
}

/// Passes text on with line breaks and the escape character escaped, so
/// that a value cannot start a line of its own or drive a terminal.
struct TextEscaped<'a, 'w>(&'a mut Writer<'w>);

impl TextEscaped<'_, '_> {
    /// Passes on text that holds nothing to escape (a bare word, digits)
    /// without looking at it again.
    fn verbatim(&mut self, text: &str) -> fmt::Result {
        self.0.write_str(text)
    }
}

impl fmt::Write for TextEscaped<'_, '_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let mut start = 0;
        for (i, byte) in s.bytes().enumerate() {
            let escape = match byte {
                b'\n' => "\\n",
                b'\r' => "\\r",
                0x1b => "\\x1b",
                _ => continue,
            };
            self.0.write_str(&s[start..i])?;
            self.0.write_str(escape)?;
            start = i + 1;
        }
        self.0.write_str(&s[start..])
    }
}

/// `time` as RFC 3339 in UTC with microseconds (`2026-11-25T03:52:54.624057Z`).
fn write_timestamp(writer: &mut impl fmt::Write, time: std::time::SystemTime) -> fmt::Result {
    let since_epoch = time.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = since_epoch.as_secs();
    let (days, of_day) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days);
    // Digit by digit: `write!` with seven padded numbers cost about 2,000
    // instructions a line (callgrind), this a tenth of that.
    let mut text = *b"0000-00-00T00:00:00.000000Z";
    for (at, width, value) in [
        (0, 4, year),
        (5, 2, month),
        (8, 2, day),
        (11, 2, of_day / 3600),
        (14, 2, of_day / 60 % 60),
        (17, 2, of_day % 60),
        (20, 6, u64::from(since_epoch.subsec_micros())),
    ] {
        let mut rest = value;
        for digit in text[at..at + width].iter_mut().rev() {
            *digit = b'0' + (rest % 10) as u8;
            rest /= 10;
        }
    }
    writer.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, for days on or after the epoch).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use tracing_subscriber::EnvFilter;

    use super::*;
    use crate::test_sink::Kept;

    /// The lines `log` writes in `format`.
    fn lines_of(format: &str, log: impl FnOnce()) -> Vec<String> {
        let kept = Kept::default();
        let sink = kept.clone();
        let subscriber = crate::telemetry::subscriber(format, EnvFilter::new("info"), move || sink.clone());
        tracing::subscriber::with_default(subscriber, log);
        kept.lines()
    }

    const FORGED: &str = "x\"}\n{\"level\":\"ERROR\",\u{1b}[31m\ttab\\";

    #[test]
    fn the_request_line_written_directly_is_the_line_the_subscriber_writes_for_its_event() {
        let id = "0b4c5c2e-6f0a-4d3b-9e61-5a8f0c1d2e3f";
        let lines = [
            RequestLine { method: "POST", route: "/api/token/verify", status: 200, latency_us: 72, request_id: id },
            RequestLine { method: "GET", route: "/admin/usuarios/{id}", status: 404, latency_us: 0, request_id: id },
            RequestLine { method: "DELETE", route: "unmatched", status: 405, latency_us: u64::MAX, request_id: id },
            // Values that must be quoted or escaped, though no route has them.
            RequestLine { method: "M-SEARCH", route: FORGED, status: 599, latency_us: 1, request_id: "a b=\"c\"" },
            RequestLine { method: "", route: "/ünïcode/€", status: 100, latency_us: 12_345_678, request_id: "" },
        ];
        // Without the timestamp, which both take from the clock.
        let untimed = |line: &str| line.replacen(&line[line.find("20").expect("a timestamp")..][..27], "<time>", 1);
        for format in ["text", "json"] {
            for line in &lines {
                let traced = lines_of(format, || credencial_app_actix::telemetry::trace_request_line(line));
                let mut direct = String::new();
                request_line(&mut direct, format == "json", line).expect("formatted");
                assert!(direct.ends_with('\n') && direct.matches('\n').count() == 1, "{direct:?}");
                assert_eq!(traced.len(), 1, "{traced:?}");
                assert_eq!(untimed(direct.trim_end_matches('\n')), untimed(&traced[0]), "{format}: {line:?}");
            }
        }
    }

    #[test]
    fn a_json_line_is_one_object_whatever_its_values_hold() {
        let lines = lines_of("json", || {
            tracing::warn!(forged = FORGED, debug = ?FORGED, count = 3_u64, signed = -2_i64, ratio = 0.5, yes = true,
                "a {} message", "formatted");
        });
        assert_eq!(lines.len(), 1, "{lines:?}");
        let line: serde_json::Value = serde_json::from_str(&lines[0]).expect("one JSON object");
        assert_eq!(line["level"], "WARN");
        assert_eq!(line["message"], "a formatted message");
        assert_eq!(line["forged"], FORGED);
        assert_eq!(line["debug"], format!("{FORGED:?}"));
        assert_eq!(
            (&line["count"], &line["signed"], &line["ratio"], &line["yes"]),
            (&3.into(), &(-2).into(), &0.5.into(), &true.into())
        );
        assert!(line["timestamp"].as_str().is_some_and(|t| t.len() == 27 && t.ends_with('Z')), "{line}");
        assert!(line.get("request_id").is_none(), "outside a request: {line}");
    }

    #[test]
    fn a_line_written_inside_a_request_names_it_once() {
        let id = RequestId::from_uuid(uuid::Uuid::from_u128(0x5eed));
        let inside = || {
            request_context::sync_scope(Some(id), || {
                tracing::warn!(scope = "cnes", "inside");
                // The request line names its request itself.
                tracing::info!(request_id = id.as_str(), "own id");
            });
            tracing::warn!("outside");
        };
        let raw = lines_of("json", inside);
        assert_eq!(raw.len(), 3, "{raw:?}");
        assert_eq!(raw[1].matches(r#""request_id":"#).count(), 1, "{}", raw[1]);
        let json: Vec<serde_json::Value> = raw.iter().map(|l| serde_json::from_str(l).expect("JSON")).collect();
        assert_eq!((&json[0]["message"], &json[0]["request_id"]), (&"inside".into(), &id.as_str().into()));
        assert_eq!((&json[1]["message"], &json[1]["request_id"]), (&"own id".into(), &id.as_str().into()));
        assert!(json[2].get("request_id").is_none(), "{}", json[2]);
        let text = lines_of("text", inside);
        assert_eq!(text.len(), 3, "{text:?}");
        assert!(text[0].ends_with(&format!(" WARN inside scope=cnes request_id={id}")), "{}", text[0]);
        assert_eq!(text[1].matches("request_id=").count(), 1, "{}", text[1]);
        assert!(!text[2].contains("request_id"), "{}", text[2]);
    }

    #[test]
    fn a_text_value_cannot_start_a_line_of_its_own() {
        let lines = lines_of("text", || {
            tracing::warn!(forged = FORGED, status = 401_u64, "refused {}", "x\nINFO forged");
        });
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(!lines[0].contains('\u{1b}'), "{}", lines[0]);
        assert!(lines[0].contains(" WARN refused x\\nINFO forged forged="), "{}", lines[0]);
        assert!(lines[0].ends_with(" status=401"), "{}", lines[0]);
    }

    fn timestamp(secs: u64, micros: u32) -> String {
        let mut text = String::new();
        write_timestamp(&mut text, UNIX_EPOCH + Duration::new(secs, micros * 1000)).expect("formats");
        text
    }

    #[test]
    fn timestamps_are_rfc_3339_utc_with_microseconds() {
        assert_eq!(timestamp(0, 0), "1970-01-01T00:00:00.000000Z");
        // 2000-02-29 (a leap day of a year divisible by 400), 2024-12-31,
        // 2026-11-25: checked against `date -u -d @…`.
        assert_eq!(timestamp(951_782_400, 1), "2000-02-29T00:00:00.000001Z");
        assert_eq!(timestamp(1_735_689_599, 999_999), "2024-12-31T23:59:59.999999Z");
        assert_eq!(timestamp(1_795_578_774, 624_057), "2026-11-25T03:52:54.624057Z");
        assert_eq!(timestamp(4_107_542_400, 0), "2100-03-01T00:00:00.000000Z");
    }
}
