//! The brute-force limits of `pair` (and the login form, which uses the
//! same check) over fakes: the failure log keeps its contract in memory and
//! the clock can be moved.

#[path = "support/failure_log.rs"]
mod failure_log;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use credencial_application::{LoginThrottle, PasswordHasher, ServiceError, TokenService, TokenServiceConfig};
use credencial_domain::throttle::{ClientAddress, ThrottlePolicy};
use credencial_domain::{DjangoPbkdf2, JwtKeys, TokenCodec, UserId};
use credencial_ports::{
    MockClock, MockLoginFailureLog, MockRefreshTokenStore, MockUserDataSource, MockUserRepository, RepositoryError,
    UserCredentials,
};
use failure_log::Failures;
use secrecy::SecretString;

const NOW_MS: i64 = 1_700_000_000_000;
const ITERATIONS: u32 = 1_000;
const POLICY: ThrottlePolicy = ThrottlePolicy { username_failures: 5, address_failures: 20, window_secs: 300 };

fn here() -> Option<ClientAddress> {
    Some(ClientAddress::of("192.0.2.10".parse().expect("ip")))
}

fn elsewhere() -> Option<ClientAddress> {
    Some(ClientAddress::of("198.51.100.20".parse().expect("ip")))
}

fn secret(s: &str) -> SecretString {
    SecretString::from(s.to_owned())
}

/// A token service whose users are ana (`ana-pw`, CPF [`ANA_CPF`]), bob
/// (`bob-pw`) and the inactive carla (`carla-pw`), with the limits of
/// `policy` on `log`.
struct Setup {
    service: TokenService,
    now_ms: Arc<AtomicI64>,
    hasher: PasswordHasher,
}

/// ana's CPF.
const ANA_CPF: &str = "52998224725";

/// The stored credentials of ana, bob and carla (password `<name>-pw`).
fn credentials_of(username: &str) -> Option<UserCredentials> {
    let (id, active) = match username {
        "ana" => (1, true),
        "bob" => (2, true),
        "carla" => (3, false),
        _ => return None,
    };
    let hash = DjangoPbkdf2::derive(&format!("{username}-pw"), "salt", ITERATIONS).expect("derive").encode();
    Some(UserCredentials {
        id: UserId(id),
        username: username.to_owned(),
        password_hash: hash.into(),
        is_active: active,
        must_change_password: false,
    })
}

fn setup(policy: ThrottlePolicy, log: MockLoginFailureLog, hashing_threads: usize) -> Setup {
    let now_ms = Arc::new(AtomicI64::new(NOW_MS));
    let mut clock = MockClock::new();
    let now = Arc::clone(&now_ms);
    clock.expect_now().returning(move || now.load(Ordering::SeqCst) / 1000);
    let now = Arc::clone(&now_ms);
    clock.expect_now_millis().returning(move || now.load(Ordering::SeqCst));
    let clock = Arc::new(clock);

    let mut users = MockUserRepository::new();
    users.expect_find_credentials().returning(|username| Ok(credentials_of(username)));
    // ana's CPF is ANA_CPF (no username is a CPF here).
    users
        .expect_find_credentials_for_cpf()
        .returning(|cpf, _| Ok(if cpf.as_str() == ANA_CPF { credentials_of("ana") } else { None }));
    let mut store = MockRefreshTokenStore::new();
    store.expect_record_login().returning(|_, _, _| Ok(()));
    let hasher = PasswordHasher::new(hashing_threads, ITERATIONS).expect("hasher");
    let service = TokenService::new(
        Arc::new(TokenCodec::new(JwtKeys::hmac(&[7u8; 32]).expect("secret"), 0).expect("codec")),
        Arc::new(users),
        Arc::new(store),
        Arc::new(MockUserDataSource::new()),
        clock.clone(),
        hasher.clone(),
        TokenServiceConfig::default(),
    )
    .with_throttle(LoginThrottle::new(Arc::new(log), clock, policy));
    Setup { service, now_ms, hasher }
}

fn throttled(result: Result<impl std::fmt::Debug, ServiceError>) -> u64 {
    match result {
        Err(ServiceError::Throttled { retry_after_secs }) => retry_after_secs,
        other => panic!("expected Throttled, got {other:?}"),
    }
}

fn invalid(result: Result<impl std::fmt::Debug, ServiceError>) {
    match result {
        Err(ServiceError::InvalidCredentials) => {}
        other => panic!("expected InvalidCredentials, got {other:?}"),
    }
}

