//! The request a piece of work belongs to, carried without a `tracing`
//! span: the HTTP layer sets the request's id around the request's own work
//! ([`scope`], [`sync_scope`]), the log formatters read it ([`current`]) to
//! put `request_id` on every line written inside the request, and the work
//! that leaves the request's task (the hashing pool, the snapshot writes)
//! takes it along ([`carried`], [`carried_fn`]).
//!
//! A tokio task-local: the id is stored in the request's future and put in
//! a thread-local only while that future is polled, so it works as well
//! under actix-web's single-threaded workers (many requests interleaved on
//! one thread) as under a multi-threaded runtime. It knows nothing of HTTP:
//! the caller makes the id.

use std::future::Future;

use uuid::Uuid;

tokio::task_local! {
    /// The id of the request whose work is running, if any.
    static CURRENT: Option<RequestId>;
}

/// A request's id as text (a hyphenated UUID, 36 ASCII characters),
/// formatted once and cheap to copy into the work it follows and into log
/// lines.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct RequestId([u8; 36]);

impl RequestId {
    /// The id `id` (the HTTP layer makes it).
    #[must_use]
    pub fn from_uuid(id: Uuid) -> Self {
        let mut text = [0; 36];
        id.hyphenated().encode_lower(&mut text);
        Self(text)
    }

    /// The id as text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        // A hyphenated UUID: ASCII, always valid UTF-8.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl std::fmt::Debug for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("RequestId").field(&self.as_str()).finish()
    }
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The id of the request whose work is running on this thread now, if any.
#[must_use]
pub fn current() -> Option<RequestId> {
    CURRENT.try_with(|id| *id).ok().flatten()
}

/// `work`, run with `id` as the current request each time it is polled.
pub fn scope<F: Future>(id: Option<RequestId>, work: F) -> impl Future<Output = F::Output> {
    CURRENT.scope(id, work)
}

/// `work`, run now with `id` as the current request.
pub fn sync_scope<R>(id: Option<RequestId>, work: impl FnOnce() -> R) -> R {
    CURRENT.sync_scope(id, work)
}

/// `work`, to be run on another task: it keeps the current request (taken
/// now, where the work is handed over) wherever and whenever it runs.
pub fn carried<F: Future>(work: F) -> impl Future<Output = F::Output> {
    scope(current(), work)
}

/// `work`, to be run on another thread: it runs with the current request
/// (taken now, where the work is handed over).
pub fn carried_fn<R>(work: impl FnOnce() -> R) -> impl FnOnce() -> R {
    let id = current();
    move || sync_scope(id, work)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> RequestId {
        RequestId::from_uuid(Uuid::from_u128(u128::from(n)))
    }

    #[test]
    fn an_id_is_its_hyphenated_uuid() {
        let uuid = Uuid::new_v4();
        assert_eq!(RequestId::from_uuid(uuid).as_str(), uuid.hyphenated().to_string());
        assert_eq!(id(1).as_str(), "00000000-0000-0000-0000-000000000001");
        assert_eq!(format!("{}", id(1)), id(1).as_str());
    }

    #[tokio::test]
    async fn the_id_is_current_inside_its_scope_only() {
        assert_eq!(current(), None);
        let inside = scope(Some(id(1)), async {
            let before = current();
            tokio::task::yield_now().await;
            let nested = scope(Some(id(2)), async { current() }).await;
            (before, nested, current())
        })
        .await;
        assert_eq!(inside, (Some(id(1)), Some(id(2)), Some(id(1))));
        assert_eq!(current(), None);
        assert_eq!(sync_scope(Some(id(3)), current), Some(id(3)));
        assert_eq!(scope(None, async { current() }).await, None);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn carried_work_keeps_the_request_on_another_task_or_thread() {
        let (task, thread) = scope(Some(id(4)), async {
            let task = tokio::spawn(carried(async { current() }));
            let thread = tokio::task::spawn_blocking(carried_fn(current));
            (task.await.expect("task"), thread.await.expect("thread"))
        })
        .await;
        assert_eq!((task, thread), (Some(id(4)), Some(id(4))));
        // Not carried: another task does not belong to the request.
        let plain = scope(Some(id(5)), async { tokio::spawn(async { current() }).await.expect("task") }).await;
        assert_eq!(plain, None);
    }

    #[test]
    fn concurrent_requests_on_one_thread_each_see_their_own() {
        // Like an actix-web worker: one thread, requests interleaved.
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
        let local = tokio::task::LocalSet::new();
        let seen = local.block_on(&runtime, async {
            let request = |n: u8| {
                tokio::task::spawn_local(scope(Some(id(n)), async move {
                    let mut seen = Vec::new();
                    for _ in 0..3 {
                        seen.push(current().map(|i| i.as_str().to_owned()));
                        tokio::task::yield_now().await;
                    }
                    seen
                }))
            };
            let (a, b) = (request(6), request(7));
            (a.await.expect("a"), b.await.expect("b"))
        });
        let of = |n: u8| vec![Some(id(n).as_str().to_owned()); 3];
        assert_eq!(seen, (of(6), of(7)));
    }
}
