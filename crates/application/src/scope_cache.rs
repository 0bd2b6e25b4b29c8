//! Server-side cache of upstream scope data.
//!
//! Two layers: an in-process LRU (`cached::LruCache`) holding fresh
//! entries, in front of the durable [`SnapshotStore`] (PostgreSQL), which
//! every instance shares and which survives restarts. A miss in both calls
//! the upstream once per (user, scope) and instance, however many requests
//! wait for it, and every waiting request gets that call's outcome — a
//! failure too, so that an upstream that times out costs each of them one
//! time-out, not one per request ahead of it. When the upstream fails, each
//! request serves the stale snapshot it read, if any; without one, the scope
//! holds `{"erro": …}`. Fresh data goes into memory as soon as it arrives,
//! then into the store from a task of its own, so neither is lost when the
//! request that made the call is cancelled.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use cached::{Cached, LruCache};
use credencial_domain::profile::UpstreamScopeData;
use credencial_domain::{Scope, UserId};
use credencial_ports::{Clock, Snapshot, SnapshotStore, UpstreamError};

use crate::metrics::{CacheResult, Metrics};
use crate::request_context;

/// How long fresh data of each upstream scope is kept, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScopeTtls {
    /// `receita_federal` (default 5 years).
    pub receita_federal: u64,
    /// `cnes` (default 7 days).
    pub cnes: u64,
    /// `cursos_cdp` (default 24 hours).
    pub cursos_cdp: u64,
}

impl Default for ScopeTtls {
    fn default() -> Self {
        let of = |s: Scope| s.default_cache_secs().unwrap_or(0);
        Self { receita_federal: of(Scope::ReceitaFederal), cnes: of(Scope::Cnes), cursos_cdp: of(Scope::CursosCdp) }
    }
}

impl ScopeTtls {
    fn of(&self, scope: Scope) -> i64 {
        let secs = match scope {
            Scope::ReceitaFederal => self.receita_federal,
            Scope::Cnes => self.cnes,
            Scope::CursosCdp => self.cursos_cdp,
            _ => 0,
        };
        i64::try_from(secs).unwrap_or(i64::MAX)
    }
}

type Key = (i64, Scope);

/// What one upstream call produced: the fresh data, or the `erro` text of
/// its failure (each request then falls back on its own stale snapshot).
type Outcome = Result<serde_json::Value, String>;

/// One upstream call in progress and, once it ended, its outcome, shared
/// by every request that waits for it.
type Flight = Arc<tokio::sync::OnceCell<Outcome>>;

/// The two-layer cache with single-flight upstream calls.
pub struct ScopeCache {
    store: Arc<dyn SnapshotStore>,
    clock: Arc<dyn Clock>,
    ttls: ScopeTtls,
    memory: Mutex<LruCache<Key, Snapshot>>,
    inflight: Mutex<HashMap<Key, Flight>>,
    metrics: Metrics,
}

/// A request's share in a [`Flight`]; the last one to leave, even by
/// cancellation, forgets the flight.
struct FlightGuard<'a> {
    cache: &'a ScopeCache,
    key: Key,
    /// Our share; `None` only once `drop` has let go of it.
    flight: Option<Flight>,
}

impl FlightGuard<'_> {
    /// The call's outcome: awaited if another request is making the call,
    /// else made here with `call`.
    async fn outcome<C, Fut>(&self, call: C) -> Outcome
    where
        C: FnOnce() -> Fut,
        Fut: Future<Output = Outcome>,
    {
        match &self.flight {
            Some(flight) => flight.get_or_init(call).await.clone(),
            None => call().await,
        }
    }
}

