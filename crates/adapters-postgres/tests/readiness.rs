//! The readiness probe against a real PostgreSQL: ready while the database
//! answers, unavailable within its bound when it does not, whatever the
//! pool's own acquire time-out.

use std::time::{Duration, Instant};

use credencial_adapters_postgres::testing::TestDatabase;
use credencial_adapters_postgres::PgReadinessProbe;
use credencial_ports::{NotReady, ReadinessProbe};
use sqlx::postgres::PgPoolOptions;

/// A pool that would wait this long for a connection: far longer than any
/// probe may take.
const LONG_ACQUIRE: Duration = Duration::from_secs(30);

/// What a balancer's probe tolerates in these tests: the probe's 1 s bound
/// plus slack for a loaded machine, far below [`LONG_ACQUIRE`].
const GENEROUS: Duration = Duration::from_secs(5);

fn lazy_pool(url: &str) -> sqlx::PgPool {
    PgPoolOptions::new().acquire_timeout(LONG_ACQUIRE).connect_lazy(url).expect("a valid URL")
}

async fn timed_check(probe: &PgReadinessProbe) -> (Result<(), NotReady>, Duration) {
    let start = Instant::now();
    let result = probe.check().await;
    (result, start.elapsed())
}

#[tokio::test]
async fn a_dropped_database_is_unavailable_and_the_pool_does_not_hide_it() {
    let db = TestDatabase::new().await;
    let probe = PgReadinessProbe::new(db.pool.clone());
    probe.check().await.expect("ready before the drop");
    db.drop_now().await;
    let (result, took) = timed_check(&probe).await;
    assert!(matches!(result, Err(NotReady::Unreachable(_))), "{result:?}");
    assert!(took < GENEROUS, "answered after {took:?}");
    eprintln!("dropped database: unavailable after {took:?}");
    // And it stays unavailable (no stale "ready" from a reconnect).
    assert!(probe.check().await.is_err());
}

#[tokio::test]
async fn a_refused_connection_is_unavailable_without_waiting_for_the_pools_acquire_timeout() {
    // A port nobody listens on: the pool would retry connecting for 30 s.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    let probe = PgReadinessProbe::new(lazy_pool(&format!("postgres://postgres@127.0.0.1:{closed}/credencial")));
    let (result, took) = timed_check(&probe).await;
    assert!(result.is_err(), "{result:?}");
    assert!(took < GENEROUS, "answered after {took:?}");
    eprintln!("refused connection: unavailable after {took:?} (the pool would wait {LONG_ACQUIRE:?})");
}

#[tokio::test]
async fn a_server_that_never_answers_is_unavailable_after_the_probes_bound() {
    // Accepts the TCP connection and then says nothing, like a hung server.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = silent.local_addr().expect("addr").port();
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            open.push(socket);
        }
    });
    let probe = PgReadinessProbe::new(lazy_pool(&format!("postgres://postgres@127.0.0.1:{port}/credencial")))
        .with_timeout(Duration::from_millis(300));
    let (result, took) = timed_check(&probe).await;
    let Err(NotReady::Unreachable(reason)) = result else { panic!("{result:?}") };
    assert!(reason.contains("within 300 ms"), "{reason}");
    assert!(took >= Duration::from_millis(300) && took < GENEROUS, "answered after {took:?}");
    held.abort();
}

// The probe's answers for a schema behind, never migrated or ahead are the
// contract suite's; these are about the migrations history itself.

#[tokio::test]
async fn a_forgotten_migration_is_pending_again() {
    let db = TestDatabase::new().await;
    // As after a restore of a backup taken before the last migration.
    sqlx::query("DELETE FROM _sqlx_migrations WHERE version = (SELECT max(version) FROM _sqlx_migrations)")
        .execute(&db.pool)
        .await
        .expect("forget the last migration");
    // `migrate` sees it as pending (the schema objects exist, so only the record is re-inserted).
    let status = credencial_adapters_postgres::schema_status(&db.pool).await.expect("status");
    assert_eq!(status.pending, [*credencial_adapters_postgres::known_versions().last().expect("one")]);
}

#[tokio::test]
async fn without_a_migrations_table_every_migration_is_pending() {
    let db = TestDatabase::new().await;
    sqlx::query("DROP TABLE _sqlx_migrations").execute(&db.pool).await.expect("drop the record of migrations");
    let status = credencial_adapters_postgres::schema_status(&db.pool).await.expect("status");
    assert_eq!(status.pending, credencial_adapters_postgres::known_versions());
    assert!(status.unknown.is_empty());
}

#[tokio::test]
async fn a_migration_of_a_newer_release_is_unknown() {
    let db = TestDatabase::new().await;
    db.record_newer_migration().await;
    let status = credencial_adapters_postgres::schema_status(&db.pool).await.expect("status");
    assert_eq!((status.pending.len(), status.unknown.as_slice()), (0, &[29991231000001_i64][..]));
    assert!(!status.is_current());
}
