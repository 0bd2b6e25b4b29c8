//! The run's summary as markdown, and its verdict.

use std::fmt::Write as _;

use hdrhistogram::Histogram;

use crate::memory::{mib, Growth};
use crate::mix::{Mix, Route};
use crate::proc_stats::CpuShares;
use crate::saturate::Saturation;
use crate::stats::{ms, RouteStats};

/// Everything the summary shows.
#[derive(Debug)]
pub struct Summary {
    /// Target rate, requests per second.
    pub rate: f64,
    /// Measured window, seconds.
    pub duration_secs: f64,
    /// Warm-up, seconds.
    pub warmup_secs: f64,
    /// The mix.
    pub mix: Mix,
    /// Measured window, per route in [`Route::ALL`] order.
    pub measured: [RouteStats; 4],
    /// Warm-up, per route.
    pub warmup: [RouteStats; 4],
    /// Delay between a request's scheduled time and its sending, in µs.
    pub client_lag: Histogram<u64>,
    /// Most requests in flight at once in the measured window.
    pub peak_in_flight: usize,
    /// Whether the server's memory was watched (`--server-pid`).
    pub memory_watched: bool,
    /// Resident memory of the server, when watched and measurable.
    pub memory: Option<Growth>,
    /// Set when the server could not be watched to the end.
    pub server_lost: bool,
    /// CPU shares over the measured window, when watched.
    pub cpu: Option<CpuShares>,
    /// Highest RSS growth that passes, percent.
    pub max_growth_percent: f64,
    /// The request-pool fill before the warm-up, when there was one.
    pub saturation: Option<Saturation>,
}

impl Summary {
    /// Why the run failed; empty when it passed.
    pub fn failures(&self) -> Vec<String> {
        let mut failures = Vec::new();
        let errors: u64 = self.measured.iter().chain(&self.warmup).map(RouteStats::error_count).sum();
        if errors > 0 {
            failures.push(format!("{errors} requests failed"));
        }
        if self.server_lost {
            failures.push("the server's memory could not be read to the end (did it exit?)".into());
        }
        match &self.memory {
            Some(g) if g.percent >= self.max_growth_percent => failures
                .push(format!("resident memory grew {:.1} % (limit {:.0} %)", g.percent, self.max_growth_percent)),
            Some(_) => {}
            None if self.memory_watched => {
                failures.push("the server's memory growth could not be measured (too few readings)".into())
            }
            None => {}
        }
        failures
    }

    /// The summary as markdown.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let answered: u64 = self.measured.iter().map(|s| s.scheduled - s.error_count()).sum();
        let scheduled: u64 = self.measured.iter().map(|s| s.scheduled).sum();
        let _ = writeln!(
            out,
            "Open-loop load at **{} req/s** for {} s after {} s of warm-up; mix {}.\n",
            self.rate, self.duration_secs, self.warmup_secs, self.mix
        );
        let _ = writeln!(
            out,
            "Measured window: {scheduled} requests scheduled, {answered} answered successfully: \
             **{:.1} req/s achieved**. Latency is from each request's scheduled time to the end of its answer \
             (so a stall of the server counts for every request that should have been sent meanwhile); \
             \"from send\" leaves the load generator's own lag out.\n",
            answered as f64 / self.duration_secs
        );
        out.push_str(
            "| route | share | requests | errors | req/s | p50 ms | p90 ms | p99 ms | max ms | p50 from send | p99 from send |\n",
        );
        out.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        let mut all = RouteStats::default();
        for route in Route::ALL.into_iter().filter(|&r| self.mix.weight(r) > 0) {
            let stats = &self.measured[route.index()];
            all.merge(stats);
            self.row(&mut out, route.name(), self.mix.share(route), stats);
        }
        self.row(&mut out, "**all**", 1.0, &all);
        out.push('\n');

        let error_lines: Vec<String> = Route::ALL
            .into_iter()
            .flat_map(|route| {
                let warm = self.warmup[route.index()].errors.iter().map(move |(f, n)| (route, "warm-up", f, n));
                let meas = self.measured[route.index()].errors.iter().map(move |(f, n)| (route, "measured", f, n));
                warm.chain(meas)
            })
            .map(|(route, phase, failure, n)| format!("- {route} ({phase}): {failure} × {n}"))
            .collect();
        let warm_count: u64 = self.warmup.iter().map(|s| s.scheduled).sum();
        if error_lines.is_empty() {
            let _ = writeln!(out, "Errors: none (warm-up: {warm_count} requests, none failed).\n");
        } else {
            let _ = writeln!(out, "Errors (by status or kind):\n{}\n", error_lines.join("\n"));
        }
        let lag = &self.client_lag;
        let _ = writeln!(
            out,
            "Client lag (scheduled → sent): p50 {} ms, p99 {} ms, max {} ms. \
             Most requests in flight at once: {} (each on its own connection).\n",
            ms(lag.value_at_quantile(0.5)),
            ms(lag.value_at_quantile(0.99)),
            ms(lag.max()),
            self.peak_in_flight
        );

