//! [`credencial_ports::HostSessionEnds`]: a logout token is taken once;
//! what it ends is found by `sid` or by person from the moment it ended;
//! what expired is forgotten a bounded batch at a time.

use credencial_ports::HostLogout;
use credencial_storage_contract::{contract, Backend};

contract!(
    a_logout_token_is_taken_once_and_ends_its_sid_from_then_on,
    a_person_wide_end_covers_every_session_of_that_person_only,
    what_expired_is_forgotten_when_the_next_logout_is_recorded,
);

const NOW: i64 = 1_800_000_000;

fn logout(jti: &str, sid: Option<&str>, sub: Option<&str>, now: i64) -> HostLogout {
    HostLogout {
        jti: jti.into(),
        token_expires_at: now + 120,
        sid: sid.map(str::to_owned),
        sub: sub.map(str::to_owned),
        now,
        keep_until: now + 3_600,
    }
}

async fn a_logout_token_is_taken_once_and_ends_its_sid_from_then_on<B: Backend>() {
    let b = B::fresh().await;
    let ends = b.host_session_ends();
    assert!(ends.record(&logout("j1", Some("s1"), None, NOW)).await.expect("record"));
    assert!(!ends.record(&logout("j1", Some("s2"), None, NOW)).await.expect("record"), "a replay");
    assert!(!ends.ended_since(Some("s2"), None, NOW - 10).await.expect("read"), "the replay ended nothing");
    assert!(ends.ended_since(Some("s1"), Some("7"), NOW - 10).await.expect("read"), "started before the end");
    assert!(ends.ended_since(Some("s1"), None, NOW + 60).await.expect("read"), "a sid ended is ended for good");
    assert!(!ends.ended_since(None, None, 0).await.expect("read"));
}

async fn a_person_wide_end_covers_every_session_of_that_person_only<B: Backend>() {
    let b = B::fresh().await;
    let ends = b.host_session_ends();
    assert!(ends.record(&logout("j1", None, Some("7"), NOW)).await.expect("record"));
    assert!(ends.ended_since(Some("any"), Some("7"), NOW - 1).await.expect("read"));
    assert!(ends.ended_since(Some("any"), Some("7"), NOW).await.expect("read"), "in the same second");
    assert!(!ends.ended_since(Some("any"), Some("7"), NOW + 1).await.expect("read"), "a login after the end");
    assert!(!ends.ended_since(Some("any"), Some("8"), NOW - 1).await.expect("read"));
}

async fn what_expired_is_forgotten_when_the_next_logout_is_recorded<B: Backend>() {
    let b = B::fresh().await;
    let ends = b.host_session_ends();
    assert!(ends.record(&logout("old", Some("s-old"), None, NOW)).await.expect("record"));
    let later = NOW + 4_000;
    assert!(ends.record(&logout("new", Some("s-new"), None, later)).await.expect("record"));
    assert_eq!(b.count("SELECT count(*) FROM host_logout_tokens").await, 1, "the old jti expired");
    assert_eq!(b.count("SELECT count(*) FROM host_session_ends").await, 1, "the old end too");
    assert!(ends.record(&logout("old", Some("s-old"), None, later)).await.expect("record"), "its jti is forgotten");
}
