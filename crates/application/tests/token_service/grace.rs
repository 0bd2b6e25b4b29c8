//! The concurrent-refresh grace window at `TokenService::refresh` (the one
//! issuer's Rotate path) over mockall fakes.

use super::*;
use credencial_domain::refresh_grace::RefreshGrace;
use credencial_ports::GraceRotation;

type Kept = Arc<Mutex<Option<GraceRotation>>>;

/// A store whose first rotation of any token succeeds and keeps what it
/// was given; every later one answers `Repeated` with that.
fn remembering_store(fakes: &mut Fakes) -> Kept {
    let kept: Kept = Arc::default();
    let sink = Arc::clone(&kept);
    fakes.store.expect_rotate().returning(move |_, _, _, grace| {
        let mut kept = sink.lock().expect("lock");
        match kept.as_ref() {
            None => {
                *kept = grace;
                Ok(Rotation::Rotated)
            }
            Some(g) => Ok(Rotation::Repeated { sealed: g.sealed_successor.clone() }),
        }
    });
    kept
}

#[tokio::test]
async fn a_rotation_keeps_the_new_pair_sealed_for_the_window_and_a_replay_gets_it_back_byte_for_byte() {
    let (old, _) = token(TokenType::Refresh, NOW - 60);
    let mut fakes = Fakes::new();
    let kept = remembering_store(&mut fakes);
    fakes.store.expect_revoke_family().times(0);
    let service = fakes.service();

    let first = service.refresh(&old).await.expect("first tab");
    let grace = kept.lock().expect("lock").clone().expect("a window was kept");
    assert_eq!((grace.at, grace.covered_since), (NOW, NOW - 10));
    let sealed = String::from_utf8_lossy(&grace.sealed_successor).into_owned();
    assert!(!sealed.contains(first.refresh.as_str()) && !sealed.contains(first.access.as_str()), "sealed");

    let second = service.refresh(&old).await.expect("second tab");
    assert_eq!(serde_json::to_string(&first).expect("json"), serde_json::to_string(&second).expect("json"));
}

#[tokio::test]
async fn a_sealed_pair_that_does_not_open_with_the_presented_token_is_refused_and_revokes_nothing() {
    let (old, _) = token(TokenType::Refresh, NOW - 60);
    let mut fakes = Fakes::new();
    fakes.store.expect_rotate().returning(|_, _, _, _| Ok(Rotation::Repeated { sealed: vec![0; 64] }));
    fakes.store.expect_revoke_family().times(0);
    let err = fakes.service().refresh(&old).await.expect_err("refused");
    assert!(matches!(err, ServiceError::InvalidToken(TokenError::Revoked)), "{err:?}");
}

#[tokio::test]
async fn without_a_window_nothing_is_kept() {
    let (old, _) = token(TokenType::Refresh, NOW - 60);
    let mut fakes = Fakes::new();
    fakes
        .store
        .expect_rotate()
        .withf(|_, _, _, grace| grace.is_none())
        .times(1)
        .returning(|_, _, _, _| Ok(Rotation::Rotated));
    let service = TokenService::new(
        Arc::new(codec()),
        Arc::new(fakes.users),
        Arc::new(fakes.store),
        Arc::new(fakes.data),
        Arc::new(fakes.clock),
        PasswordHasher::new(1, 1000).expect("hasher"),
        TokenServiceConfig { refresh_grace: RefreshGrace::disabled(), ..TokenServiceConfig::default() },
    );
    service.refresh(&old).await.expect("rotated");
}
