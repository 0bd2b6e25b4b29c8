//! [`LoginFailureLog`]: fixed windows that start at the first failure,
//! counts per key (one failure counts on every key it names), clearing,
//! the purge, and failures recorded concurrently.

use std::sync::Arc;

use credencial_domain::throttle::{ClientAddress, FailureWindow, ThrottleKey};
use credencial_domain::Username;
use credencial_ports::LoginFailureLog;
use credencial_storage_contract::{contract, Backend};

/// A failure time with milliseconds (Unix ms).
const NOW: i64 = 1_900_000_000_123;
const WINDOW: i64 = 300_000;

fn user(name: &str) -> ThrottleKey {
    ThrottleKey::username(&Username::parse(name).expect("username"))
}

fn address(ip: &str) -> ThrottleKey {
    ThrottleKey::address(ClientAddress::of(ip.parse().expect("ip")))
}

async fn window_of(log: &Arc<dyn LoginFailureLog>, key: &ThrottleKey) -> Option<FailureWindow> {
    log.windows(std::slice::from_ref(key)).await.expect("windows").pop()
}

fn window(key: ThrottleKey, failures: u32, started_at_ms: i64) -> Option<FailureWindow> {
    Some(FailureWindow { key, failures, started_at_ms })
}

async fn a_first_failure_opens_a_window_at_its_time_and_later_ones_count_in_it<B: Backend>() {
    let b = B::fresh().await;
    let log = b.login_failures();
    assert_eq!(window_of(&log, &user("ana")).await, None);

    log.record_failure(&[user("ana")], NOW, WINDOW).await.expect("first");
    assert_eq!(window_of(&log, &user("ana")).await, window(user("ana"), 1, NOW), "to the millisecond");
    log.record_failure(&[user("ana")], NOW + 1_500, WINDOW).await.expect("second");
    log.record_failure(&[user("ana")], NOW + WINDOW - 1, WINDOW).await.expect("last millisecond of the window");
    assert_eq!(window_of(&log, &user("ana")).await, window(user("ana"), 3, NOW));
}

async fn a_failure_after_the_window_starts_a_new_one<B: Backend>() {
    let b = B::fresh().await;
    let log = b.login_failures();
    for _ in 0..4 {
        log.record_failure(&[user("ana")], NOW, WINDOW).await.expect("failure");
    }
    log.record_failure(&[user("ana")], NOW + WINDOW, WINDOW).await.expect("failure as the window ends");
    assert_eq!(window_of(&log, &user("ana")).await, window(user("ana"), 1, NOW + WINDOW));
    log.record_failure(&[user("ana")], NOW + WINDOW + 10, WINDOW).await.expect("in the new window");
    assert_eq!(window_of(&log, &user("ana")).await, window(user("ana"), 2, NOW + WINDOW));
    // Much later, after a long quiet: a new window again, from one.
    log.record_failure(&[user("ana")], NOW + 100 * WINDOW, WINDOW).await.expect("much later");
    assert_eq!(window_of(&log, &user("ana")).await, window(user("ana"), 1, NOW + 100 * WINDOW));
}

async fn one_failure_counts_on_every_key_given_and_keys_stay_apart<B: Backend>() {
    let b = B::fresh().await;
    let log = b.login_failures();
    let here = address("192.0.2.1");
    log.record_failure(&[user("ana"), here.clone()], NOW, WINDOW).await.expect("ana from here");
    log.record_failure(&[user("bruno"), here.clone()], NOW + 10, WINDOW).await.expect("bruno from here");
    log.record_failure(&[here.clone(), here.clone()], NOW + 20, WINDOW).await.expect("a key given twice counts once");

    let mut windows =
        log.windows(&[user("ana"), user("bruno"), here.clone(), address("192.0.2.2")]).await.expect("windows");
    windows.sort_by(|a, b| a.key.cmp(&b.key));
    assert_eq!(
        windows,
        vec![
            FailureWindow { key: here, failures: 3, started_at_ms: NOW },
            FailureWindow { key: user("ana"), failures: 1, started_at_ms: NOW },
            FailureWindow { key: user("bruno"), failures: 1, started_at_ms: NOW + 10 },
        ]
    );
    assert!(log.windows(&[]).await.expect("no keys").is_empty());
    log.record_failure(&[], NOW, WINDOW).await.expect("no keys: nothing to count");
}