#[tokio::test]
async fn five_wrong_passwords_limit_the_username_even_for_the_right_password() {
    let failures = Failures::default();
    let s = setup(POLICY, failures.log(), 2);
    for _ in 0..5 {
        invalid(s.service.pair("ana", secret("guess"), None, here()).await);
    }
    assert_eq!(failures.on("username:ana"), 5);
    assert_eq!(failures.on("address:192.0.2.10"), 5);

    s.now_ms.store(NOW_MS + 10_500, Ordering::SeqCst);
    assert_eq!(throttled(s.service.pair("ana", secret("guess"), None, here()).await), 290);
    assert_eq!(
        throttled(s.service.pair("ana", secret("ana-pw"), None, here()).await),
        290,
        "right password, still limited"
    );
    assert_eq!(throttled(s.service.pair("ana", secret("ana-pw"), None, elsewhere()).await), 290, "from anywhere");
    assert_eq!(failures.on("username:ana"), 5, "a limited attempt is not counted");
    assert_eq!(failures.recorded(), 5);
    // Another user from the same address is not limited (5 < 20).
    assert!(s.service.pair("bob", secret("bob-pw"), None, here()).await.is_ok());
}

#[tokio::test]
async fn the_right_password_works_again_when_the_window_ends_and_clears_the_username_only() {
    let failures = Failures::default();
    let s = setup(POLICY, failures.log(), 2);
    for _ in 0..5 {
        invalid(s.service.pair("ana", secret("guess"), None, here()).await);
    }
    s.now_ms.store(NOW_MS + 299_999, Ordering::SeqCst);
    assert_eq!(throttled(s.service.pair("ana", secret("ana-pw"), None, here()).await), 1);
    s.now_ms.store(NOW_MS + 300_000, Ordering::SeqCst);
    let pair = s.service.pair("ana", secret("ana-pw"), None, here()).await.expect("the window has ended");
    assert_eq!(pair.username, "ana");
    assert_eq!(failures.on("address:192.0.2.10"), 5, "the address keeps its count");
}

#[tokio::test]
async fn a_success_inside_the_window_forgets_the_usernames_failures_but_not_the_addresss() {
    let failures = Failures::default();
    let s = setup(POLICY, failures.log(), 2);
    for _ in 0..4 {
        invalid(s.service.pair("ana", secret("guess"), None, here()).await);
    }
    s.service.pair("ana", secret("ana-pw"), None, here()).await.expect("4 < 5");
    assert_eq!(failures.on("username:ana"), 0);
    assert_eq!(failures.on("address:192.0.2.10"), 4);
    for _ in 0..4 {
        invalid(s.service.pair("ana", secret("guess"), None, here()).await);
    }
    assert!(s.service.pair("ana", secret("ana-pw"), None, here()).await.is_ok(), "a fresh allowance of 5");
}

#[tokio::test]
async fn unknown_and_inactive_users_count_like_wrong_passwords_and_answer_alike_when_limited() {
    let failures = Failures::default();
    let s = setup(POLICY, failures.log(), 2);
    for user in ["nobody", "carla"] {
        for _ in 0..5 {
            invalid(s.service.pair(user, secret(&format!("{user}-pw")), None, here()).await);
        }
        assert_eq!(throttled(s.service.pair(user, secret("x"), None, here()).await), 300, "{user}");
    }
    assert_eq!(failures.on("username:nobody"), 5);
    assert_eq!(failures.on("username:carla"), 5);
}

#[tokio::test]
async fn an_account_has_one_count_whether_its_cpf_punctuated_or_bare_or_its_username_named_it() {
    let failures = Failures::default();
    let s = setup(POLICY, failures.log(), 2);
    for typed in ["529.982.247-25", "52998224725", "529.982.247-25", "52998224725", "ana"] {
        invalid(s.service.pair(typed, secret("guess"), None, here()).await);
    }
    assert_eq!(failures.on("username:ana"), 5, "one count, under the account's username");
    assert_eq!(failures.on("username:52998224725"), 0);
    assert_eq!(throttled(s.service.pair("ana", secret("ana-pw"), None, elsewhere()).await), 300, "the 6th guess");
    assert_eq!(throttled(s.service.pair("529.982.247-25", secret("ana-pw"), None, elsewhere()).await), 300);
    assert_eq!(failures.on("address:192.0.2.10"), 5, "the address counts each guess once");
}

#[tokio::test]
async fn an_unknown_cpf_is_limited_like_a_known_one_whatever_its_punctuation() {
    let failures = Failures::default();
    let s = setup(POLICY, failures.log(), 2);
    for typed in ["111.444.777-35", "11144477735", "111.444.777-35", "11144477735", "111444777-35"] {
        invalid(s.service.pair(typed, secret("guess"), None, here()).await);
    }
    assert_eq!(failures.on("username:11144477735"), 5, "under its digits, as a known account's would be");
    assert_eq!(throttled(s.service.pair("11144477735", secret("guess"), None, elsewhere()).await), 300);
}

#[tokio::test]
async fn the_address_limit_holds_across_usernames() {
    let failures = Failures::default();
    let policy = ThrottlePolicy { username_failures: 5, address_failures: 3, window_secs: 60 };
    let s = setup(policy, failures.log(), 2);
    for user in ["u1", "u2", "u3"] {
        invalid(s.service.pair(user, secret("guess"), None, here()).await);
    }
    assert_eq!(throttled(s.service.pair("ana", secret("ana-pw"), None, here()).await), 60);
    assert!(s.service.pair("ana", secret("ana-pw"), None, elsewhere()).await.is_ok(), "another address is free");
    // A success elsewhere does not free this address.
    assert_eq!(throttled(s.service.pair("bob", secret("bob-pw"), None, here()).await), 60);
}

