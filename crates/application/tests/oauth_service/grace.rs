//! The concurrent-refresh grace window at the OAuth2 refresh grant, over
//! the fakes of `oauth_service.rs` (its store keeps what each rotation
//! sealed and answers `Repeated` as the port's contract says).

use super::*;

#[tokio::test]
async fn the_same_refresh_token_twice_within_the_window_answers_the_same_tokens_and_the_family_lives() {
    let (service, handles) = World::new().service();
    let first = portal_tokens(&service, "cnes receita_federal").await;
    let a = service
        .token(refresh_request(first.refresh_token.as_deref().expect("a refresh token"), None))
        .await
        .expect("first tab");
    handles.now.store(NOW + 1, Ordering::SeqCst);
    // The second tab even asks to narrow: it gets the first tab's answer.
    let b = service
        .token(refresh_request(first.refresh_token.as_deref().expect("a refresh token"), Some("cnes")))
        .await
        .expect("second tab");
    assert_eq!(serde_json::to_string(&a).expect("json"), serde_json::to_string(&b).expect("json"), "byte-identical");
    let next = service
        .token(refresh_request(b.refresh_token.as_deref().expect("a refresh token"), None))
        .await
        .expect("the family lives");
    assert_ne!(next.refresh_token, b.refresh_token);
}

#[tokio::test]
async fn after_the_successor_was_used_a_replay_revokes_the_family_even_within_the_window() {
    let (service, _) = World::new().service();
    let first = portal_tokens(&service, "cnes").await;
    let second = service
        .token(refresh_request(first.refresh_token.as_deref().expect("a refresh token"), None))
        .await
        .expect("refreshed");
    let third = service
        .token(refresh_request(second.refresh_token.as_deref().expect("a refresh token"), None))
        .await
        .expect("refreshed again");
    let e = oauth_error(
        service.token(refresh_request(first.refresh_token.as_deref().expect("a refresh token"), None)).await,
    );
    assert_eq!(e.error_code(), "invalid_grant");
    let e = oauth_error(
        service.token(refresh_request(third.refresh_token.as_deref().expect("a refresh token"), None)).await,
    );
    assert_eq!(e.error_code(), "invalid_grant", "the family is revoked");
}

#[tokio::test]
async fn another_client_presenting_the_token_within_the_window_gets_nothing() {
    let world = World::new();
    world.clients.lock().expect("lock").insert(
        "other".into(),
        OAuthClient {
            client_id: ClientId::parse("other").expect("id"),
            secret_hash: Some(hash("other-secret")),
            ..clients()["portal"].clone()
        },
    );
    let (service, _) = world.service();
    let first = portal_tokens(&service, "cnes").await;
    service
        .token(refresh_request(first.refresh_token.as_deref().expect("a refresh token"), None))
        .await
        .expect("refreshed");
    let request = TokenRequest {
        authorization: basic("other", "other-secret"),
        ..refresh_request(first.refresh_token.as_deref().expect("a refresh token"), None)
    };
    assert_eq!(oauth_error(service.token(request).await).error_code(), "invalid_grant");
}
