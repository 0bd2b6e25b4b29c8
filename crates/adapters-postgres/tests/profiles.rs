//! Own profile data and snapshots against a real PostgreSQL database.

use std::sync::Arc;

use credencial_adapters_postgres::testing::TestDatabase;
use credencial_adapters_postgres::{PgProfileRepository, PgSnapshotStore};
use credencial_domain::profile::{AcademicDegree, Experience};
use credencial_domain::{Degree, Scope, UserId};
use credencial_ports::{ProfileRepository, Snapshot, SnapshotStore};
use serde_json::json;

async fn user(db: &TestDatabase, name: &str) -> UserId {
    db.create_user(name, (name == "ana").then_some("52998224725")).await
}

fn experience(estabelecimento: &str, inicio: Option<&str>) -> Experience {
    Experience {
        estabelecimento: estabelecimento.into(),
        profissao: "Enfermeira".into(),
        data_inicio: inicio.map(str::to_owned),
        data_fim: None,
        municipio: "Natal".into(),
        descricao: String::new(),
    }
}

#[tokio::test]
async fn a_new_user_has_an_empty_unvalidated_profile() {
    let db = TestDatabase::new().await;
    let id = user(&db, "ana").await;
    let p = PgProfileRepository::new(db.pool.clone()).own_profile(id).await.expect("read").expect("exists");
    assert_eq!(
        (p.name.as_str(), p.email.as_str(), p.cpf.as_deref()),
        ("Full ana", "ana@example.gov.br", Some("52998224725"))
    );
    assert!(!p.receita_validated);
    assert!(p.experiences.is_empty() && p.degrees.is_empty());
    assert!(PgProfileRepository::new(db.pool.clone()).own_profile(UserId(id.0 + 99)).await.expect("read").is_none());
}

#[tokio::test]
async fn lists_come_back_ordered_with_the_contract_formats() {
    let db = TestDatabase::new().await;
    let id = user(&db, "ana").await;
    let repo = PgProfileRepository::new(db.pool.clone());
    repo.set_profile(id, "https://example.gov.br/ana.png", true).await.expect("set");
    repo.add_experience(id, experience("Hospital B", Some("2021-05-03T08:30:00"))).await.expect("add");
    repo.add_experience(id, experience("Hospital A", Some("2019-02-01T00:00:00"))).await.expect("add");
    repo.add_experience(id, experience("Sem data", None)).await.expect("add");
    repo.add_degree(
        id,
        AcademicDegree {
            instituicao: "UFRN".into(),
            curso: "Enfermagem".into(),
            data_inicio: "2010-03-01".into(),
            data_fim: Some("2014-12-15".into()),
            municipio: "Natal".into(),
            descricao: "Bacharelado".into(),
            grau: Degree::Graduacao,
        },
    )
    .await
    .expect("add");
    let p = repo.own_profile(id).await.expect("read").expect("exists");
    assert!(p.receita_validated);
    assert_eq!(p.avatar, "https://example.gov.br/ana.png");
    let names: Vec<_> = p.experiences.iter().map(|e| e.estabelecimento.as_str()).collect();
    assert_eq!(names, ["Hospital A", "Hospital B", "Sem data"]);
    assert_eq!(p.experiences[1].data_inicio.as_deref(), Some("2021-05-03T08:30:00"));
    assert_eq!(p.experiences[2].data_inicio, None);
    assert_eq!(p.degrees[0].grau, Degree::Graduacao);
    assert_eq!(p.degrees[0].data_fim.as_deref(), Some("2014-12-15"));
}

#[tokio::test]
async fn a_malformed_date_is_refused_and_nothing_is_written() {
    let db = TestDatabase::new().await;
    let id = user(&db, "ana").await;
    let repo = PgProfileRepository::new(db.pool.clone());
    assert!(repo.add_experience(id, experience("X", Some("ontem"))).await.is_err());
    assert!(repo.own_profile(id).await.expect("read").expect("exists").experiences.is_empty());
}

#[tokio::test]
async fn cnes_supplementation_happens_exactly_once_even_concurrently() {
    let db = TestDatabase::new().await;
    let id = user(&db, "ana").await;
    let repo = Arc::new(PgProfileRepository::new(db.pool.clone()));
    let calls = (0..8).map(|i| {
        let repo = Arc::clone(&repo);
        tokio::spawn(async move {
            repo.supplement_from_cnes(id, vec![experience(&format!("Bond {i}"), None), experience("Other", None)])
                .await
                .expect("supplement")
        })
    });
    let mut won = 0;
    for call in calls {
        if call.await.expect("joined") {
            won += 1;
        }
    }
    assert_eq!(won, 1);
    assert_eq!(repo.own_profile(id).await.expect("read").expect("exists").experiences.len(), 2);
    assert!(!repo.supplement_from_cnes(id, vec![experience("Later", None)]).await.expect("again"));
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
