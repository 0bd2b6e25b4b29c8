//! The failure log of the brute-force limits against a real PostgreSQL
//! (127.0.0.1:5432, or `TEST_DATABASE_URL`): every test gets a fresh,
//! migrated database.

use std::sync::Arc;
use std::time::Duration;

use credencial_adapters_postgres::testing::TestDatabase;
use credencial_adapters_postgres::PgLoginFailureLog;
use credencial_domain::throttle::{ClientAddress, FailureWindow, ThrottleKey};
use credencial_domain::Username;
use credencial_ports::LoginFailureLog;

const NOW: i64 = 1_900_000_000_123;
const WINDOW: i64 = 300_000;

fn ana() -> ThrottleKey {
    ThrottleKey::username(&Username::parse("ana").expect("username"))
}

fn bruno() -> ThrottleKey {
    ThrottleKey::username(&Username::parse("bruno").expect("username"))
}

fn address(ip: &str) -> ThrottleKey {
    ThrottleKey::address(ClientAddress::of(ip.parse().expect("ip")))
}

async fn window_of(log: &PgLoginFailureLog, key: &ThrottleKey) -> Option<FailureWindow> {
    log.windows(std::slice::from_ref(key)).await.expect("windows").pop()
}

#[tokio::test]
async fn a_first_failure_opens_a_window_at_its_time_and_later_ones_count_in_it() {
    let db = TestDatabase::new().await;
    let log = PgLoginFailureLog::new(db.pool.clone());
    assert_eq!(window_of(&log, &ana()).await, None);

    log.record_failure(&[ana()], NOW, WINDOW).await.expect("first");
    assert_eq!(window_of(&log, &ana()).await, Some(FailureWindow { key: ana(), failures: 1, started_at_ms: NOW }));

    log.record_failure(&[ana()], NOW + 1_500, WINDOW).await.expect("second");
    log.record_failure(&[ana()], NOW + WINDOW - 1, WINDOW).await.expect("last millisecond of the window");
    assert_eq!(window_of(&log, &ana()).await, Some(FailureWindow { key: ana(), failures: 3, started_at_ms: NOW }));
}

#[tokio::test]
async fn a_failure_after_the_window_starts_a_new_one() {
    let db = TestDatabase::new().await;
    let log = PgLoginFailureLog::new(db.pool.clone());
    for _ in 0..4 {
        log.record_failure(&[ana()], NOW, WINDOW).await.expect("failure");
    }
    log.record_failure(&[ana()], NOW + WINDOW, WINDOW).await.expect("failure as the window ends");
    assert_eq!(
        window_of(&log, &ana()).await,
        Some(FailureWindow { key: ana(), failures: 1, started_at_ms: NOW + WINDOW })
    );
}

#[tokio::test]
async fn one_failure_counts_on_every_key_given_and_keys_stay_apart() {
    let db = TestDatabase::new().await;
    let log = PgLoginFailureLog::new(db.pool.clone());
    let here = address("192.0.2.1");
    log.record_failure(&[ana(), here.clone()], NOW, WINDOW).await.expect("ana from here");
    log.record_failure(&[bruno(), here.clone()], NOW + 10, WINDOW).await.expect("bruno from here");
    log.record_failure(&[here.clone(), here.clone()], NOW + 20, WINDOW).await.expect("a key given twice counts once");

    let mut windows = log.windows(&[ana(), bruno(), here.clone(), address("192.0.2.2")]).await.expect("windows");
    windows.sort_by(|a, b| a.key.cmp(&b.key));
    assert_eq!(
        windows,
        vec![
            FailureWindow { key: here, failures: 3, started_at_ms: NOW },
            FailureWindow { key: ana(), failures: 1, started_at_ms: NOW },
            FailureWindow { key: bruno(), failures: 1, started_at_ms: NOW + 10 },
        ]
    );
    assert!(log.windows(&[]).await.expect("no keys").is_empty());
}

