//! Tests of the purge loop (`purge::drain`): batches until one comes back
//! short, a stop between batches ends it at once, a failure ends it with
//! the batches before it done; over a fake of the access log, through
//! `GrantService::purge_access_log`.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

use std::time::Duration;

use credencial_application::purge::{
    drain, drain_quietly, next_batch_rows, DrainEnd, Pace, QUIET_FOR, QUIET_WAIT, START_BATCH_ROWS,
};
use credencial_application::{GrantService, ServiceError};
use credencial_ports::account::{MockAccessLog, MockGrantRepository};
use credencial_ports::{MockClock, RepositoryError, WriterActivity};

const NOW: i64 = 1_700_000_000;

fn grants(log: MockAccessLog) -> GrantService {
    let mut clock = MockClock::new();
    clock.expect_now().return_const(NOW);
    GrantService::new(Arc::new(MockGrantRepository::new()), Arc::new(log), Arc::new(clock), 30)
}

/// A log whose purge answers `answers` in turn, counting the calls, each
/// with `limit` asked.
fn log_answering(answers: Vec<Result<u64, RepositoryError>>, limit: u32, calls: Arc<AtomicU32>) -> MockAccessLog {
    let mut log = MockAccessLog::new();
    let mut answers = answers.into_iter();
    log.expect_purge_before().times(answers.len()).returning(move |before, asked| {
        assert_eq!((before, asked), (NOW - 30 * 86_400, limit), "the retention's cut, the limit");
        calls.fetch_add(1, Ordering::SeqCst);
        answers.next().expect("no more calls than answers")
    });
    log
}

#[tokio::test]
async fn the_loop_calls_again_until_a_batch_comes_back_short() {
    let calls = Arc::new(AtomicU32::new(0));
    let service = grants(log_answering(vec![Ok(3), Ok(3), Ok(1)], 3, Arc::clone(&calls)));
    let drained = drain(3, Pace::SINGLE_WRITER, &|| false, |limit| service.purge_access_log(limit)).await;
    assert!(matches!(drained.end, DrainEnd::Finished), "{drained:?}");
    assert_eq!((drained.rows, drained.batches, calls.load(Ordering::SeqCst)), (7, 3, 3));
}

#[tokio::test]
async fn an_empty_first_batch_ends_the_loop() {
    let calls = Arc::new(AtomicU32::new(0));
    let service = grants(log_answering(vec![Ok(0)], START_BATCH_ROWS, Arc::clone(&calls)));
    let drained = drain(2_000, Pace::SINGLE_WRITER, &|| false, |limit| service.purge_access_log(limit)).await;
    assert!(matches!(drained.end, DrainEnd::Finished), "{drained:?}");
    assert_eq!((drained.rows, drained.batches), (0, 1));
}

#[tokio::test]
async fn a_stop_requested_between_batches_ends_the_loop_before_the_next_one() {
    let stop = Arc::new(AtomicBool::new(false));
    let calls = Arc::new(AtomicU32::new(0));
    let mut log = MockAccessLog::new();
    let (raised, counted) = (Arc::clone(&stop), Arc::clone(&calls));
    // Full batches, a backlog with no end; the second one is under way
    // when the stop is requested. A third call would fail `times`.
    log.expect_purge_before().times(2).returning(move |_, limit| {
        if counted.fetch_add(1, Ordering::SeqCst) == 1 {
            raised.store(true, Ordering::SeqCst);
        }
        Ok(u64::from(limit))
    });
    let service = grants(log);
    let drained =
        drain(5, Pace::SINGLE_WRITER, &|| stop.load(Ordering::SeqCst), |limit| service.purge_access_log(limit)).await;
    assert!(matches!(drained.end, DrainEnd::Stopped), "{drained:?}");
    assert_eq!((drained.rows, drained.batches, calls.load(Ordering::SeqCst)), (10, 2, 2));
}

#[tokio::test]
async fn a_stop_requested_before_the_pass_runs_no_batch() {
    let mut log = MockAccessLog::new();
    log.expect_purge_before().times(0);
    let service = grants(log);
    let drained = drain(5, Pace::SINGLE_WRITER, &|| true, |limit| service.purge_access_log(limit)).await;
    assert!(matches!(drained.end, DrainEnd::Stopped), "{drained:?}");
    assert_eq!((drained.rows, drained.batches), (0, 0));
}

#[tokio::test]
async fn a_failing_batch_ends_the_loop_and_the_batches_before_it_count() {
    let calls = Arc::new(AtomicU32::new(0));
    let answers = vec![Ok(4), Err(RepositoryError::Unexpected("down".into()))];
    let service = grants(log_answering(answers, 4, Arc::clone(&calls)));
    let drained = drain(4, Pace::SINGLE_WRITER, &|| false, |limit| service.purge_access_log(limit)).await;
    assert!(matches!(drained.end, DrainEnd::Failed(ServiceError::Storage(_))), "{drained:?}");
    assert_eq!((drained.rows, drained.batches), (4, 1));
}

#[tokio::test]
async fn a_limit_of_zero_asks_for_one_row() {
    let calls = Arc::new(AtomicU32::new(0));
    let service = grants(log_answering(vec![Ok(1), Ok(0)], 1, Arc::clone(&calls)));
    let drained = drain(0, Pace::SINGLE_WRITER, &|| false, |limit| service.purge_access_log(limit)).await;
    assert_eq!((drained.rows, drained.batches), (1, 2));
}

