//! Tests of `TokenService` over mockall fakes of the ports: what each use
//! case answers, and which ports it touches (or must not touch) on the way.

#[path = "token_service/blacklist.rs"]
mod blacklist;
#[path = "token_service/grace.rs"]
mod grace;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use credencial_application::{PasswordHasher, ServiceError, TokenService, TokenServiceConfig};
use credencial_domain::admin::LoginVia;
use credencial_domain::{
    Claims, DjangoPbkdf2, EndpointError, JwtKeys, TokenCodec, TokenError, TokenType, UserData, UserId,
};
use credencial_ports::{
    MockClock, MockRefreshTokenStore, MockUserDataSource, MockUserRepository, NewRefreshToken, RepositoryError,
    Rotation, UpstreamError, UserCredentials,
};
use secrecy::SecretString;
use serde_json::json;

const NOW: i64 = 1_700_000_000;
const USER: i64 = 42;
const ACCESS_SECS: i64 = 300;
const REFRESH_SECS: i64 = 86_400;

fn codec() -> TokenCodec {
    TokenCodec::new(JwtKeys::hmac(&[7u8; 32]).expect("secret"), 0).expect("codec")
}

fn hash(password: &str) -> String {
    DjangoPbkdf2::derive(password, "salt", 1000).expect("derive").encode()
}

fn secret(s: &str) -> SecretString {
    SecretString::from(s.to_owned())
}

fn credentials(is_active: bool) -> UserCredentials {
    UserCredentials {
        id: UserId(USER),
        username: "ana".into(),
        password_hash: hash("s3cret").into(),
        is_active,
        must_change_password: false,
    }
}

fn clock_at(now: i64) -> MockClock {
    let mut clock = MockClock::new();
    clock.expect_now().return_const(now);
    clock
}

/// The fakes a test configures; whatever it leaves unconfigured panics if called.
struct Fakes {
    users: MockUserRepository,
    store: MockRefreshTokenStore,
    data: MockUserDataSource,
    clock: MockClock,
}

impl Fakes {
    fn new() -> Self {
        Self {
            users: MockUserRepository::new(),
            store: MockRefreshTokenStore::new(),
            data: MockUserDataSource::new(),
            clock: clock_at(NOW),
        }
    }

    fn service(self) -> TokenService {
        TokenService::new(
            Arc::new(codec()),
            Arc::new(self.users),
            Arc::new(self.store),
            Arc::new(self.data),
            Arc::new(self.clock),
            PasswordHasher::new(2, 1000).expect("hasher"),
            TokenServiceConfig::default(),
        )
    }
}

/// A token signed with the service's key, for the user under test.
fn token(token_type: TokenType, issued_at: i64) -> (String, Claims) {
    let lifetime = match token_type {
        TokenType::Access | TokenType::ClientAccess | TokenType::Machine => ACCESS_SECS,
        TokenType::Refresh | TokenType::ClientRefresh => REFRESH_SECS,
        TokenType::Session => 600,
    };
    let claims = Claims::new(token_type, USER, issued_at, lifetime);
    (codec().encode(&claims).expect("encode"), claims)
}

/// Replaces the last character of a base64url string by one whose top bit
/// differs, so that the decoded signature bytes change.
fn flip_last_char(s: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let last = *s.as_bytes().last().expect("non-empty");
    let index = ALPHABET.iter().position(|&c| c == last).expect("base64url character");
    let flipped = char::from(ALPHABET[index ^ 0b10_0000]);
    format!("{}{flipped}", &s[..s.len() - 1])
}

fn decode(token: &str) -> Claims {
    codec().decode(token, NOW).expect("decodes")
}

// ---------------------------------------------------------------- pair

