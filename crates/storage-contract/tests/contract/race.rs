//! Running one operation from many tasks at once, for the tests of what
//! concurrent callers see.

use std::future::Future;
use std::sync::Arc;

/// Spawns `tasks` tasks that wait for each other and then run
/// `operation(i)` together (`i` from 0), and returns their outcomes in
/// task order.
///
/// # Panics
/// When a task panics.
pub async fn at_once<T, F, Fut>(tasks: usize, operation: F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn(usize) -> Fut,
    Fut: Future<Output = T> + Send + 'static,
{
    let start = Arc::new(tokio::sync::Barrier::new(tasks));
    let handles: Vec<_> = (0..tasks)
        .map(|i| {
            let (run, start) = (operation(i), Arc::clone(&start));
            tokio::spawn(async move {
                start.wait().await;
                run.await
            })
        })
        .collect();
    futures_util::future::join_all(handles).await.into_iter().map(|joined| joined.expect("task")).collect()
}
