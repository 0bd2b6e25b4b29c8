//! The user-management API's use cases over fakes.

use std::sync::{Arc, Mutex};

use credencial_domain::admin::{ApiTokenDigest, IssuedApiToken, NewAuditEntry};
use credencial_domain::throttle::{FailureWindow, ThrottlePolicy};
use credencial_ports::{
    ApiClientAccess, MockAuditTrail, MockClock, MockLoginFailureLog, MockUserDirectory, RepositoryError,
};

use super::*;

const POLICY: ThrottlePolicy = ThrottlePolicy { username_failures: 5, address_failures: 3, window_secs: 300 };

fn here() -> Option<ClientAddress> {
    Some(ClientAddress::of("192.0.2.10".parse().expect("ip")))
}

fn token() -> IssuedApiToken {
    IssuedApiToken::from_random([0x11; 8], [0x22; 32])
}

fn caller(permissions: ApiPermissions) -> ApiCaller {
    ApiCaller { client_id: ClientId::parse("demo-host").expect("valid"), permissions }
}

fn both() -> ApiPermissions {
    ApiPermissions::NONE.with(ApiPermission::UsersRead).with(ApiPermission::UsersCreate)
}

fn joana() -> DirectoryUser {
    DirectoryUser {
        username: "52998224725".into(),
        cpf: "52998224725".into(),
        email: "joana@example.org".into(),
        nome: "Joana Silva".into(),
        genero: "F".into(),
        data_de_nascimento: Some("1990-04-12".into()),
        validado: false,
    }
}

/// A failure log holding `failures` for the address, counting new ones.
fn failure_log(failures: u32, recorded: Arc<Mutex<u32>>) -> MockLoginFailureLog {
    let mut log = MockLoginFailureLog::new();
    log.expect_windows().returning(move |keys| {
        Ok(keys
            .iter()
            .filter(|_| failures > 0)
            .map(|key| FailureWindow { key: key.clone(), failures, started_at_ms: 1_000 })
            .collect())
    });
    log.expect_record_failure().returning(move |_, _, _| {
        *recorded.lock().expect("lock") += 1;
        Ok(())
    });
    log
}

fn throttle(log: MockLoginFailureLog) -> LoginThrottle {
    let mut clock = MockClock::new();
    clock.expect_now_millis().return_const(2_000_i64);
    clock.expect_now().return_const(2_i64);
    LoginThrottle::new(Arc::new(log), Arc::new(clock), POLICY)
}

/// A trail keeping what is appended.
fn trail(kept: Arc<Mutex<Vec<NewAuditEntry>>>) -> MockAuditTrail {
    let mut trail = MockAuditTrail::new();
    trail.expect_append().returning(move |entry| {
        kept.lock().expect("lock").push(entry.clone());
        Ok(())
    });
    trail
}

fn service(directory: MockUserDirectory, kept: Arc<Mutex<Vec<NewAuditEntry>>>) -> UserDirectoryService {
    UserDirectoryService::new(Arc::new(directory), Arc::new(trail(kept)), LoginThrottle::default())
}

fn directory_with_token(digest: ApiTokenDigest) -> MockUserDirectory {
    let mut directory = MockUserDirectory::new();
    directory.expect_find_api_client().returning(move |lookup| {
        Ok((lookup == "1111111111111111").then(|| ApiClientAccess {
            client_id: ClientId::parse("demo-host").expect("valid"),
            digest: digest.clone(),
            permissions: ApiPermissions::NONE.with(ApiPermission::UsersRead),
        }))
    });
    directory
}

#[tokio::test]
async fn the_right_token_names_its_application_and_permissions() {
    let token = token();
    let recorded = Arc::new(Mutex::new(0));
    let service = UserDirectoryService::new(
        Arc::new(directory_with_token(token.digest().clone())),
        Arc::new(MockAuditTrail::new()),
        throttle(failure_log(0, Arc::clone(&recorded))),
    );
    let caller = service.authenticate(Some(token.text()), here()).await.expect("accepted");
    assert_eq!(caller.client_id.as_str(), "demo-host");
    assert!(caller.permissions.contains(ApiPermission::UsersRead));
    assert_eq!(*recorded.lock().expect("lock"), 0);
}

