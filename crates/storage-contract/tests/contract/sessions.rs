//! [`credencial_ports::SessionStore`]: sessions are found by the hash of
//! their id while both limits hold and the account is active, record their
//! activity at most once a minute, and end on the server at once.

use credencial_domain::UserId;
use credencial_ports::NewSession;
use credencial_storage_contract::{contract, Backend, Engine};

contract!(
    a_session_is_found_by_its_hash_while_both_limits_hold,
    activity_is_recorded_only_when_stale,
    ending_a_session_deletes_it_and_another_persons_id_ends_nothing,
    ending_all_keeps_only_the_named_one_and_only_of_that_person,
    a_deactivated_accounts_sessions_are_refused,
    the_list_shows_live_sessions_most_recent_first,
    the_purge_deletes_expired_sessions_in_bounded_batches,
    a_reauthentication_moves_only_that_sessions_auth_time,
);

const NOW: i64 = 1_800_000_000;

fn session(user: UserId, tag: u8, now: i64) -> NewSession {
    NewSession {
        token_hash: [tag; 32],
        user,
        now,
        expires_at: now + 43_200,
        auth_time: now,
        amr: "pwd".into(),
        acr: "urn:credencial:acr:senha".into(),
        device: format!("Firefox no Linux {tag}"),
        place: "203.0.113.0/24".into(),
        second_factor_pending: false,
    }
}

async fn last_seen<B: Backend>(b: &B, id: i64) -> i64 {
    b.count(&format!("SELECT last_seen_at FROM sessions WHERE id = {id}")).await
}

async fn a_session_is_found_by_its_hash_while_both_limits_hold<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let store = b.sessions();
    let id = store.create(&session(ana, 1, NOW)).await.expect("created");

    let found = store.resume(&[1; 32], NOW + 10, NOW + 10 - 1800, NOW + 10 - 60).await.expect("read");
    let found = found.expect("live");
    assert_eq!((found.id, found.user, found.auth_time), (id, ana, NOW));
    assert_eq!((found.amr.as_str(), found.acr.as_str()), ("pwd", "urn:credencial:acr:senha"));
    assert!(!found.must_change_password);
    assert!(!found.second_factor_pending);
    assert_eq!(found.display_name, "Full ana", "no usual name: the full name greets");
    let pending = NewSession { token_hash: [3; 32], second_factor_pending: true, ..session(ana, 3, NOW) };
    store.create(&pending).await.expect("created");
    let found = store.resume(&[3; 32], NOW, NOW - 1800, NOW - 60).await.expect("read").expect("live");
    assert!(found.second_factor_pending, "the pending state comes back");

    assert_eq!(store.resume(&[2; 32], NOW, NOW - 1800, NOW - 60).await.expect("read"), None, "unknown id");
    let idle = NOW + 1801;
    assert_eq!(store.resume(&[1; 32], idle, idle - 1800, idle - 60).await.expect("read"), None, "idle too long");
    let late = NOW + 43_200;
    assert_eq!(store.resume(&[1; 32], late, NOW, late - 60).await.expect("read"), None, "absolute limit reached");
}

async fn activity_is_recorded_only_when_stale<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let store = b.sessions();
    let id = store.create(&session(ana, 1, NOW)).await.expect("created");

    let at = NOW + 30;
    assert!(store.resume(&[1; 32], at, at - 1800, at - 60).await.expect("read").is_some());
    assert_eq!(last_seen(&b, id).await, NOW, "seen within the minute: nothing written");
    let at = NOW + 1000;
    assert!(store.resume(&[1; 32], at, at - 1800, at - 60).await.expect("read").is_some());
    assert_eq!(last_seen(&b, id).await, NOW + 1000, "stale: the activity is recorded");
    // Kept alive by its activity past what the first activity allowed.
    let at = NOW + 2500;
    assert!(store.resume(&[1; 32], at, at - 1800, at - 60).await.expect("read").is_some());
}

async fn ending_a_session_deletes_it_and_another_persons_id_ends_nothing<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let bia = b.create_user("bia").await;
    let store = b.sessions();
    let ana_id = store.create(&session(ana, 1, NOW)).await.expect("created");
    let bia_id = store.create(&session(bia, 2, NOW)).await.expect("created");

    assert!(!store.end_one(ana, bia_id).await.expect("end"), "bia's session is not ana's to end");
    assert!(store.resume(&[2; 32], NOW, NOW - 1800, NOW - 60).await.expect("read").is_some());
    assert!(store.end_one(bia, bia_id).await.expect("end"));
    assert_eq!(store.resume(&[2; 32], NOW, NOW - 1800, NOW - 60).await.expect("read"), None);
    assert!(!store.end_one(bia, bia_id).await.expect("end"), "already ended");

    assert!(store.end(&[1; 32]).await.expect("logout"));
    assert_eq!(store.resume(&[1; 32], NOW, NOW - 1800, NOW - 60).await.expect("read"), None, "logged out");
    assert!(!store.end(&[1; 32]).await.expect("logout"));
    assert_eq!(b.count(&format!("SELECT count(*) FROM sessions WHERE id = {ana_id}")).await, 0, "deleted");
}

