//! One key per kind of token (RFC 8725 §3.12): the issuer signs first-party
//! tokens with the service key and tokens issued to client applications with
//! the provider's key pair when it has one (login sessions too); client
//! tokens signed with the shared key before that are read as refresh tokens
//! only.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use base64::Engine as _;
use credencial_application::{Audience, Recording, TokenIssuer};
use credencial_domain::admin::LoginVia;
use credencial_domain::oauth::ClientId;
use credencial_domain::{
    Claims, JwtAlgorithm, JwtKeys, PasswordStamp, ScopeSet, TokenCodec, TokenError, TokenLifetimes, TokenType, UserId,
};
use credencial_ports::{MockClock, MockRefreshTokenStore};
use serde_json::Value;

const START: i64 = 1_700_000_000;
const RSA_PRIVATE: &[u8] = include_bytes!("../../domain/tests/keys/rsa_private.pem");

fn shared() -> Arc<TokenCodec> {
    Arc::new(TokenCodec::new(JwtKeys::hmac(&[7u8; 32]).expect("secret"), 0).expect("HS256 codec"))
}

fn provider_key() -> Arc<TokenCodec> {
    let keys = JwtKeys::from_private_pem(JwtAlgorithm::RS256, RSA_PRIVATE).expect("RSA key");
    Arc::new(TokenCodec::new(keys, 0).expect("RS256 codec"))
}

/// A clock the test moves, starting at `START`.
fn clock() -> (MockClock, Arc<AtomicI64>) {
    let now = Arc::new(AtomicI64::new(START));
    let mut clock = MockClock::new();
    let read = Arc::clone(&now);
    clock.expect_now().returning(move || read.load(Ordering::SeqCst));
    (clock, now)
}

fn store() -> MockRefreshTokenStore {
    let mut store = MockRefreshTokenStore::new();
    store.expect_record().returning(|_, _| Ok(()));
    store.expect_record_login().returning(|_, _, _| Ok(()));
    store
}

/// An issuer with the shared HS256 key and, if `with_provider_key`, the
/// provider's RS256 key pair; and the handle of its clock.
fn issuer(with_provider_key: bool) -> (TokenIssuer, Arc<AtomicI64>) {
    let (clock, now) = clock();
    let issuer = TokenIssuer::new(shared(), Arc::new(store()), Arc::new(clock), TokenLifetimes::default());
    let issuer = if with_provider_key { issuer.with_id_token_codec(provider_key()) } else { issuer };
    (issuer, now)
}

fn portal() -> ClientId {
    ClientId::parse("portal").expect("client id")
}

/// A token's header: its `alg` and `typ`.
fn header(token: &str) -> (String, Option<String>) {
    let segment = token.split('.').next().expect("header");
    let json = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(segment).expect("base64");
    let header: Value = serde_json::from_slice(&json).expect("json");
    (header["alg"].as_str().expect("alg").to_owned(), header["typ"].as_str().map(Into::into))
}

/// A client token of the form issued before the client types, signed with
/// the shared key: issued at `iat`, living `lifetime` seconds.
fn old_client_token(token_type: TokenType, iat: i64, lifetime: i64) -> String {
    let claims = Claims {
        scope: Some("dados_publicos".into()),
        aud: Some("portal".into()),
        client_id: Some("portal".into()),
        ..Claims::new(token_type, 42, iat, lifetime)
    };
    shared().encode_claims(&claims).expect("signs")
}

#[tokio::test]
async fn with_a_provider_key_pair_client_tokens_are_signed_with_it_and_first_party_ones_with_the_shared_key() {
    let (issuer, _) = issuer(true);
    let client = portal();
    let scopes = ScopeSet::required();
    let audience = Audience::Client {
        client_id: &client,
        access_scopes: scopes,
        refresh_scopes: scopes,
        auth_time: None,
        acr: None,
        amr: None,
        sid: None,
    };
    let pair = issuer.issue_pair(UserId(42), audience, Recording::Start { family: "f" }).await.expect("pair");
    assert_eq!(header(&pair.access.0), ("RS256".into(), Some("at+jwt".into())));
    assert_eq!(header(&pair.refresh.0), ("RS256".into(), Some("JWT".into())));
    assert_eq!(
        (pair.access_claims.token_type, pair.refresh_claims.token_type),
        (TokenType::ClientAccess, TokenType::ClientRefresh)
    );
    // Whoever holds only the shared secret cannot verify them.
    assert_eq!(shared().decode(&pair.access.0, START), Err(TokenError::Invalid));
    assert_eq!(shared().decode(&pair.refresh.0, START), Err(TokenError::Invalid));
    assert!(issuer.decode_client(&pair.access.0, TokenType::ClientAccess).is_ok());
    assert!(issuer.decode_client(&pair.refresh.0, TokenType::ClientRefresh).is_ok());

    let own = issuer
        .issue_pair(
            UserId(42),
            Audience::FirstParty { amr: &["pwd".to_owned()], app_password: None },
            Recording::Login(LoginVia::Pair),
        )
        .await
        .expect("pair");
    assert_eq!(header(&own.access.0), ("HS256".into(), Some("JWT".into())));
    assert!(shared().decode_first_party(&own.access.0, TokenType::Access, START).is_ok());
    assert_eq!(issuer.decode_client(&own.access.0, TokenType::ClientAccess), Err(TokenError::WrongType));
}

