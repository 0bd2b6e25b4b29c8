//! The periodic purge, in small steps: every table it empties is emptied by
//! bounded batches (each one statement deleting at most `batch_rows` rows,
//! the oldest first by an index whose leading column is the expiry time),
//! the task yields between batches, and a stop requested between two
//! batches ends the pass at once. On SQLite each batch holds the single
//! writer connection for one statement only, so a request waits at most one
//! batch for it; and a batch is kept short in time, not only in rows: its
//! size adapts so that it takes about its engine's [`Pace`] budget (a
//! batch of 2,000 expired refresh tokens, scattered over their indexes,
//! held SQLite's writer for ~285 ms, and profile reads fell to 1/100 of
//! their rate while the purge ran); and the purge pauses after each batch
//! in proportion to the time it took, so that it holds the database a
//! bounded share of the time.
//!
//! On SQLite, a batch also waits for the requests' writes to leave the
//! writer alone for [`QUIET_FOR`] (at most [`QUIET_WAIT`]): while requests
//! keep the one writer busy, the purge takes it about once a second, so
//! that almost no request queues behind a batch, and it drains at its full
//! pace whenever the writes leave such gaps between them.
//!
//! [`drain`] is the loop over one table; [`Purge::pass`] runs it over
//! every table, logs what went and records the metrics. The binary decides
//! when a pass runs (after a start-up delay, then periodically).

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use credencial_ports::WriterActivity;

use crate::error::ServiceError;
use crate::metrics::{Metrics, PurgeTable};
use crate::{
    AccountAdminService, GrantService, MailSender, OAuthService, SessionService, TaxIdValidationService, TokenService,
};

/// Rows one purge statement deletes at most, unless configured otherwise
/// (`purge_batch_rows`).
pub const DEFAULT_PURGE_BATCH_ROWS: u32 = 2_000;

/// How a purge paces itself on one engine: how long a batch should hold
/// the database at most (`budget`: batches that take longer are halved,
/// batches under a quarter of it doubled, up to `purge_batch_rows`), and
/// how many times as long as a batch took it waits before the next
/// (`pause_per_batch`, at most eight budgets): with batches within the
/// budget it holds the database at most 1 / (1 + `pause_per_batch`) of the
/// time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    /// How long one batch should take at most.
    pub budget: Duration,
    /// Times as long as a batch took that the purge waits after it.
    pub pause_per_batch: u32,
}

impl Pace {
    /// SQLite's: a request that needs the one writer while a batch holds it
    /// waits a batch at worst, so batches are short (5 ms) and hold it a
    /// quarter of the time. At a million accounts, 20 ms and half the time
    /// made the profile read's p99 7× its idle value during a purge; 5 ms
    /// and a quarter, about 2×.
    pub const SINGLE_WRITER: Self = Self { budget: Duration::from_millis(5), pause_per_batch: 3 };

    /// PostgreSQL's: readers and writers do not wait for a batch's rows,
    /// so batches of 20 ms holding it half the time keep a request's p99
    /// within 2× (1.7× at a million accounts) and drain a backlog four
    /// times faster than SQLite's pace would (which measured worse there:
    /// more, smaller commits).
    pub const CONCURRENT: Self = Self { budget: Duration::from_millis(20), pause_per_batch: 1 };

    /// How long to wait after a batch that took `took`.
    pub fn pause_after(self, took: Duration) -> Duration {
        (took * self.pause_per_batch).min(self.budget * 8)
    }
}

/// Rows of a pass's first batch on a table (or `purge_batch_rows`, if
/// smaller): small enough to stay under the budget on a slow disk, and
/// doubled within a few batches where the database is fast.
pub const START_BATCH_ROWS: u32 = 250;

/// The size of the batch after one of `rows` that took `took`, at most
/// `max`: halved (at least 1) when it took longer than `budget`, doubled
/// when it took under a quarter of it, else kept.
pub fn next_batch_rows(rows: u32, took: Duration, max: u32, budget: Duration) -> u32 {
    let max = max.max(1);
    let next = if took > budget {
        rows / 2
    } else if took < budget / 4 {
        rows.saturating_mul(2)
    } else {
        rows
    };
    next.clamp(1, max)
}

/// Seconds the service serves before its first purge pass, unless
/// configured otherwise (`purge_start_delay_secs`).
pub const DEFAULT_PURGE_START_DELAY_SECS: u64 = 300;

/// How a [`drain`] ended.
#[derive(Debug)]
pub enum DrainEnd {
    /// A batch came back short: nothing (or only locked rows) left.
    Finished,
    /// A stop was requested between two batches.
    Stopped,
    /// A batch failed; the batches before it stay done.
    Failed(ServiceError),
}