#[tokio::test]
async fn pair_with_right_password_issues_access_and_recorded_refresh_token() {
    let recorded: Arc<Mutex<Vec<(NewRefreshToken, String)>>> = Arc::default();
    let mut fakes = Fakes::new();
    fakes
        .users
        .expect_find_credentials()
        .withf(|username: &str| username == "ana")
        .times(1)
        .returning(|_| Ok(Some(credentials(true))));
    let sink = Arc::clone(&recorded);
    fakes.store.expect_record_login().times(1).returning(move |t, family, via| {
        assert_eq!(via, LoginVia::Pair, "the pair records its login with the token");
        sink.lock().expect("lock").push((t, family.to_owned()));
        Ok(())
    });
    let service = fakes.service();

    let pair = service.pair("ana", secret("s3cret"), None, None).await.expect("pair");

    assert_eq!(pair.username, "ana");
    let access = decode(&pair.access);
    assert_eq!(access.token_type, TokenType::Access);
    assert_eq!(access.user_id, Some(USER));
    assert_eq!(access.iat, NOW);
    assert_eq!(access.exp, NOW + ACCESS_SECS);
    let refresh = decode(&pair.refresh);
    assert_eq!(refresh.token_type, TokenType::Refresh);
    assert_eq!(refresh.user_id, Some(USER));
    assert_eq!(refresh.exp, NOW + REFRESH_SECS);
    assert_ne!(access.jti, refresh.jti);
    let recorded = recorded.lock().expect("lock");
    assert_eq!(
        *recorded,
        vec![(
            NewRefreshToken { jti: refresh.jti.clone(), user_id: UserId(USER), expires_at: refresh.exp },
            refresh.jti.clone()
        )],
        "recorded as the first of a family named after it"
    );
}

async fn pair_refused(found: Option<UserCredentials>, password: &str) -> ServiceError {
    let mut fakes = Fakes::new();
    fakes.users.expect_find_credentials().times(1).returning(move |_| Ok(found.clone()));
    fakes.store.expect_record_login().times(0);
    fakes.service().pair("ana", secret(password), None, None).await.expect_err("pair must fail")
}

#[tokio::test]
async fn pair_with_wrong_password_is_invalid_credentials_and_records_nothing() {
    let err = pair_refused(Some(credentials(true)), "S3cret").await;
    assert!(matches!(err, ServiceError::InvalidCredentials), "{err:?}");
}

#[tokio::test]
async fn pair_for_unknown_user_is_invalid_credentials_and_records_nothing() {
    let err = pair_refused(None, "s3cret").await;
    assert!(matches!(err, ServiceError::InvalidCredentials), "{err:?}");
}

#[tokio::test]
async fn pair_for_inactive_user_with_right_password_is_invalid_credentials_and_records_nothing() {
    let err = pair_refused(Some(credentials(false)), "s3cret").await;
    assert!(matches!(err, ServiceError::InvalidCredentials), "{err:?}");
}

#[tokio::test]
async fn pair_when_storage_fails_is_a_storage_error() {
    let mut fakes = Fakes::new();
    fakes
        .users
        .expect_find_credentials()
        .times(1)
        .returning(|_| Err(RepositoryError::Unexpected("connection refused".into())));
    fakes.store.expect_record_login().times(0);
    let err = fakes.service().pair("ana", secret("s3cret"), None, None).await.expect_err("pair must fail");
    assert!(matches!(err, ServiceError::Storage(_)), "{err:?}");
}

// ---------------------------------------------------------------- refresh

#[tokio::test]
async fn refresh_rotates_the_old_jti_and_returns_a_new_pair() {
    let (old_token, old) = token(TokenType::Refresh, NOW - 60);
    let rotated_to: Arc<Mutex<Option<NewRefreshToken>>> = Arc::default();
    let mut fakes = Fakes::new();
    let old_jti = old.jti.clone();
    let sink = Arc::clone(&rotated_to);
    fakes
        .store
        .expect_rotate()
        .withf(move |jti: &str, user: &UserId, _new: &NewRefreshToken, _| jti == old_jti && *user == UserId(USER))
        .times(1)
        .returning(move |_, _, new, _| {
            *sink.lock().expect("lock") = Some(new);
            Ok(Rotation::Rotated)
        });
    let service = fakes.service();

    let pair = service.refresh(&old_token).await.expect("refresh");

    assert_ne!(pair.refresh.as_str(), old_token);
    assert_ne!(pair.access.as_str(), old_token);
    let access = decode(&pair.access);
    assert_eq!(access.token_type, TokenType::Access);
    assert_eq!(access.user_id, Some(USER));
    assert_eq!(access.exp, NOW + ACCESS_SECS);
    let next = decode(&pair.refresh);
    assert_eq!(next.token_type, TokenType::Refresh);
    assert_eq!(next.user_id, Some(USER));
    assert_ne!(next.jti, old.jti);
    assert_eq!(
        rotated_to.lock().expect("lock").clone(),
        Some(NewRefreshToken { jti: next.jti.clone(), user_id: UserId(USER), expires_at: next.exp }),
        "the store learns the refresh token that was handed out"
    );
}

