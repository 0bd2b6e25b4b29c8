//! The request-pool fill before the warm-up.
//!
//! actix-http keeps the request objects of finished requests for reuse, per
//! worker thread: up to 128 `HttpRequest`s and 128 `RequestHead`s, each
//! holding its header map's capacity and the connection read buffer its URI
//! still points into (about 16 KiB a request; a heap profile of the release
//! binary, docs/performance.md). The pools only grow when more requests are
//! in flight at once than ever before, so at a steady rate they stay small
//! until the first stall of the machine piles requests up, and the step of
//! resident memory that follows (bounded: at most 256 objects per worker)
//! looks like growth. This phase reaches that bound before the clock starts:
//! many connections keep `GET /readyz` busy for a while (each request waits
//! for one of the database pool's connections, so hundreds are in flight in
//! the server at once), then the allocator is given time to hand the
//! transient memory back. The measured window then shows any growth that is
//! not the pools.

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::time::Instant;

use crate::proc_stats::rss_kib;

/// What the fill did.
#[derive(Debug, Clone, Default)]
pub struct Saturation {
    /// Connections kept busy at once.
    pub connections: usize,
    /// How long they were kept busy.
    pub secs: f64,
    /// Answers by status.
    pub statuses: BTreeMap<u16, u64>,
    /// Requests that got no answer (time-out, refused).
    pub transport_errors: u64,
    /// Server RSS before the fill and after it had settled, KiB.
    pub rss_kib: Option<(u64, u64)>,
}

/// Keeps `connections` connections busy with `GET {base}/readyz` for
/// `busy`, then waits `settle`; reads the RSS of `pid` before and after.
pub async fn fill_request_pools(
    base: &str,
    connections: usize,
    busy: Duration,
    settle: Duration,
    pid: Option<u32>,
) -> anyhow::Result<Saturation> {
    let before = pid.and_then(rss_kib);
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(connections)
        .timeout(Duration::from_secs(10))
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true)
        .build()?;
    let url = format!("{}/readyz", base.trim_end_matches('/'));
    let deadline = Instant::now() + busy;
    let tasks: Vec<_> = (0..connections)
        .map(|_| {
            let (client, url) = (client.clone(), url.clone());
            tokio::spawn(async move {
                let mut statuses = BTreeMap::<u16, u64>::new();
                let mut transport_errors = 0;
                while Instant::now() < deadline {
                    match client.get(&url).send().await {
                        Ok(response) => {
                            *statuses.entry(response.status().as_u16()).or_default() += 1;
                            // Read the body so the connection goes back to the pool.
                            let _ = response.bytes().await;
                        }
                        Err(_) => transport_errors += 1,
                    }
                }
                (statuses, transport_errors)
            })
        })
        .collect();
    let mut saturation = Saturation { connections, secs: busy.as_secs_f64(), ..Saturation::default() };
    for task in tasks {
        let (statuses, transport_errors) = task.await?;
        for (status, n) in statuses {
            *saturation.statuses.entry(status).or_default() += n;
        }
        saturation.transport_errors += transport_errors;
    }
    drop(client);
    tokio::time::sleep(settle).await;
    saturation.rss_kib = before.zip(pid.and_then(rss_kib));
    Ok(saturation)
}

impl Saturation {
    /// One paragraph for the summary.
    pub fn markdown(&self) -> String {
        let answers: Vec<String> = self.statuses.iter().map(|(status, n)| format!("{n} × {status}")).collect();
        let rss = match self.rss_kib {
            Some((before, after)) => {
                format!("; server RSS {:.1} → {:.1} MiB once settled", before as f64 / 1024.0, after as f64 / 1024.0)
            }
            None => String::new(),
        };
        format!(
            "Request-pool fill before the warm-up (not in any figure): {} connections kept `GET /readyz` busy \
             for {} s — {}{}{}.\n",
            self.connections,
            self.secs,
            if answers.is_empty() { "no answers".to_owned() } else { answers.join(", ") },
            if self.transport_errors > 0 {
                format!(", {} without an answer", self.transport_errors)
            } else {
                String::new()
            },
            rss
        )
    }
}
