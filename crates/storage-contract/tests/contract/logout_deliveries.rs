//! Back-channel logout's storage: a code issued in a session for an ID
//! token makes the session remember its client; ending the session (each
//! way) queues a logout token for the clients that listen, in the same
//! write; deliveries are claimed by one caller at a time and changed only
//! under their claim.

use credencial_domain::oauth::CodeHash;
use credencial_domain::UserId;
use credencial_ports::{NewAuthorizationCode, NewSession, OAuthClientUpdate};
use credencial_storage_contract::{contract, Backend};

use crate::oauth::{client_id, confidential, grant, setup_audit};

contract!(
    each_way_a_session_ends_queues_a_token_for_each_listening_client_it_told,
    a_client_that_does_not_listen_or_a_code_without_sid_queues_nothing,
    concurrent_claims_share_out_the_due_deliveries_once,
    a_delivery_changes_only_under_its_claim_and_a_lapsed_claim_is_claimed_again,
    a_client_that_stops_listening_is_claimed_without_an_address,
);

const NOW: i64 = 1_800_000_000;

/// A backend with ana, the listening client `portal` and the client
/// `quiet`, which does not listen.
async fn setup<B: Backend>() -> (B, UserId) {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let clients = b.clients();
    clients.create(confidential("portal"), &setup_audit()).await.expect("portal");
    clients.create(confidential("quiet"), &setup_audit()).await.expect("quiet");
    listen(&b, "portal", Some("https://portal.example.gov.br/logout")).await;
    (b, ana)
}

async fn listen<B: Backend>(b: &B, client: &str, uri: Option<&str>) {
    let changes = OAuthClientUpdate { backchannel_logout_uri: Some(uri.map(str::to_owned)), ..Default::default() };
    let updated = b.clients().update(&client_id(client), changes, &setup_audit()).await.expect("update");
    assert_eq!(updated.expect("client").backchannel_logout_uri.as_deref(), uri);
}

/// Opens ana's session `tag` and issues a code to `client` in it, for an
/// ID token when `sid` is given; returns the session's record id.
async fn session_with_code<B: Backend>(b: &B, ana: UserId, tag: u8, client: &str, sid: Option<&str>) -> i64 {
    let session = NewSession {
        token_hash: [tag; 32],
        user: ana,
        now: NOW,
        expires_at: NOW + 43_200,
        auth_time: NOW,
        amr: "pwd".into(),
        acr: "urn:credencial:acr:senha".into(),
        device: String::new(),
        place: String::new(),
        second_factor_pending: false,
    };
    let id = b.sessions().create(&session).await.expect("session");
    let mut grant = grant(client, ana, NOW + 60);
    grant.sid = sid.map(str::to_owned);
    let code = NewAuthorizationCode { code_hash: CodeHash::of(&format!("{client}{tag}")), grant, session: Some(id) };
    b.codes().store(code).await.expect("code");
    id
}

async fn queued<B: Backend>(b: &B) -> i64 {
    b.count("SELECT count(*) FROM logout_deliveries").await
}

async fn each_way_a_session_ends_queues_a_token_for_each_listening_client_it_told<B: Backend>() {
    let (b, ana) = setup::<B>().await;
    let sessions = b.sessions();
    session_with_code(&b, ana, 1, "portal", Some("sid-1")).await;
    assert!(sessions.end(&[1; 32]).await.expect("logout"));
    assert_eq!(queued(&b).await, 1, "the logout");
    assert_eq!(b.count("SELECT count(*) FROM session_clients").await, 0, "forgotten with the session");

    let kept = session_with_code(&b, ana, 2, "portal", Some("sid-2")).await;
    let two = session_with_code(&b, ana, 3, "portal", Some("sid-3")).await;
    assert!(sessions.end_one(ana, two).await.expect("end one"));
    assert_eq!(queued(&b).await, 2, "one session ended from the list");
    session_with_code(&b, ana, 4, "portal", Some("sid-4")).await;
    assert_eq!(sessions.end_all(ana, Some(kept)).await.expect("end others"), 1);
    assert_eq!(queued(&b).await, 3, "the others");
    assert_eq!(sessions.end_all(ana, None).await.expect("end all"), 1);
    let delivered = b.logout_deliveries().claim(NOW * 2, NOW * 2 + 60, 10).await.expect("claim");
    let mut sids: Vec<&str> = delivered.iter().map(|d| d.sid.as_str()).collect();
    sids.sort_unstable();
    assert_eq!(sids, ["sid-1", "sid-2", "sid-3", "sid-4"]);
    assert!(delivered.iter().all(|d| d.user == ana && d.client_id.as_str() == "portal" && d.attempts == 0));
    assert!(delivered.iter().all(|d| d.uri.as_deref() == Some("https://portal.example.gov.br/logout")));
}

