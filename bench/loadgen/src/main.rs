//! Open-loop, constant-rate load generator for the soak test
//! (`bench/soak.sh`, docs/performance.md).
//!
//! Requests are scheduled at fixed times (one every 1/rate seconds, the
//! route chosen by the mix) whatever the answers' latency, and each latency
//! is measured from the scheduled time: a server that stalls cannot hide it
//! by slowing the client down (no coordinated omission). Meanwhile the
//! server's resident memory is sampled from /proc. Exit status: 0 when no
//! request failed and the memory grew less than the limit, 1 otherwise,
//! 2 when the run could not be set up.

mod memory;
mod mix;
mod proc_stats;
mod report;
mod requests;
mod saturate;
mod stats;
mod tokens;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use tokio::sync::Semaphore;
use tokio::time::Instant;

use crate::mix::{Mix, Route};
use crate::report::Summary;
use crate::requests::Target;
use crate::stats::{new_histogram, Failure, Phase, Recorder, Timing};

/// Command-line options.
#[derive(Debug, Parser)]
#[command(name = "loadgen", about = "Open-loop, constant-rate mixed load against credencial")]
struct Args {
    /// Base URL of the service (loopback).
    #[arg(long, default_value = "http://127.0.0.1:18200")]
    base_url: String,
    /// Requests per second, all routes together.
    #[arg(long)]
    rate: f64,
    /// Seconds of the measured window.
    #[arg(long)]
    duration: f64,
    /// Seconds of warm-up before it (sent and checked, not in the latency figures).
    #[arg(long, default_value_t = 30.0)]
    warmup: f64,
    /// Route weights.
    #[arg(long, default_value_t = Mix::default())]
    mix: Mix,
    /// File of `username password` lines: the users pair logs in.
    #[arg(long)]
    users: Option<PathBuf>,
    /// Refresh tokens in the pool (each in use by one request at a time).
    #[arg(long, default_value_t = 32)]
    refresh_pool: usize,
    /// User id the profile token speaks for.
    #[arg(long)]
    profile_user_id: Option<i64>,
    /// OAuth2 client the profile token is issued to (every scope enabled).
    #[arg(long, default_value = "demo-host")]
    client_id: String,
    /// The provider's private key (PEM, RS256: the server's
    /// `oidc_signing_key_file`), to mint the profile token as the service
    /// signs a client's access tokens.
    #[arg(long, env = "LOADGEN_OAUTH_KEY_FILE")]
    oauth_key_file: Option<PathBuf>,
    /// The server's pid: its resident memory and CPU are watched.
    #[arg(long)]
    server_pid: Option<u32>,
    /// Seconds between two RSS readings.
    #[arg(long, default_value_t = 5.0)]
    rss_interval: f64,
    /// RSS growth over the window (percent) from which the run fails.
    #[arg(long, default_value_t = 10.0)]
    max_rss_growth: f64,
    /// Write the RSS readings here (CSV: seconds since the start, KiB).
    #[arg(long)]
    rss_csv: Option<PathBuf>,
    /// Write per second and route: requests, errors, longest latency (CSV).
    #[arg(long)]
    timeline_csv: Option<PathBuf>,
    /// Seconds before a request times out.
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,
    /// Requests in flight beyond which a scheduled request is dropped (and counted as an error).
    #[arg(long, default_value_t = 10_000)]
    max_in_flight: u32,
    /// Runtime threads of the load generator.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Before the warm-up, keep this many connections busy with `GET /readyz`
    /// to fill the server's per-worker request pools (0: skip; see saturate.rs).
    #[arg(long, default_value_t = 0)]
    saturate_connections: usize,
    /// Seconds the fill keeps them busy.
    #[arg(long, default_value_t = 3.0)]
    saturate_secs: f64,
    /// Seconds to wait after the fill, for the allocator to give transient memory back.
    #[arg(long, default_value_t = 10.0)]
    saturate_settle: f64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime =
        match tokio::runtime::Builder::new_multi_thread().worker_threads(args.threads.max(1)).enable_all().build() {
            Ok(runtime) => runtime,
            Err(e) => {
                eprintln!("loadgen: {e}");
                return ExitCode::from(2);
            }
        };
    match runtime.block_on(run(args)) {
        Ok(summary) => {
            println!("{}", summary.markdown());
            if summary.failures().is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("loadgen: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn seconds(value: f64, name: &str) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(value).with_context(|| format!("--{name}: not a duration in seconds"))
}

/// Sets up the credentials, runs the load and collects the figures.
async fn run(args: Args) -> anyhow::Result<Summary> {
    anyhow::ensure!(args.rate > 0.0 && args.rate <= 100_000.0, "--rate: between 0 and 100,000 requests per second");
    let duration = seconds(args.duration, "duration")?;
    let warmup = seconds(args.warmup, "warmup")?;
    let timeout = seconds(args.timeout, "timeout")?;
    let rss_interval = seconds(args.rss_interval, "rss-interval")?;
    anyhow::ensure!(!duration.is_zero() && !rss_interval.is_zero(), "--duration and --rss-interval must be positive");
    let mix = args.mix;

    let needs_users = [Route::Verify, Route::Refresh, Route::Pair].into_iter().any(|r| mix.weight(r) > 0);
    let users = match &args.users {
        Some(path) => {
            tokens::parse_users(&std::fs::read_to_string(path).with_context(|| format!("--users {}", path.display()))?)
                .with_context(|| format!("--users {}", path.display()))?
        }
        None if needs_users => anyhow::bail!("--users is needed for verify, refresh and pair"),
        None => Vec::new(),
    };
    let mut target = Target::new(&args.base_url, timeout, users)?;

    if mix.weight(Route::Profile) > 0 {
        let key_file = args.oauth_key_file.as_deref().context("profile needs the provider's key (--oauth-key-file)")?;
        let key = std::fs::read(key_file).with_context(|| format!("--oauth-key-file {}", key_file.display()))?;
        let user_id = args.profile_user_id.context("profile needs --profile-user-id")?;
        let lifetime = warmup + duration + Duration::from_secs(600);
        target.profile_token = Some(
            tokens::mint_oauth_access_token(&key, user_id, &args.client_id, lifetime)
                .with_context(|| format!("--oauth-key-file {}", key_file.display()))?,
        );
    }
    let target = Arc::new(target);

    // Credentials for verify and refresh, and a check of every route in the
    // mix before the clock starts (the profile check fills its cache).
    if needs_users {
        let logins = if mix.weight(Route::Refresh) > 0 { args.refresh_pool.max(1) } else { 1 };
        for _ in 0..logins {
            let refresh = target.pair().await.map_err(|f| anyhow::anyhow!("setting up: pair: {f}"))?;
            if mix.weight(Route::Refresh) > 0 {
                target.refresh_tokens.put(refresh);
            }
        }
    }
    for route in Route::ALL.into_iter().filter(|&r| mix.weight(r) > 0) {
        if route == Route::Profile {
            let answer = target.profile().await.map_err(|f| anyhow::anyhow!("setting up: profile: {f}"))?;
            eprintln!("loadgen: profile answers with {}", keys(&answer));
        } else {
            target.send(route).await.map_err(|f| anyhow::anyhow!("setting up: {route}: {f}"))?;
        }
    }
    let saturation = if args.saturate_connections > 0 {
        let busy = seconds(args.saturate_secs, "saturate-secs")?;
        let settle = seconds(args.saturate_settle, "saturate-settle")?;
        let s = saturate::fill_request_pools(&args.base_url, args.saturate_connections, busy, settle, args.server_pid)
            .await?;
        eprint!("loadgen: {}", s.markdown());
        Some(s)
    } else {
        None
    };
    eprintln!(
        "loadgen: {} req/s for {:?} after {:?} of warm-up, mix {mix}, {} refresh tokens",
        args.rate,
        duration,
        warmup,
        target.refresh_tokens.len()
    );

    let recorder = Arc::new(Recorder::default());
    let in_flight = Arc::new(Semaphore::new(args.max_in_flight as usize));
    let start = Instant::now() + Duration::from_millis(100);
    let warm_end = start + warmup;
    let end = warm_end + duration;
    let watcher = args.server_pid.map(|pid| tokio::spawn(memory::watch(pid, start, warm_end, end, rss_interval)));

    let mut scheduler = mix.scheduler();
    let mut client_lag = new_histogram();
    let mut peak_in_flight = 0;
    let period = 1.0 / args.rate;
    for i in 0u64.. {
        let at = start + Duration::from_secs_f64(i as f64 * period);
        if at >= end {
            break;
        }
        tokio::time::sleep_until(at).await;
        let route = scheduler.next_route();
        let phase = if at < warm_end { Phase::WarmUp } else { Phase::Measured };
        let second = (i as f64 * period) as usize;
        if phase == Phase::Measured {
            let lag = u64::try_from(at.elapsed().as_micros()).unwrap_or(u64::MAX);
            client_lag.saturating_record(lag.max(1));
        }
        let Ok(permit) = in_flight.clone().try_acquire_owned() else {
            recorder.record(phase, route, second, None, Err(Failure::Dropped));
            continue;
        };
        if phase == Phase::Measured {
            peak_in_flight = peak_in_flight.max(args.max_in_flight as usize - in_flight.available_permits());
        }
        let (target, recorder) = (target.clone(), recorder.clone());
        tokio::spawn(async move {
            let sent = Instant::now();
            let outcome = target.send(route).await;
            let timing = Timing { from_schedule: at.elapsed(), from_send: sent.elapsed() };
            recorder.record(phase, route, second, Some(timing), outcome);
            drop(permit);
        });
    }
    // Every request still in flight ends by its time-out.
    let drained =
        tokio::time::timeout(timeout + Duration::from_secs(5), in_flight.acquire_many(args.max_in_flight)).await;
    anyhow::ensure!(matches!(drained, Ok(Ok(_))), "requests still in flight after their time-out");

    let watch = match watcher {
        Some(handle) => Some(handle.await.context("the memory watcher failed")?),
        None => None,
    };
    if let (Some(path), Some(w)) = (&args.rss_csv, &watch) {
        let mut csv = String::from("seconds,rss_kib\n");
        for s in &w.samples {
            csv.push_str(&format!("{:.1},{}\n", s.secs, s.kib));
        }
        std::fs::write(path, csv).with_context(|| format!("--rss-csv {}", path.display()))?;
    }
    if let Some(path) = &args.timeline_csv {
        std::fs::write(path, recorder.timeline_csv()).with_context(|| format!("--timeline-csv {}", path.display()))?;
    }
    Ok(Summary {
        rate: args.rate,
        duration_secs: duration.as_secs_f64(),
        warmup_secs: warmup.as_secs_f64(),
        mix,
        measured: recorder.snapshot(Phase::Measured),
        warmup: recorder.snapshot(Phase::WarmUp),
        client_lag,
        peak_in_flight,
        memory_watched: watch.is_some(),
        memory: watch.as_ref().and_then(|w| memory::growth(&w.samples, warmup.as_secs_f64())),
        server_lost: watch.as_ref().is_some_and(|w| w.lost),
        cpu: watch.as_ref().and_then(|w| w.cpu),
        max_growth_percent: args.max_rss_growth,
        saturation,
    })
}

fn keys(answer: &serde_json::Value) -> String {
    answer.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>().join(", ")).unwrap_or_default()
}
