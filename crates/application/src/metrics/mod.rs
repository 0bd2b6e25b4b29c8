//! The service's metrics, as the use cases and the HTTP layer record them:
//! a thin facade over the `metrics` crate.
//!
//! [`Metrics`] holds a handle for every series whose labels are known in
//! advance (login forms, token kinds, upstreams, scopes), registered once
//! with the recorder it was built on, so that recording is one atomic
//! operation and every series is exported from the start, at zero. The
//! HTTP layer registers its series per route as it meets them
//! ([`Metrics::http_requests`], [`Metrics::http_duration`]) and keeps the
//! handles. [`Metrics::disabled`] (the default) records nothing and costs
//! one branch per call.
//!
//! The recorder is passed in, never installed globally: every running
//! service (the tests start many in one process) counts on its own.
//! Labels never carry a path, an id, a token or personal data.

use std::sync::Arc;
use std::time::Duration;

use credencial_domain::mail::MailKind;
use credencial_domain::Scope;
use credencial_ports::{PoolStatus, UpstreamError};
use metrics::{Counter, Gauge, Histogram, Key, KeyName, Label, Metadata, Recorder, SharedString, Unit};

use crate::error::ServiceError;

mod labels;

pub use labels::{
    method_label, CacheResult, LoginForm, LoginMethod, LoginOutcome, PurgeTable, ReplayOutcome, SessionEnd, TokenKind,
    Upstream, UpstreamOutcome,
};

/// Requests answered, by method, route template and status.
pub const HTTP_REQUESTS: &str = "credencial_http_requests_total";
/// Time to answer a request, by method and route template.
pub const HTTP_DURATION: &str = "credencial_http_request_duration_seconds";
/// Credential checks, by login form and outcome.
pub const LOGINS: &str = "credencial_logins_total";
/// Browser login steps, by method (password, TOTP, recovery code, passkey)
/// and outcome.
pub const LOGIN_METHODS: &str = "credencial_login_methods_total";
/// Mail delivery tries, by kind and outcome (sent, retried, failed).
pub const MAILS: &str = "credencial_mails_total";
/// Back-channel logout deliveries, by outcome (delivered, retried,
/// refused, given up).
pub const LOGOUT_DELIVERIES: &str = "credencial_backchannel_logout_deliveries_total";
/// Tokens signed, by kind.
pub const TOKENS_ISSUED: &str = "credencial_tokens_issued_total";
/// Rotated refresh tokens presented again, by what was done (family
/// revoked, or the same pair answered within the grace window).
pub const REFRESH_REPLAYS: &str = "credencial_refresh_replays_total";
/// Browser sessions ended, by cause.
pub const SESSIONS_ENDED: &str = "credencial_sessions_ended_total";
/// Calls to an upstream, by upstream and outcome.
pub const UPSTREAM_REQUESTS: &str = "credencial_upstream_requests_total";
/// Time of an upstream call, by upstream.
pub const UPSTREAM_DURATION: &str = "credencial_upstream_request_duration_seconds";
/// Look-ups of upstream scope data in the scope cache, by scope and result.
pub const SCOPE_CACHE: &str = "credencial_scope_cache_lookups_total";
/// Password and client-secret checks waiting for a hashing slot.
pub const HASHING_QUEUE: &str = "credencial_hashing_queue_length";
/// Rows the periodic purge deleted (sealed pairs: forgotten), by table.
pub const PURGE_ROWS: &str = "credencial_purge_rows_total";
/// Bounded statements the periodic purge ran, by table.
pub const PURGE_BATCHES: &str = "credencial_purge_batches_total";
/// Time of one pass of the periodic purge, every table.
pub const PURGE_PASS_DURATION: &str = "credencial_purge_pass_duration_seconds";
/// Database connections checked out.
pub const DB_POOL_IN_USE: &str = "credencial_db_pool_connections_in_use";
/// Database connections open and idle.
pub const DB_POOL_IDLE: &str = "credencial_db_pool_connections_idle";
/// The most database connections the pool opens.
pub const DB_POOL_MAX: &str = "credencial_db_pool_connections_max";

/// A recorder the metrics can be registered with (the exporter's).
pub type SharedRecorder = Arc<dyn Recorder + Send + Sync>;

/// The service's metrics; cloning shares them. See the module docs.
#[derive(Clone, Default)]
pub struct Metrics {
    series: Option<Arc<Series>>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").field("enabled", &self.is_enabled()).finish_non_exhaustive()
    }
}