#[tokio::test]
async fn refresh_of_a_token_the_store_will_not_rotate_is_revoked_and_revokes_nothing_else() {
    let (old_token, _) = token(TokenType::Refresh, NOW - 60);
    let mut fakes = Fakes::new();
    fakes.store.expect_rotate().times(1).returning(|_, _, _, _| Ok(Rotation::Refused));
    fakes.store.expect_revoke_family().times(0);
    let err = fakes.service().refresh(&old_token).await.expect_err("refused");
    assert!(matches!(err, ServiceError::InvalidToken(TokenError::Revoked)), "{err:?}");
}

#[tokio::test]
async fn refresh_of_a_token_rotated_before_is_revoked_and_revokes_its_whole_family() {
    let (old_token, _) = token(TokenType::Refresh, NOW - 60);
    let mut fakes = Fakes::new();
    fakes.store.expect_rotate().times(1).returning(|_, _, _, _| Ok(Rotation::Replayed { family: "fam-1".into() }));
    fakes.store.expect_revoke_family().withf(|family: &str| family == "fam-1").times(1).returning(|_| Ok(2));
    let err = fakes.service().refresh(&old_token).await.expect_err("refused");
    assert!(matches!(err, ServiceError::InvalidToken(TokenError::Revoked)), "{err:?}");
}

#[tokio::test]
async fn a_replay_whose_revocation_fails_is_a_storage_error_not_a_success() {
    let (old_token, _) = token(TokenType::Refresh, NOW - 60);
    let mut fakes = Fakes::new();
    fakes.store.expect_rotate().times(1).returning(|_, _, _, _| Ok(Rotation::Replayed { family: "fam-1".into() }));
    fakes.store.expect_revoke_family().returning(|_| Err(RepositoryError::Unexpected("down".into())));
    let err = fakes.service().refresh(&old_token).await.expect_err("refused");
    assert!(matches!(err, ServiceError::Storage(_)), "{err:?}");
}

#[tokio::test]
async fn refresh_with_an_access_token_is_wrong_type_and_never_rotates() {
    let (access, _) = token(TokenType::Access, NOW);
    let mut fakes = Fakes::new();
    fakes.store.expect_rotate().times(0);
    let err = fakes.service().refresh(&access).await.expect_err("refused");
    assert!(matches!(err, ServiceError::InvalidToken(TokenError::WrongType)), "{err:?}");
}

#[tokio::test]
async fn refresh_with_an_oauth2_refresh_token_is_wrong_type_and_never_rotates() {
    let claims = Claims {
        scope: Some("dados_publicos cpf email".into()),
        client_id: Some("portal".into()),
        ..Claims::new(TokenType::Refresh, USER, NOW, REFRESH_SECS)
    };
    let mut fakes = Fakes::new();
    fakes.store.expect_rotate().times(0);
    let err = fakes.service().refresh(&codec().encode(&claims).expect("encode")).await.expect_err("refused");
    assert!(matches!(err, ServiceError::InvalidToken(TokenError::WrongType)), "{err:?}");
}

#[tokio::test]
async fn refresh_with_a_login_session_token_is_wrong_type_and_never_rotates() {
    let (session, _) = token(TokenType::Session, NOW);
    let mut fakes = Fakes::new();
    fakes.store.expect_rotate().times(0);
    let err = fakes.service().refresh(&session).await.expect_err("refused");
    assert!(matches!(err, ServiceError::InvalidToken(TokenError::WrongType)), "{err:?}");
}