#[tokio::test]
async fn a_wrong_missing_or_malformed_token_is_refused_and_counted_for_the_address() {
    let token = token();
    let wrong = IssuedApiToken::from_random([0x11; 8], [0x33; 32]);
    let unknown = IssuedApiToken::from_random([0x44; 8], [0x22; 32]);
    let recorded = Arc::new(Mutex::new(0));
    let service = UserDirectoryService::new(
        Arc::new(directory_with_token(token.digest().clone())),
        Arc::new(MockAuditTrail::new()),
        throttle(failure_log(0, Arc::clone(&recorded))),
    );
    for presented in [Some(wrong.text()), Some(unknown.text()), None, Some("not a token")] {
        let e = service.authenticate(presented, here()).await;
        assert!(matches!(e, Err(ServiceError::InvalidCredentials)), "{presented:?}: {e:?}");
    }
    assert_eq!(*recorded.lock().expect("lock"), 4);
}

#[tokio::test]
async fn a_limited_address_is_refused_before_the_token_is_looked_at() {
    let recorded = Arc::new(Mutex::new(0));
    let mut directory = MockUserDirectory::new();
    directory.expect_find_api_client().never();
    let service = UserDirectoryService::new(
        Arc::new(directory),
        Arc::new(MockAuditTrail::new()),
        throttle(failure_log(POLICY.address_failures, Arc::clone(&recorded))),
    );
    let e = service.authenticate(Some(token().text()), here()).await;
    assert!(matches!(e, Err(ServiceError::Throttled { .. })), "{e:?}");
}

#[tokio::test]
async fn a_read_without_the_permission_is_refused_and_audited() {
    let kept = Arc::new(Mutex::new(Vec::new()));
    let mut directory = MockUserDirectory::new();
    directory.expect_find_user().never();
    let service = service(directory, Arc::clone(&kept));
    let caller = caller(ApiPermissions::NONE.with(ApiPermission::UsersCreate));
    let e = service.get(&caller, "52998224725").await;
    assert!(matches!(e, Err(ServiceError::Forbidden(_))), "{e:?}");
    let kept = kept.lock().expect("lock");
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].action, AuditAction::ApiRefused);
    assert_eq!(kept[0].actor, Actor::Application(ClientId::parse("demo-host").expect("valid")));
}

#[tokio::test]
async fn a_read_is_audited_with_the_cpf_masked() {
    let kept = Arc::new(Mutex::new(Vec::new()));
    let mut directory = MockUserDirectory::new();
    directory.expect_find_user().returning(|key| Ok(matches!(key, DirectoryKey::Cpf(_)).then(joana)));
    let service = service(directory, Arc::clone(&kept));
    let found = service.get(&caller(both()), "529.982.247-25").await.expect("read");
    assert_eq!(found, Some(joana()));
    assert_eq!(service.get(&caller(both()), "nobody@example.org").await.expect("read"), None);
    assert_eq!(service.get(&caller(both()), "12345").await.expect("read"), None);
    let kept = kept.lock().expect("lock");
    assert_eq!(kept.len(), 3);
    assert_eq!(kept[0].action, AuditAction::ApiUserRead);
    assert_eq!(kept[0].target, AuditTarget::User("52998224725".into()));
    assert!(kept.iter().all(|e| !format!("{:?}", e.changes).contains("52998224725")));
    assert_eq!(kept[0].changes[0], ("chave".to_owned(), "529.***.***-25".to_owned()));
}

#[tokio::test]
async fn a_list_skips_invalid_cpfs_and_pages_by_one_hundred() {
    let kept = Arc::new(Mutex::new(Vec::new()));
    let mut directory = MockUserDirectory::new();
    directory
        .expect_list_by_cpfs()
        .withf(|cpfs, page| cpfs.len() == 1 && cpfs[0].as_str() == "52998224725" && page.offset() == 100)
        .times(1)
        .returning(|_, _| Ok(vec![]));
    let service = service(directory, Arc::clone(&kept));
    let users = service.list(&caller(both()), "52998224725, 123, 529.982.247-25", 2).await.expect("listed");
    assert!(users.is_empty());
    let kept = kept.lock().expect("lock");
    assert_eq!(kept[0].action, AuditAction::ApiUserList);
    assert_eq!(kept[0].changes[0], ("cpfs".to_owned(), "3".to_owned()));
}

