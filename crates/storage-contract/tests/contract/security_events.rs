//! [`credencial_ports::SecurityEvents`]: a person's events newest first,
//! bounded, only theirs; the purge deletes old ones in bounded batches.

use credencial_ports::SecurityEvent;
use credencial_storage_contract::{contract, Backend};

contract!(a_persons_events_come_back_newest_first_bounded_and_only_theirs, the_purge_deletes_old_events_in_batches,);

fn event(at: i64, kind: &str) -> SecurityEvent {
    SecurityEvent {
        at,
        kind: kind.into(),
        detail: "pwd otp".into(),
        device: "Firefox no Linux".into(),
        place: "203.0.113.0/24".into(),
    }
}

async fn a_persons_events_come_back_newest_first_bounded_and_only_theirs<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let bia = b.create_user("bia").await;
    let store = b.security_events();
    for (at, kind) in [(100, "login"), (200, "totp_enabled"), (300, "login")] {
        store.record(ana, &event(at, kind)).await.expect("recorded");
    }
    store.record(bia, &event(250, "password_changed")).await.expect("recorded");
    let listed = store.recent(ana, 10).await.expect("listed");
    assert_eq!(listed.iter().map(|e| e.at).collect::<Vec<_>>(), [300, 200, 100], "newest first, only ana's");
    assert_eq!(listed[1], event(200, "totp_enabled"), "every field comes back");
    assert_eq!(store.recent(ana, 2).await.expect("listed").len(), 2, "bounded");
    assert_eq!(store.recent(bia, 10).await.expect("listed").len(), 1);
}

async fn the_purge_deletes_old_events_in_batches<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let store = b.security_events();
    for at in [10, 20, 30, 1_000] {
        store.record(ana, &event(at, "login")).await.expect("recorded");
    }
    assert_eq!(store.purge(500, 2).await.expect("purged"), 2, "a bounded batch");
    assert_eq!(store.purge(500, 2).await.expect("purged"), 1);
    assert_eq!(store.purge(500, 2).await.expect("purged"), 0);
    assert_eq!(store.recent(ana, 10).await.expect("listed").iter().map(|e| e.at).collect::<Vec<_>>(), [1_000]);
}