#[tokio::test]
async fn without_a_provider_key_client_tokens_use_the_shared_key_with_their_own_types() {
    let (issuer, _) = issuer(false);
    let client = portal();
    let scopes = ScopeSet::required();
    let audience = Audience::Client {
        client_id: &client,
        access_scopes: scopes,
        refresh_scopes: scopes,
        auth_time: None,
        acr: None,
        amr: None,
        sid: None,
    };
    let pair = issuer.issue_pair(UserId(42), audience, Recording::Start { family: "f" }).await.expect("pair");
    assert_eq!(header(&pair.access.0), ("HS256".into(), Some("at+jwt".into())));
    let read = shared().decode(&pair.access.0, START).expect("same key");
    assert_eq!(read.token_type, TokenType::ClientAccess);
    assert_eq!(shared().decode_first_party(&pair.access.0, TokenType::Access, START), Err(TokenError::WrongType));
    assert!(issuer.decode_client(&pair.access.0, TokenType::ClientAccess).is_ok());
}

#[test]
fn a_client_access_token_signed_with_the_shared_key_is_never_read_once_there_is_a_provider_key() {
    // Whoever holds the shared secret (every API that reads first-party
    // tokens) could mint one, whatever its dates say.
    let (with_key, _) = issuer(true);
    for (iat, lifetime) in [(START - 60, 300), (START, 300), (START - 1, 2)] {
        let old_form = old_client_token(TokenType::Access, iat, lifetime);
        assert_eq!(with_key.decode_client(&old_form, TokenType::ClientAccess), Err(TokenError::Invalid));
        let new_form = {
            let claims =
                Claims { token_type: TokenType::ClientAccess, ..shared().decode(&old_form, START).expect("read") };
            shared().encode_claims(&claims).expect("signs")
        };
        assert_eq!(with_key.decode_client(&new_form, TokenType::ClientAccess), Err(TokenError::Invalid));
    }
    // Without a provider key the shared key is the client key: read.
    let (without, _) = issuer(false);
    assert!(without.decode_client(&old_client_token(TokenType::Access, START, 300), TokenType::ClientAccess).is_ok());
}

#[test]
fn a_session_typed_jwt_is_no_token_anywhere() {
    // Sessions are stored records now (an opaque id in the cookie); a JWT
    // of type `session`, as earlier releases signed them, is refused in
    // every lane, whoever signed it.
    let (issuer, _) = issuer(true);
    let minted = shared()
        .encode_claims(&Claims {
            password_stamp: Some(PasswordStamp::of("pbkdf2_sha256$1$s$h").as_str().to_owned()),
            ..Claims::new(TokenType::Session, 42, START, 600)
        })
        .expect("signs");
    assert_eq!(issuer.decode_first_party(&minted, TokenType::Access), Err(TokenError::WrongType));
    assert!(issuer.decode_client(&minted, TokenType::ClientAccess).is_err());
}

#[test]
fn an_old_client_refresh_token_signed_with_the_shared_key_is_read_until_it_expires() {
    // The refresh-token store vouches for it at every use.
    let (issuer, now) = issuer(true);
    let refresh = old_client_token(TokenType::Refresh, START - 3_600, 86_400);
    now.store(START + 80_000, Ordering::SeqCst);
    let read = issuer.decode_client(&refresh, TokenType::ClientRefresh).expect("read");
    assert!(read.is_legacy_client_token());
    now.store(START + 82_800, Ordering::SeqCst);
    assert_eq!(issuer.decode_client(&refresh, TokenType::ClientRefresh), Err(TokenError::Expired));
}

#[test]
fn a_first_party_token_is_read_by_the_client_lane_decoder_but_never_as_a_clients() {
    let (issuer, _) = issuer(true);
    let own = shared().encode_claims(&Claims::new(TokenType::Access, 42, START, 300)).expect("signs");
    let read = issuer.decode_client_lane(&own).expect("verifies with the shared key");
    assert!(read.is_first_party());
    assert_eq!(issuer.decode_client(&own, TokenType::ClientAccess), Err(TokenError::WrongType));
}
