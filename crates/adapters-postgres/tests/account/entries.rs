//! Own entries: CRUD scoped by owner, and what the profile answers after.

use std::sync::Arc;

use credencial_adapters_postgres::account::PgOwnEntryRepository;
use credencial_adapters_postgres::testing::TestDatabase;
use credencial_adapters_postgres::PgProfileRepository;
use credencial_domain::account::{DegreeEntry, DegreeForm, EntryId, ExperienceEntry, ExperienceForm};
use credencial_domain::profile::Experience;
use credencial_domain::Degree;
use credencial_ports::account::OwnEntryRepository;
use credencial_ports::ProfileRepository;

use crate::support::user;

fn experience(estabelecimento: &str, inicio: &str, fim: &str) -> ExperienceEntry {
    ExperienceEntry::parse(&ExperienceForm {
        estabelecimento,
        profissao: "Enfermeira",
        data_inicio: inicio,
        data_fim: fim,
        municipio: "Natal",
        descricao: "Plantões",
    })
    .expect("valid experience")
}

fn degree(curso: &str, grau: &str) -> DegreeEntry {
    DegreeEntry::parse(&DegreeForm {
        instituicao: "UFRN",
        curso,
        grau_formacao: grau,
        data_inicio: "2010-03-01",
        data_fim: "2014-12-15",
        municipio: "Natal",
        descricao: "",
    })
    .expect("valid degree")
}

#[tokio::test]
async fn experiences_are_added_listed_edited_and_deleted_and_the_profile_answers_them() {
    let db = TestDatabase::new().await;
    let ana = user(&db, "ana", None).await;
    let repo = PgOwnEntryRepository::new(db.pool.clone());
    let b = repo.add_experience(ana, &experience("Hospital B", "2021-05-03", "")).await.expect("add");
    let a = repo.add_experience(ana, &experience("Hospital A", "2019-02-01", "2020-12-31")).await.expect("add");

    let listed = repo.experiences(ana).await.expect("list");
    let names: Vec<_> = listed.iter().map(|e| (e.id, e.estabelecimento.as_str())).collect();
    assert_eq!(names, [(a, "Hospital A"), (b, "Hospital B")], "oldest start first");
    assert_eq!(listed[0].data_inicio.as_deref(), Some("2019-02-01"));
    assert_eq!(listed[0].data_fim.as_deref(), Some("2020-12-31"));
    assert!(!listed[0].from_cnes);

    assert!(repo.update_experience(ana, b, &experience("Hospital C", "2021-05-03", "2022-01-31")).await.expect("edit"));
    let edited = repo.experience(ana, b).await.expect("read").expect("exists");
    assert_eq!((edited.estabelecimento.as_str(), edited.data_fim.as_deref()), ("Hospital C", Some("2022-01-31")));

    let profile = PgProfileRepository::new(db.pool.clone()).own_profile(ana).await.expect("read").expect("ana");
    assert_eq!(
        profile.experiences,
        [
            Experience {
                estabelecimento: "Hospital A".into(),
                profissao: "Enfermeira".into(),
                data_inicio: Some("2019-02-01T00:00:00".into()),
                data_fim: Some("2020-12-31T00:00:00".into()),
                municipio: "Natal".into(),
                descricao: "Plantões".into(),
            },
            experience("Hospital C", "2021-05-03", "2022-01-31").to_profile(),
        ],
        "the next profile read answers what was entered"
    );

    assert!(repo.delete_experience(ana, a).await.expect("delete"));
    assert!(!repo.delete_experience(ana, a).await.expect("delete again"), "already gone");
    assert_eq!(repo.experiences(ana).await.expect("list").len(), 1);
}