#[tokio::test]
async fn refresh_with_an_expired_refresh_token_is_expired_and_never_rotates() {
    // The clock reads NOW while logging in, then one second past the
    // refresh token's expiry.
    let logged_in = Arc::new(AtomicBool::new(false));
    let mut fakes = Fakes::new();
    fakes.clock = MockClock::new();
    let later = Arc::clone(&logged_in);
    fakes.clock.expect_now().returning(move || match later.load(Ordering::SeqCst) {
        false => NOW,
        true => NOW + REFRESH_SECS + 1,
    });
    fakes.users.expect_find_credentials().returning(|_| Ok(Some(credentials(true))));
    fakes.store.expect_record_login().times(1).returning(|_, _, _| Ok(()));
    fakes.store.expect_rotate().times(0);
    let service = fakes.service();

    let pair = service.pair("ana", secret("s3cret"), None, None).await.expect("pair");
    logged_in.store(true, Ordering::SeqCst);
    let err = service.refresh(&pair.refresh).await.expect_err("refused");

    assert!(matches!(err, ServiceError::InvalidToken(TokenError::Expired)), "{err:?}");
}

// ---------------------------------------------------------------- verify

#[tokio::test]
async fn verify_of_a_valid_access_token_does_not_touch_the_store() {
    let (access, _) = token(TokenType::Access, NOW);
    let mut fakes = Fakes::new();
    fakes.store.expect_is_current().times(0);
    fakes.service().verify(&access).await.expect("valid");
}

#[tokio::test]
async fn verify_of_a_current_refresh_token_is_ok() {
    let (refresh, claims) = token(TokenType::Refresh, NOW);
    let mut fakes = Fakes::new();
    let jti = claims.jti.clone();
    fakes.store.expect_is_current().withf(move |j: &str| j == jti).times(1).returning(|_| Ok(true));
    fakes.service().verify(&refresh).await.expect("valid");
}

#[tokio::test]
async fn verify_of_a_rotated_refresh_token_is_revoked() {
    let (refresh, _) = token(TokenType::Refresh, NOW);
    let mut fakes = Fakes::new();
    fakes.store.expect_is_current().times(1).returning(|_| Ok(false));
    let err = fakes.service().verify(&refresh).await.expect_err("refused");
    assert!(matches!(err, ServiceError::InvalidToken(TokenError::Revoked)), "{err:?}");
}

#[tokio::test]
async fn verify_of_a_login_session_token_is_wrong_type() {
    let (session, _) = token(TokenType::Session, NOW);
    let mut fakes = Fakes::new();
    fakes.store.expect_is_current().times(0);
    let err = fakes.service().verify(&session).await.expect_err("refused");
    assert!(matches!(err, ServiceError::InvalidToken(TokenError::WrongType)), "{err:?}");
}

/// A token a user granted to the client application `portal`, of
/// `token_type`, with the given audience and client claims.
fn client_token(token_type: TokenType, aud: Option<&str>, client_id: Option<&str>) -> String {
    let lifetime = if token_type.is_access() { ACCESS_SECS } else { REFRESH_SECS };
    let claims = Claims {
        scope: Some("dados_publicos cpf email".into()),
        client_id: client_id.map(Into::into),
        aud: aud.map(Into::into),
        ..Claims::new(token_type, USER, NOW, lifetime)
    };
    codec().encode_claims(&claims).expect("encode")
}

/// Every shape of token issued to a client application: as issued (`aud`
/// and `client_id`), and with either claim alone.
fn client_tokens(token_type: TokenType) -> [String; 3] {
    [
        client_token(token_type, Some("portal"), Some("portal")),
        client_token(token_type, Some("portal"), None),
        client_token(token_type, None, Some("portal")),
    ]
}

#[tokio::test]
async fn verify_refuses_every_token_issued_to_a_client_application_as_wrong_type() {
    // The client types, and the first-party types with a client's claims
    // (the form issued before the client types).
    for token_type in [TokenType::Access, TokenType::Refresh, TokenType::ClientAccess, TokenType::ClientRefresh] {
        for token in client_tokens(token_type) {
            let mut fakes = Fakes::new();
            // Refused on its claims alone: the refresh-token store is never asked.
            fakes.store.expect_is_current().times(0);
            let err = fakes.service().verify(&token).await.expect_err("refused");
            assert!(matches!(err, ServiceError::InvalidToken(TokenError::WrongType)), "{token_type:?}: {err:?}");
        }
    }
}