#[tokio::test]
async fn the_longer_wait_of_two_limited_keys_is_the_answer() {
    let failures = Failures::default();
    let policy = ThrottlePolicy { username_failures: 2, address_failures: 3, window_secs: 100 };
    let s = setup(policy, failures.log(), 2);
    invalid(s.service.pair("u1", secret("guess"), None, here()).await);
    s.now_ms.store(NOW_MS + 30_000, Ordering::SeqCst);
    invalid(s.service.pair("ana", secret("guess"), None, here()).await);
    invalid(s.service.pair("ana", secret("guess"), None, here()).await);
    // The address window started at NOW (ends in 70 s), ana's at NOW + 30 s (100 s).
    assert_eq!(throttled(s.service.pair("ana", secret("ana-pw"), None, here()).await), 100);
}

#[tokio::test]
async fn a_limited_attempt_answers_without_waiting_for_a_hashing_slot() {
    let failures = Failures::default();
    let s = setup(POLICY, failures.log(), 1);
    for _ in 0..5 {
        invalid(s.service.pair("ana", secret("guess"), None, here()).await);
    }
    // Take the only hashing slot: an attempt that tried to hash would wait.
    let _slot = s.hasher.slot().await.expect("slot");
    let answer = tokio::time::timeout(Duration::from_secs(5), s.service.pair("ana", secret("ana-pw"), None, here()))
        .await
        .expect("answered without hashing");
    throttled(answer);
}

#[tokio::test]
async fn a_burst_of_parallel_guesses_gets_no_more_hashes_than_the_limit() {
    let failures = Failures::default();
    let policy = ThrottlePolicy { username_failures: 3, address_failures: 0, window_secs: 60 };
    let s = Arc::new(setup(policy, failures.log(), 1));
    // Every guess passes the first check while the slot is taken; each must
    // look again once it holds the slot.
    let slot = s.hasher.slot().await.expect("slot");
    let guesses: Vec<_> = (0..12)
        .map(|i| {
            let s = Arc::clone(&s);
            tokio::spawn(async move { s.service.pair("ana", secret(&format!("guess-{i}")), None, here()).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(200)).await;
    drop(slot);
    let mut refused = 0;
    for guess in guesses {
        match guess.await.expect("task") {
            Err(ServiceError::InvalidCredentials) => {}
            Err(ServiceError::Throttled { .. }) => refused += 1,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(failures.recorded(), 3, "only the limit's worth of guesses was hashed");
    assert_eq!(refused, 9);
}

#[tokio::test]
async fn without_an_address_only_the_username_counts() {
    let failures = Failures::default();
    let s = setup(POLICY, failures.log(), 2);
    invalid(s.service.pair("ana", secret("guess"), None, None).await);
    assert_eq!(failures.on("username:ana"), 1);
    assert_eq!(failures.windows.lock().expect("lock").len(), 1);
}

#[tokio::test]
async fn disabled_limits_never_touch_the_log() {
    // A fake without expectations panics if it is called.
    let s = setup(ThrottlePolicy::DISABLED, MockLoginFailureLog::new(), 2);
    for _ in 0..10 {
        invalid(s.service.pair("ana", secret("guess"), None, here()).await);
    }
    assert!(s.service.pair("ana", secret("ana-pw"), None, here()).await.is_ok());
}

#[tokio::test]
async fn a_log_that_cannot_be_read_is_a_storage_error_before_any_hashing() {
    let mut log = MockLoginFailureLog::new();
    log.expect_windows().returning(|_| Err(RepositoryError::Unexpected("down".into())));
    log.expect_record_failure().times(0);
    let s = setup(POLICY, log, 1);
    let _slot = s.hasher.slot().await.expect("slot");
    let answer = tokio::time::timeout(Duration::from_secs(5), s.service.pair("ana", secret("ana-pw"), None, here()))
        .await
        .expect("answered without hashing");
    assert!(matches!(answer, Err(ServiceError::Storage(_))), "{answer:?}");
}

#[tokio::test]
async fn purging_deletes_the_ended_windows() {
    let failures = Failures::default();
    let s = setup(POLICY, failures.log(), 2);
    invalid(s.service.pair("ana", secret("guess"), None, here()).await);
    s.now_ms.store(NOW_MS + 100_000, Ordering::SeqCst);
    invalid(s.service.pair("bob", secret("guess"), None, None).await);
    s.now_ms.store(NOW_MS + 300_001, Ordering::SeqCst);
    assert_eq!(s.service.throttle().purge_ended(100).await.expect("purge"), 2, "ana's and the address's");
    assert_eq!(failures.on("username:bob"), 1);
}