        if let Some(s) = &self.saturation {
            let _ = writeln!(out, "{}", s.markdown());
        }
        if let Some(g) = &self.memory {
            out.push_str(
                "| server RSS after warm-up | at the end | max | growth | trend |\n|---:|---:|---:|---:|---:|\n",
            );
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:+.1} % | {:+.2} MiB/min |\n",
                mib(g.start_kib),
                mib(g.end_kib),
                mib(g.max_kib),
                g.percent,
                g.trend_kib_per_min / 1024.0
            );
        }
        if let Some(c) = &self.cpu {
            let _ = writeln!(
                out,
                "CPU over the window, in cores of {}: machine {:.2}, server {:.2}, load generator {:.2}, \
                 PostgreSQL {:.2}, **other processes {:.2}**.\n",
                c.cpus, c.machine, c.server, c.loadgen, c.postgres, c.other
            );
        }
        let failures = self.failures();
        if failures.is_empty() {
            out.push_str("Verdict: **pass** (no errors; resident memory growth under the limit).\n");
        } else {
            let _ = writeln!(out, "Verdict: **FAIL**: {}.", failures.join("; "));
        }
        out
    }

    fn row(&self, out: &mut String, name: &str, share: f64, stats: &RouteStats) {
        let q = |h: &Histogram<u64>, quantile: f64| {
            if h.is_empty() {
                "–".to_owned()
            } else {
                ms(h.value_at_quantile(quantile))
            }
        };
        let (h, sent) = (&stats.latency, &stats.from_send);
        let _ = writeln!(
            out,
            "| {name} | {:.0} % | {} | {} | {:.1} | {} | {} | {} | {} | {} | {} |",
            share * 100.0,
            stats.scheduled,
            stats.error_count(),
            stats.scheduled as f64 / self.duration_secs,
            q(h, 0.5),
            q(h, 0.9),
            q(h, 0.99),
            q(h, 1.0),
            q(sent, 0.5),
            q(sent, 0.99),
        );
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::stats::{new_histogram, Failure, Phase, Recorder, Timing};

    fn summary(recorder: &Recorder, memory: Option<Growth>) -> Summary {
        Summary {
            rate: 10.0,
            duration_secs: 2.0,
            warmup_secs: 1.0,
            mix: Mix::default(),
            measured: recorder.snapshot(Phase::Measured),
            warmup: recorder.snapshot(Phase::WarmUp),
            client_lag: new_histogram(),
            peak_in_flight: 1,
            memory_watched: true,
            memory,
            server_lost: false,
            cpu: None,
            max_growth_percent: 10.0,
            saturation: None,
        }
    }

    fn timing(ms: u64) -> Option<Timing> {
        Some(Timing { from_schedule: Duration::from_millis(ms), from_send: Duration::from_micros(ms * 1000 - 500) })
    }

    fn growth(percent: f64) -> Growth {
        Growth { start_kib: 1000, end_kib: 1000, max_kib: 1000, percent, trend_kib_per_min: 0.0 }
    }

    #[test]
    fn a_clean_run_with_flat_memory_passes() {
        let recorder = Recorder::default();
        for _ in 0..20 {
            recorder.record(Phase::Measured, Route::Verify, 0, timing(2), Ok(()));
        }
        let s = summary(&recorder, Some(growth(9.9)));
        assert!(s.failures().is_empty());
        let text = s.markdown();
        assert!(
            text.contains("| verify | 70 % | 20 | 0 | 10.0 | 2.000 | 2.000 | 2.000 | 2.000 | 1.500 | 1.500 |"),
            "{text}"
        );
        assert!(text.contains("10.0 req/s achieved"), "{text}");
        assert!(text.contains("Verdict: **pass**"), "{text}");
    }

    #[test]
    fn any_error_even_in_the_warm_up_fails_the_run_and_is_listed_by_status() {
        let recorder = Recorder::default();
        recorder.record(Phase::WarmUp, Route::Refresh, 0, timing(1), Err(Failure::Status(401)));
        let s = summary(&recorder, Some(growth(0.0)));
        assert_eq!(s.failures(), ["1 requests failed"]);
        assert!(s.markdown().contains("- refresh (warm-up): HTTP 401 × 1"), "{}", s.markdown());
    }

    #[test]
    fn a_watched_server_whose_growth_could_not_be_measured_fails_the_run() {
        let s = summary(&Recorder::default(), None);
        assert_eq!(s.failures(), ["the server's memory growth could not be measured (too few readings)"]);
        let unwatched = Summary { memory_watched: false, ..summary(&Recorder::default(), None) };
        assert!(unwatched.failures().is_empty(), "no server PID, nothing to measure");
    }

    #[test]
    fn growth_at_the_limit_fails_the_run() {
        let s = summary(&Recorder::default(), Some(growth(10.0)));
        assert_eq!(s.failures(), ["resident memory grew 10.0 % (limit 10 %)"]);
    }
}
