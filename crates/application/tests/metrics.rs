//! What the use cases record through `Metrics`, over fakes of the ports and
//! an in-memory recorder: logins by outcome, tokens by kind, refresh
//! replays, upstream calls, the scope cache and the hashing queue.

// Only its fake log is used here.
#[allow(dead_code)]
#[path = "support/failure_log.rs"]
mod failure_log;
#[path = "support/recorder.rs"]
mod recorder;

use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use credencial_application::metrics::{
    HASHING_QUEUE, LOGINS, REFRESH_REPLAYS, SCOPE_CACHE, TOKENS_ISSUED, UPSTREAM_DURATION, UPSTREAM_REQUESTS,
};
use credencial_application::tokens::{Audience, Recording, TokenIssuer};
use credencial_application::{
    LoginThrottle, Metrics, PasswordHasher, ScopeCache, ScopeTtls, ServiceError, TokenService, TokenServiceConfig,
};
use credencial_domain::oauth::ClientId;
use credencial_domain::profile::UpstreamScopeData;
use credencial_domain::throttle::ThrottlePolicy;
use credencial_domain::{
    Claims, DjangoPbkdf2, JwtKeys, Scope, ScopeSet, TokenCodec, TokenLifetimes, TokenType, UserData, UserId,
};
use credencial_ports::{
    Clock, MockClock, MockRefreshTokenStore, MockSnapshotStore, MockUserDataSource, MockUserRepository,
    RepositoryError, Rotation, Snapshot, UpstreamError, UserCredentials,
};
use recorder::Recorded;
use secrecy::SecretString;
use serde_json::json;

const NOW: i64 = 1_700_000_000;
const ITERATIONS: u32 = 1_000;

fn codec() -> Arc<TokenCodec> {
    Arc::new(TokenCodec::new(JwtKeys::hmac(&[7u8; 32]).expect("secret"), 0).expect("codec"))
}

fn clock() -> Arc<MockClock> {
    let mut clock = MockClock::new();
    clock.expect_now().return_const(NOW);
    clock.expect_now_millis().return_const(NOW * 1000);
    Arc::new(clock)
}

/// ana (`ana-pw`) exists; looking up `broken` fails in the store.
fn users() -> MockUserRepository {
    let mut users = MockUserRepository::new();
    users.expect_find_credentials().returning(|username| match username {
        "ana" => Ok(Some(UserCredentials {
            id: UserId(1),
            username: "ana".into(),
            password_hash: DjangoPbkdf2::derive("ana-pw", "salt", ITERATIONS).expect("derive").encode().into(),
            is_active: true,
            must_change_password: false,
        })),
        "broken" => Err(RepositoryError::Unexpected("connection reset".into())),
        _ => Ok(None),
    });
    users.expect_find_active_user_data().returning(|_| Ok(Some(UserData::default())));
    users
}

fn service(metrics: &Metrics, store: MockRefreshTokenStore, data: MockUserDataSource) -> TokenService {
    let clock = clock();
    let failures = failure_log::Failures::default();
    let policy = ThrottlePolicy { username_failures: 1, address_failures: 20, window_secs: 300 };
    TokenService::new(
        codec(),
        Arc::new(users()),
        Arc::new(store),
        Arc::new(data),
        clock.clone(),
        PasswordHasher::new(1, ITERATIONS).expect("hasher").with_metrics(metrics.clone()),
        TokenServiceConfig::default(),
    )
    .with_throttle(LoginThrottle::new(Arc::new(failures.log()), clock, policy))
    .with_metrics(metrics.clone())
}

fn logins(recorded: &Recorded, form: &str, outcome: &str) -> u64 {
    recorded.counter(LOGINS, &[("form", form), ("outcome", outcome)])
}

fn tokens(recorded: &Recorded, kind: &str) -> u64 {
    recorded.counter(TOKENS_ISSUED, &[("kind", kind)])
}

fn pw(s: &str) -> SecretString {
    SecretString::from(s.to_owned())
}