#[tokio::test]
async fn another_person_s_entry_ids_are_not_found_and_never_touched() {
    let db = TestDatabase::new().await;
    let ana = user(&db, "ana", None).await;
    let bruno = user(&db, "bruno", None).await;
    let repo = PgOwnEntryRepository::new(db.pool.clone());
    let anas_experience = repo.add_experience(ana, &experience("Hospital A", "2019-02-01", "")).await.expect("add");
    let anas_degree = repo.add_degree(ana, &degree("Enfermagem", "GRA")).await.expect("add");

    assert_eq!(repo.experience(bruno, anas_experience).await.expect("read"), None);
    assert!(!repo.update_experience(bruno, anas_experience, &experience("X", "2019-02-01", "")).await.expect("edit"));
    assert!(!repo.delete_experience(bruno, anas_experience).await.expect("delete"));
    assert_eq!(repo.degree(bruno, anas_degree).await.expect("read"), None);
    assert!(!repo.update_degree(bruno, anas_degree, &degree("X", "DTR")).await.expect("edit"));
    assert!(!repo.delete_degree(bruno, anas_degree).await.expect("delete"));
    assert!(!repo.delete_experience(ana, EntryId(i64::MAX)).await.expect("delete"));

    let still = repo.experience(ana, anas_experience).await.expect("read").expect("still there");
    assert_eq!(still.estabelecimento, "Hospital A");
    let still = repo.degree(ana, anas_degree).await.expect("read").expect("still there");
    assert_eq!((still.curso.as_str(), still.grau), ("Enfermagem", Degree::Graduacao));
    assert!(repo.experiences(bruno).await.expect("list").is_empty());
    assert!(repo.degrees(bruno).await.expect("list").is_empty());
}

#[tokio::test]
async fn degrees_are_stored_by_code_and_answered_by_description() {
    let db = TestDatabase::new().await;
    let ana = user(&db, "ana", None).await;
    let repo = PgOwnEntryRepository::new(db.pool.clone());
    let id = repo.add_degree(ana, &degree("Enfermagem", "GRA")).await.expect("add");
    assert!(repo.update_degree(ana, id, &degree("Saúde Coletiva", "MEP")).await.expect("edit"));
    let (code,): (String,) =
        sqlx::query_as("SELECT grau FROM degrees WHERE id = $1").bind(id.0).fetch_one(&db.pool).await.expect("row");
    assert_eq!(code, "MEP");
    let listed = repo.degrees(ana).await.expect("list");
    assert_eq!(listed.len(), 1);
    assert_eq!((listed[0].data_inicio.as_str(), listed[0].data_fim.as_deref()), ("2010-03-01", Some("2014-12-15")));
    let profile = PgProfileRepository::new(db.pool.clone()).own_profile(ana).await.expect("read").expect("ana");
    assert_eq!(profile.degrees[0].to_json()["grau_formacao"], "Mestrado Profissional");
    assert!(repo.delete_degree(ana, id).await.expect("delete"));
    assert!(repo.degrees(ana).await.expect("list").is_empty());
}

#[tokio::test]
async fn entries_supplemented_from_cnes_are_listed_as_such() {
    let db = TestDatabase::new().await;
    let ana = user(&db, "ana", None).await;
    let cnes = Experience {
        estabelecimento: "UBS Centro".into(),
        profissao: "Enfermeiro".into(),
        data_inicio: None,
        data_fim: None,
        municipio: "240810".into(),
        descricao: String::new(),
    };
    PgProfileRepository::new(db.pool.clone()).supplement_from_cnes(ana, vec![cnes]).await.expect("supplement");
    let listed = PgOwnEntryRepository::new(db.pool.clone()).experiences(ana).await.expect("list");
    assert_eq!(listed.len(), 1);
    assert!(listed[0].from_cnes);
    assert_eq!(listed[0].data_inicio, None);
}

#[tokio::test]
async fn a_delete_and_an_edit_of_the_same_entry_at_once_end_with_the_entry_deleted() {
    let db = TestDatabase::new().await;
    let ana = user(&db, "ana", None).await;
    let repo = Arc::new(PgOwnEntryRepository::new(db.pool.clone()));
    for round in 0..10 {
        let id = repo.add_experience(ana, &experience("Hospital", "2019-02-01", "")).await.expect("add");
        let (editor, deleter) = (Arc::clone(&repo), Arc::clone(&repo));
        let edit = tokio::spawn(async move {
            editor.update_experience(ana, id, &experience("Editado", "2019-02-01", "")).await.expect("edit")
        });
        let delete = tokio::spawn(async move { deleter.delete_experience(ana, id).await.expect("delete") });
        let (_edited, deleted) = (edit.await.expect("join"), delete.await.expect("join"));
        assert!(deleted, "round {round}: the delete always finds the row (an edit never removes it)");
        assert_eq!(repo.experience(ana, id).await.expect("read"), None, "round {round}: gone, not resurrected");
    }
    assert!(repo.experiences(ana).await.expect("list").is_empty());
}