/// Every series known in advance, registered.
struct Series {
    recorder: SharedRecorder,
    logins: Vec<Counter>,
    login_methods: Vec<Counter>,
    mails: Vec<Counter>,
    logout_deliveries: Vec<Counter>,
    tokens: Vec<Counter>,
    replays: Vec<Counter>,
    sessions_ended: Vec<Counter>,
    upstream_calls: Vec<Counter>,
    upstream_duration: Vec<Histogram>,
    scope_cache: Vec<Counter>,
    hashing_queue: Gauge,
    purge_rows: Vec<Counter>,
    purge_batches: Vec<Counter>,
    purge_pass: Histogram,
    pool: Option<(Arc<dyn PoolStatus>, [Gauge; 3])>,
}

/// Metadata of every registration (the Prometheus recorder ignores it).
const METADATA: Metadata<'static> = Metadata::new(module_path!(), metrics::Level::INFO, Some(module_path!()));

fn label(name: &'static str, value: impl Into<SharedString>) -> Label {
    Label::new(name, value.into())
}

impl Metrics {
    /// Metrics that record nothing.
    pub fn disabled() -> Self {
        Self::default()
    }

    /// Metrics recorded by `recorder`: every series known in advance is
    /// described and registered now. `pool`, if given, is read on each
    /// [`sample`](Self::sample) for the database pool's gauges.
    pub fn recording(recorder: SharedRecorder, pool: Option<Arc<dyn PoolStatus>>) -> Self {
        describe(recorder.as_ref());
        let r = recorder.as_ref();
        let counter =
            |name: &'static str, labels: Vec<Label>| r.register_counter(&Key::from_parts(name, labels), &METADATA);
        let gauge = |name: &'static str| r.register_gauge(&Key::from_static_name(name), &METADATA);
        let logins = LoginForm::ALL
            .iter()
            .flat_map(|form| {
                LoginOutcome::ALL
                    .iter()
                    .map(move |outcome| vec![label("form", form.label()), label("outcome", outcome.label())])
            })
            .map(|labels| counter(LOGINS, labels))
            .collect();
        let login_methods = LoginMethod::ALL
            .iter()
            .flat_map(|method| {
                LoginOutcome::ALL
                    .iter()
                    .map(move |outcome| vec![label("method", method.label()), label("outcome", outcome.label())])
            })
            .map(|labels| counter(LOGIN_METHODS, labels))
            .collect();
        let mails = MailKind::ALL
            .iter()
            .flat_map(|kind| {
                MAIL_OUTCOMES.iter().map(move |outcome| vec![label("kind", kind.code()), label("outcome", *outcome)])
            })
            .map(|labels| counter(MAILS, labels))
            .collect();
        let tokens = TokenKind::ALL.iter().map(|k| counter(TOKENS_ISSUED, vec![label("kind", k.label())])).collect();
        let upstream_calls = Upstream::ALL
            .iter()
            .flat_map(|u| {
                UpstreamOutcome::ALL
                    .iter()
                    .map(move |o| vec![label("upstream", u.label()), label("outcome", o.label())])
            })
            .map(|labels| counter(UPSTREAM_REQUESTS, labels))
            .collect();
        let upstream_duration = Upstream::ALL
            .iter()
            .map(|u| {
                r.register_histogram(&Key::from_parts(UPSTREAM_DURATION, vec![label("upstream", u.label())]), &METADATA)
            })
            .collect();
        let scope_cache = Upstream::ALL[..3]
            .iter()
            .flat_map(|u| {
                CacheResult::ALL.iter().map(move |c| vec![label("scope", u.label()), label("result", c.label())])
            })
            .map(|labels| counter(SCOPE_CACHE, labels))
            .collect();
        let series = Series {
            logins,
            login_methods,
            mails,
            logout_deliveries: LOGOUT_OUTCOMES
                .iter()
                .map(|o| counter(LOGOUT_DELIVERIES, vec![label("outcome", *o)]))
                .collect(),
            tokens,
            replays: ReplayOutcome::ALL
                .iter()
                .map(|o| counter(REFRESH_REPLAYS, vec![label("outcome", o.label())]))
                .collect(),
            sessions_ended: SessionEnd::ALL
                .iter()
                .map(|c| counter(SESSIONS_ENDED, vec![label("cause", c.label())]))
                .collect(),
            upstream_calls,
            upstream_duration,
            scope_cache,
            hashing_queue: gauge(HASHING_QUEUE),
            purge_rows: PurgeTable::ALL.iter().map(|t| counter(PURGE_ROWS, vec![label("table", t.label())])).collect(),
            purge_batches: PurgeTable::ALL
                .iter()
                .map(|t| counter(PURGE_BATCHES, vec![label("table", t.label())]))
                .collect(),
            purge_pass: r.register_histogram(&Key::from_static_name(PURGE_PASS_DURATION), &METADATA),
            pool: pool.map(|p| (p, [gauge(DB_POOL_IN_USE), gauge(DB_POOL_IDLE), gauge(DB_POOL_MAX)])),
            recorder: Arc::clone(&recorder),
        };
        Self { series: Some(Arc::new(series)) }
    }

