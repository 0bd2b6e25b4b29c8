//! What the run measured: latency histograms and errors per route, per
//! phase (warm-up, measured window).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use hdrhistogram::Histogram;

use crate::mix::Route;

/// Longest latency a histogram holds exactly (longer ones are clamped).
const MAX_MICROS: u64 = 120_000_000;

/// Part of the run a request was scheduled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Before the measured window: sent, checked, not in the latency figures.
    WarmUp,
    /// The measured window.
    Measured,
}

/// Why a request did not succeed (the key of the error counts).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Failure {
    /// An answer with an unexpected HTTP status.
    Status(u16),
    /// An answer with the expected status but a body that is not the right one.
    Body(String),
    /// No answer within the request time-out.
    Timeout,
    /// The connection could not be made or broke.
    Connection,
    /// No refresh token came free within the request time-out.
    NoRefreshToken,
    /// Not sent: too many requests were already in flight.
    Dropped,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Status(code) => write!(f, "HTTP {code}"),
            Failure::Body(what) => write!(f, "bad body ({what})"),
            Failure::Timeout => f.write_str("timeout"),
            Failure::Connection => f.write_str("connection error"),
            Failure::NoRefreshToken => f.write_str("no refresh token free"),
            Failure::Dropped => f.write_str("dropped (too many in flight)"),
        }
    }
}

/// Outcomes of one route in one phase.
#[derive(Debug, Clone)]
pub struct RouteStats {
    /// Latency from the scheduled send time to the end of the answer, in µs,
    /// of every request that got an answer (or timed out).
    pub latency: Histogram<u64>,
    /// Latency from the actual send (the client's own lag left out), in µs.
    pub from_send: Histogram<u64>,
    /// Requests scheduled.
    pub scheduled: u64,
    /// Failures by kind.
    pub errors: BTreeMap<Failure, u64>,
}

impl Default for RouteStats {
    fn default() -> Self {
        RouteStats { latency: new_histogram(), from_send: new_histogram(), scheduled: 0, errors: BTreeMap::new() }
    }
}

impl RouteStats {
    /// Adds `other`'s requests to these.
    pub fn merge(&mut self, other: &RouteStats) {
        // Both histograms have the same bounds, so adding cannot fail.
        let _ = self.latency.add(&other.latency);
        let _ = self.from_send.add(&other.from_send);
        self.scheduled += other.scheduled;
        for (failure, n) in &other.errors {
            *self.errors.entry(failure.clone()).or_default() += n;
        }
    }

    /// Number of failed requests.
    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }
}

/// A latency histogram in µs, 1 µs to two minutes, three significant digits.
pub fn new_histogram() -> Histogram<u64> {
    // The bounds are constants that satisfy the constructor's conditions.
    Histogram::new_with_bounds(1, MAX_MICROS, 3).expect("valid histogram bounds")
}

/// How long a request that was sent took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// From its scheduled send time to the end of the answer.
    pub from_schedule: Duration,
    /// From its actual send time to the end of the answer.
    pub from_send: Duration,
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(MAX_MICROS).max(1)
}

/// One route's requests scheduled within one second of the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Second {
    /// Requests scheduled.
    pub requests: u64,
    /// Of which failed.
    pub errors: u64,
    /// Longest latency, µs.
    pub max_micros: u64,
}

#[derive(Debug)]
struct Tallies {
    phases: [[RouteStats; 4]; 2],
    timeline: Vec<[Second; 4]>,
}

/// Records outcomes from every request task.
#[derive(Debug)]
pub struct Recorder {
    inner: Mutex<Tallies>,
}

impl Default for Recorder {
    fn default() -> Self {
        let phases = std::array::from_fn(|_| std::array::from_fn(|_| RouteStats::default()));
        Recorder { inner: Mutex::new(Tallies { phases, timeline: Vec::new() }) }
    }
}

impl Recorder {
    /// Records the outcome of a request scheduled `second` seconds into the
    /// run; `timing` is `None` when it was never sent.
    pub fn record(
        &self,
        phase: Phase,
        route: Route,
        second: usize,
        timing: Option<Timing>,
        outcome: Result<(), Failure>,
    ) {
        let mut all = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let micros_scheduled = timing.map(|t| micros(t.from_schedule));
        if all.timeline.len() <= second {
            all.timeline.resize(second + 1, [Second::default(); 4]);
        }
        let bucket = &mut all.timeline[second][route.index()];
        bucket.requests += 1;
        bucket.errors += u64::from(outcome.is_err());
        bucket.max_micros = bucket.max_micros.max(micros_scheduled.unwrap_or(0));
        let stats = &mut all.phases[phase as usize][route.index()];
        stats.scheduled += 1;
        if let Some(timing) = timing {
            stats.latency.saturating_record(micros(timing.from_schedule));
            stats.from_send.saturating_record(micros(timing.from_send));
        }
        if let Err(failure) = outcome {
            *stats.errors.entry(failure).or_default() += 1;
        }
    }