impl Drop for FlightGuard<'_> {
    fn drop(&mut self) {
        let mut inflight = self.cache.inflight.lock().unwrap_or_else(|p| p.into_inner());
        // Let go of our share under the lock (shares are only taken under
        // it), so that exactly one leaving request sees itself as the last.
        let Some(flight) = self.flight.take() else {
            return;
        };
        let ours = inflight.get(&self.key).is_some_and(|f| Arc::ptr_eq(f, &flight));
        drop(flight);
        if ours && inflight.get(&self.key).is_some_and(|f| Arc::strong_count(f) == 1) {
            inflight.remove(&self.key);
        }
    }
}

impl std::fmt::Debug for ScopeCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScopeCache").field("ttls", &self.ttls).finish_non_exhaustive()
    }
}

/// What an upstream call produced, for the `erro` text.
fn erro_text(scope: Scope, e: &UpstreamError) -> String {
    let who = match scope {
        Scope::ReceitaFederal => "da Receita Federal",
        Scope::Cnes => "do CNES",
        Scope::CursosCdp => "da Comunidade de Práticas",
        _ => "de origem",
    };
    match e {
        UpstreamError::Timeout => format!("O serviço {who} não respondeu a tempo."),
        UpstreamError::NotFound if scope == Scope::ReceitaFederal => {
            "CPF não encontrado na base da Receita Federal.".to_owned()
        }
        _ => format!("O serviço {who} está indisponível no momento."),
    }
}

impl ScopeCache {
    /// A cache over `store`, keeping at most `memory_entries` fresh entries
    /// in process.
    pub fn new(store: Arc<dyn SnapshotStore>, clock: Arc<dyn Clock>, ttls: ScopeTtls, memory_entries: usize) -> Self {
        Self {
            store,
            clock,
            ttls,
            memory: Mutex::new(LruCache::new(memory_entries.max(1))),
            inflight: Mutex::new(HashMap::new()),
            metrics: Metrics::disabled(),
        }
    }

    /// The same cache, counting its hits, misses and stale answers in
    /// `metrics`.
    pub fn with_metrics(mut self, metrics: Metrics) -> Self {
        self.metrics = metrics;
        self
    }

    fn memory_get(&self, key: &Key, now: i64) -> Option<Snapshot> {
        let mut memory = self.memory.lock().unwrap_or_else(|p| p.into_inner());
        match memory.cache_get(key) {
            Some(s) if s.expires_at > now => Some(s.clone()),
            Some(_) => {
                let _ = memory.cache_remove(key);
                None
            }
            None => None,
        }
    }

    fn memory_put(&self, key: Key, snapshot: Snapshot) {
        let mut memory = self.memory.lock().unwrap_or_else(|p| p.into_inner());
        memory.cache_set(key, snapshot);
    }

