//! [`SnapshotStore`]: stored and replaced per user and scope, read many in
//! one call, and kept past their expiry (a stale snapshot is served when
//! the upstream fails).

use credencial_domain::Scope;
use credencial_ports::Snapshot;
use credencial_storage_contract::{contract, Backend};
use serde_json::json;

fn snapshot(scope: Scope, payload: serde_json::Value, fetched_at: i64, expires_at: i64) -> Snapshot {
    Snapshot { scope, payload, fetched_at, expires_at }
}

fn by_scope(mut snapshots: Vec<Snapshot>) -> Vec<Snapshot> {
    snapshots.sort_by_key(|s| s.scope);
    snapshots
}

async fn snapshots_are_stored_per_user_and_scope_and_read_many_at_once<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let bruno = b.create_user("bruno").await;
    let store = b.snapshots();
    let cnes = snapshot(Scope::Cnes, json!({"vinculos": [{"cnes": "1", "nome": "Hospital São José"}]}), 1_000, 1_100);
    let cdp =
        snapshot(Scope::CursosCdp, json!({"total": 1, "data": [{"nid": 7, "ok": true, "x": null}]}), 1_000, 2_000);
    store.put(ana, cnes.clone()).await.expect("put");
    store.put(ana, cdp.clone()).await.expect("put");
    store.put(bruno, snapshot(Scope::Cnes, json!({"vinculos": []}), 5, 6)).await.expect("another user's");

    let got = store.get_many(ana, &[Scope::Cnes, Scope::CursosCdp, Scope::ReceitaFederal]).await.expect("get");
    assert_eq!(by_scope(got), by_scope(vec![cnes.clone(), cdp]), "as stored; a scope never stored is absent");
    assert_eq!(store.get_many(ana, &[Scope::Cnes]).await.expect("get"), vec![cnes], "only the scopes asked for");
    assert!(store.get_many(ana, &[]).await.expect("no scope").is_empty());
    assert!(store.get_many(ana, &[Scope::ReceitaFederal]).await.expect("get").is_empty());
    let unknown = credencial_domain::UserId(ana.0 + 1000);
    assert!(store.get_many(unknown, &[Scope::Cnes]).await.expect("get").is_empty());
}

async fn a_new_snapshot_replaces_the_old_one_of_its_scope<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let store = b.snapshots();
    store.put(ana, snapshot(Scope::Cnes, json!({"vinculos": []}), 1_000, 1_100)).await.expect("put");
    let newer = snapshot(Scope::Cnes, json!({"vinculos": [{"cnes": "2"}]}), 2_000, 2_100);
    store.put(ana, newer.clone()).await.expect("replace");
    assert_eq!(store.get_many(ana, &[Scope::Cnes]).await.expect("get"), vec![newer]);
    assert_eq!(b.count("SELECT count(*) FROM scope_snapshots").await, 1, "replaced, not added");
}

async fn an_expired_snapshot_is_still_returned_with_its_expiry<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let store = b.snapshots();
    // Fetched and expired long ago, and one that lasts five years.
    let stale = snapshot(Scope::ReceitaFederal, json!({"situacao": "regular"}), 100, 200);
    let lasting = snapshot(Scope::Cnes, json!({"vinculos": []}), 1_900_000_000, 1_900_000_000 + 5 * 365 * 86_400);
    store.put(ana, stale.clone()).await.expect("put");
    store.put(ana, lasting.clone()).await.expect("put");
    let got = store.get_many(ana, &[Scope::ReceitaFederal, Scope::Cnes]).await.expect("get");
    assert_eq!(by_scope(got), by_scope(vec![stale, lasting]), "the caller judges freshness");
}

contract!(
    snapshots_are_stored_per_user_and_scope_and_read_many_at_once,
    a_new_snapshot_replaces_the_old_one_of_its_scope,
    an_expired_snapshot_is_still_returned_with_its_expiry,
);
