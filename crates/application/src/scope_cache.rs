//! Server-side cache of upstream scope data.
//!
//! Two layers: an in-process LRU (`cached::LruCache`) holding fresh
//! entries, in front of the durable [`SnapshotStore`] (PostgreSQL), which
//! every instance shares and which survives restarts. A miss in both calls
//! the upstream once per (user, scope) and instance, however many requests
//! wait for it. When the upstream fails, a stale snapshot is served; without
//! one, the scope holds `{"erro": …}`.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use cached::{Cached, LruCache};
use credencial_domain::profile::UpstreamScopeData;
use credencial_domain::{Scope, UserId};
use credencial_ports::{Clock, Snapshot, SnapshotStore, UpstreamError};

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

/// The two-layer cache with single-flight upstream calls.
pub struct ScopeCache {
    store: Arc<dyn SnapshotStore>,
    clock: Arc<dyn Clock>,
    ttls: ScopeTtls,
    memory: Mutex<LruCache<Key, Snapshot>>,
    inflight: Mutex<HashMap<Key, Arc<tokio::sync::Mutex<()>>>>,
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
        }
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

    fn flight_lock(&self, key: Key) -> Arc<tokio::sync::Mutex<()>> {
        let mut inflight = self.inflight.lock().unwrap_or_else(|p| p.into_inner());
        Arc::clone(inflight.entry(key).or_default())
    }

    fn flight_done(&self, key: &Key) {
        let mut inflight = self.inflight.lock().unwrap_or_else(|p| p.into_inner());
        if inflight.get(key).is_some_and(|l| Arc::strong_count(l) == 1) {
            inflight.remove(key);
        }
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
                Some(s) => answers.push((scope, UpstreamScopeData::Value(s.payload))),
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
        let key = (user.0, scope);
        let lock = self.flight_lock(key);
        let answer = {
            let _guard = lock.lock().await;
            // Whoever held the lock before us may have filled the entry.
            if let Some(s) = self.memory_get(&key, self.clock.now()) {
                UpstreamScopeData::Value(s.payload)
            } else {
                match fetch(scope).await {
                    Ok(payload) => {
                        let now = self.clock.now();
                        let snapshot = Snapshot {
                            scope,
                            payload: payload.clone(),
                            fetched_at: now,
                            expires_at: now.saturating_add(self.ttls.of(scope)),
                        };
                        if let Err(e) = self.store.put(user, snapshot.clone()).await {
                            tracing::warn!(error = %e, scope = scope.name(), "could not store snapshot");
                        }
                        self.memory_put(key, snapshot);
                        UpstreamScopeData::Value(payload)
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, scope = scope.name(), stale = stale.is_some(), "upstream scope fetch failed");
                        match stale {
                            Some(s) => UpstreamScopeData::Value(s.payload),
                            None => UpstreamScopeData::Erro(erro_text(scope, &e)),
                        }
                    }
                }
            }
        };
        drop(lock);
        self.flight_done(&key);
        (scope, answer)
    }
}
