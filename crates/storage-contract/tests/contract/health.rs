//! [`ReadinessProbe`] (the database answers and holds this build's
//! migrations) and [`PoolStatus`] at rest. What only one engine can show
//! (a server that stops answering, connections checked out by hand) is
//! tested in that adapter's own crate.

use std::time::Duration;

use credencial_ports::NotReady;
use credencial_storage_contract::{contract, Backend, Engine};

async fn a_migrated_database_is_ready<B: Backend>() {
    let b = B::fresh().await;
    let probe = b.readiness();
    probe.check().await.expect("ready");
    // Again, on a connection the pool kept.
    probe.check().await.expect("still ready");
}

async fn a_database_missing_a_migration_is_schema_behind<B: Backend>() {
    let b = B::fresh().await;
    let known = b.count("SELECT count(*) FROM _sqlx_migrations").await;
    // As after a restore of a backup taken before the last migration.
    b.execute("DELETE FROM _sqlx_migrations WHERE version = (SELECT max(version) FROM _sqlx_migrations)").await;
    assert_eq!(b.readiness().check().await, Err(NotReady::SchemaBehind(format!("1 of {known} migrations pending"))));
}

async fn a_database_never_migrated_is_schema_behind_not_unreachable<B: Backend>() {
    let b = B::fresh().await;
    b.execute("DROP TABLE _sqlx_migrations").await;
    let result = b.readiness().check().await;
    assert!(matches!(result, Err(NotReady::SchemaBehind(_))), "{result:?}");
}

async fn a_migration_of_a_newer_release_keeps_the_probe_ready<B: Backend>() {
    let b = B::fresh().await;
    let checksum = match B::ENGINE {
        Engine::Postgres => "'\\x00'::bytea",
        Engine::Sqlite => "x'00'",
    };
    b.execute(&format!(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES (29991231000001, 'from a newer release', TRUE, {checksum}, 0)"
    ))
    .await;
    // An older instance still running during a rolling upgrade stays in the balancer.
    b.readiness().check().await.expect("ready");
}

async fn a_pool_at_rest_has_no_connection_in_use<B: Backend>() {
    let b = B::fresh().await;
    let user = b.create_user("ana").await;
    let tokens = b.refresh_tokens();
    for _ in 0..3 {
        tokens.is_current("none").await.expect("a read");
        tokens.revoke_user(user).await.expect("a write");
    }
    let status = b.pool_status();
    // A connection goes back to its pool on a task of sqlx's.
    let idle = async {
        while status.connections().in_use != 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), idle).await.unwrap_or_else(|_| panic!("{:?}", status.connections()));
    let connections = status.connections();
    assert!(connections.idle >= 1, "the connections used wait in the pool: {connections:?}");
    assert!(connections.idle <= connections.max, "{connections:?}");
}

contract!(
    a_migrated_database_is_ready,
    a_database_missing_a_migration_is_schema_behind,
    a_database_never_migrated_is_schema_behind_not_unreachable,
    a_migration_of_a_newer_release_keeps_the_probe_ready,
    a_pool_at_rest_has_no_connection_in_use,
);
