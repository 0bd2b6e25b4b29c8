//! Own entries: CRUD scoped by owner, for both kinds, and what the profile
//! answers after.

use credencial_domain::account::{Entry, EntryForm, EntryId, EntryKind};
use credencial_domain::profile::Experience;
use credencial_domain::Degree;
use credencial_storage_contract::{contract, Backend};

use super::support::user;

contract!(
    experiences_are_added_listed_edited_and_deleted_and_the_profile_answers_them,
    another_person_s_entry_ids_are_not_found_and_never_touched,
    degrees_are_stored_by_code_and_answered_by_description,
    entries_supplemented_from_cnes_are_listed_as_such_until_the_person_edits_them,
    a_delete_and_an_edit_of_the_same_entry_at_once_end_with_the_entry_deleted,
    an_entry_of_a_user_that_does_not_exist_is_an_error,
);

fn experience(estabelecimento: &str, inicio: &str, fim: &str) -> Entry {
    let form = EntryForm {
        place: estabelecimento,
        subject: "Enfermeira",
        data_inicio: inicio,
        data_fim: fim,
        municipio: "Natal",
        descricao: "Plantões",
        ..EntryForm::default()
    };
    Entry::parse(EntryKind::Experience, &form).expect("valid experience")
}

fn degree(curso: &str, grau: &str) -> Entry {
    let form = EntryForm {
        place: "UFRN",
        subject: curso,
        grau_formacao: grau,
        data_inicio: "2010-03-01",
        data_fim: "2014-12-15",
        municipio: "Natal",
        descricao: "",
    };
    Entry::parse(EntryKind::Degree, &form).expect("valid degree")
}

async fn experiences_are_added_listed_edited_and_deleted_and_the_profile_answers_them<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let repo = b.own_entries();
    let exp = EntryKind::Experience;
    let later = repo.add(ana, &experience("Hospital B", "2021-05-03", "")).await.expect("add");
    let earlier = repo.add(ana, &experience("Hospital A", "2019-02-01", "2020-12-31")).await.expect("add");

    let listed = repo.list(ana, exp).await.expect("list");
    let names: Vec<_> = listed.iter().map(|e| (e.id, e.place.as_str())).collect();
    assert_eq!(names, [(earlier, "Hospital A"), (later, "Hospital B")], "oldest start first");
    assert_eq!(listed[0].data_inicio.as_deref(), Some("2019-02-01"));
    assert_eq!(listed[0].data_fim.as_deref(), Some("2020-12-31"));
    assert_eq!(listed[1].data_fim, None, "not ended");
    assert_eq!((listed[0].kind, listed[0].grau, listed[0].from_cnes), (exp, None, false));
    assert!(repo.list(ana, EntryKind::Degree).await.expect("list").is_empty(), "the other list is apart");

    assert!(repo.update(ana, later, &experience("Hospital C", "2021-05-03", "2022-01-31")).await.expect("edit"));
    let edited = repo.find(ana, exp, later).await.expect("read").expect("exists");
    assert_eq!((edited.place.as_str(), edited.data_fim.as_deref()), ("Hospital C", Some("2022-01-31")));

    let profile = b.profiles().own_profile(ana).await.expect("read").expect("ana");
    let answered = |estabelecimento: &str, inicio: &str, fim: &str| Experience {
        estabelecimento: estabelecimento.into(),
        profissao: "Enfermeira".into(),
        data_inicio: Some(format!("{inicio}T00:00:00")),
        data_fim: Some(format!("{fim}T00:00:00")),
        municipio: "Natal".into(),
        descricao: "Plantões".into(),
    };
    assert_eq!(
        profile.experiences,
        [answered("Hospital A", "2019-02-01", "2020-12-31"), answered("Hospital C", "2021-05-03", "2022-01-31")],
        "the next profile read answers what was entered"
    );

    assert!(repo.delete(ana, exp, earlier).await.expect("delete"));
    assert!(!repo.delete(ana, exp, earlier).await.expect("delete again"), "already gone");
    assert_eq!(repo.list(ana, exp).await.expect("list").len(), 1);
}

async fn another_person_s_entry_ids_are_not_found_and_never_touched<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let bruno = user(&b, "bruno", None).await;
    let repo = b.own_entries();
    let anas = [
        (EntryKind::Experience, repo.add(ana, &experience("Hospital A", "2019-02-01", "")).await.expect("add")),
        (EntryKind::Degree, repo.add(ana, &degree("Enfermagem", "GRA")).await.expect("add")),
    ];
    for (kind, id) in anas {
        let other = match kind {
            EntryKind::Experience => experience("X", "2019-02-01", ""),
            EntryKind::Degree => degree("X", "DTR"),
        };
        assert_eq!(repo.find(bruno, kind, id).await.expect("read"), None, "{kind:?}");
        assert!(!repo.update(bruno, id, &other).await.expect("edit"), "{kind:?}");
        assert!(!repo.delete(bruno, kind, id).await.expect("delete"), "{kind:?}");
        assert!(!repo.delete(ana, kind, EntryId(i64::MAX)).await.expect("delete"), "{kind:?}");
        assert!(repo.list(bruno, kind).await.expect("list").is_empty(), "{kind:?}");
        let still = repo.find(ana, kind, id).await.expect("read").expect("still there");
        assert_ne!(still.subject, "X", "{kind:?}");
    }
    let still = repo.find(ana, EntryKind::Degree, anas[1].1).await.expect("read").expect("still there");
    assert_eq!((still.subject.as_str(), still.grau), ("Enfermagem", Some(Degree::Graduacao)));
}

