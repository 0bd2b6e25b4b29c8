//! `TokenService::blacklist` (simplejwt's logout) over mockall fakes.

use super::*;
use credencial_domain::TokenError;
use credencial_ports::TokenRevocation;

fn refused_as(r: Result<(), ServiceError>, expected: TokenError) {
    match r {
        Err(ServiceError::InvalidToken(e)) => assert_eq!(e, expected),
        other => panic!("expected {expected:?}, got {other:?}"),
    }
}

#[tokio::test]
async fn blacklisting_a_current_refresh_token_revokes_it_with_its_family() {
    let (refresh, claims) = token(TokenType::Refresh, NOW);
    let mut fakes = Fakes::new();
    let jti = claims.jti.clone();
    fakes
        .store
        .expect_revoke_token()
        .withf(move |j: &str, user: &UserId| j == jti && *user == UserId(USER))
        .times(1)
        .returning(|_, _| Ok(TokenRevocation::Revoked));
    fakes.service().blacklist(&refresh).await.expect("blacklisted");
}

#[tokio::test]
async fn a_token_no_longer_current_is_refused_as_blacklisted() {
    for found in [TokenRevocation::WasRotated, TokenRevocation::WasRevoked, TokenRevocation::Unknown] {
        let (refresh, _) = token(TokenType::Refresh, NOW);
        let mut fakes = Fakes::new();
        fakes.store.expect_revoke_token().times(1).returning(move |_, _| Ok(found));
        refused_as(fakes.service().blacklist(&refresh).await, TokenError::Revoked);
    }
}

#[tokio::test]
async fn an_access_token_an_oauth2_refresh_token_and_garbage_are_refused_without_touching_the_store() {
    let (access, _) = token(TokenType::Access, NOW);
    let oauth = codec()
        .encode(&Claims {
            aud: Some("portal".into()),
            client_id: Some("portal".into()),
            ..Claims::new(TokenType::Refresh, USER, NOW, REFRESH_SECS)
        })
        .expect("signs");
    let (expired, _) = token(TokenType::Refresh, NOW - REFRESH_SECS - 1);
    for (presented, expected) in [
        (access, TokenError::WrongType),
        (oauth, TokenError::WrongType),
        ("not.a.token".to_owned(), TokenError::Invalid),
        (expired, TokenError::Expired),
    ] {
        let mut fakes = Fakes::new();
        fakes.store.expect_revoke_token().times(0);
        refused_as(fakes.service().blacklist(&presented).await, expected);
    }
}
