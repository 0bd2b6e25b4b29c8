//! Snapshots against a real PostgreSQL database (the own profile's tests
//! are in the storage contract, crates/storage-contract).

use credencial_adapters_postgres::testing::TestDatabase;
use credencial_adapters_postgres::PgSnapshotStore;
use credencial_domain::{Scope, UserId};
use credencial_ports::{Snapshot, SnapshotStore};
use serde_json::json;

async fn user(db: &TestDatabase, name: &str) -> UserId {
    db.create_user(name, (name == "ana").then_some("52998224725")).await
}

#[tokio::test]
async fn snapshots_are_upserted_and_read_in_one_call() {
    let db = TestDatabase::new().await;
    let id = user(&db, "ana").await;
    let other = user(&db, "bruno").await;
    let store = PgSnapshotStore::new(db.pool.clone());
    let snap = |scope, payload, at| Snapshot { scope, payload, fetched_at: at, expires_at: at + 100 };
    store.put(id, snap(Scope::Cnes, json!({"vinculos": []}), 1_000)).await.expect("put");
    store.put(id, snap(Scope::CursosCdp, json!({"total": 1, "data": [{"nid": 7}]}), 1_000)).await.expect("put");
    store.put(id, snap(Scope::Cnes, json!({"vinculos": [{"cnes": "1"}]}), 2_000)).await.expect("replace");
    store.put(other, snap(Scope::Cnes, json!({"vinculos": []}), 5)).await.expect("put");

    let mut got = store.get_many(id, &[Scope::Cnes, Scope::CursosCdp, Scope::ReceitaFederal]).await.expect("get");
    got.sort_by_key(|s| s.scope);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0], snap(Scope::Cnes, json!({"vinculos": [{"cnes": "1"}]}), 2_000));
    assert_eq!(got[1].payload["data"][0]["nid"], 7);
    assert!(store.get_many(id, &[]).await.expect("empty").is_empty());
}