    /// The call in progress for `key`, or a new one: a call that has
    /// already ended is never joined (its outcome is in memory if it was a
    /// success; a failure is asked again).
    fn flight(&self, key: Key) -> FlightGuard<'_> {
        let mut inflight = self.inflight.lock().unwrap_or_else(|p| p.into_inner());
        let entry = inflight.entry(key).or_default();
        if entry.initialized() {
            *entry = Flight::default();
        }
        FlightGuard { cache: self, key, flight: Some(Arc::clone(entry)) }
    }

    /// The data of each of `scopes` for `user`: fresh from memory, else
    /// fresh from the store (one round trip for all of them), else fetched
    /// with `fetch` (concurrently across scopes, once per key), else stale,
    /// else an `erro` text. A store failure is treated like a miss: the
    /// answer never fails because of the cache.
    pub async fn get<F, Fut>(&self, user: UserId, scopes: &[Scope], fetch: F) -> Vec<(Scope, UpstreamScopeData)>
    where
        F: Fn(Scope) -> Fut,
        Fut: Future<Output = Result<serde_json::Value, UpstreamError>>,
    {
        let now = self.clock.now();
        let mut answers = Vec::with_capacity(scopes.len());
        let mut misses = Vec::new();
        for &scope in scopes {
            match self.memory_get(&(user.0, scope), now) {
                Some(s) => {
                    self.metrics.scope_cache(scope, CacheResult::Hit);
                    answers.push((scope, UpstreamScopeData::Value(s.payload)));
                }
                None => misses.push(scope),
            }
        }
        if misses.is_empty() {
            return answers;
        }
        let stored = self.store.get_many(user, &misses).await.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "snapshot store unavailable; treating as a miss");
            Vec::new()
        });
        let mut to_fetch = Vec::new();
        for scope in misses {
            match stored.iter().find(|s| s.scope == scope) {
                Some(s) if s.expires_at > now => {
                    self.metrics.scope_cache(scope, CacheResult::Hit);
                    self.memory_put((user.0, scope), s.clone());
                    answers.push((scope, UpstreamScopeData::Value(s.payload.clone())));
                }
                stale => to_fetch.push((scope, stale.cloned())),
            }
        }
        let fetched = futures_util::future::join_all(
            to_fetch.into_iter().map(|(scope, stale)| self.refresh(user, scope, stale, &fetch)),
        )
        .await;
        answers.extend(fetched);
        answers
    }

    async fn refresh<F, Fut>(
        &self,
        user: UserId,
        scope: Scope,
        stale: Option<Snapshot>,
        fetch: &F,
    ) -> (Scope, UpstreamScopeData)
    where
        F: Fn(Scope) -> Fut,
        Fut: Future<Output = Result<serde_json::Value, UpstreamError>>,
    {
        let flight = self.flight((user.0, scope));
        // The first request makes the call; the others wait for its outcome.
        // Should the first one be cancelled (its client went away), a
        // waiting one makes the call instead, from the start.
        let outcome = flight.outcome(|| self.call(user, scope, fetch)).await;
        drop(flight);
        let (answer, result) = match (outcome, stale) {
            (Ok(payload), _) => (UpstreamScopeData::Value(payload), CacheResult::Miss),
            (Err(_), Some(stale)) => (UpstreamScopeData::Value(stale.payload), CacheResult::Stale),
            (Err(erro), None) => (UpstreamScopeData::Erro(erro), CacheResult::Miss),
        };
        self.metrics.scope_cache(scope, result);
        (scope, answer)
    }

    /// One upstream call for (`user`, `scope`); fresh data goes into memory,
    /// then into the store.
    async fn call<F, Fut>(&self, user: UserId, scope: Scope, fetch: &F) -> Outcome
    where
        F: Fn(Scope) -> Fut,
        Fut: Future<Output = Result<serde_json::Value, UpstreamError>>,
    {
        let key = (user.0, scope);
        // A call that ended just before this one began may have filled the
        // entry.
        if let Some(s) = self.memory_get(&key, self.clock.now()) {
            return Ok(s.payload);
        }
        match fetch(scope).await {
            Ok(payload) => {
                let now = self.clock.now();
                let snapshot = Snapshot {
                    scope,
                    payload: payload.clone(),
                    fetched_at: now,
                    expires_at: now.saturating_add(self.ttls.of(scope)),
                };
                // Memory first: a request that is cancelled while the store
                // is written leaves the answer to those that wait.
                self.memory_put(key, snapshot.clone());
                self.store_snapshot(user, snapshot).await;
                Ok(payload)
            }
            Err(e) => {
                tracing::warn!(error = %e, scope = scope.name(), "upstream scope fetch failed");
                Err(erro_text(scope, &e))
            }
        }
    }

    /// Writes `snapshot` to the store from a task of its own, which a
    /// cancelled request does not stop; a failure is logged, never returned.
    /// The task carries the caller's request, so that its log lines carry
    /// the request's id.
    async fn store_snapshot(&self, user: UserId, snapshot: Snapshot) {
        let store = Arc::clone(&self.store);
        let scope = snapshot.scope;
        let write = request_context::carried(async move { store.put(user, snapshot).await });
        match tokio::spawn(write).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, scope = scope.name(), "could not store snapshot"),
            Err(e) => tracing::warn!(error = %e, scope = scope.name(), "the snapshot write ended abnormally"),
        }
    }
}

