//! RFC 7009 revocation and RFC 7662 introspection over the fakes of
//! `oauth_service.rs`.

use super::*;

fn portal_client() -> TokenRequest {
    TokenRequest { authorization: basic("portal", "s3cret"), ..TokenRequest::default() }
}

fn with_other_client(world: &World) {
    world.clients.lock().expect("lock").insert(
        "other".into(),
        OAuthClient {
            client_id: ClientId::parse("other").expect("id"),
            secret_hash: Some(hash("other-secret")),
            ..clients()["portal"].clone()
        },
    );
}

fn inactive() -> Introspection {
    Introspection::inactive()
}

#[tokio::test]
async fn revoking_a_refresh_token_revokes_its_family_and_introspection_then_says_inactive() {
    let (service, _) = World::new().service();
    let first = portal_tokens(&service, "cnes").await;
    let second = service
        .token(refresh_request(first.refresh_token.as_deref().expect("a refresh token"), None))
        .await
        .expect("refreshed");
    assert!(
        service
            .introspect(&portal_client(), Some(second.refresh_token.as_deref().expect("a refresh token")))
            .await
            .expect("answer")
            .active
    );

    service
        .revoke(&portal_client(), Some(second.refresh_token.as_deref().expect("a refresh token")))
        .await
        .expect("200");
    assert_eq!(
        service
            .introspect(&portal_client(), Some(second.refresh_token.as_deref().expect("a refresh token")))
            .await
            .expect("answer"),
        inactive()
    );
    let e = oauth_error(
        service.token(refresh_request(second.refresh_token.as_deref().expect("a refresh token"), None)).await,
    );
    assert_eq!(e.error_code(), "invalid_grant");
}

#[tokio::test]
async fn revoking_an_old_rotated_token_also_ends_the_family() {
    let (service, _) = World::new().service();
    let first = portal_tokens(&service, "cnes").await;
    let second = service
        .token(refresh_request(first.refresh_token.as_deref().expect("a refresh token"), None))
        .await
        .expect("refreshed");
    service
        .revoke(&portal_client(), Some(first.refresh_token.as_deref().expect("a refresh token")))
        .await
        .expect("200");
    assert!(service
        .token(refresh_request(second.refresh_token.as_deref().expect("a refresh token"), None))
        .await
        .is_err());
}

#[tokio::test]
async fn an_access_token_another_clients_token_and_garbage_are_answered_ok_and_change_nothing() {
    let world = World::new();
    with_other_client(&world);
    let (service, _) = world.service();
    let tokens = portal_tokens(&service, "cnes").await;
    let other = TokenRequest { authorization: basic("other", "other-secret"), ..TokenRequest::default() };
    service
        .revoke(&other, Some(tokens.refresh_token.as_deref().expect("a refresh token")))
        .await
        .expect("another client's: 200");
    service.revoke(&portal_client(), Some(&tokens.access_token)).await.expect("access token: 200");
    service.revoke(&portal_client(), Some("not.a.token")).await.expect("garbage: 200");
    service.revoke(&portal_client(), Some("")).await.expect_err("empty is missing");
    assert!(
        service.token(refresh_request(tokens.refresh_token.as_deref().expect("a refresh token"), None)).await.is_ok(),
        "nothing was revoked"
    );
}

#[tokio::test]
async fn a_missing_token_is_invalid_request_and_a_wrong_secret_invalid_client() {
    let (service, _) = World::new().service();
    let tokens = portal_tokens(&service, "cnes").await;
    for r in
        [service.revoke(&portal_client(), None).await, service.introspect(&portal_client(), None).await.map(|_| ())]
    {
        assert!(matches!(r, Err(ServiceError::OAuth(OAuthError::InvalidRequest(_)))), "{r:?}");
    }
    let wrong = TokenRequest { authorization: basic("portal", "wrong"), ..TokenRequest::default() };
    let nobody = TokenRequest::default();
    for client in [&wrong, &nobody] {
        let r = service.revoke(client, Some(tokens.refresh_token.as_deref().expect("a refresh token"))).await;
        assert!(matches!(r, Err(ServiceError::OAuth(OAuthError::InvalidClient(_)))), "{r:?}");
        let r = service.introspect(client, Some(&tokens.access_token)).await;
        assert!(matches!(r, Err(ServiceError::OAuth(OAuthError::InvalidClient(_)))), "{r:?}");
    }
    assert!(
        service.token(refresh_request(tokens.refresh_token.as_deref().expect("a refresh token"), None)).await.is_ok(),
        "nothing was revoked"
    );
}