#[tokio::test]
async fn refresh_refuses_a_refresh_token_with_an_audience_alone_and_never_rotates() {
    let mut fakes = Fakes::new();
    fakes.store.expect_rotate().times(0);
    let token = client_token(TokenType::Refresh, Some("portal"), None);
    let err = fakes.service().refresh(&token).await.expect_err("refused");
    assert!(matches!(err, ServiceError::InvalidToken(TokenError::WrongType)), "{err:?}");
}

#[test]
fn a_client_token_is_accepted_only_in_the_client_lane_and_a_first_party_one_only_outside_it() {
    let service = Fakes::new().service();
    for token_type in [TokenType::ClientAccess, TokenType::Access] {
        let issued = client_token(token_type, Some("portal"), Some("portal"));
        let claims = service.authenticate_client_token(&issued).expect("a client's token in the client lane");
        assert_eq!(claims.aud.as_deref(), Some("portal"));
        let err = service.authenticate(&issued).expect_err("not first party");
        assert!(matches!(err, ServiceError::InvalidToken(TokenError::WrongType)), "{err:?}");
    }
    let refresh = client_token(TokenType::ClientRefresh, Some("portal"), Some("portal"));
    let err = service.authenticate_client_token(&refresh).expect_err("a refresh token authorises nothing");
    assert!(matches!(err, ServiceError::InvalidToken(TokenError::WrongType)), "{err:?}");

    let (first_party, _) = token(TokenType::Access, NOW);
    service.authenticate(&first_party).expect("first party in its lane");
    let refused = [
        first_party,
        client_token(TokenType::Access, None, Some("portal")),
        client_token(TokenType::Access, Some("portal"), None),
        client_token(TokenType::Access, Some("other"), Some("portal")),
        client_token(TokenType::ClientAccess, None, Some("portal")),
        client_token(TokenType::ClientAccess, Some("other"), Some("portal")),
    ];
    for token in refused {
        let err = service.authenticate_client_token(&token).expect_err("no audience naming its client");
        assert!(matches!(err, ServiceError::InvalidToken(TokenError::WrongType)), "{err:?}");
    }
}

#[tokio::test]
async fn verify_of_a_tampered_token_is_invalid() {
    let (refresh, _) = token(TokenType::Refresh, NOW);
    let tampered = flip_last_char(&refresh);
    assert_ne!(tampered, refresh);
    let mut fakes = Fakes::new();
    fakes.store.expect_is_current().times(0);
    let err = fakes.service().verify(&tampered).await.expect_err("refused");
    assert!(matches!(err, ServiceError::InvalidToken(TokenError::Invalid)), "{err:?}");
}

// ---------------------------------------------------------------- purge

#[tokio::test]
async fn purging_refresh_tokens_keeps_those_still_inside_the_leeway_and_a_minute() {
    let mut store = MockRefreshTokenStore::new();
    // With a 30 s leeway a token is accepted until 30 s past its `exp`; its
    // record may go a minute after that: records that expired before NOW - 90.
    store
        .expect_purge_expired()
        .withf(|before, limit| *before == NOW - 90 && *limit == 500)
        .times(1)
        .returning(|_, _| Ok(7));
    // The sealed pairs of the grace window (10 s by default) are forgotten
    // once it is over.
    store
        .expect_forget_sealed()
        .withf(|before, limit| *before == NOW - 10 && *limit == 500)
        .times(1)
        .returning(|_, _| Ok(2));
    let service = TokenService::new(
        Arc::new(TokenCodec::new(JwtKeys::hmac(&[7u8; 32]).expect("secret"), 30).expect("codec")),
        Arc::new(MockUserRepository::new()),
        Arc::new(store),
        Arc::new(MockUserDataSource::new()),
        Arc::new(clock_at(NOW)),
        PasswordHasher::new(1, 1000).expect("hasher"),
        TokenServiceConfig::default(),
    );
    assert_eq!(service.purge_expired_refresh_tokens(500).await.expect("purged"), 7);
    assert_eq!(service.forget_expired_sealed_pairs(500).await.expect("forgotten"), 2);
}