/// What a [`drain`] did.
#[derive(Debug)]
pub struct Drained {
    /// Rows deleted, every batch together.
    pub rows: u64,
    /// Batches run (a failed one not counted).
    pub batches: u64,
    /// How it ended.
    pub end: DrainEnd,
}

/// How long the requests' writes must have left the writer alone before a
/// batch takes it ([`drain_quietly`]).
pub const QUIET_FOR: Duration = Duration::from_millis(2);

/// The longest a batch waits for [`QUIET_FOR`]: under sustained load the
/// purge still runs about one batch a second.
pub const QUIET_WAIT: Duration = Duration::from_secs(1);

/// How often a waiting batch looks at the writer again.
const QUIET_TICK: Duration = Duration::from_millis(1);

/// Waits until `quiet` says the writer has been free of requests' writes
/// for [`QUIET_FOR`], or [`QUIET_WAIT`] has passed; false if `stopping`
/// said the service is stopping meanwhile.
async fn until_quiet(quiet: &dyn WriterActivity, stopping: &(impl Fn() -> bool + Sync)) -> bool {
    let started = tokio::time::Instant::now();
    while quiet.quiet_for() < QUIET_FOR && started.elapsed() < QUIET_WAIT {
        if stopping() {
            return false;
        }
        tokio::time::sleep(QUIET_TICK).await;
    }
    true
}

/// Calls `batch(rows)` (one bounded statement deleting at most `rows`,
/// returning how many it deleted) until a call returns fewer than it was
/// asked, a call fails, or `stopping()` says the service is stopping;
/// `stopping` is asked before every batch, and between two batches the
/// task waits as `pace` says. The first batch asks [`START_BATCH_ROWS`]
/// rows, the next ones [`next_batch_rows`] within `pace`'s budget, never
/// more than `limit` (0 counts as 1).
pub async fn drain<F, Fut>(limit: u32, pace: Pace, stopping: &(impl Fn() -> bool + Sync), batch: F) -> Drained
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<u64, ServiceError>>,
{
    drain_quietly(limit, pace, None, stopping, batch).await
}

/// [`drain`], each batch first waiting for a quiet writer ([`until_quiet`])
/// when `quiet` is given (SQLite's). The wait is not the batch's time: the
/// sizes and pauses follow the batches alone.
pub async fn drain_quietly<F, Fut>(
    limit: u32,
    pace: Pace,
    quiet: Option<&dyn WriterActivity>,
    stopping: &(impl Fn() -> bool + Sync),
    mut batch: F,
) -> Drained
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<u64, ServiceError>>,
{
    let limit = limit.max(1);
    let mut size = START_BATCH_ROWS.min(limit);
    let mut drained = Drained { rows: 0, batches: 0, end: DrainEnd::Finished };
    loop {
        let quiet_enough = match quiet {
            Some(quiet) => until_quiet(quiet, stopping).await,
            None => true,
        };
        if !quiet_enough || stopping() {
            drained.end = DrainEnd::Stopped;
            return drained;
        }
        let started = Instant::now();
        match batch(size).await {
            Ok(rows) => {
                drained.rows += rows;
                drained.batches += 1;
                if rows < u64::from(size) {
                    return drained;
                }
                let took = started.elapsed();
                size = next_batch_rows(size, took, limit, pace.budget);
                // A while without the database (on SQLite, without the one
                // writer), for the requests.
                tokio::time::sleep(pace.pause_after(took)).await;
            }
            Err(e) => {
                drained.end = DrainEnd::Failed(e);
                return drained;
            }
        }
        tokio::task::yield_now().await;
    }
}

/// What one [`Purge::pass`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PassOutcome {
    /// Rows deleted (sealed pairs: forgotten), every table together.
    pub rows: u64,
    /// Whether a stop request ended the pass before every table was done.
    pub stopped: bool,
}

/// The periodic purge over every table it keeps small.
#[derive(Clone)]
pub struct Purge {
    oauth: Arc<OAuthService>,
    tokens: Arc<TokenService>,
    validation: Arc<TaxIdValidationService>,
    grants: Arc<GrantService>,
    accounts: Arc<AccountAdminService>,
    metrics: Metrics,
    batch_rows: u32,
    pace: Pace,
    quiet: Option<Arc<dyn WriterActivity>>,
    sessions: Option<Arc<SessionService>>,
    mail: Option<Arc<MailSender>>,
}

impl std::fmt::Debug for Purge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Purge").field("batch_rows", &self.batch_rows).finish_non_exhaustive()
    }
}