#[cfg(test)]
mod tests {
    //! The single flight, seen from inside: which requests share a call,
    //! and that none leaves its flight behind.

    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use credencial_ports::{MockClock, MockSnapshotStore};
    use serde_json::json;
    use tokio::sync::Semaphore;

    use super::*;

    const USER: UserId = UserId(7);
    const KEY: Key = (7, Scope::Cnes);
    const NOW: i64 = 1_800_000_000;

    fn cache(store: MockSnapshotStore) -> Arc<ScopeCache> {
        let mut clock = MockClock::new();
        clock.expect_now().return_const(NOW);
        Arc::new(ScopeCache::new(Arc::new(store), Arc::new(clock), ScopeTtls::default(), 100))
    }

    /// A store without snapshots that expects `puts` writes.
    fn empty_store(puts: usize) -> MockSnapshotStore {
        let mut store = MockSnapshotStore::new();
        store.expect_get_many().returning(|_, _| Ok(vec![]));
        store.expect_put().times(puts).returning(|_, _| Ok(()));
        store
    }

    /// How many requests hold a share in the flight of `key`.
    fn shares(cache: &ScopeCache, key: Key) -> usize {
        let inflight = cache.inflight.lock().unwrap_or_else(|p| p.into_inner());
        inflight.get(&key).map_or(0, |f| Arc::strong_count(f) - 1)
    }

