//! The pool's status as the metrics read it, against a real PostgreSQL:
//! connections checked out count as in use until they go back.

use std::time::Duration;

use credencial_adapters_postgres::testing::TestDatabase;
use credencial_adapters_postgres::{connect, PgPoolStatus};
use credencial_ports::{PoolConnections, PoolStatus};

#[tokio::test]
async fn checked_out_connections_are_in_use_until_they_go_back() {
    let db = TestDatabase::new().await;
    let pool = connect(&db.url, 4, Duration::from_secs(10)).await.expect("pool");
    let status = PgPoolStatus::new(pool.clone());
    assert_eq!(status.connections().max, 4);
    assert_eq!(status.connections().in_use, 0);

    let first = pool.acquire().await.expect("a connection");
    let second = pool.acquire().await.expect("another");
    assert_eq!(status.connections().in_use, 2);
    drop(first);
    until_in_use(&status, 1).await;
    let PoolConnections { in_use, idle, max } = status.connections();
    assert_eq!((in_use, max), (1, 4));
    assert!(idle >= 1, "the returned connection waits, idle: {idle}");
    drop(second);
    until_in_use(&status, 0).await;
    assert!(status.connections().idle >= 2, "{:?}", status.connections());
}

/// Waits (5 s at most) until `in_use` connections are checked out: a
/// connection goes back to the pool on a task of sqlx's.
async fn until_in_use(status: &PgPoolStatus, in_use: u32) {
    let back = async {
        while status.connections().in_use != in_use {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), back).await.unwrap_or_else(|_| panic!("never {in_use} in use"));
}