#[tokio::test]
async fn introspection_describes_the_callers_access_token() {
    let (service, _) = World::new().service();
    let tokens = portal_tokens(&service, "cnes").await;
    let answer = service.introspect(&portal_client(), Some(&tokens.access_token)).await.expect("answer");
    let claims = decode(&tokens.access_token);
    assert_eq!(
        answer,
        Introspection {
            active: true,
            scope: Some("dados_publicos cpf email cnes".into()),
            client_id: Some("portal".into()),
            sub: Some(USER.0.to_string()),
            exp: Some(claims.exp),
            iat: Some(claims.iat),
            token_type: Some("access_token"),
            acr: Some(credencial_domain::session::ACR_PASSWORD.into()),
        }
    );
}

#[tokio::test]
async fn introspection_is_inactive_for_foreign_expired_malformed_and_session_tokens() {
    let world = World::new();
    with_other_client(&world);
    let (service, handles) = world.service();
    let tokens = portal_tokens(&service, "cnes").await;
    let other = TokenRequest { authorization: basic("other", "other-secret"), ..TokenRequest::default() };
    assert_eq!(service.introspect(&other, Some(&tokens.access_token)).await.expect("answer"), inactive());
    let first_party = codec().encode(&Claims::new(TokenType::Access, USER.0, NOW, 300)).expect("signs");
    let session = credencial_domain::session::SessionToken::generate().expose().to_owned();
    for token in [first_party.as_str(), session.as_str(), "not.a.token", "x"] {
        assert_eq!(service.introspect(&portal_client(), Some(token)).await.expect("answer"), inactive(), "{token}");
    }
    handles.now.store(NOW + 3600, Ordering::SeqCst);
    assert_eq!(service.introspect(&portal_client(), Some(&tokens.access_token)).await.expect("answer"), inactive());
}

#[tokio::test]
async fn introspection_is_inactive_once_the_person_revoked_the_client_and_for_an_inactive_user() {
    let world = World::new();
    let (service, handles) = world.service();
    let tokens = portal_tokens(&service, "cnes").await;
    handles.grants.lock().expect("lock").clear();
    assert_eq!(service.introspect(&portal_client(), Some(&tokens.access_token)).await.expect("answer"), inactive());

    let world = World { active: false, ..World::new() };
    let grants = Arc::clone(&world.grants);
    let (service, _) = world.service();
    grants.lock().expect("lock").insert((USER.0, "portal".into()), ScopeSet::required());
    let access = codec()
        .encode(&Claims {
            scope: Some("dados_publicos".into()),
            client_id: Some("portal".into()),
            aud: Some("portal".into()),
            ..Claims::new(TokenType::Access, USER.0, NOW, 300)
        })
        .expect("signs");
    assert_eq!(service.introspect(&portal_client(), Some(&access)).await.expect("answer"), inactive());
}

#[tokio::test]
async fn introspection_leaves_out_the_scopes_the_client_lost() {
    let world = World::new();
    let clients = Arc::clone(&world.clients);
    let (service, _) = world.service();
    let tokens = portal_tokens(&service, "cnes receita_federal").await;
    if let Some(c) = clients.lock().expect("lock").get_mut("portal") {
        c.enabled_scopes = ScopeSet::parse_strict("receita_federal").expect("known");
    }
    let answer = service.introspect(&portal_client(), Some(&tokens.access_token)).await.expect("answer");
    assert_eq!(answer.scope.as_deref(), Some("dados_publicos cpf email receita_federal"));
}

#[tokio::test]
async fn a_public_client_may_revoke_but_not_introspect() {
    let (service, _) = World::new().service();
    let spa = TokenRequest { client_id: Some("spa".into()), ..TokenRequest::default() };
    service.revoke(&spa, Some("not.a.token")).await.expect("a public client revokes by client_id");
    let r = service.introspect(&spa, Some("not.a.token")).await;
    assert!(matches!(r, Err(ServiceError::OAuth(OAuthError::InvalidClient(_)))), "{r:?}");
}
