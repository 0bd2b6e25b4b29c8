//! The two-layer scope cache against fakes of the snapshot store and clock.

use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use credencial_application::{ScopeCache, ScopeTtls};
use credencial_domain::profile::UpstreamScopeData;
use credencial_domain::{Scope, UserId};
use credencial_ports::{Clock, MockSnapshotStore, RepositoryError, Snapshot, SnapshotStore, UpstreamError};
use serde_json::{json, Value};

/// A clock the test moves by hand.
struct TestClock(AtomicI64);

impl Clock for TestClock {
    fn now(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

const USER: UserId = UserId(7);
const T0: i64 = 1_800_000_000;

fn cache(store: MockSnapshotStore, clock: &Arc<TestClock>) -> ScopeCache {
    ScopeCache::new(Arc::new(store), Arc::clone(clock) as Arc<dyn Clock>, ScopeTtls::default(), 100)
}

fn clock() -> Arc<TestClock> {
    Arc::new(TestClock(AtomicI64::new(T0)))
}

fn payload() -> Value {
    json!({"vinculos": [{"cnes": "2408570", "noFant": "HOSPITAL", "coMun": "240810", "noCBO": "ENFERMEIRO"}]})
}

fn value_of(answer: &[(Scope, UpstreamScopeData)], scope: Scope) -> UpstreamScopeData {
    answer.iter().find(|(s, _)| *s == scope).map(|(_, d)| d.clone()).expect("scope answered")
}

#[tokio::test]
async fn a_cold_entry_is_fetched_once_stored_with_its_ttl_and_then_served_from_memory() {
    let clock = clock();
    let mut store = MockSnapshotStore::new();
    store.expect_get_many().times(1).returning(|_, _| Ok(vec![]));
    store
        .expect_put()
        .times(1)
        .withf(|user, s| {
            *user == USER && s.scope == Scope::Cnes && s.fetched_at == T0 && s.expires_at == T0 + 7 * 86_400
        })
        .returning(|_, _| Ok(()));
    let cache = cache(store, &clock);
    let calls = AtomicUsize::new(0);
    let fetch = |_s| {
        calls.fetch_add(1, Ordering::SeqCst);
        async { Ok(payload()) }
    };
    let first = cache.get(USER, &[Scope::Cnes], &fetch).await;
    assert_eq!(value_of(&first, Scope::Cnes), UpstreamScopeData::Value(payload()));
    clock.0.store(T0 + 7 * 86_400 - 1, Ordering::SeqCst);
    let second = cache.get(USER, &[Scope::Cnes], &fetch).await;
    assert_eq!(value_of(&second, Scope::Cnes), UpstreamScopeData::Value(payload()));
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the hit within the TTL made no upstream call");
}

#[tokio::test]
async fn a_fresh_entry_stored_by_another_instance_is_served_without_an_upstream_call() {
    let clock = clock();
    let mut store = MockSnapshotStore::new();
    store.expect_get_many().times(1).returning(|_, _| {
        Ok(vec![Snapshot {
            scope: Scope::CursosCdp,
            payload: json!({"total": 0, "data": []}),
            fetched_at: T0 - 10,
            expires_at: T0 + 10,
        }])
    });
    store.expect_put().times(0);
    let cache = cache(store, &clock);
    let answer = cache.get(USER, &[Scope::CursosCdp], |_s| async { Err::<Value, _>(UpstreamError::Timeout) }).await;
    assert_eq!(value_of(&answer, Scope::CursosCdp), UpstreamScopeData::Value(json!({"total": 0, "data": []})));
}

#[tokio::test]
async fn an_expired_entry_is_fetched_again() {
    let clock = clock();
    let mut store = MockSnapshotStore::new();
    store.expect_get_many().returning(|_, _| {
        Ok(vec![Snapshot {
            scope: Scope::Cnes,
            payload: json!({"vinculos": []}),
            fetched_at: T0 - 100,
            expires_at: T0,
        }])
    });
    store.expect_put().times(1).returning(|_, _| Ok(()));
    let cache = cache(store, &clock);
    let answer = cache.get(USER, &[Scope::Cnes], |_s| async { Ok(payload()) }).await;
    assert_eq!(value_of(&answer, Scope::Cnes), UpstreamScopeData::Value(payload()), "expiry refetched");
}

#[tokio::test]
async fn a_failing_upstream_serves_the_stale_entry() {
    let clock = clock();
    let mut store = MockSnapshotStore::new();
    store.expect_get_many().returning(|_, _| {
        Ok(vec![Snapshot { scope: Scope::Cnes, payload: payload(), fetched_at: T0 - 900_000, expires_at: T0 - 1 }])
    });
    store.expect_put().times(0);
    let cache = cache(store, &clock);
    let answer =
        cache.get(USER, &[Scope::Cnes], |_s| async { Err::<Value, _>(UpstreamError::BadResponse("500".into())) }).await;
    assert_eq!(value_of(&answer, Scope::Cnes), UpstreamScopeData::Value(payload()));
}

#[tokio::test]
async fn a_failing_upstream_without_a_stale_entry_gives_an_erro_text() {
    let clock = clock();
    let mut store = MockSnapshotStore::new();
    store.expect_get_many().returning(|_, _| Ok(vec![]));
    store.expect_put().times(0);
    let cache = cache(store, &clock);
    let answer = cache
        .get(USER, &[Scope::ReceitaFederal, Scope::CursosCdp], |s| async move {
            match s {
                Scope::ReceitaFederal => Err::<Value, _>(UpstreamError::Timeout),
                _ => Err(UpstreamError::BadResponse("down".into())),
            }
        })
        .await;
    assert_eq!(
        value_of(&answer, Scope::ReceitaFederal),
        UpstreamScopeData::Erro("O serviço da Receita Federal não respondeu a tempo.".into())
    );
    assert_eq!(
        value_of(&answer, Scope::CursosCdp),
        UpstreamScopeData::Erro("O serviço da Comunidade de Práticas está indisponível no momento.".into())
    );
}

#[tokio::test]
async fn a_store_failure_is_a_miss_not_an_error() {
    let clock = clock();
    let mut store = MockSnapshotStore::new();
    store.expect_get_many().returning(|_, _| Err(RepositoryError::Unexpected("down".into())));
    store.expect_put().returning(|_, _| Err(RepositoryError::Unexpected("down".into())));
    let cache = cache(store, &clock);
    let answer = cache.get(USER, &[Scope::Cnes], |_s| async { Ok(payload()) }).await;
    assert_eq!(value_of(&answer, Scope::Cnes), UpstreamScopeData::Value(payload()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_concurrent_requests_for_a_cold_entry_make_one_upstream_call() {
    let clock = clock();
    let cache = Arc::new(cache(store_without_snapshots(1), &clock));
    let calls = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let cache = Arc::clone(&cache);
            let calls = Arc::clone(&calls);
            tokio::spawn(async move {
                cache
                    .get(USER, &[Scope::Cnes], move |_s| {
                        let calls = Arc::clone(&calls);
                        async move {
                            calls.fetch_add(1, Ordering::SeqCst);
                            tokio::time::sleep(Duration::from_millis(100)).await;
                            Ok(payload())
                        }
                    })
                    .await
            })
        })
        .collect();
    for t in tasks {
        let answer = t.await.expect("joined");
        assert_eq!(value_of(&answer, Scope::Cnes), UpstreamScopeData::Value(payload()));
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

/// A store that has no snapshot and expects `puts` writes.
fn store_without_snapshots(puts: usize) -> MockSnapshotStore {
    let mut store = MockSnapshotStore::new();
    store.expect_get_many().returning(|_, _| Ok(vec![]));
    store.expect_put().times(puts).returning(|_, _| Ok(()));
    store
}

/// Runs `n` concurrent `get`s of the CNES scope with `fetch`.
async fn concurrently<F, Fut>(cache: &Arc<ScopeCache>, n: usize, fetch: F) -> Vec<UpstreamScopeData>
where
    F: Fn(Scope) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Value, UpstreamError>> + Send,
{
    let tasks: Vec<_> = (0..n)
        .map(|_| {
            let (cache, fetch) = (Arc::clone(cache), fetch.clone());
            tokio::spawn(async move { value_of(&cache.get(USER, &[Scope::Cnes], fetch).await, Scope::Cnes) })
        })
        .collect();
    let mut answers = Vec::new();
    for t in tasks {
        answers.push(t.await.expect("joined"));
    }
    answers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_requests_during_an_upstream_time_out_share_one_failing_call() {
    let clock = clock();
    let cache = Arc::new(cache(store_without_snapshots(0), &clock));
    let calls = Arc::new(AtomicUsize::new(0));
    let timing_out = {
        let calls = Arc::clone(&calls);
        move |_s| {
            let calls = Arc::clone(&calls);
            async move {
                calls.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(100)).await;
                Err(UpstreamError::Timeout)
            }
        }
    };
    let answers = concurrently(&cache, 20, timing_out.clone()).await;
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the waiting requests took the call's outcome, not a call each");
    for answer in answers {
        assert_eq!(answer, UpstreamScopeData::Erro("O serviço do CNES não respondeu a tempo.".into()));
    }
    // A failure is not remembered: the next request asks again.
    concurrently(&cache, 1, timing_out).await;
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

/// A snapshot store in memory whose writes wait until the test closes `gate`.
struct GatedStore {
    gate: tokio::sync::Semaphore,
    puts_begun: AtomicUsize,
    stored: std::sync::Mutex<Vec<Snapshot>>,
}

impl GatedStore {
    fn closed() -> Self {
        Self { gate: tokio::sync::Semaphore::new(0), puts_begun: AtomicUsize::new(0), stored: Default::default() }
    }
}

#[async_trait::async_trait]
impl SnapshotStore for GatedStore {
    async fn get_many(&self, _user: UserId, scopes: &[Scope]) -> Result<Vec<Snapshot>, RepositoryError> {
        let stored = self.stored.lock().expect("not poisoned");
        Ok(stored.iter().filter(|s| scopes.contains(&s.scope)).cloned().collect())
    }

    async fn put(&self, _user: UserId, snapshot: Snapshot) -> Result<(), RepositoryError> {
        self.puts_begun.fetch_add(1, Ordering::SeqCst);
        let _closed = self.gate.acquire().await;
        self.stored.lock().expect("not poisoned").push(snapshot);
        Ok(())
    }
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
async fn fetched_data_survives_the_cancellation_of_its_request_while_the_snapshot_is_written() {
    let clock = clock();
    let store = Arc::new(GatedStore::closed());
    let cache = Arc::new(ScopeCache::new(
        Arc::clone(&store) as Arc<dyn SnapshotStore>,
        Arc::clone(&clock) as Arc<dyn Clock>,
        ScopeTtls::default(),
        100,
    ));
    let calls = Arc::new(AtomicUsize::new(0));
    let fetch = {
        let calls = Arc::clone(&calls);
        move |_s| {
            calls.fetch_add(1, Ordering::SeqCst);
            async { Ok(payload()) }
        }
    };
    let cancelled = {
        let (cache, fetch) = (Arc::clone(&cache), fetch.clone());
        tokio::spawn(async move { cache.get(USER, &[Scope::Cnes], fetch).await })
    };
    until("the snapshot write begins", || store.puts_begun.load(Ordering::SeqCst) == 1).await;
    cancelled.abort();
    assert!(cancelled.await.expect_err("aborted").is_cancelled());
    let next = tokio::time::timeout(Duration::from_secs(5), cache.get(USER, &[Scope::Cnes], &fetch)).await;
    assert_eq!(
        value_of(&next.expect("served without waiting for the snapshot write"), Scope::Cnes),
        UpstreamScopeData::Value(payload())
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the next request was served the fetched data, not a new call");
    // The write carries on without the request and lands in the store.
    store.gate.close();
    until("the snapshot is stored", || store.stored.lock().expect("not poisoned").len() == 1).await;
    assert_eq!(store.stored.lock().expect("not poisoned")[0].payload, payload());
}
