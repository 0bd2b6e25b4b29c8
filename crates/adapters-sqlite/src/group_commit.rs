//! Group commit: the small writes of the hot paths that arrive together
//! (access-log appends, refresh-token rotations, logins) committed
//! together, one write transaction and one sync of the WAL for the group.
//!
//! The file is opened with `synchronous=FULL` (see [`crate::database`]):
//! a commit returns only once the WAL is on disk, so an answered request's
//! write survives a power cut. A sync costs a disk flush; committing each
//! write alone would cap the writes per second at the disk's flushes per
//! second. Here a leader task takes every write waiting when it is free (at
//! most [`MAX_GROUP`]), runs each in a savepoint of one `BEGIN IMMEDIATE`
//! transaction, appends the group's access-log entries by one statement,
//! commits once, and only then answers each caller with its own result (a
//! group of access-log entries alone is that one statement, its own
//! transaction). A write that fails rolls back to its savepoint and fails
//! alone, as does an entry the table refuses; a failed commit fails the
//! whole group. No write waits for a group to fill: a lone write commits at
//! once, and under load the next group is what queued during the last
//! commit. (A pause before each group under load, as PostgreSQL's
//! `commit_delay`, made fewer commits but cost the profile read a fifth of
//! its rate: docs/performance.md.)

use std::sync::{Arc, Mutex};

use credencial_ports::account::AccessLogEntry;
use credencial_ports::RepositoryError;
use futures_util::future::BoxFuture;
use sqlx::{Acquire, SqliteConnection, SqlitePool};
use tokio::sync::oneshot;

use crate::account::access_log::{append_group_on, GroupEntry};
use crate::error::to_repository_error;

/// The most writes one group commits.
pub const MAX_GROUP: usize = 256;

/// A caller's write, on the group's connection inside its savepoint.
pub type Work<T> =
    Box<dyn for<'c> FnOnce(&'c mut SqliteConnection) -> BoxFuture<'c, Result<T, RepositoryError>> + Send>;

/// Hands a write's result to its caller once the group's fate is known.
type Delivery = Box<dyn FnOnce(Result<(), RepositoryError>) + Send>;

/// A queued write, its result type erased.
trait Queued: Send {
    /// Runs the write in a savepoint on `conn`; answers how to deliver its
    /// result, and whether the transaction is still sound (its savepoint
    /// released or rolled back).
    fn run<'c>(self: Box<Self>, conn: &'c mut SqliteConnection) -> BoxFuture<'c, (Delivery, bool)>;

    /// Fails the write before it ran.
    fn fail(self: Box<Self>, error: RepositoryError);
}

/// A write and the channel its result goes back on.
struct Pending<T> {
    work: Work<T>,
    reply: oneshot::Sender<Result<T, RepositoryError>>,
}

impl<T: Send + 'static> Queued for Pending<T> {
    fn run<'c>(self: Box<Self>, conn: &'c mut SqliteConnection) -> BoxFuture<'c, (Delivery, bool)> {
        Box::pin(async move {
            let Pending { work, reply } = *self;
            let (outcome, sound) = in_savepoint(conn, work).await;
            let delivery: Delivery = Box::new(move |committed| {
                // The caller may have gone (a client that hung up).
                let _ = reply.send(committed.and(outcome));
            });
            (delivery, sound)
        })
    }

    fn fail(self: Box<Self>, error: RepositoryError) {
        let _ = self.reply.send(Err(error));
    }
}

/// Runs `work` in a savepoint on `conn`: released if it succeeds, rolled
/// back if it fails. The flag is false when the savepoint could not be
/// ended, so that the group's transaction is no longer to be trusted.
async fn in_savepoint<T>(conn: &mut SqliteConnection, work: Work<T>) -> (Result<T, RepositoryError>, bool) {
    let mut savepoint = match conn.begin().await {
        Ok(savepoint) => savepoint,
        Err(e) => return (Err(to_repository_error(e)), false),
    };
    match work(&mut savepoint).await {
        Ok(value) => match savepoint.commit().await {
            Ok(()) => (Ok(value), true),
            Err(e) => (Err(to_repository_error(e)), false),
        },
        Err(error) => {
            let sound = savepoint.rollback().await.is_ok();
            (Err(error), sound)
        }
    }
}

/// What waits for the next group: a write of its own, or an access-log
/// entry (a group's entries are appended by one statement).
enum Job {
    Write(Box<dyn Queued>),
    Log(GroupEntry, oneshot::Sender<Result<bool, RepositoryError>>),
}