async fn ending_all_keeps_only_the_named_one_and_only_of_that_person<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let bia = b.create_user("bia").await;
    let store = b.sessions();
    let keep = store.create(&session(ana, 1, NOW)).await.expect("created");
    for tag in 2..5 {
        store.create(&session(ana, tag, NOW)).await.expect("created");
    }
    store.create(&session(bia, 9, NOW)).await.expect("created");

    assert_eq!(store.end_all(ana, Some(keep)).await.expect("end all"), 3);
    assert!(store.resume(&[1; 32], NOW, NOW - 1800, NOW - 60).await.expect("read").is_some(), "the kept one");
    assert_eq!(store.resume(&[3; 32], NOW, NOW - 1800, NOW - 60).await.expect("read"), None);
    assert!(store.resume(&[9; 32], NOW, NOW - 1800, NOW - 60).await.expect("read").is_some(), "bia's untouched");
    assert_eq!(store.end_all(ana, None).await.expect("end all"), 1);
    assert_eq!(store.resume(&[1; 32], NOW, NOW - 1800, NOW - 60).await.expect("read"), None);
}

async fn a_deactivated_accounts_sessions_are_refused<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let store = b.sessions();
    store.create(&session(ana, 1, NOW)).await.expect("created");
    let off = match B::ENGINE {
        Engine::Postgres => {
            format!("UPDATE users SET is_active = FALSE, must_change_password = TRUE WHERE id = {}", ana.0)
        }
        Engine::Sqlite => format!("UPDATE users SET is_active = 0, must_change_password = 1 WHERE id = {}", ana.0),
    };
    b.execute(&off).await;
    assert_eq!(store.resume(&[1; 32], NOW, NOW - 1800, NOW - 60).await.expect("read"), None);
    let on = match B::ENGINE {
        Engine::Postgres => format!("UPDATE users SET is_active = TRUE WHERE id = {}", ana.0),
        Engine::Sqlite => format!("UPDATE users SET is_active = 1 WHERE id = {}", ana.0),
    };
    b.execute(&on).await;
    let found = store.resume(&[1; 32], NOW, NOW - 1800, NOW - 60).await.expect("read").expect("live again");
    assert!(found.must_change_password, "the account's flag comes with the session");
}

async fn the_list_shows_live_sessions_most_recent_first<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let bia = b.create_user("bia").await;
    let store = b.sessions();
    let old = store.create(&session(ana, 1, NOW - 100)).await.expect("created");
    let new = store.create(&session(ana, 2, NOW - 10)).await.expect("created");
    store.create(&session(ana, 3, NOW - 5000)).await.expect("created"); // idle for too long
    store.create(&session(bia, 4, NOW)).await.expect("created");

    let listed = store.list(ana, NOW, NOW - 1800, 50).await.expect("list");
    let ids: Vec<i64> = listed.iter().map(|s| s.id).collect();
    assert_eq!(ids, vec![new, old]);
    assert_eq!((listed[0].device.as_str(), listed[0].place.as_str()), ("Firefox no Linux 2", "203.0.113.0/24"));
    assert_eq!((listed[1].created_at, listed[1].last_seen_at, listed[1].amr.as_str()), (NOW - 100, NOW - 100, "pwd"));
    assert_eq!(store.list(ana, NOW, NOW - 1800, 1).await.expect("list").len(), 1, "bounded");
}

async fn the_purge_deletes_expired_sessions_in_bounded_batches<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let store = b.sessions();
    for tag in 1..6 {
        store.create(&session(ana, tag, NOW - 50_000)).await.expect("created"); // expired
    }
    store.create(&session(ana, 9, NOW)).await.expect("created");
    assert_eq!(store.purge_expired(NOW, 3).await.expect("purge"), 3);
    assert_eq!(store.purge_expired(NOW, 3).await.expect("purge"), 2);
    assert_eq!(store.purge_expired(NOW, 3).await.expect("purge"), 0);
    assert_eq!(b.count("SELECT count(*) FROM sessions").await, 1, "the live one stays");
}

async fn a_reauthentication_moves_only_that_sessions_auth_time<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let store = b.sessions();
    let id = store.create(&session(ana, 1, NOW)).await.expect("created");
    store.create(&session(ana, 2, NOW)).await.expect("created");
    store.reauthenticated(id, NOW + 900).await.expect("reauthenticated");
    let resume = |hash: u8| {
        let store = std::sync::Arc::clone(&store);
        async move { store.resume(&[hash; 32], NOW + 901, NOW, NOW).await.expect("read").expect("live") }
    };
    assert_eq!(resume(1).await.auth_time, NOW + 900, "the confirmed session");
    assert_eq!(resume(2).await.auth_time, NOW, "the other one is untouched");
}