async fn a_client_that_does_not_listen_or_a_code_without_sid_queues_nothing<B: Backend>() {
    let (b, ana) = setup::<B>().await;
    session_with_code(&b, ana, 1, "quiet", Some("sid-1")).await;
    session_with_code(&b, ana, 2, "portal", None).await;
    assert_eq!(b.sessions().end_all(ana, None).await.expect("end all"), 2);
    assert_eq!(queued(&b).await, 0);
    // Another person's session id ends nothing and queues nothing.
    let bia = b.create_user("bia").await;
    let id = session_with_code(&b, ana, 3, "portal", Some("sid-3")).await;
    assert!(!b.sessions().end_one(bia, id).await.expect("end one"));
    assert_eq!(queued(&b).await, 0);
}

async fn concurrent_claims_share_out_the_due_deliveries_once<B: Backend>() {
    let (b, ana) = setup::<B>().await;
    for tag in 1..=12 {
        session_with_code(&b, ana, tag, "portal", Some(&format!("sid-{tag}"))).await;
    }
    b.sessions().end_all(ana, None).await.expect("end all");
    let deliveries = b.logout_deliveries();
    let claims = crate::race::at_once(4, |_| {
        let deliveries = std::sync::Arc::clone(&deliveries);
        async move { deliveries.claim(NOW * 2, NOW * 2 + 60, 5).await.expect("claim") }
    })
    .await;
    let mut ids: Vec<i64> = claims.iter().flatten().map(|d| d.id).collect();
    ids.sort_unstable();
    let claimed = ids.len();
    ids.dedup();
    assert_eq!((claimed, ids.len()), (12, 12), "every delivery claimed, none twice");
    assert!(deliveries.claim(NOW * 2, NOW * 2 + 60, 5).await.expect("claim").is_empty(), "all under claim");
}

async fn a_delivery_changes_only_under_its_claim_and_a_lapsed_claim_is_claimed_again<B: Backend>() {
    let (b, ana) = setup::<B>().await;
    session_with_code(&b, ana, 1, "portal", Some("sid-1")).await;
    b.sessions().end(&[1; 32]).await.expect("logout");
    let deliveries = b.logout_deliveries();
    let now = NOW * 2;
    let first = deliveries.claim(now, now + 60, 5).await.expect("claim").remove(0);
    assert_eq!(first.lease, now + 60);
    // A claim that lapsed is another sender's: the first one's records
    // change nothing.
    let second = deliveries.claim(now + 61, now + 121, 5).await.expect("claim").remove(0);
    assert_eq!(second.id, first.id);
    deliveries.finish(first.id, first.lease).await.expect("finish");
    deliveries.retry(first.id, first.lease, now + 500).await.expect("retry");
    assert_eq!(queued(&b).await, 1);
    // Under its claim: a failed try waits, counted.
    deliveries.retry(second.id, second.lease, now + 500).await.expect("retry");
    assert!(deliveries.claim(now + 499, now + 559, 5).await.expect("claim").is_empty(), "not due yet");
    let third = deliveries.claim(now + 500, now + 560, 5).await.expect("claim").remove(0);
    assert_eq!(third.attempts, 1);
    deliveries.finish(third.id, third.lease).await.expect("finish");
    assert_eq!(queued(&b).await, 0);
}

async fn a_client_that_stops_listening_is_claimed_without_an_address<B: Backend>() {
    let (b, ana) = setup::<B>().await;
    session_with_code(&b, ana, 1, "portal", Some("sid-1")).await;
    b.sessions().end(&[1; 32]).await.expect("logout");
    listen(&b, "portal", None).await;
    let claimed = b.logout_deliveries().claim(NOW * 2, NOW * 2 + 60, 5).await.expect("claim");
    assert_eq!((claimed.len(), claimed[0].uri.as_deref()), (1, None));
}