impl Purge {
    /// A purge through these services, deleting at most `batch_rows` rows
    /// per statement at SQLite's pace (the cautious one; see
    /// [`Purge::with_pace`]), recording on `metrics`.
    pub fn new(
        oauth: Arc<OAuthService>,
        tokens: Arc<TokenService>,
        validation: Arc<TaxIdValidationService>,
        grants: Arc<GrantService>,
        accounts: Arc<AccountAdminService>,
        metrics: Metrics,
        batch_rows: u32,
    ) -> Self {
        let pace = Pace::SINGLE_WRITER;
        Self {
            oauth,
            tokens,
            validation,
            grants,
            accounts,
            metrics,
            batch_rows,
            pace,
            quiet: None,
            sessions: None,
            mail: None,
        }
    }

    /// The same purge, each batch waiting for `quiet` to report a quiet
    /// writer first ([`drain_quietly`]; SQLite's one writer).
    pub fn with_quiet_writer(mut self, quiet: Arc<dyn WriterActivity>) -> Self {
        self.quiet = Some(quiet);
        self
    }

    /// The same purge at `pace` (the engine's).
    pub fn with_pace(mut self, pace: Pace) -> Self {
        self.pace = pace;
        self
    }

    /// The same purge, also deleting delivered mail and expired links.
    pub fn with_mail(mut self, mail: Arc<MailSender>) -> Self {
        self.mail = Some(mail);
        self
    }

    /// The same purge, also deleting expired browser sessions.
    pub fn with_sessions(mut self, sessions: Arc<SessionService>) -> Self {
        self.sessions = Some(sessions);
        self
    }

    /// One pass: every table of [`PurgeTable::ALL`] in turn, [`drain`]ed
    /// in batches. A failing table is logged and the pass goes on with the
    /// next; a stop request ends the pass within one batch (the rest is
    /// left for the next pass). Logs what went, records the rows, the
    /// batches and the pass's time.
    pub async fn pass(&self, stopping: &(impl Fn() -> bool + Sync)) -> PassOutcome {
        let started = Instant::now();
        let mut outcome = PassOutcome { rows: 0, stopped: false };
        for table in PurgeTable::ALL {
            let drained = drain_quietly(self.batch_rows, self.pace, self.quiet.as_deref(), stopping, |limit| {
                self.batch(table, limit)
            })
            .await;
            outcome.rows += drained.rows;
            let (label, rows, batches) = (table.label(), drained.rows, drained.batches);
            match drained.end {
                DrainEnd::Finished if rows == 0 => {}
                DrainEnd::Finished => tracing::info!(table = label, deleted = rows, batches, "purged"),
                DrainEnd::Failed(e) => {
                    tracing::warn!(table = label, deleted = rows, batches, error = %e, "purge failed");
                }
                DrainEnd::Stopped => {
                    tracing::info!(
                        table = label,
                        deleted = rows,
                        batches,
                        "purge stopped: the service is stopping, the rest waits for the next pass"
                    );
                    outcome.stopped = true;
                    break;
                }
            }
        }
        self.metrics.purge_pass(started.elapsed());
        outcome
    }

    /// One bounded statement on `table`, counted.
    async fn batch(&self, table: PurgeTable, limit: u32) -> Result<u64, ServiceError> {
        let rows = match table {
            PurgeTable::AuthorizationCodes => self.oauth.purge_expired_codes(limit).await?,
            PurgeTable::SealedPairs => self.tokens.forget_expired_sealed_pairs(limit).await?,
            PurgeTable::RefreshTokens => self.tokens.purge_expired_refresh_tokens(limit).await?,
            PurgeTable::LoginFailures => self.tokens.throttle().purge_ended(limit).await?,
            PurgeTable::LoginHistory => self.accounts.purge_login_history(limit).await?,
            PurgeTable::TaxIdAttempts => self.validation.purge_old_attempts(limit).await?,
            PurgeTable::AccessLog => self.grants.purge_access_log(limit).await?,
            PurgeTable::Sessions => match &self.sessions {
                Some(sessions) => sessions.purge_expired(limit).await?,
                None => 0,
            },
            PurgeTable::PasskeyCeremonies => match self.sessions.as_ref().and_then(|s| s.passkeys()) {
                Some(passkeys) => passkeys.purge_ceremonies(limit).await?,
                None => 0,
            },
            PurgeTable::SecurityEvents => match self.sessions.as_ref().and_then(|s| s.security_log()) {
                Some(log) => log.purge(limit).await?,
                None => 0,
            },
            PurgeTable::Mail => match &self.mail {
                Some(mail) => mail.purge(limit).await?,
                None => 0,
            },
        };
        self.metrics.purge_batch(table, rows);
        Ok(rows)
    }
}
