//! Tests of `UserAdminService` over mockall fakes: which rules refuse
//! before anything is hashed or written, and what (de)activation and a new
//! password do to the user's refresh tokens.

use std::sync::Arc;

use credencial_application::{NewAccount, PasswordHasher, ServiceError, UserAdminService};
use credencial_domain::{Cpf, UserData, UserId, Username};
use credencial_ports::{MockRefreshTokenStore, MockUserRepository, RepositoryError, UserSummary};
use secrecy::SecretString;

fn service(users: MockUserRepository, tokens: MockRefreshTokenStore) -> UserAdminService {
    UserAdminService::new(Arc::new(users), Arc::new(tokens), PasswordHasher::new(1, 1000).expect("hasher"))
}

fn lia() -> UserSummary {
    UserSummary {
        id: UserId(7),
        username: "lia".into(),
        name: "Lia Costa".into(),
        email: "lia@example.gov.br".into(),
        cpf: Some("52998224725".into()),
        is_active: true,
    }
}

fn username(s: &str) -> Username {
    Username::parse(s).expect("username")
}

fn finding_lia() -> MockUserRepository {
    let mut users = MockUserRepository::new();
    users.expect_find_summary().returning(|_| Ok(Some(lia())));
    users
}

#[tokio::test]
async fn deactivating_revokes_every_refresh_token_of_the_user_and_reactivating_revokes_none() {
    let mut users = finding_lia();
    users.expect_set_active().withf(|id, active| *id == UserId(7) && !*active).times(1).returning(|_, _| Ok(true));
    users.expect_set_active().withf(|_, active| *active).times(1).returning(|_, _| Ok(true));
    let mut tokens = MockRefreshTokenStore::new();
    tokens.expect_revoke_user().withf(|u| *u == UserId(7)).times(1).returning(|_| Ok(3));
    let svc = service(users, tokens);
    assert_eq!(svc.set_active(&username("lia"), false).await.expect("off"), 3);
    assert_eq!(svc.set_active(&username("lia"), true).await.expect("on"), 0);
}

#[tokio::test]
async fn an_unknown_user_is_unknown_and_nothing_is_written() {
    let mut users = MockUserRepository::new();
    users.expect_find_summary().returning(|_| Ok(None));
    users.expect_set_active().times(0);
    users.expect_set_password_hash().times(0);
    let svc = service(users, MockRefreshTokenStore::new());
    assert!(matches!(svc.set_active(&username("nobody"), false).await, Err(ServiceError::UnknownUser)));
    let pw = SecretString::from("a-good-password".to_owned());
    assert!(matches!(svc.set_password(&username("nobody"), pw).await, Err(ServiceError::UnknownUser)));
}

#[tokio::test]
async fn a_new_password_that_breaks_the_rules_is_refused_before_any_write() {
    let mut users = finding_lia();
    users.expect_set_password_hash().times(0);
    let mut tokens = MockRefreshTokenStore::new();
    tokens.expect_revoke_user().times(0);
    let svc = service(users, tokens);
    for weak in ["short", "529.982.247-25", "LIA@example.gov.br", "lia costa"] {
        let e = svc.set_password(&username("lia"), SecretString::from(weak.to_owned())).await.expect_err(weak);
        assert!(matches!(e, ServiceError::Invalid(_)), "{weak}: {e:?}");
    }
}

#[tokio::test]
async fn a_new_password_is_stored_hashed_and_revokes_every_refresh_token() {
    let mut users = finding_lia();
    users
        .expect_set_password_hash()
        .withf(|id, hash| *id == UserId(7) && hash.starts_with("pbkdf2_sha256$1000$") && !hash.contains("new-pass"))
        .times(1)
        .returning(|_, _| Ok(true));
    let mut tokens = MockRefreshTokenStore::new();
    tokens.expect_revoke_user().times(1).returning(|_| Ok(2));
    let svc = service(users, tokens);
    let revoked = svc.set_password(&username("lia"), SecretString::from("new-pass-2026".to_owned())).await;
    assert_eq!(revoked.expect("changed"), 2);
}

#[tokio::test]
async fn a_taken_username_or_cpf_is_a_clear_refusal_not_a_storage_error() {
    let mut users = MockUserRepository::new();
    users.expect_create().times(1).returning(|_| Err(RepositoryError::Conflict("users_username_key".into())));
    let svc = service(users, MockRefreshTokenStore::new());
    let account = NewAccount {
        username: username("lia"),
        password: SecretString::from("a-good-password".to_owned()),
        cpf: Some(Cpf::parse("52998224725").expect("cpf")),
        name: String::new(),
        data: UserData::default(),
        is_active: true,
    };
    let e = svc.create(account).await.expect_err("taken");
    assert!(matches!(&e, ServiceError::Invalid(m) if m.contains("already exists")), "{e:?}");
}

#[tokio::test]
async fn pages_start_at_one_and_hold_at_most_five_hundred() {
    let mut users = MockUserRepository::new();
    users
        .expect_list()
        .withf(|offset, limit| *offset == 20 && *limit == 10)
        .times(1)
        .returning(|_, _| Ok((vec![lia()], 21)));
    let svc = service(users, MockRefreshTokenStore::new());
    let page = svc.list(3, 10).await.expect("page");
    assert_eq!((page.page, page.pages, page.total, page.users.len()), (3, 3, 21, 1));
    for (page, per_page) in [(0, 10), (1, 0), (1, 501)] {
        assert!(matches!(svc.list(page, per_page).await, Err(ServiceError::Invalid(_))), "{page} {per_page}");
    }
}