#[tokio::test]
async fn pair_counts_each_outcome_of_the_credential_check_and_the_pair_it_issues() {
    let (metrics, recorded) = Recorded::metrics();
    let mut store = MockRefreshTokenStore::new();
    store.expect_record_login().times(1).returning(|_, _, _| Ok(()));
    let service = service(&metrics, store, MockUserDataSource::new());

    service.pair("ana", pw("ana-pw"), None, None).await.expect("right password");
    assert!(matches!(service.pair("ana", pw("wrong"), None, None).await, Err(ServiceError::InvalidCredentials)));
    assert!(matches!(service.pair("ana", pw("ana-pw"), None, None).await, Err(ServiceError::Throttled { .. })));
    // A storage failure says nothing about the credentials: not counted.
    assert!(matches!(service.pair("broken", pw("x"), None, None).await, Err(ServiceError::Storage(_))));

    let counted = ["succeeded", "failed", "throttled"].map(|o| logins(&recorded, "pair", o));
    assert_eq!(counted, [1, 1, 1]);
    for form in ["oauth", "account", "client_secret"] {
        assert_eq!(["succeeded", "failed", "throttled"].map(|o| logins(&recorded, form, o)), [0, 0, 0], "{form}");
    }
    assert_eq!((tokens(&recorded, "access"), tokens(&recorded, "refresh")), (1, 1));
    assert_eq!(tokens(&recorded, "oauth_access"), 0);
}

#[tokio::test]
async fn a_replayed_refresh_token_is_counted_and_issues_nothing() {
    let (metrics, recorded) = Recorded::metrics();
    let mut store = MockRefreshTokenStore::new();
    let rotations = AtomicUsize::new(0);
    store.expect_rotate().returning(move |_, _, _, _| match rotations.fetch_add(1, Ordering::SeqCst) {
        0 => Ok(Rotation::Rotated),
        _ => Ok(Rotation::Replayed { family: "f".into() }),
    });
    store.expect_revoke_family().times(1).returning(|_| Ok(2));
    let service = service(&metrics, store, MockUserDataSource::new());
    let refresh = codec().encode(&Claims::new(TokenType::Refresh, 1, NOW, 86_400)).expect("sign");

    service.refresh(&refresh).await.expect("rotated");
    assert!(matches!(service.refresh(&refresh).await, Err(ServiceError::InvalidToken(_))));

    assert_eq!(recorded.counter(REFRESH_REPLAYS, &[("outcome", "revoked")]), 1);
    assert_eq!(recorded.counter(REFRESH_REPLAYS, &[("outcome", "grace")]), 0);
    assert_eq!((tokens(&recorded, "access"), tokens(&recorded, "refresh")), (1, 1));
}

#[tokio::test]
async fn the_issuer_counts_client_pairs_by_kind() {
    let (metrics, recorded) = Recorded::metrics();
    let mut store = MockRefreshTokenStore::new();
    store.expect_record().times(1).returning(|_, _| Ok(()));
    let issuer = TokenIssuer::new(codec(), Arc::new(store), clock(), TokenLifetimes::default()).with_metrics(metrics);

    let client = ClientId::parse("host").expect("client id");
    let audience = Audience::Client {
        client_id: &client,
        access_scopes: ScopeSet::required(),
        refresh_scopes: ScopeSet::required(),
        auth_time: None,
        acr: None,
        amr: None,
        sid: None,
    };
    issuer.issue_pair(UserId(1), audience, Recording::Start { family: "code:host:1" }).await.expect("pair");
    // No ID-token key: refused, and nothing counted.
    assert!(issuer.sign_id_token(&json!({"sub": "1"})).is_err());

    let kinds = ["oauth_access", "oauth_refresh", "access", "refresh", "id_token"];
    assert_eq!(kinds.map(|k| tokens(&recorded, k)), [1, 1, 0, 0, 0]);
}

#[tokio::test]
async fn an_upstream_call_is_timed_and_counted_by_outcome() {
    let (metrics, recorded) = Recorded::metrics();
    let mut data = MockUserDataSource::new();
    let calls = AtomicUsize::new(0);
    data.expect_fetch().returning(move |_, _| match calls.fetch_add(1, Ordering::SeqCst) {
        0 => Ok(json!({"nome_usual": "Ana"})),
        _ => Err(UpstreamError::Timeout),
    });
    let service = service(&metrics, MockRefreshTokenStore::new(), data);
    let access = codec().encode(&Claims::new(TokenType::Access, 1, NOW, 300)).expect("sign");

    service.consume(&access, None).await.expect("answered");
    assert!(matches!(service.consume(&access, None).await, Err(ServiceError::Upstream(UpstreamError::Timeout))));

    let outcome = |o| recorded.counter(UPSTREAM_REQUESTS, &[("upstream", "user_data"), ("outcome", o)]);
    assert_eq!(["ok", "timeout", "error", "refused", "not_found"].map(outcome), [1, 1, 0, 0, 0]);
    assert_eq!(recorded.histogram(UPSTREAM_DURATION, &[("upstream", "user_data")]).len(), 2);
    assert!(recorded.histogram(UPSTREAM_DURATION, &[("upstream", "cnes")]).is_empty());
}