#[tokio::test]
async fn clearing_a_key_forgets_its_failures_only() {
    let db = TestDatabase::new().await;
    let log = PgLoginFailureLog::new(db.pool.clone());
    let here = address("2001:db8::1");
    log.record_failure(&[ana(), here.clone()], NOW, WINDOW).await.expect("failure");
    log.clear(&ana()).await.expect("clear");
    assert_eq!(window_of(&log, &ana()).await, None);
    assert_eq!(window_of(&log, &here).await.map(|w| w.failures), Some(1));
    log.clear(&ana()).await.expect("clearing a key without failures is fine");
}

#[tokio::test]
async fn purging_deletes_the_windows_that_started_before_the_cutoff() {
    let db = TestDatabase::new().await;
    let log = PgLoginFailureLog::new(db.pool.clone());
    log.record_failure(&[ana()], NOW - WINDOW - 1, WINDOW).await.expect("old");
    log.record_failure(&[bruno()], NOW - WINDOW, WINDOW).await.expect("exactly at the cutoff");
    log.record_failure(&[address("192.0.2.1")], NOW, WINDOW).await.expect("new");

    assert_eq!(log.purge_started_before(NOW - WINDOW).await.expect("purge"), 1);
    assert_eq!(window_of(&log, &ana()).await, None);
    assert!(window_of(&log, &bruno()).await.is_some());
    assert!(window_of(&log, &address("192.0.2.1")).await.is_some());
}

#[tokio::test]
async fn purging_skips_a_row_that_is_locked_instead_of_waiting_for_it() {
    let db = TestDatabase::new().await;
    let log = PgLoginFailureLog::new(db.pool.clone());
    log.record_failure(&[ana()], NOW - WINDOW - 1, WINDOW).await.expect("old ana");
    log.record_failure(&[bruno()], NOW - WINDOW - 1, WINDOW).await.expect("old bruno");
    // Another transaction holds ana's row, as a failure being recorded does.
    let mut holder = db.pool.begin().await.expect("begin");
    sqlx::query("SELECT 1 FROM login_failures WHERE key = 'username:ana' FOR UPDATE")
        .execute(&mut *holder)
        .await
        .expect("lock");
    let purged = tokio::time::timeout(Duration::from_secs(5), log.purge_started_before(NOW - WINDOW))
        .await
        .expect("the purge does not wait for the lock")
        .expect("purge");
    assert_eq!(purged, 1);
    assert!(window_of(&log, &bruno()).await.is_none());
    holder.rollback().await.expect("rollback");
    assert!(window_of(&log, &ana()).await.is_some(), "the locked row waits for the next purge");
    assert_eq!(log.purge_started_before(NOW - WINDOW).await.expect("purge"), 1);
}

#[tokio::test]
async fn concurrent_failures_on_two_pools_all_count() {
    let db = TestDatabase::new().await;
    let other_pool = credencial_adapters_postgres::connect(&db.url, 5, Duration::from_secs(5)).await.expect("pool");
    let logs = [PgLoginFailureLog::new(db.pool.clone()), PgLoginFailureLog::new(other_pool)];
    let here = address("192.0.2.1");
    // Half of the attempts name the keys in the other order: rows are still
    // locked in one order, so no two statements deadlock.
    let start = Arc::new(tokio::sync::Barrier::new(40));
    let handles: Vec<_> = (0..40)
        .map(|i| {
            let log = logs[i % 2].clone();
            let keys = if i % 4 < 2 { vec![ana(), here.clone()] } else { vec![here.clone(), ana()] };
            let start = Arc::clone(&start);
            tokio::spawn(async move {
                start.wait().await;
                log.record_failure(&keys, NOW + i as i64, WINDOW).await
            })
        })
        .collect();
    for handle in handles {
        handle.await.expect("task").expect("recorded");
    }
    let windows = logs[1].windows(&[ana(), here]).await.expect("windows");
    assert_eq!(windows.len(), 2);
    for window in windows {
        assert_eq!(window.failures, 40, "{}", window.key);
        assert!((NOW..NOW + 40).contains(&window.started_at_ms), "{window:?}");
    }
}