    /// Whether anything is recorded.
    pub fn is_enabled(&self) -> bool {
        self.series.is_some()
    }

    /// Counts a credential check at `form` that answered `result` (errors
    /// of the service itself are not counted).
    pub fn login<T>(&self, form: LoginForm, result: &Result<T, ServiceError>) {
        if let Some(outcome) = LoginOutcome::of(result) {
            self.login_outcome(form, outcome);
        }
    }

    /// Counts a credential check at `form` that ended as `outcome`.
    pub fn login_outcome(&self, form: LoginForm, outcome: LoginOutcome) {
        if let Some(s) = &self.series {
            s.logins[index(&LoginForm::ALL, form) * LoginOutcome::ALL.len() + index(&LoginOutcome::ALL, outcome)]
                .increment(1);
        }
    }

    /// Counts a browser login step by `method` that ended as `outcome`.
    pub fn login_method(&self, method: LoginMethod, outcome: LoginOutcome) {
        if let Some(s) = &self.series {
            s.login_methods
                [index(&LoginMethod::ALL, method) * LoginOutcome::ALL.len() + index(&LoginOutcome::ALL, outcome)]
            .increment(1);
        }
    }

    /// Counts one delivery try of a mail of `kind` that ended as `outcome`
    /// (`sent`, `retried` or `failed`).
    pub fn mail(&self, kind: MailKind, outcome: &'static str) {
        if let Some(s) = &self.series {
            let at = index(&MailKind::ALL, kind) * MAIL_OUTCOMES.len() + index(&MAIL_OUTCOMES, outcome);
            s.mails[at].increment(1);
        }
    }

    /// Counts one back-channel logout delivery try that ended as `outcome`
    /// (`delivered`, `retried`, `refused` or `given_up`).
    pub fn logout_delivery(&self, outcome: &'static str) {
        if let Some(s) = &self.series {
            s.logout_deliveries[index(&LOGOUT_OUTCOMES, outcome)].increment(1);
        }
    }

    /// Counts `count` tokens of `kind` signed.
    pub fn tokens_issued(&self, kind: TokenKind, count: u64) {
        if let Some(s) = &self.series {
            s.tokens[index(&TokenKind::ALL, kind)].increment(count);
        }
    }

    /// Counts a rotated refresh token presented again, by what was done.
    pub fn refresh_replay(&self, outcome: ReplayOutcome) {
        if let Some(s) = &self.series {
            s.replays[index(&ReplayOutcome::ALL, outcome)].increment(1);
        }
    }

    /// Counts `count` browser sessions ended by `cause`.
    pub fn sessions_ended(&self, cause: SessionEnd, count: u64) {
        if let Some(s) = &self.series {
            s.sessions_ended[index(&SessionEnd::ALL, cause)].increment(count);
        }
    }

    /// Records an upstream call to `upstream` that took `elapsed` and
    /// answered `result`.
    pub fn upstream_call<T>(&self, upstream: Upstream, elapsed: Duration, result: &Result<T, UpstreamError>) {
        if let Some(s) = &self.series {
            let at = index(&Upstream::ALL, upstream);
            s.upstream_calls
                [at * UpstreamOutcome::ALL.len() + index(&UpstreamOutcome::ALL, UpstreamOutcome::of(result))]
            .increment(1);
            s.upstream_duration[at].record(elapsed.as_secs_f64());
        }
    }

    /// Counts a look-up of `scope` in the scope cache that ended as `result`.
    pub fn scope_cache(&self, scope: Scope, result: CacheResult) {
        if let (Some(s), Some(upstream)) = (&self.series, Upstream::of_scope(scope)) {
            s.scope_cache[index(&Upstream::ALL, upstream) * CacheResult::ALL.len() + index(&CacheResult::ALL, result)]
                .increment(1);
        }
    }

    /// One more check waits for a hashing slot, until the guard is dropped.
    pub fn hashing_queued(&self) -> QueuedGuard {
        let gauge = self.series.as_ref().map(|s| s.hashing_queue.clone());
        if let Some(g) = &gauge {
            g.increment(1.0);
        }
        QueuedGuard { gauge }
    }

    /// Counts one bounded statement of the purge of `table` that deleted
    /// `rows`.
    pub fn purge_batch(&self, table: PurgeTable, rows: u64) {
        if let Some(s) = &self.series {
            let at = index(&PurgeTable::ALL, table);
            s.purge_batches[at].increment(1);
            s.purge_rows[at].increment(rows);
        }
    }

    /// Records one pass of the periodic purge that took `elapsed`.
    pub fn purge_pass(&self, elapsed: Duration) {
        if let Some(s) = &self.series {
            s.purge_pass.record(elapsed.as_secs_f64());
        }
    }