#[tokio::test]
async fn a_failing_purge_is_a_storage_error() {
    let mut fakes = Fakes::new();
    fakes.store.expect_purge_expired().returning(|_, _| Err(RepositoryError::Unexpected("down".into())));
    let err = fakes.service().purge_expired_refresh_tokens(500).await.expect_err("fails");
    assert!(matches!(err, ServiceError::Storage(_)), "{err:?}");
}

// ---------------------------------------------------------------- consume

async fn consume_refused(bearer: &str, endpoint: Option<&str>) -> ServiceError {
    let mut fakes = Fakes::new();
    fakes.data.expect_fetch().times(0);
    fakes.service().consume(bearer, endpoint).await.expect_err("consume must fail")
}

#[tokio::test]
async fn consume_with_a_bad_token_never_calls_upstream() {
    let err = consume_refused("not.a.token", None).await;
    assert!(matches!(err, ServiceError::InvalidToken(TokenError::Invalid)), "{err:?}");
}

#[tokio::test]
async fn consume_with_a_refresh_token_is_wrong_type_and_never_calls_upstream() {
    let (refresh, _) = token(TokenType::Refresh, NOW);
    let err = consume_refused(&refresh, None).await;
    assert!(matches!(err, ServiceError::InvalidToken(TokenError::WrongType)), "{err:?}");
}

#[tokio::test]
async fn consume_with_a_session_or_an_oauth2_access_token_is_wrong_type_and_never_calls_upstream() {
    let (session, _) = token(TokenType::Session, NOW);
    let err = consume_refused(&session, None).await;
    assert!(matches!(err, ServiceError::InvalidToken(TokenError::WrongType)), "{err:?}");
    for oauth in client_tokens(TokenType::Access) {
        let err = consume_refused(&oauth, None).await;
        assert!(matches!(err, ServiceError::InvalidToken(TokenError::WrongType)), "{err:?}");
    }
}

#[tokio::test]
async fn consume_of_an_absolute_url_is_not_a_plain_path_and_never_calls_upstream() {
    let (access, _) = token(TokenType::Access, NOW);
    let err = consume_refused(&access, Some("http://evil.example/")).await;
    assert!(matches!(err, ServiceError::InvalidEndpoint(EndpointError::NotAPlainPath)), "{err:?}");
}

#[tokio::test]
async fn consume_of_a_path_off_the_allow_list_is_not_allowed_and_never_calls_upstream() {
    let (access, _) = token(TokenType::Access, NOW);
    let err = consume_refused(&access, Some("/admin/")).await;
    assert!(matches!(err, ServiceError::InvalidEndpoint(EndpointError::NotAllowed)), "{err:?}");
}

#[tokio::test]
async fn consume_without_endpoint_fetches_the_default_path_with_the_same_bearer() {
    let (access, _) = token(TokenType::Access, NOW);
    let body = json!({"identificacao": "123", "nome_usual": "Ana"});
    let mut fakes = Fakes::new();
    let expected_bearer = access.clone();
    let answer = body.clone();
    fakes.users.expect_find_active_user_data().returning(|_| Ok(Some(UserData::default())));
    fakes
        .data
        .expect_fetch()
        .withf(move |path, bearer: &str| path.as_str() == "/api/rh/eu/" && bearer == expected_bearer)
        .times(1)
        .returning(move |_, _| Ok(answer.clone()));
    let got = fakes.service().consume(&access, None).await.expect("consume");
    assert_eq!(got, body);
}

#[tokio::test]
async fn consume_reports_an_upstream_timeout_as_upstream_timeout() {
    let (access, _) = token(TokenType::Access, NOW);
    let mut fakes = Fakes::new();
    fakes.users.expect_find_active_user_data().returning(|_| Ok(Some(UserData::default())));
    fakes.data.expect_fetch().times(1).returning(|_, _| Err(UpstreamError::Timeout));
    let err = fakes.service().consume(&access, None).await.expect_err("consume must fail");
    assert!(matches!(err, ServiceError::Upstream(UpstreamError::Timeout)), "{err:?}");
}