    fn flights(cache: &ScopeCache) -> usize {
        cache.inflight.lock().unwrap_or_else(|p| p.into_inner()).len()
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

    /// Starts a `get` of the CNES scope in a task of its own.
    fn spawn_get<F, Fut>(cache: &Arc<ScopeCache>, fetch: F) -> tokio::task::JoinHandle<UpstreamScopeData>
    where
        F: Fn(Scope) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<serde_json::Value, UpstreamError>> + Send,
    {
        let cache = Arc::clone(cache);
        tokio::spawn(async move {
            let answer = cache.get(USER, &[Scope::Cnes], fetch).await;
            answer.into_iter().map(|(_, d)| d).next().expect("one scope asked, one answered")
        })
    }

    #[test]
    fn a_finished_flight_is_never_joined() {
        for finished_leaves_first in [true, false] {
            let cache = cache(empty_store(0));
            let finished = cache.flight(KEY);
            finished.flight.as_ref().expect("held").set(Ok(json!({"vinculos": []}))).expect("first outcome");
            let next = cache.flight(KEY);
            let (a, b) = (finished.flight.as_ref().expect("held"), next.flight.as_ref().expect("held"));
            assert!(!Arc::ptr_eq(a, b), "a new call, not the finished one");
            assert!(!b.initialized());
            assert_eq!(shares(&cache, KEY), 1, "the finished flight was replaced in the map");
            if finished_leaves_first {
                drop(finished);
                drop(next);
            } else {
                drop(next);
                drop(finished);
            }
            assert_eq!(flights(&cache), 0);
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn requests_cancelled_while_waiting_on_a_hanging_call_leave_no_flight_behind() {
        let cache = cache(empty_store(0));
        let hanging = |_s| std::future::pending::<Result<serde_json::Value, UpstreamError>>();
        let tasks: Vec<_> = (0..3).map(|_| spawn_get(&cache, hanging)).collect();
        until("three requests share the call", || shares(&cache, KEY) == 3).await;
        for t in &tasks {
            t.abort();
        }
        for t in tasks {
            assert!(t.await.expect_err("aborted").is_cancelled());
        }
        assert_eq!(flights(&cache), 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn requests_whose_call_panics_leave_no_flight_behind() {
        // The cache cannot rule out a panic in the fetch it is given: each
        // request in turn makes the call and panics, and none stays in the
        // map.
        let cache = cache(empty_store(0));
        let (calls, gate) = (Arc::new(AtomicUsize::new(0)), Arc::new(Semaphore::new(0)));
        let panicking = {
            let (calls, gate) = (Arc::clone(&calls), Arc::clone(&gate));
            move |_s| {
                let (calls, gate) = (Arc::clone(&calls), Arc::clone(&gate));
                async move {
                    calls.fetch_add(1, Ordering::SeqCst);
                    let _closed = gate.acquire().await;
                    panic!("a bug in the upstream adapter");
                }
            }
        };
        let tasks: Vec<_> = (0..3).map(|_| spawn_get(&cache, panicking.clone())).collect();
        until("three requests share the call", || shares(&cache, KEY) == 3).await;
        gate.close();
        for t in tasks {
            assert!(t.await.expect_err("panicked").is_panic());
        }
        assert_eq!(calls.load(Ordering::SeqCst), 3, "each waiting request took the call over in turn");
        assert_eq!(flights(&cache), 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn when_the_calling_request_is_cancelled_a_waiting_one_makes_the_call() {
        let cache = cache(empty_store(1));
        let calls = Arc::new(AtomicUsize::new(0));
        // The first call hangs; any later one answers at once.
        let fetch = {
            let calls = Arc::clone(&calls);
            move |_s| {
                let first = calls.fetch_add(1, Ordering::SeqCst) == 0;
                async move {
                    if first {
                        std::future::pending::<()>().await;
                    }
                    Ok(json!({"vinculos": []}))
                }
            }
        };
        let calling = spawn_get(&cache, fetch.clone());
        until("the first request calls", || calls.load(Ordering::SeqCst) == 1).await;
        let waiting = spawn_get(&cache, fetch.clone());
        until("the second request waits for the first one's call", || shares(&cache, KEY) == 2).await;
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        calling.abort();
        let answer = tokio::time::timeout(Duration::from_secs(5), waiting).await.expect("not stuck").expect("joined");
        assert_eq!(answer, UpstreamScopeData::Value(json!({"vinculos": []})));
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert_eq!(flights(&cache), 0);
        // Served from memory afterwards.
        assert_eq!(spawn_get(&cache, fetch).await.expect("joined"), UpstreamScopeData::Value(json!({"vinculos": []})));
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_waiting_request_falls_back_on_its_own_stale_snapshot_when_the_shared_call_fails() {
        // The calling request read no snapshot (say the store did not answer
        // it); the waiting one read a stale one.
        let stale = json!({"vinculos": [{"cnes": "2408570"}]});
        let mut store = MockSnapshotStore::new();
        let reads = AtomicUsize::new(0);
        let snapshot =
            Snapshot { scope: Scope::Cnes, payload: stale.clone(), fetched_at: NOW - 900, expires_at: NOW - 1 };
        store.expect_get_many().returning(move |_, _| match reads.fetch_add(1, Ordering::SeqCst) {
            0 => Ok(vec![]),
            _ => Ok(vec![snapshot.clone()]),
        });
        store.expect_put().times(0);
        let cache = cache(store);
        let gate = Arc::new(Semaphore::new(0));
        let failing = {
            let gate = Arc::clone(&gate);
            move |_s| {
                let gate = Arc::clone(&gate);
                async move {
                    let _closed = gate.acquire().await;
                    Err(UpstreamError::Timeout)
                }
            }
        };
        let calling = spawn_get(&cache, failing.clone());
        until("the first request calls", || shares(&cache, KEY) == 1).await;
        let waiting = spawn_get(&cache, failing);
        until("the second request waits for the first one's call", || shares(&cache, KEY) == 2).await;
        gate.close();
        assert_eq!(
            calling.await.expect("joined"),
            UpstreamScopeData::Erro("O serviço do CNES não respondeu a tempo.".into())
        );
        assert_eq!(waiting.await.expect("joined"), UpstreamScopeData::Value(stale));
    }
}
