//! [`LogoutSender`] against fakes of its ports: what it does with each
//! answer of an application, and with an application that stopped
//! listening. (Real posts to a real receiver: `tests/api/backchannel_logout.rs`.)

use std::sync::{Arc, Mutex};

use credencial_application::backchannel_logout::{LogoutSender, LOGOUT_LEASE_SECS};
use credencial_application::TokenIssuer;
use credencial_domain::oauth::backchannel_logout::GIVE_UP_AFTER_SECS;
use credencial_domain::oauth::discovery::IssuerUrl;
use credencial_domain::oauth::ClientId;
use credencial_domain::{JwtAlgorithm, JwtKeys, TokenCodec, TokenLifetimes, UserId};
use credencial_ports::{
    ClaimedLogout, LogoutPostError, MockClock, MockLogoutDeliveries, MockLogoutPoster, MockRefreshTokenStore,
};

const NOW: i64 = 1_800_000_000;
const RSA_PRIVATE: &[u8] = include_bytes!("../../domain/tests/keys/rsa_private.pem");

fn clock() -> Arc<MockClock> {
    let mut clock = MockClock::new();
    clock.expect_now().return_const(NOW);
    Arc::new(clock)
}

fn issuer() -> Arc<TokenIssuer> {
    let shared = Arc::new(TokenCodec::new(JwtKeys::hmac(&[7u8; 32]).expect("secret"), 0).expect("codec"));
    let provider = JwtKeys::from_private_pem(JwtAlgorithm::RS256, RSA_PRIVATE).expect("RSA key");
    let issuer = TokenIssuer::new(shared, Arc::new(MockRefreshTokenStore::new()), clock(), TokenLifetimes::default());
    Arc::new(issuer.with_id_token_codec(Arc::new(TokenCodec::new(provider, 0).expect("codec"))))
}

fn delivery(id: i64, uri: Option<&str>, created_at: i64) -> ClaimedLogout {
    ClaimedLogout {
        id,
        client_id: ClientId::parse("portal").expect("id"),
        uri: uri.map(str::to_owned),
        user: UserId(7),
        sid: format!("sid-{id}"),
        created_at,
        attempts: 2,
        lease: NOW + LOGOUT_LEASE_SECS,
    }
}

/// What the fake outbox was told: (`finish` ids, `retry` (id, at)).
type Told = Arc<Mutex<(Vec<i64>, Vec<(i64, i64)>)>>;

fn outbox(claimed: Vec<ClaimedLogout>) -> (MockLogoutDeliveries, Told) {
    let told: Told = Arc::default();
    let mut deliveries = MockLogoutDeliveries::new();
    deliveries.expect_claim().times(1).return_once(move |_, _, _| Ok(claimed));
    let (finished, retried) = (Arc::clone(&told), Arc::clone(&told));
    deliveries.expect_finish().returning(move |id, lease| {
        assert_eq!(lease, NOW + LOGOUT_LEASE_SECS, "under its claim");
        finished.lock().expect("lock").0.push(id);
        Ok(())
    });
    deliveries.expect_retry().returning(move |id, _, at| {
        retried.lock().expect("lock").1.push((id, at));
        Ok(())
    });
    (deliveries, told)
}

fn sender(deliveries: MockLogoutDeliveries, poster: MockLogoutPoster) -> LogoutSender {
    LogoutSender::new(
        Arc::new(deliveries),
        Arc::new(poster),
        issuer(),
        IssuerUrl::parse("https://id.example.gov.br").expect("issuer"),
        clock(),
    )
}

#[tokio::test]
async fn each_answer_of_an_application_decides_what_becomes_of_its_delivery() {
    let claimed = vec![
        delivery(1, Some("https://a.example/ok"), NOW - 10),
        delivery(2, Some("https://a.example/down"), NOW - 10),
        delivery(3, Some("https://a.example/refuses"), NOW - 10),
        delivery(4, Some("https://a.example/down"), NOW - GIVE_UP_AFTER_SECS),
        delivery(5, None, NOW - 10),
    ];
    let (deliveries, told) = outbox(claimed);
    let mut poster = MockLogoutPoster::new();
    poster.expect_post().times(4).returning(|uri, token| {
        assert_eq!(token.split('.').count(), 3, "a signed JWT");
        match uri {
            "https://a.example/ok" => Ok(()),
            "https://a.example/refuses" => Err(LogoutPostError::Refused("HTTP 400".into())),
            _ => Err(LogoutPostError::Unavailable("connection failed".into())),
        }
    });
    let round = sender(deliveries, poster).send_due(&|| false).await.expect("round");
    assert_eq!((round.claimed, round.delivered, round.retried, round.dropped), (5, 1, 1, 3));
    let (mut finished, retried) = told.lock().expect("lock").clone();
    finished.sort_unstable();
    assert_eq!(finished, [1, 3, 4, 5], "delivered, refused, a day old, nowhere to go");
    assert_eq!(retried, [(2, NOW + 120)], "the third failure waits 2 minutes");
}

#[tokio::test]
async fn a_stopping_service_claims_nothing() {
    let mut deliveries = MockLogoutDeliveries::new();
    deliveries.expect_claim().times(0);
    let round = sender(deliveries, MockLogoutPoster::new()).send_due(&|| true).await.expect("round");
    assert_eq!(round.claimed, 0);
}