/// The handle on the group committer of one database file: cheap to
/// clone, shared by every store of the file.
///
/// There is no committer of its own waiting on a queue: the write that
/// finds no group being committed starts a leader task on its own worker
/// thread, which commits what has queued, then what queued meanwhile,
/// until nothing is left — so a lone write pays no hop to another thread,
/// and under load the writes queue behind the leader's commit and go
/// together. The leader is a task of its own, not the caller's future, so
/// a caller that goes away (a client that hung up) never strands the queue.
#[derive(Clone)]
pub struct GroupCommit {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for GroupCommit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupCommit").finish_non_exhaustive()
    }
}

/// The writer and the queue the leader takes its groups from.
struct Shared {
    writer: SqlitePool,
    state: Mutex<Queue>,
    /// The runtime that opened the file: a leader whose own runtime shut
    /// down (an HTTP worker's, at shutdown) hands the queue on to it.
    runtime: tokio::runtime::Handle,
}

/// The jobs waiting for the next group, and whether a leader is at work
/// (it will take them).
#[derive(Default)]
struct Queue {
    jobs: Vec<Job>,
    leading: bool,
}

impl GroupCommit {
    /// The group committer of `writer` (the single writer's pool).
    ///
    /// # Panics
    /// Outside a tokio runtime (the file is opened by async code).
    pub fn start(writer: SqlitePool) -> Self {
        let runtime = tokio::runtime::Handle::current();
        Self { shared: Arc::new(Shared { writer, state: Mutex::new(Queue::default()), runtime }) }
    }

    /// Runs `work` in the next group and answers its result once the group
    /// is committed (durable): an error if `work` failed (nothing of it is
    /// kept) or if the group's commit failed (nothing of the group is).
    pub async fn run<T: Send + 'static>(&self, work: Work<T>) -> Result<T, RepositoryError> {
        let (reply, answer) = oneshot::channel();
        self.submit(Job::Write(Box::new(Pending { work, reply })));
        answer.await.map_err(|_| stopped())?
    }

    /// Appends the access-log `entry` in the next group if, then, the user
    /// is active and grants its client exactly `grant` (the stored scopes
    /// text the read saw); answers whether it was written, once the group
    /// is committed.
    pub(crate) async fn log(&self, entry: AccessLogEntry, grant: String) -> Result<bool, RepositoryError> {
        let (reply, answer) = oneshot::channel();
        self.submit(Job::Log((entry, grant), reply));
        answer.await.map_err(|_| stopped())?
    }

    /// Whether writes wait for a group or a group is being written (the
    /// writer is not quiet: [`crate::SqliteDb`]'s `WriterActivity`).
    pub(crate) fn busy(&self) -> bool {
        let queue = self.shared.lock();
        queue.leading || !queue.jobs.is_empty()
    }

    /// Queues `job`; starts a leader if none is at work.
    fn submit(&self, job: Job) {
        let start_leader = {
            let mut queue = self.shared.lock();
            queue.jobs.push(job);
            !std::mem::replace(&mut queue.leading, true)
        };
        if start_leader {
            tokio::spawn(lead(self.shared.clone()));
        }
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        // A panic while the lock was held leaves a queue that is still
        // whole (pushes and takes only).
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes the next group (at most [`MAX_GROUP`] jobs, the oldest
    /// first); none left ends the leader's turn.
    fn next_group(&self) -> Vec<Job> {
        let mut queue = self.lock();
        if queue.jobs.is_empty() {
            queue.leading = false;
            return Vec::new();
        }
        let take = queue.jobs.len().min(MAX_GROUP);
        queue.jobs.drain(..take).collect()
    }
}

fn stopped() -> RepositoryError {
    RepositoryError::Unexpected("the SQLite group committer stopped before answering".into())
}

/// The leader: commits group after group until the queue is empty. It
/// first lets the tasks already running on its thread queue their writes
/// too: a larger group for no timer's wait.
async fn lead(shared: Arc<Shared>) {
    let mut turn = Turn { shared, ended: false };
    tokio::task::yield_now().await;
    loop {
        let mut group = turn.shared.next_group();
        if group.is_empty() {
            turn.ended = true;
            return;
        }
        commit(&turn.shared.writer, &mut group).await;
    }
}

/// A leader's turn. Dropped before it ended (its runtime shut down), it
/// frees the lead and hands what is queued to a leader on the runtime that
/// opened the file, so that no caller waits for a leader that is gone.
struct Turn {
    shared: Arc<Shared>,
    ended: bool,
}

impl Drop for Turn {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let pending = {
            let mut queue = self.shared.lock();
            let pending = !queue.jobs.is_empty();
            queue.leading = pending;
            pending
        };
        if pending {
            self.shared.runtime.spawn(lead(self.shared.clone()));
        }
    }
}

