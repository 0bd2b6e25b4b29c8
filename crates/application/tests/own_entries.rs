//! The own-entry use cases against fakes of the user and entry
//! repositories: refused forms never reach storage, another person's id is
//! "not found" whatever the form holds, and a deactivated account is
//! refused before anything is read.

use std::sync::Arc;

use credencial_application::{EntrySave, OwnEntryService, ServiceError};
use credencial_domain::account::{EntryForm, EntryId, EntryKind};
use credencial_domain::{Degree, UserId};
use credencial_ports::account::{MockOwnEntryRepository, OwnEntry};
use credencial_ports::{AccountRecord, MockUserRepository, RepositoryError};
use mockall::predicate::eq;

const ANA: UserId = UserId(7);
const ANAS: EntryId = EntryId(11);
const OTHERS: EntryId = EntryId(12);

const DEGREE: EntryForm<'static> = EntryForm {
    place: "UFRN",
    subject: "Enfermagem",
    grau_formacao: "GRA",
    data_inicio: "2010-03-01",
    data_fim: "2014-12-15",
    municipio: "Natal",
    descricao: "",
};

fn users(active: bool) -> MockUserRepository {
    let mut users = MockUserRepository::new();
    users.expect_find_summary_by_id().returning(move |id| {
        Ok(Some(AccountRecord {
            id,
            username: "ana".into(),
            name: "Ana".into(),
            email: "ana@example.gov.br".into(),
            cpf: None,
            is_active: active,
            is_staff: false,
            tax_id_validated: false,
            must_change_password: false,
            created_at: 0,
        }))
    });
    users
}

fn stored(id: EntryId) -> OwnEntry {
    OwnEntry {
        id,
        kind: EntryKind::Degree,
        place: "UFRN".into(),
        subject: "Enfermagem".into(),
        grau: Some(Degree::Graduacao),
        data_inicio: Some("2010-03-01".into()),
        data_fim: None,
        municipio: "Natal".into(),
        descricao: String::new(),
        from_cnes: false,
    }
}

/// Entries where ANA owns [`ANAS`] and [`OTHERS`] is someone else's.
fn entries() -> MockOwnEntryRepository {
    let mut entries = MockOwnEntryRepository::new();
    entries.expect_find().returning(|_, _, id| Ok((id == ANAS).then(|| stored(id))));
    entries.expect_update().returning(|_, id, _| Ok(id == ANAS));
    entries.expect_delete().returning(|_, _, id| Ok(id == ANAS));
    entries.expect_add().returning(|_, _| Ok(EntryId(99)));
    entries.expect_list().returning(|_, _| Ok(vec![stored(ANAS)]));
    entries
}

fn service(users: MockUserRepository, entries: MockOwnEntryRepository) -> OwnEntryService {
    OwnEntryService::new(Arc::new(users), Arc::new(entries))
}

#[tokio::test]
async fn a_valid_form_is_stored_as_an_entry_of_its_kind() {
    let mut entries = MockOwnEntryRepository::new();
    entries
        .expect_add()
        .withf(|user, entry| {
            *user == ANA && entry.kind() == EntryKind::Degree && entry.grau() == Some(Degree::Graduacao)
        })
        .times(1)
        .returning(|_, _| Ok(EntryId(99)));
    let saved = service(users(true), entries).add(ANA, EntryKind::Degree, &DEGREE).await.expect("saved");
    assert_eq!(saved, EntrySave::Saved(EntryId(99)));
}

#[tokio::test]
async fn a_refused_form_reaches_no_storage_and_names_its_fields() {
    let mut entries = MockOwnEntryRepository::new();
    entries.expect_add().times(0);
    entries.expect_update().times(0);
    entries.expect_find().with(eq(ANA), eq(EntryKind::Degree), eq(ANAS)).returning(|_, _, id| Ok(Some(stored(id))));
    let service = service(users(true), entries);
    let end_before_start = EntryForm { data_fim: "2009-12-31", ..DEGREE };
    for saved in [
        service.add(ANA, EntryKind::Degree, &end_before_start).await.expect("answered"),
        service.update(ANA, EntryKind::Degree, ANAS, &end_before_start).await.expect("answered"),
    ] {
        let EntrySave::Refused(errors) = saved else { panic!("refused expected, got {saved:?}") };
        assert_eq!(errors.fields(), ["data_fim"]);
        assert_eq!(errors.get("data_fim"), Some("A data de término não pode ser anterior à data de início."));
    }
}

#[tokio::test]
async fn another_person_s_entry_is_not_found_whether_the_form_is_valid_or_not() {
    let service = service(users(true), entries());
    let kind = EntryKind::Degree;
    assert_eq!(service.update(ANA, kind, OTHERS, &DEGREE).await.expect("answered"), EntrySave::NotFound);
    let refused = EntryForm { place: "", ..DEGREE };
    assert_eq!(service.update(ANA, kind, OTHERS, &refused).await.expect("answered"), EntrySave::NotFound);
    assert!(!service.delete(ANA, kind, OTHERS).await.expect("answered"));
    assert_eq!(service.find(ANA, kind, OTHERS).await.expect("answered"), None);
    // The person's own entry, for contrast.
    assert_eq!(service.update(ANA, kind, ANAS, &DEGREE).await.expect("answered"), EntrySave::Saved(ANAS));
    assert!(service.delete(ANA, kind, ANAS).await.expect("answered"));
}

#[tokio::test]
async fn a_deactivated_or_deleted_account_is_refused_before_anything_is_read_or_written() {
    for users in [users(false), {
        let mut gone = MockUserRepository::new();
        gone.expect_find_summary_by_id().returning(|_| Ok(None));
        gone
    }] {
        let mut entries = MockOwnEntryRepository::new();
        entries.expect_list().times(0);
        entries.expect_add().times(0);
        entries.expect_delete().times(0);
        let service = service(users, entries);
        assert!(matches!(service.list(ANA, EntryKind::Experience).await, Err(ServiceError::UnknownUser)));
        assert!(matches!(service.add(ANA, EntryKind::Degree, &DEGREE).await, Err(ServiceError::UnknownUser)));
        assert!(matches!(service.delete(ANA, EntryKind::Degree, ANAS).await, Err(ServiceError::UnknownUser)));
    }
}

#[tokio::test]
async fn storage_failures_are_storage_errors() {
    let mut failing = MockOwnEntryRepository::new();
    failing.expect_list().returning(|_, _| Err(RepositoryError::Unexpected("down".into())));
    let result = service(users(true), failing).list(ANA, EntryKind::Experience).await;
    assert!(matches!(result, Err(ServiceError::Storage(_))), "{result:?}");
    let mut down = MockUserRepository::new();
    down.expect_find_summary_by_id().returning(|_| Err(RepositoryError::Unexpected("down".into())));
    let result = service(down, entries()).list(ANA, EntryKind::Experience).await;
    assert!(matches!(result, Err(ServiceError::Storage(_))), "{result:?}");
}