/// A clock the test moves by hand.
struct TestClock(AtomicI64);

impl Clock for TestClock {
    fn now(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

#[tokio::test]
async fn the_scope_cache_counts_hits_misses_and_stale_answers() {
    let (metrics, recorded) = Recorded::metrics();
    let clock = Arc::new(TestClock(AtomicI64::new(NOW)));
    let stale = Snapshot { scope: Scope::Cnes, payload: json!({"vinculos": []}), fetched_at: NOW, expires_at: NOW + 1 };
    let mut store = MockSnapshotStore::new();
    let reads = AtomicUsize::new(0);
    store.expect_get_many().returning(move |_, _| match reads.fetch_add(1, Ordering::SeqCst) {
        0 => Ok(vec![]),
        _ => Ok(vec![stale.clone()]),
    });
    store.expect_put().returning(|_, _| Ok(()));
    let cache = ScopeCache::new(Arc::new(store), Arc::clone(&clock) as Arc<dyn Clock>, ScopeTtls::default(), 10)
        .with_metrics(metrics);
    let user = UserId(7);
    let fetched = |_s| async { Ok(json!({"vinculos": []})) };
    let failing = |_s| async { Err(UpstreamError::BadResponse("500".into())) };

    cache.get(user, &[Scope::Cnes], fetched).await; // nothing kept: miss
    cache.get(user, &[Scope::Cnes], fetched).await; // in memory: hit
    clock.0.store(NOW + 8 * 86_400, Ordering::SeqCst);
    let answer = cache.get(user, &[Scope::Cnes], failing).await; // expired, upstream down: stale
    assert_eq!(answer[0].1, UpstreamScopeData::Value(json!({"vinculos": []})));

    let result = |r| recorded.counter(SCOPE_CACHE, &[("scope", "cnes"), ("result", r)]);
    assert_eq!(["miss", "hit", "stale"].map(result), [1, 1, 1]);
    assert_eq!(recorded.counter(SCOPE_CACHE, &[("scope", "receita_federal"), ("result", "miss")]), 0);
}

/// Waits (5 s at most) until `done` holds.
async fn until(what: &str, done: impl Fn() -> bool) {
    let wait = async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), wait).await.unwrap_or_else(|_| panic!("never: {what}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hashing_queue_counts_checks_waiting_for_a_slot_until_they_get_one_or_leave() {
    let (metrics, recorded) = Recorded::metrics();
    let hasher = PasswordHasher::new(1, ITERATIONS).expect("hasher").with_metrics(metrics);
    let queue = || recorded.gauge(HASHING_QUEUE, &[]);

    let held = hasher.slot().await.expect("the free slot, without queueing");
    assert_eq!(queue(), 0.0);
    let waiting = {
        let hasher = hasher.clone();
        tokio::spawn(async move { hasher.verify(None, pw("x")).await })
    };
    let leaving = {
        let hasher = hasher.clone();
        tokio::spawn(async move { hasher.slot().await.map(drop) })
    };
    until("two checks queue", || queue() == 2.0).await;
    leaving.abort();
    assert!(leaving.await.expect_err("aborted").is_cancelled());
    until("the cancelled one leaves the queue", || queue() == 1.0).await;
    drop(held);
    assert!(!waiting.await.expect("joined").expect("hashed"), "an unknown user never matches");
    assert_eq!(queue(), 0.0);
}

#[test]
fn disabled_metrics_record_nothing_and_unknown_methods_fold_into_other() {
    use credencial_application::metrics::method_label;
    let metrics = Metrics::disabled();
    assert!(!metrics.is_enabled());
    metrics.login(credencial_application::metrics::LoginForm::Pair, &Ok::<(), ServiceError>(()));
    metrics.http_requests("/api/token/pair/", "POST", 200).increment(1);
    drop(metrics.hashing_queued());
    metrics.sample();
    assert_eq!(
        [method_label("GET"), method_label("POST"), method_label("BREW"), method_label("get")],
        ["GET", "POST", "other", "other"]
    );
}
