//! The periodic purge, in small steps: every table it empties is emptied by
//! bounded batches (each one statement deleting at most `batch_rows` rows,
//! the oldest first by an index whose leading column is the expiry time),
//! the task yields between batches, and a stop requested between two
//! batches ends the pass at once. On SQLite each batch holds the single
//! writer connection for one statement only, so a request waits at most one
//! batch for it; and a batch is kept short in time, not only in rows: its
//! size adapts so that it takes about [`BATCH_TIME_BUDGET`] (a batch of
//! 2,000 expired refresh tokens, scattered over their indexes, held
//! SQLite's writer for ~285 ms, and profile reads fell to 1/100 of their
//! rate while the purge ran); and the purge waits [`PAUSE_PER_BATCH`]
//! times as long as a batch took before the next, so that it holds the
//! database a quarter of the time at most.
//!
//! [`drain`] is the loop over one table; [`Purge::pass`] runs it over
//! every table, logs what went and records the metrics. The binary decides
//! when a pass runs (after a start-up delay, then periodically).

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::ServiceError;
use crate::metrics::{Metrics, PurgeTable};
use crate::{
    AccountAdminService, GrantService, MailSender, OAuthService, SessionService, TaxIdValidationService, TokenService,
};

/// Rows one purge statement deletes at most, unless configured otherwise
/// (`purge_batch_rows`).
pub const DEFAULT_PURGE_BATCH_ROWS: u32 = 2_000;

/// How long one purge batch should hold the database at most: batches
/// that take longer are halved, batches well under it doubled (up to
/// `purge_batch_rows`). A request that needs SQLite's writer while a batch
/// holds it waits this long at worst: at a million accounts a budget of
/// 20 ms made the profile read's p99 7× its idle value during a purge.
pub const BATCH_TIME_BUDGET: Duration = Duration::from_millis(5);

/// How many times as long as a batch took the purge waits before the next
/// (at most eight budgets): it holds the database at most a quarter of the
/// time, and a backlog drains about four times slower than flat out.
pub const PAUSE_PER_BATCH: u32 = 3;

/// Rows of a pass's first batch on a table (or `purge_batch_rows`, if
/// smaller): small enough to stay under the budget on a slow disk, and
/// doubled within a few batches where the database is fast.
pub const START_BATCH_ROWS: u32 = 250;

/// The size of the batch after one of `rows` that took `took`, at most
/// `max`: halved (at least 1) when it took longer than the budget,
/// doubled when it took under a quarter of it, else kept.
pub fn next_batch_rows(rows: u32, took: Duration, max: u32) -> u32 {
    let max = max.max(1);
    let next = if took > BATCH_TIME_BUDGET {
        rows / 2
    } else if took < BATCH_TIME_BUDGET / 4 {
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

/// Calls `batch(rows)` (one bounded statement deleting at most `rows`,
/// returning how many it deleted) until a call returns fewer than it was
/// asked, a call fails, or `stopping()` says the service is stopping;
/// `stopping` is asked before every batch, and between two batches the
/// task waits [`PAUSE_PER_BATCH`] times as long as the last one took (at
/// most eight budgets), so that the purge holds the database at most a
/// quarter of the time. The first
/// batch asks [`START_BATCH_ROWS`] rows, the next ones
/// [`next_batch_rows`], never more than `limit` (0 counts as 1).
pub async fn drain<F, Fut>(limit: u32, stopping: &(impl Fn() -> bool + Sync), mut batch: F) -> Drained
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<u64, ServiceError>>,
{
    let limit = limit.max(1);
    let mut size = START_BATCH_ROWS.min(limit);
    let mut drained = Drained { rows: 0, batches: 0, end: DrainEnd::Finished };
    loop {
        if stopping() {
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
                size = next_batch_rows(size, took, limit);
                // Three times as long without the database: the purge
                // takes at most a quarter of its time (on SQLite, of the
                // one writer).
                tokio::time::sleep((took * PAUSE_PER_BATCH).min(BATCH_TIME_BUDGET * 8)).await;
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
    /// per statement, recording on `metrics`.
    pub fn new(
        oauth: Arc<OAuthService>,
        tokens: Arc<TokenService>,
        validation: Arc<TaxIdValidationService>,
        grants: Arc<GrantService>,
        accounts: Arc<AccountAdminService>,
        metrics: Metrics,
        batch_rows: u32,
    ) -> Self {
        Self { oauth, tokens, validation, grants, accounts, metrics, batch_rows, sessions: None, mail: None }
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
            let drained = drain(self.batch_rows, stopping, |limit| self.batch(table, limit)).await;
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
