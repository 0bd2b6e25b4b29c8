//! The server's resident memory over the run, and what it says about growth.

use std::time::Duration;

use tokio::time::Instant;

use crate::proc_stats::{rss_kib, CpuShares, CpuSnapshot};

/// One reading of the server's resident memory.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Seconds since the load started (warm-up included).
    pub secs: f64,
    /// VmRSS in KiB.
    pub kib: u64,
}

/// What the sampler saw.
#[derive(Debug, Clone, Default)]
pub struct Watch {
    /// Every RSS reading, in order.
    pub samples: Vec<Sample>,
    /// CPU shares over the measured window (warm-up end to load end).
    pub cpu: Option<CpuShares>,
    /// Set when the server's /proc entry could not be read (it exited).
    pub lost: bool,
}

/// Reads the server's RSS at `start`, at `warm_end`, every `interval` after
/// it, and at `end`; takes CPU snapshots at `warm_end` and at `end`.
pub async fn watch(pid: u32, start: Instant, warm_end: Instant, end: Instant, interval: Duration) -> Watch {
    let mut watch = Watch::default();
    let mut cpu_start = None;
    let mut at = start;
    loop {
        tokio::time::sleep_until(at).await;
        match rss_kib(pid) {
            Some(kib) => watch.samples.push(Sample { secs: (at - start).as_secs_f64(), kib }),
            None => {
                watch.lost = true;
                return watch;
            }
        }
        if at == warm_end {
            cpu_start = CpuSnapshot::take(pid);
        }
        if at == end {
            let cpu_end = CpuSnapshot::take(pid);
            watch.cpu = cpu_start.zip(cpu_end).and_then(|(a, b)| CpuShares::between(&a, &b));
            return watch;
        }
        at = if at < warm_end { warm_end } else { (at + interval).min(end) };
    }
}

/// Resident memory over the measured window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Growth {
    /// RSS at the end of the warm-up, KiB.
    pub start_kib: u64,
    /// RSS at the end of the load, KiB.
    pub end_kib: u64,
    /// Highest RSS in the window, KiB.
    pub max_kib: u64,
    /// (end − start) / start, in percent.
    pub percent: f64,
    /// Least-squares slope over the window's samples, KiB per minute.
    pub trend_kib_per_min: f64,
}

/// Growth from the first sample at or after `warmup_secs` to the last sample.
pub fn growth(samples: &[Sample], warmup_secs: f64) -> Option<Growth> {
    let window: Vec<Sample> = samples.iter().copied().filter(|s| s.secs >= warmup_secs - 1e-6).collect();
    let first = window.first()?;
    let last = window.last()?;
    if first.kib == 0 {
        return None;
    }
    let n = window.len() as f64;
    let mean_t = window.iter().map(|s| s.secs).sum::<f64>() / n;
    let mean_m = window.iter().map(|s| s.kib as f64).sum::<f64>() / n;
    let var_t: f64 = window.iter().map(|s| (s.secs - mean_t).powi(2)).sum();
    let cov: f64 = window.iter().map(|s| (s.secs - mean_t) * (s.kib as f64 - mean_m)).sum();
    Some(Growth {
        start_kib: first.kib,
        end_kib: last.kib,
        max_kib: window.iter().map(|s| s.kib).max().unwrap_or(last.kib),
        percent: (last.kib as f64 - first.kib as f64) / first.kib as f64 * 100.0,
        trend_kib_per_min: if var_t > 0.0 { cov / var_t * 60.0 } else { 0.0 },
    })
}

/// KiB as MiB with one decimal.
pub fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(points: &[(f64, u64)]) -> Vec<Sample> {
        points.iter().map(|&(secs, kib)| Sample { secs, kib }).collect()
    }

    #[test]
    fn growth_runs_from_the_end_of_the_warm_up_to_the_last_sample() {
        // The start-up ramp before the warm-up ends is not counted.
        let s = samples(&[(0.0, 10_000), (30.0, 40_000), (35.0, 41_000), (40.0, 44_000), (45.0, 42_000)]);
        let g = growth(&s, 30.0).expect("growth");
        assert_eq!((g.start_kib, g.end_kib, g.max_kib), (40_000, 42_000, 44_000));
        assert!((g.percent - 5.0).abs() < 1e-9, "{g:?}");
    }

    #[test]
    fn the_trend_is_the_least_squares_slope_per_minute() {
        let s = samples(&[(0.0, 1_000), (30.0, 1_300), (60.0, 1_600)]);
        let g = growth(&s, 0.0).expect("growth");
        assert!((g.trend_kib_per_min - 600.0).abs() < 1e-9, "{g:?}");
        let flat = growth(&samples(&[(10.0, 500), (20.0, 500)]), 0.0).expect("growth");
        assert_eq!((flat.percent, flat.trend_kib_per_min), (0.0, 0.0));
    }

    #[test]
    fn no_sample_after_the_warm_up_means_no_figure() {
        assert_eq!(growth(&samples(&[(0.0, 1_000)]), 30.0), None);
    }

    #[tokio::test]
    async fn the_sampler_reads_at_start_at_warm_up_end_every_interval_and_at_the_end() {
        let pid = std::process::id();
        let start = Instant::now();
        let ms = Duration::from_millis;
        let w = watch(pid, start, start + ms(100), start + ms(320), ms(100)).await;
        let times: Vec<u64> = w.samples.iter().map(|s| (s.secs * 1000.0).round() as u64).collect();
        assert_eq!(times, [0, 100, 200, 300, 320]);
        assert!(w.samples.iter().all(|s| s.kib > 0), "this process has resident memory");
        assert!(!w.lost);
        let cpu = w.cpu.expect("CPU shares over the window");
        assert!(cpu.cpus >= 1 && cpu.machine >= 0.0, "{cpu:?}");
    }

    #[tokio::test]
    async fn a_server_that_is_gone_is_reported_lost() {
        let start = Instant::now();
        let ms = Duration::from_millis;
        // Linux pids stay below 2^22, so this one never exists.
        let w = watch(u32::MAX, start, start + ms(10), start + ms(20), ms(10)).await;
        assert!(w.lost && w.samples.is_empty());
    }
}