#[tokio::test]
async fn consume_with_the_token_of_a_deactivated_account_is_refused_before_upstream() {
    let (access, _) = token(TokenType::Access, NOW);
    let mut fakes = Fakes::new();
    fakes.users.expect_find_active_user_data().times(1).returning(|_| Ok(None));
    fakes.data.expect_fetch().times(0);
    let err = fakes.service().consume(&access, None).await.expect_err("refused");
    assert!(matches!(err, ServiceError::UnknownUser), "{err:?}");
}

#[tokio::test]
async fn pair_of_an_account_with_a_temporary_password_is_refused_and_issues_nothing() {
    let mut fakes = Fakes::new();
    fakes
        .users
        .expect_find_credentials()
        .returning(|_| Ok(Some(UserCredentials { must_change_password: true, ..credentials(true) })));
    fakes.store.expect_record_login().times(0);
    let err = fakes.service().pair("ana", secret("s3cret"), None, None).await.expect_err("refused");
    assert!(matches!(err, ServiceError::PasswordChangeRequired), "{err:?}");
}

// ------------------------------------------------- the family's lifetime

/// A first-party refresh token for the user under test whose family's
/// login was at `started`, issued at `issued_at`.
fn refresh_of_family(started: i64, issued_at: i64) -> String {
    let claims = Claims {
        orig_iat: Some(started),
        amr: Some(vec!["pwd".into()]),
        ..Claims::new(TokenType::Refresh, USER, issued_at, REFRESH_SECS)
    };
    codec().encode(&claims).expect("encode")
}

#[tokio::test]
async fn a_family_past_its_absolute_lifetime_never_rotates_though_its_token_is_fresh() {
    // A login 30 days ago, whose token rotated an hour ago: rotation after
    // rotation would keep it alive for ever without the absolute limit.
    let thirty_days = credencial_domain::token::DEFAULT_REFRESH_FAMILY_SECS;
    let token = refresh_of_family(NOW - thirty_days, NOW - 3600);
    let mut fakes = Fakes::new();
    fakes.store.expect_rotate().times(0);
    let err = fakes.service().refresh(&token).await.expect_err("the family is over");
    assert!(matches!(err, ServiceError::InvalidToken(TokenError::Expired)), "{err:?}");
}

#[tokio::test]
async fn rotation_keeps_the_family_s_start_and_its_last_token_ends_with_the_family() {
    let thirty_days = credencial_domain::token::DEFAULT_REFRESH_FAMILY_SECS;
    let started = NOW - thirty_days + 600;
    let token = refresh_of_family(started, NOW - 60);
    let mut fakes = Fakes::new();
    fakes.store.expect_rotate().times(1).returning(|_, _, _, _| Ok(Rotation::Rotated));
    let pair = fakes.service().refresh(&token).await.expect("ten minutes are left");
    let claims = decode(&pair.refresh);
    assert_eq!(claims.orig_iat, Some(started), "the login's time travels with the family");
    assert_eq!(claims.exp, started + thirty_days, "no later than the family's end, not a full day");
    assert_eq!(claims.amr, Some(vec!["pwd".to_owned()]), "the login's methods travel too");
}

#[tokio::test]
async fn a_pair_starts_a_family_now_with_the_login_s_methods() {
    let mut fakes = Fakes::new();
    fakes.users.expect_find_credentials().returning(|_| Ok(Some(credentials(true))));
    fakes.store.expect_record_login().times(1).returning(|_, _, _| Ok(()));
    let pair = fakes.service().pair("ana", secret("s3cret"), None, None).await.expect("pair");
    let refresh = decode(&pair.refresh);
    assert_eq!((refresh.orig_iat, refresh.exp), (Some(NOW), NOW + REFRESH_SECS));
    assert_eq!(refresh.amr, Some(vec!["pwd".to_owned()]));
    let access = decode(&pair.access);
    assert_eq!((access.orig_iat, access.amr), (None, None), "the access token keeps simplejwt's shape");
}
