//! The two-layer scope cache against fakes of the snapshot store and clock.

use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use credencial_application::{ScopeCache, ScopeTtls};
use credencial_domain::profile::UpstreamScopeData;
use credencial_domain::{Scope, UserId};
use credencial_ports::{Clock, MockSnapshotStore, RepositoryError, Snapshot, UpstreamError};
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
    let mut store = MockSnapshotStore::new();
    store.expect_get_many().returning(|_, _| Ok(vec![]));
    store.expect_put().times(1).returning(|_, _| Ok(()));
    let cache = Arc::new(cache(store, &clock));
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