async fn degrees_are_stored_by_code_and_answered_by_description<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let repo = b.own_entries();
    let id = repo.add(ana, &degree("Enfermagem", "GRA")).await.expect("add");
    assert!(repo.update(ana, id, &degree("Saúde Coletiva", "MEP")).await.expect("edit"));
    assert_eq!(b.count(&format!("SELECT count(*) FROM degrees WHERE id = {} AND grau = 'MEP'", id.0)).await, 1);
    let listed = repo.list(ana, EntryKind::Degree).await.expect("list");
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].data_inicio.as_deref(), listed[0].data_fim.as_deref()),
        (Some("2010-03-01"), Some("2014-12-15"))
    );
    assert_eq!(
        (listed[0].kind, listed[0].grau, listed[0].from_cnes),
        (EntryKind::Degree, Some(Degree::MestradoProfissional), false)
    );
    assert_eq!(listed[0].form().grau_formacao, "MEP", "the edit form is filled with the code");
    let profile = b.profiles().own_profile(ana).await.expect("read").expect("ana");
    assert_eq!(profile.degrees[0].to_json()["grau_formacao"], "Mestrado Profissional");
    assert!(repo.delete(ana, EntryKind::Degree, id).await.expect("delete"));
    assert!(repo.list(ana, EntryKind::Degree).await.expect("list").is_empty());
}

async fn entries_supplemented_from_cnes_are_listed_as_such_until_the_person_edits_them<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let cnes = Experience {
        estabelecimento: "UBS Centro".into(),
        profissao: "Enfermeiro".into(),
        data_inicio: None,
        data_fim: None,
        municipio: "240810".into(),
        descricao: String::new(),
    };
    b.profiles().supplement_from_cnes(ana, vec![cnes]).await.expect("supplement");
    let repo = b.own_entries();
    let listed = repo.list(ana, EntryKind::Experience).await.expect("list");
    assert_eq!(listed.len(), 1);
    assert!(listed[0].from_cnes);
    assert_eq!((listed[0].data_inicio.as_deref(), listed[0].form().data_inicio), (None, ""));
    assert!(repo.update(ana, listed[0].id, &experience("UBS Centro", "2018-04-02", "")).await.expect("edit"));
    let edited = repo.find(ana, EntryKind::Experience, listed[0].id).await.expect("read").expect("there");
    assert!(!edited.from_cnes, "confirmed by the person, it is theirs");
    assert_eq!(edited.data_inicio.as_deref(), Some("2018-04-02"));
}

async fn a_delete_and_an_edit_of_the_same_entry_at_once_end_with_the_entry_deleted<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let repo = b.own_entries();
    for round in 0..10 {
        let (kind, entry, edited) = if round % 2 == 0 {
            (EntryKind::Experience, experience("Hospital", "2019-02-01", ""), experience("Editado", "2019-02-01", ""))
        } else {
            (EntryKind::Degree, degree("Enfermagem", "GRA"), degree("Editado", "ESP"))
        };
        let id = repo.add(ana, &entry).await.expect("add");
        let (editor, deleter) = (repo.clone(), repo.clone());
        let edit = tokio::spawn(async move { editor.update(ana, id, &edited).await.expect("edit") });
        let delete = tokio::spawn(async move { deleter.delete(ana, kind, id).await.expect("delete") });
        let (_edited, deleted) = (edit.await.expect("join"), delete.await.expect("join"));
        assert!(deleted, "round {round}: the delete always finds the row (an edit never removes it)");
        assert_eq!(repo.find(ana, kind, id).await.expect("read"), None, "round {round}: gone, not resurrected");
    }
    assert!(repo.list(ana, EntryKind::Experience).await.expect("list").is_empty());
    assert!(repo.list(ana, EntryKind::Degree).await.expect("list").is_empty());
}

async fn an_entry_of_a_user_that_does_not_exist_is_an_error<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let nobody = credencial_domain::UserId(ana.0 + 1000);
    assert!(b.own_entries().add(nobody, &degree("Enfermagem", "GRA")).await.is_err());
    assert!(b.own_entries().add(nobody, &experience("Hospital", "2019-02-01", "")).await.is_err());
}