async fn each_key_keeps_its_own_window<B: Backend>() {
    let b = B::fresh().await;
    let log = b.login_failures();
    let here = address("2001:db8::1");
    log.record_failure(std::slice::from_ref(&here), NOW, WINDOW).await.expect("an address alone");
    // The address's window has ended; ana's starts now.
    log.record_failure(&[user("ana"), here.clone()], NOW + WINDOW + 5, WINDOW).await.expect("both");
    log.record_failure(&[user("ana"), here.clone()], NOW + WINDOW + 6, WINDOW).await.expect("both");
    assert_eq!(window_of(&log, &here).await, window(here.clone(), 2, NOW + WINDOW + 5));
    assert_eq!(window_of(&log, &user("ana")).await, window(user("ana"), 2, NOW + WINDOW + 5));
}

async fn clearing_a_key_forgets_its_failures_only<B: Backend>() {
    let b = B::fresh().await;
    let log = b.login_failures();
    let here = address("2001:db8::1");
    log.record_failure(&[user("ana"), here.clone()], NOW, WINDOW).await.expect("failure");
    log.clear(&user("ana")).await.expect("clear");
    assert_eq!(window_of(&log, &user("ana")).await, None);
    assert_eq!(window_of(&log, &here).await.map(|w| w.failures), Some(1));
    log.clear(&user("ana")).await.expect("clearing a key without failures is fine");
    log.record_failure(&[user("ana")], NOW + 1, WINDOW).await.expect("after a clear");
    assert_eq!(window_of(&log, &user("ana")).await, window(user("ana"), 1, NOW + 1), "a new window");
}

async fn purging_deletes_the_windows_that_started_before_the_cutoff<B: Backend>() {
    let b = B::fresh().await;
    let log = b.login_failures();
    log.record_failure(&[user("ana")], NOW - WINDOW - 1, WINDOW).await.expect("old");
    log.record_failure(&[user("bruno")], NOW - WINDOW, WINDOW).await.expect("exactly at the cutoff");
    log.record_failure(&[address("192.0.2.1")], NOW, WINDOW).await.expect("new");
    log.record_failure(&[user("carla")], NOW - WINDOW - 5, WINDOW).await.expect("oldest");

    // At most `limit` rows a call, the oldest window first.
    assert_eq!(log.purge_started_before(NOW - WINDOW, 1).await.expect("purge"), 1);
    assert_eq!(window_of(&log, &user("carla")).await, None, "the oldest went first");
    assert!(window_of(&log, &user("ana")).await.is_some(), "the next one waits for the next call");
    assert_eq!(log.purge_started_before(NOW - WINDOW, 1).await.expect("purge"), 1);
    assert_eq!(window_of(&log, &user("ana")).await, None);
    assert!(window_of(&log, &user("bruno")).await.is_some());
    assert!(window_of(&log, &address("192.0.2.1")).await.is_some());
    assert_eq!(log.purge_started_before(NOW - WINDOW, 1).await.expect("again"), 0);
}

async fn forty_concurrent_failures_on_two_keys_all_count<B: Backend>() {
    let b = B::fresh().await;
    let log = b.login_failures();
    let here = address("192.0.2.1");
    // Half of the attempts name the keys in the other order.
    let recorded = crate::race::at_once(40, |i| {
        let log = Arc::clone(&log);
        let keys = if i % 2 == 0 { vec![user("ana"), here.clone()] } else { vec![here.clone(), user("ana")] };
        async move { log.record_failure(&keys, NOW + i as i64, WINDOW).await }
    })
    .await;
    recorded.into_iter().for_each(|r| r.expect("recorded"));
    let windows = log.windows(&[user("ana"), here]).await.expect("windows");
    assert_eq!(windows.len(), 2);
    for window in windows {
        assert_eq!(window.failures, 40, "{}", window.key);
        assert!((NOW..NOW + 40).contains(&window.started_at_ms), "{window:?}");
    }
}

contract!(
    a_first_failure_opens_a_window_at_its_time_and_later_ones_count_in_it,
    a_failure_after_the_window_starts_a_new_one,
    one_failure_counts_on_every_key_given_and_keys_stay_apart,
    each_key_keeps_its_own_window,
    clearing_a_key_forgets_its_failures_only,
    purging_deletes_the_windows_that_started_before_the_cutoff,
    forty_concurrent_failures_on_two_keys_all_count,
);