    /// A copy of the statistics of `phase`, per route in [`Route::ALL`] order.
    pub fn snapshot(&self, phase: Phase) -> [RouteStats; 4] {
        let all = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        all.phases[phase as usize].clone()
    }

    /// Per second of the run, per route: requests, errors, longest latency,
    /// as CSV (`second,route,requests,errors,max_ms`).
    pub fn timeline_csv(&self) -> String {
        let all = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut csv = String::from("second,route,requests,errors,max_ms\n");
        for (second, routes) in all.timeline.iter().enumerate() {
            for route in Route::ALL {
                let b = routes[route.index()];
                if b.requests > 0 {
                    csv.push_str(&format!("{second},{route},{},{},{}\n", b.requests, b.errors, ms(b.max_micros)));
                }
            }
        }
        csv
    }
}

/// Milliseconds with a precision that suits the value (0.123, 12.3, 1234).
pub fn ms(micros: u64) -> String {
    let ms = micros as f64 / 1000.0;
    if ms < 10.0 {
        format!("{ms:.3}")
    } else if ms < 100.0 {
        format!("{ms:.2}")
    } else if ms < 1000.0 {
        format!("{ms:.1}")
    } else {
        format!("{ms:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_are_kept_apart_by_phase_route_and_failure() {
        let recorder = Recorder::default();
        let ms = |n| Some(Timing { from_schedule: Duration::from_millis(n), from_send: Duration::from_millis(n - 1) });
        recorder.record(Phase::WarmUp, Route::Verify, 0, ms(50), Ok(()));
        recorder.record(Phase::Measured, Route::Verify, 1, ms(1), Ok(()));
        recorder.record(Phase::Measured, Route::Verify, 1, ms(3), Err(Failure::Status(401)));
        recorder.record(Phase::Measured, Route::Verify, 2, ms(2), Err(Failure::Status(401)));
        recorder.record(Phase::Measured, Route::Pair, 2, None, Err(Failure::Dropped));
        let measured = recorder.snapshot(Phase::Measured);
        let verify = &measured[Route::Verify.index()];
        assert_eq!(verify.scheduled, 3);
        assert_eq!(verify.latency.len(), 3);
        assert_eq!(verify.errors, BTreeMap::from([(Failure::Status(401), 2)]));
        assert!(verify.latency.max() < 3_100, "the warm-up's 50 ms is not in the measured window");
        assert!(verify.from_send.max() < 2_100, "from the send: one ms less each");
        let pair = &measured[Route::Pair.index()];
        assert_eq!((pair.scheduled, pair.latency.len(), pair.error_count()), (1, 0, 1));
        assert_eq!(recorder.snapshot(Phase::WarmUp)[Route::Verify.index()].scheduled, 1);
        assert_eq!(
            recorder.timeline_csv(),
            "second,route,requests,errors,max_ms\n0,verify,1,0,50.00\n1,verify,2,1,3.000\n\
             2,verify,1,1,2.000\n2,pair,1,1,0.000\n"
        );
    }

    #[test]
    fn merged_routes_add_up() {
        let recorder = Recorder::default();
        let t = Some(Timing { from_schedule: Duration::from_millis(4), from_send: Duration::from_millis(3) });
        recorder.record(Phase::Measured, Route::Verify, 0, t, Ok(()));
        recorder.record(Phase::Measured, Route::Pair, 0, t, Err(Failure::Timeout));
        recorder.record(Phase::Measured, Route::Refresh, 0, t, Err(Failure::Timeout));
        let mut all = RouteStats::default();
        for stats in &recorder.snapshot(Phase::Measured) {
            all.merge(stats);
        }
        assert_eq!((all.scheduled, all.latency.len(), all.from_send.len()), (3, 3, 3));
        assert_eq!(all.errors, BTreeMap::from([(Failure::Timeout, 2)]));
    }

    #[test]
    fn milliseconds_are_printed_with_three_significant_digits_or_more() {
        assert_eq!(ms(123), "0.123");
        assert_eq!(ms(12_345), "12.35");
        assert_eq!(ms(123_456), "123.5");
        assert_eq!(ms(1_234_567), "1235");
    }
}