#[tokio::test]
async fn too_many_cpfs_are_refused() {
    let service = service(MockUserDirectory::new(), Arc::new(Mutex::new(Vec::new())));
    let many = vec!["52998224725"; MAX_LISTED_CPFS + 1].join(",");
    assert!(matches!(service.list(&caller(both()), &many, 1).await, Err(ServiceError::Invalid(_))));
}

fn form<'a>() -> PreRegistrationForm<'a> {
    PreRegistrationForm {
        cpf: Some("52998224725"),
        email: Some("joana@example.org"),
        nome: Some("Joana Silva"),
        genero: Some("F"),
        data_de_nascimento: Some("1990-04-12"),
    }
}

#[tokio::test]
async fn a_pre_registration_stores_an_unusable_password_and_its_audit_entry() {
    let mut directory = MockUserDirectory::new();
    directory
        .expect_pre_register()
        .withf(|user, password, entry| {
            user.cpf.as_str() == "52998224725"
                && password.starts_with('!')
                && password.len() > 20
                && entry.action == AuditAction::ApiUserCreate
                && entry.changes.contains(&("cpf".to_owned(), "529.***.***-25".to_owned()))
        })
        .times(1)
        .returning(|_, _, _| Ok(PreRegistered::Created(joana())));
    let service = service(directory, Arc::new(Mutex::new(Vec::new())));
    let outcome = service.create(&caller(both()), form()).await.expect("created");
    assert_eq!(outcome, PreRegistrationOutcome::Created(joana()));
}

#[tokio::test]
async fn an_existing_cpf_is_answered_and_audited_as_existing() {
    let kept = Arc::new(Mutex::new(Vec::new()));
    let mut directory = MockUserDirectory::new();
    directory.expect_pre_register().returning(|_, _, _| Ok(PreRegistered::Existing(joana())));
    let service = service(directory, Arc::clone(&kept));
    let outcome = service.create(&caller(both()), form()).await.expect("answered");
    assert_eq!(outcome, PreRegistrationOutcome::Existing(joana()));
    assert_eq!(kept.lock().expect("lock")[0].action, AuditAction::ApiUserExisting);
}

#[tokio::test]
async fn a_bad_form_writes_nothing_and_a_taken_email_is_a_field_error() {
    let mut directory = MockUserDirectory::new();
    directory.expect_pre_register().times(1).returning(|_, _, _| Ok(PreRegistered::Taken(vec![UniqueField::Email])));
    let service = service(directory, Arc::new(Mutex::new(Vec::new())));
    let bad = PreRegistrationForm { cpf: Some("52998224724"), ..form() };
    match service.create(&caller(both()), bad).await.expect("answered") {
        PreRegistrationOutcome::Invalid(errors) => assert_eq!(errors.fields(), vec!["cpf"]),
        other => panic!("{other:?}"),
    }
    match service.create(&caller(both()), form()).await.expect("answered") {
        PreRegistrationOutcome::Invalid(errors) => assert_eq!(errors.fields(), vec!["email"]),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_create_without_the_permission_is_refused() {
    let mut directory = MockUserDirectory::new();
    directory.expect_pre_register().never();
    let service = service(directory, Arc::new(Mutex::new(Vec::new())));
    let e = service.create(&caller(ApiPermissions::NONE.with(ApiPermission::UsersRead)), form()).await;
    assert!(matches!(e, Err(ServiceError::Forbidden(_))));
}

#[tokio::test]
async fn storage_down_fails_the_call() {
    let mut directory = MockUserDirectory::new();
    directory.expect_find_user().returning(|_| Err(RepositoryError::Unexpected("down".into())));
    let service = service(directory, Arc::new(Mutex::new(Vec::new())));
    assert!(matches!(service.get(&caller(both()), "52998224725").await, Err(ServiceError::Storage(_))));
}