/// Runs and commits one group: its writes one by one, each in a savepoint,
/// then its access-log entries together; every job hears its result.
async fn commit(writer: &SqlitePool, group: &mut Vec<Job>) {
    let mut writes = Vec::new();
    let (mut entries, mut replies) = (Vec::new(), Vec::new());
    for job in group.drain(..) {
        match job {
            Job::Write(write) => writes.push(write),
            Job::Log(entry, reply) => {
                entries.push(entry);
                replies.push(reply);
            }
        }
    }
    let logged = if writes.is_empty() {
        // Access-log entries alone: one statement, which is its own
        // transaction (durable when it returns).
        match writer.acquire().await {
            Ok(mut conn) => append_group_on(&mut conn, &entries, false).await,
            Err(e) => Err(to_repository_error(e)),
        }
    } else {
        commit_with_writes(writer, writes, &entries).await
    };
    match logged {
        Ok(outcomes) => {
            for (reply, outcome) in replies.into_iter().zip(outcomes) {
                let _ = reply.send(outcome);
            }
        }
        Err(error) => {
            for reply in replies {
                let _ = reply.send(Err(error.clone()));
            }
        }
    }
}

/// Runs `writes` and appends `entries` in one `BEGIN IMMEDIATE`
/// transaction and commits it; each write hears its result here, the
/// entries' outcomes are answered (an error: nothing of the group was
/// kept).
async fn commit_with_writes(
    writer: &SqlitePool,
    writes: Vec<Box<dyn Queued>>,
    entries: &[GroupEntry],
) -> Result<Vec<Result<bool, RepositoryError>>, RepositoryError> {
    let mut tx = match writer.begin_with("BEGIN IMMEDIATE").await {
        Ok(tx) => tx,
        Err(e) => {
            let error = to_repository_error(e);
            for write in writes {
                write.fail(error.clone());
            }
            return Err(error);
        }
    };
    let mut deliveries = Vec::with_capacity(writes.len());
    let mut writes = writes.into_iter();
    let mut sound = true;
    for write in writes.by_ref() {
        let (delivery, still_sound) = write.run(&mut tx).await;
        deliveries.push(delivery);
        if !still_sound {
            // The writes after it do not run.
            sound = false;
            break;
        }
    }
    let logged =
        if sound && !entries.is_empty() { append_group_on(&mut tx, entries, true).await } else { Ok(Vec::new()) };
    let committed = match (sound, logged) {
        (true, Ok(logged)) => tx.commit().await.map(|()| logged).map_err(to_repository_error),
        _ => {
            // Dropping the transaction rolls it back.
            drop(tx);
            Err(RepositoryError::Unexpected("the group's transaction failed and was rolled back".into()))
        }
    };
    let fate = committed.as_ref().map(|_| ()).map_err(Clone::clone);
    for delivery in deliveries {
        delivery(fate.clone());
    }
    if let Err(error) = &fate {
        for write in writes {
            write.fail(error.clone());
        }
    }
    committed
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use futures_util::future::join_all;

    use super::*;
    use crate::testing::TestDatabase;

    /// A write of the group that inserts `value` into `t`, then fails if
    /// asked to.
    fn write(value: i64, fail: bool) -> Work<i64> {
        Box::new(move |conn| {
            Box::pin(async move {
                sqlx::query("INSERT INTO t (v) VALUES (?1)")
                    .bind(value)
                    .execute(&mut *conn)
                    .await
                    .map_err(to_repository_error)?;
                if fail {
                    return Err(RepositoryError::Unexpected(format!("write {value} failed")));
                }
                Ok(value)
            })
        })
    }

    async fn table(file: &TestDatabase) {
        sqlx::query("CREATE TABLE t (v INTEGER NOT NULL UNIQUE)").execute(file.db.writer()).await.expect("create t");
    }

    async fn stored(file: &TestDatabase) -> Vec<i64> {
        sqlx::query_scalar("SELECT v FROM t ORDER BY v").fetch_all(file.db.readers()).await.expect("read t")
    }

    #[tokio::test]
    async fn the_writer_is_quiet_only_when_no_write_waits_for_it_or_holds_it() {
        use credencial_ports::WriterActivity;
        let file = TestDatabase::new().await;
        table(&file).await;
        let group = file.db.group().clone();
        // A write straight on the writer (as the panel's, a code's
        // redemption) holds it: busy.
        let held = file.db.writer().acquire().await.expect("hold the writer");
        assert_eq!(file.db.quiet_for(), Duration::ZERO, "the writer is held");
        // A group that cannot get the writer meanwhile: busy too.
        let pending = tokio::spawn({
            let group = group.clone();
            async move { group.run(write(1, false)).await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(group.busy());
        drop(held);
        assert_eq!(pending.await.expect("task").expect("written"), 1);
        // Once both are done, quiet for as long as it has been (the
        // connection's return to the pool is a task of its own: waited for).
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while file.db.quiet_for() == Duration::ZERO {
            assert!(std::time::Instant::now() < deadline, "never quiet");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        let quiet = file.db.quiet_for();
        assert!(quiet >= Duration::from_millis(50), "{quiet:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(file.db.quiet_for() > quiet, "and more so later");
    }

    #[tokio::test]
    async fn the_file_syncs_every_commit() {
        let file = TestDatabase::new().await;
        let mode: i64 = sqlx::query_scalar("PRAGMA synchronous").fetch_one(file.db.writer()).await.expect("pragma");
        assert_eq!(mode, 2, "synchronous=FULL on the writer");
    }

    #[tokio::test]
    async fn writes_queued_together_commit_as_one_group_and_a_failing_one_alone_is_undone() {
        let file = TestDatabase::new().await;
        table(&file).await;
        // The writer held elsewhere: the first write takes the committer,
        // which waits for the writer; the others queue behind it and form
        // the next group together.
        let held = file.db.writer().acquire().await.expect("hold the writer");
        let group = file.db.group().clone();
        let pending: Vec<_> = (1..=20)
            .map(|v| {
                let group = group.clone();
                tokio::spawn(async move { group.run(write(v, v == 7)).await })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(100)).await;
        drop(held);
        let results: Vec<_> = join_all(pending).await.into_iter().map(|r| r.expect("task")).collect();

        for (v, result) in (1..=20).zip(&results) {
            match result {
                Ok(answered) => assert_eq!(*answered, v),
                Err(e) => assert!(v == 7 && e.to_string().contains("write 7 failed"), "write {v}: {e}"),
            }
        }
        assert!(results[6].is_err(), "the failing write hears its own failure");
        let expected: Vec<i64> = (1..=20).filter(|v| *v != 7).collect();
        assert_eq!(stored(&file).await, expected, "the others committed, nothing of the failing one");
    }

    #[tokio::test]
    async fn a_conflict_in_a_group_is_that_write_s_conflict() {
        let file = TestDatabase::new().await;
        table(&file).await;
        let group = file.db.group();
        assert_eq!(group.run(write(1, false)).await.expect("first"), 1);
        let (again, other) = tokio::join!(group.run(write(1, false)), group.run(write(2, false)));
        assert!(matches!(again, Err(RepositoryError::Conflict(_))), "{again:?}");
        assert_eq!(other.expect("the other write"), 2);
        assert_eq!(stored(&file).await, vec![1, 2]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn writes_queued_behind_a_leader_whose_runtime_shut_down_are_still_committed() {
        let file = TestDatabase::new().await;
        table(&file).await;
        let held = file.db.writer().acquire().await.expect("hold the writer");
        // A leader on a runtime of its own (an HTTP worker's), stuck at
        // BEGIN while the writer is held.
        let worker = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        let group = file.db.group().clone();
        let first = worker.spawn(async move { group.run(write(1, false)).await });
        let thread = std::thread::spawn(move || {
            worker.block_on(async { tokio::time::sleep(Duration::from_millis(100)).await });
            worker
        });
        let worker = thread.join().expect("worker thread");
        // Another write queues behind that leader; then its runtime goes.
        let group = file.db.group().clone();
        let second = tokio::spawn(async move { group.run(write(2, false)).await });
        tokio::time::sleep(Duration::from_millis(50)).await;
        worker.shutdown_background();
        drop(held);
        let second = tokio::time::timeout(Duration::from_secs(10), second).await.expect("answered").expect("task");
        assert_eq!(second.expect("the queued write is committed"), 2);
        assert!(first.await.is_err(), "the first write went with its runtime, unanswered");
        assert_eq!(stored(&file).await, vec![2], "and uncommitted");
    }

    #[tokio::test]
    async fn a_group_that_cannot_begin_fails_each_write_with_the_reason() {
        let file = TestDatabase::new().await;
        table(&file).await;
        file.db.writer().close().await;
        let error = file.db.group().run(write(1, false)).await.expect_err("the writer is closed");
        assert!(error.to_string().contains("closed"), "{error}");
    }
}