    /// Reads what is sampled at scrape time (the database pool's gauges);
    /// the metrics endpoint calls it before rendering.
    pub fn sample(&self) {
        if let Some((pool, [in_use, idle, max])) = self.series.as_ref().and_then(|s| s.pool.as_ref()) {
            let now = pool.connections();
            in_use.set(f64::from(now.in_use));
            idle.set(f64::from(now.idle));
            max.set(f64::from(now.max));
        }
    }

    /// The request counter of `route` (a route template, never a path),
    /// `method` (a [`method_label`]) and `status`, registered now (the HTTP
    /// layer keeps it); a no-op counter when disabled.
    pub fn http_requests(&self, route: &str, method: &'static str, status: u16) -> Counter {
        match &self.series {
            Some(s) => {
                let labels = vec![
                    label("method", method),
                    label("route", route.to_owned()),
                    label("status", status.to_string()),
                ];
                s.recorder.register_counter(&Key::from_parts(HTTP_REQUESTS, labels), &METADATA)
            }
            None => Counter::noop(),
        }
    }

    /// The latency histogram of `route` and `method`, registered now (the
    /// HTTP layer keeps it); a no-op histogram when disabled.
    pub fn http_duration(&self, route: &str, method: &'static str) -> Histogram {
        match &self.series {
            Some(s) => {
                let labels = vec![label("method", method), label("route", route.to_owned())];
                s.recorder.register_histogram(&Key::from_parts(HTTP_DURATION, labels), &METADATA)
            }
            None => Histogram::noop(),
        }
    }
}

/// Holds one place in the hashing queue's gauge; dropping it (the slot
/// was granted, or the waiting request went away) gives it back.
#[derive(Debug)]
#[must_use = "the queue length drops back when the guard is dropped"]
pub struct QueuedGuard {
    gauge: Option<Gauge>,
}

impl Drop for QueuedGuard {
    fn drop(&mut self) {
        if let Some(g) = &self.gauge {
            g.decrement(1.0);
        }
    }
}

/// The outcomes of a mail delivery try.
const MAIL_OUTCOMES: [&str; 3] = ["sent", "retried", "failed"];
/// The outcomes of a back-channel logout delivery try.
pub const LOGOUT_OUTCOMES: [&str; 4] = ["delivered", "retried", "refused", "given_up"];

fn index<T: PartialEq>(all: &[T], item: T) -> usize {
    all.iter().position(|x| *x == item).unwrap_or(0)
}

/// The `# HELP` texts and units of every series.
fn describe(r: &(dyn Recorder + Send + Sync)) {
    let counters: [(&'static str, &'static str); 12] = [
        (
            LOGOUT_DELIVERIES,
            "Back-channel logout tokens posted to applications, by outcome (delivered, retried, refused, given_up).",
        ),
        (MAILS, "Mail delivery tries by kind and outcome (sent, retried, failed: given up and shown to staff)."),
        (HTTP_REQUESTS, "HTTP requests answered, by method, route template and status."),
        (LOGINS, "Credential checks by login form (pair, oauth, account, client_secret) and outcome."),
        (LOGIN_METHODS, "Browser login steps by method (password, totp, recovery_code, passkey) and outcome."),
        (TOKENS_ISSUED, "Tokens signed, by kind."),
        (
            REFRESH_REPLAYS,
            "Rotated refresh tokens presented again: family revoked, or the same pair within the grace window.",
        ),
        (SESSIONS_ENDED, "Browser sessions ended on the server, by cause (expired ones when purged)."),
        (UPSTREAM_REQUESTS, "Calls to an upstream (registries, user-data resource), by outcome."),
        (SCOPE_CACHE, "Look-ups of upstream scope data in the scope cache, by result."),
        (PURGE_ROWS, "Rows the periodic purge deleted (sealed pairs: forgotten), by table."),
        (PURGE_BATCHES, "Bounded statements the periodic purge ran, by table."),
    ];
    for (name, help) in counters {
        r.describe_counter(KeyName::from_const_str(name), None, SharedString::const_str(help));
    }
    for (name, help) in [
        (HTTP_DURATION, "Time from the request's arrival to its answer, by method and route template."),
        (UPSTREAM_DURATION, "Time of an upstream call, by upstream."),
        (PURGE_PASS_DURATION, "Time of one pass of the periodic purge over every table."),
    ] {
        r.describe_histogram(KeyName::from_const_str(name), Some(Unit::Seconds), SharedString::const_str(help));
    }
    for (name, help) in [
        (HASHING_QUEUE, "Password and client-secret checks waiting for a hashing slot."),
        (DB_POOL_IN_USE, "Database connections checked out, when scraped."),
        (DB_POOL_IDLE, "Database connections open and idle, when scraped."),
        (DB_POOL_MAX, "The most database connections the pool opens."),
    ] {
        r.describe_gauge(KeyName::from_const_str(name), None, SharedString::const_str(help));
    }
}