#[test]
fn a_batch_over_its_time_budget_is_halved_and_one_well_under_it_doubled_within_the_limit() {
    for pace in [Pace::SINGLE_WRITER, Pace::CONCURRENT] {
        let budget = pace.budget;
        let (slow, fast, fair) = (budget * 3, budget / 10, budget * 3 / 4);
        assert_eq!(next_batch_rows(2_000, slow, 2_000, budget), 1_000);
        assert_eq!(next_batch_rows(1, slow, 2_000, budget), 1, "never below one row");
        assert_eq!(next_batch_rows(250, fast, 2_000, budget), 500);
        assert_eq!(next_batch_rows(1_500, fast, 2_000, budget), 2_000, "never above purge_batch_rows");
        assert_eq!(next_batch_rows(800, fair, 2_000, budget), 800, "within the budget: kept");
        assert_eq!(next_batch_rows(800, Duration::ZERO, 0, budget), 1, "a limit of 0 counts as 1");
    }
    // SQLite's 20-ms batch is over its budget, PostgreSQL's is not.
    let twenty = Duration::from_millis(20);
    assert_eq!(next_batch_rows(800, twenty, 2_000, Pace::SINGLE_WRITER.budget), 400);
    assert_eq!(next_batch_rows(800, twenty, 2_000, Pace::CONCURRENT.budget), 800);
}

#[test]
fn the_pause_after_a_batch_is_in_proportion_to_it_and_bounded() {
    let ms = Duration::from_millis;
    assert_eq!(Pace::SINGLE_WRITER.pause_after(ms(4)), ms(12), "a quarter of the time on SQLite");
    assert_eq!(Pace::CONCURRENT.pause_after(ms(4)), ms(4), "half of it on PostgreSQL");
    assert_eq!(Pace::SINGLE_WRITER.pause_after(ms(500)), ms(40), "at most eight budgets");
    assert_eq!(Pace::CONCURRENT.pause_after(ms(500)), ms(160));
}

#[tokio::test]
async fn batches_grow_from_the_start_size_while_they_are_fast() {
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&asked);
    let drained = drain(2_000, Pace::SINGLE_WRITER, &|| false, move |rows| {
        seen.lock().expect("asked").push(rows);
        // Full batches until the fourth, which comes back short.
        let full = seen.lock().expect("asked").len() < 4;
        async move { Ok(if full { u64::from(rows) } else { 7 }) }
    })
    .await;
    assert!(matches!(drained.end, DrainEnd::Finished), "{drained:?}");
    // A fake batch takes next to no time, so each one doubles, up to the
    // limit (the sizes themselves follow the clock: `next_batch_rows` is
    // tested above without one).
    let asked = asked.lock().expect("asked").clone();
    assert_eq!(asked[0], START_BATCH_ROWS);
    assert!(asked.iter().all(|&rows| rows <= 2_000), "{asked:?}");
    assert_eq!(drained.rows, asked[..3].iter().map(|&r| u64::from(r)).sum::<u64>() + 7);
}

/// A writer the requests keep busy, or one quiet for a minute.
struct Writer {
    busy: bool,
}

impl WriterActivity for Writer {
    fn quiet_for(&self) -> Duration {
        if self.busy {
            Duration::ZERO
        } else {
            Duration::from_secs(60)
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_batch_waits_for_a_quiet_writer_but_at_most_a_second() {
    for (busy, waits) in [(false, false), (true, true)] {
        let calls = Arc::new(AtomicU32::new(0));
        let service = grants(log_answering(vec![Ok(1)], 5, Arc::clone(&calls)));
        let started = tokio::time::Instant::now();
        let drained = drain_quietly(5, Pace::SINGLE_WRITER, Some(&Writer { busy }), &|| false, |limit| {
            service.purge_access_log(limit)
        })
        .await;
        assert_eq!((drained.rows, drained.batches, calls.load(Ordering::SeqCst)), (1, 1, 1), "busy: {busy}");
        assert!(matches!(drained.end, DrainEnd::Finished));
        let waited = started.elapsed();
        if waits {
            assert!(waited >= QUIET_WAIT && waited < QUIET_WAIT + QUIET_FOR * 2, "a busy writer: {waited:?}");
        } else {
            assert!(waited < QUIET_FOR, "a quiet writer: {waited:?}");
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_stop_while_a_batch_waits_for_the_writer_ends_the_drain_at_once_and_runs_no_batch() {
    let calls = Arc::new(AtomicU32::new(0));
    let service = grants(log_answering(vec![], 5, Arc::clone(&calls)));
    let asked = AtomicU32::new(0);
    // Stopping from the third time it is asked: inside the wait.
    let stopping = || asked.fetch_add(1, Ordering::SeqCst) >= 2;
    let started = tokio::time::Instant::now();
    let drained = drain_quietly(5, Pace::SINGLE_WRITER, Some(&Writer { busy: true }), &stopping, |limit| {
        service.purge_access_log(limit)
    })
    .await;
    assert!(matches!(drained.end, DrainEnd::Stopped));
    assert_eq!((drained.rows, drained.batches, calls.load(Ordering::SeqCst)), (0, 0, 0));
    assert!(started.elapsed() < QUIET_FOR * 2, "within a few ticks, not {:?}", started.elapsed());
}
