//! Tests of `AccountAdminService` over mockall fakes: which rules refuse
//! before anything is hashed or written, what each change records in the
//! audit trail (never a password; a CPF masked), and what (de)activation
//! and a new or temporary password do to the account's refresh tokens.

use std::sync::Arc;

use credencial_application::admin::{
    AccountAdminPorts, AccountFields, NewAccount, TakenField, TemporaryAccountOutcome,
};
use credencial_application::{
    AccountAdminService, CredentialCheck, LoginThrottle, PasswordHasher, ServiceError, SessionService, StaffService,
};
use credencial_domain::admin::audit::SECRET_SET;
use credencial_domain::admin::{
    AccountQuery, Actor, AuditAction, AuditTarget, LoginRecord, LoginVia, NewAuditEntry, Tally,
};
use credencial_domain::session::SessionLimits;
use credencial_domain::{Cpf, UserData, UserId, Username};
use credencial_ports::account::MockGrantRepository;
use credencial_ports::{
    AccessChange, AccountRecord, MockAccountAdminStore, MockAuditTrail, MockClock, MockLoginHistory,
    MockRefreshTokenStore, MockSecondFactorStore, MockSessionStore, MockUserRepository, RepositoryError,
};
use secrecy::{ExposeSecret, SecretString};

const LIA: UserId = UserId(7);

fn admin() -> Actor {
    Actor::Staff { id: UserId(1), username: "admin".into() }
}

fn cli() -> Actor {
    Actor::Cli { os_user: "root".into() }
}

fn lia() -> AccountRecord {
    AccountRecord {
        id: LIA,
        username: "lia".into(),
        name: "Lia Costa".into(),
        email: "lia@example.gov.br".into(),
        cpf: Some("52998224725".into()),
        is_active: true,
        is_staff: false,
        tax_id_validated: true,
        must_change_password: false,
        created_at: 1_800_000_000,
    }
}

/// The fakes of one test; `service()` builds the service over them.
struct Fakes {
    store: MockAccountAdminStore,
    logins: MockLoginHistory,
    grants: MockGrantRepository,
    tokens: MockRefreshTokenStore,
    users: MockUserRepository,
    clock: MockClock,
    sessions: MockSessionStore,
    factors: MockSecondFactorStore,
}

impl Fakes {
    fn new() -> Self {
        Self {
            store: MockAccountAdminStore::new(),
            logins: MockLoginHistory::new(),
            grants: MockGrantRepository::new(),
            tokens: MockRefreshTokenStore::new(),
            users: MockUserRepository::new(),
            clock: MockClock::new(),
            sessions: MockSessionStore::new(),
            factors: MockSecondFactorStore::new(),
        }
    }

    /// Fakes whose store finds Lia by id (and no one else).
    fn finding_lia() -> Self {
        let mut fakes = Self::new();
        fakes.store.expect_find().returning(|id| Ok((id == LIA).then(lia)));
        fakes
    }

    fn service(self) -> AccountAdminService {
        self.service_with_trail(MockAuditTrail::new())
    }

    fn service_with_trail(self, trail: MockAuditTrail) -> AccountAdminService {
        let staff = StaffService::new(Arc::new(self.users), Arc::new(trail));
        let clock: Arc<MockClock> = Arc::new(self.clock);
        // Sessions end through the session service; nothing here logs in.
        let credentials = CredentialCheck::new(
            Arc::new(MockUserRepository::new()),
            PasswordHasher::new(1, 1000).expect("hasher"),
            LoginThrottle::default(),
        );
        let sessions = SessionService::new(
            Arc::new(self.sessions),
            Arc::new(credentials),
            clock.clone(),
            SessionLimits::default(),
        );
        AccountAdminService::new(
            AccountAdminPorts {
                store: Arc::new(self.store),
                logins: Arc::new(self.logins),
                grants: Arc::new(self.grants),
                refresh_tokens: Arc::new(self.tokens),
                clock,
                sessions: Arc::new(sessions),
                second_factors: Arc::new(self.factors),
            },
            Arc::new(staff),
            PasswordHasher::new(1, 1000).expect("hasher"),
        )
    }
}

fn recorded(entry: &NewAuditEntry, actor: &Actor, action: AuditAction, changes: &[(&str, &str)]) -> bool {
    let changes: Vec<(String, String)> = changes.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    entry.actor == *actor
        && entry.action == action
        && entry.target == AuditTarget::User("lia".into())
        && entry.changes == changes
}

#[tokio::test]
async fn deactivating_records_who_in_the_same_write_and_revokes_every_refresh_token() {
    let mut fakes = Fakes::finding_lia();
    // Deactivation ends every session; reactivation none.
    fakes.sessions.expect_end_all().withf(|u, except| *u == LIA && except.is_none()).times(1).returning(|_, _| Ok(2));
    fakes
        .store
        .expect_set_active()
        .withf(|id, active, entry| {
            *id == LIA && !*active && recorded(entry, &admin(), AuditAction::UserDeactivate, &[("is_active", "false")])
        })
        .times(1)
        .returning(|_, _, _| Ok(AccessChange::Changed));
    fakes
        .store
        .expect_set_active()
        .withf(|_, active, entry| *active && entry.action == AuditAction::UserReactivate)
        .times(1)
        .returning(|_, _, _| Ok(AccessChange::Changed));
    fakes.tokens.expect_revoke_user().withf(|u| *u == LIA).times(1).returning(|_| Ok(3));
    let svc = fakes.service();
    assert_eq!(svc.set_active(&admin(), LIA, false).await.expect("off"), 3);
    assert_eq!(svc.set_active(&admin(), LIA, true).await.expect("on"), 0, "reactivating revokes nothing");
}

#[tokio::test]
async fn a_failed_deactivation_revokes_nothing() {
    let mut fakes = Fakes::finding_lia();
    fakes.store.expect_set_active().returning(|_, _, _| Err(RepositoryError::Unexpected("down".into())));
    fakes.tokens.expect_revoke_user().times(0);
    let e = fakes.service().set_active(&admin(), LIA, false).await;
    assert!(matches!(e, Err(ServiceError::Storage(_))), "{e:?}");
}

#[tokio::test]
async fn the_last_active_staff_account_is_refused_as_the_storage_says_and_nothing_is_revoked() {
    let mut fakes = Fakes::finding_lia();
    fakes.store.expect_set_active().times(1).returning(|_, _, _| Ok(AccessChange::LastStaff));
    fakes.tokens.expect_revoke_user().times(0);
    fakes.users.expect_find_summary().returning(|_| Ok(Some(lia())));
    fakes.users.expect_set_staff().times(1).returning(|_, _, _| Ok(AccessChange::LastStaff));
    let svc = fakes.service();
    assert!(matches!(svc.set_active(&admin(), LIA, false).await, Err(ServiceError::LastStaff)));
    assert!(matches!(svc.set_staff(&admin(), LIA, false).await, Err(ServiceError::LastStaff)));
}

#[tokio::test]
async fn a_staff_user_cannot_deactivate_or_unstaff_themselves() {
    let mut fakes = Fakes::new();
    fakes.store.expect_find().times(0);
    fakes.store.expect_set_active().times(0);
    let svc = fakes.service();
    let me = UserId(1);
    assert!(matches!(svc.set_active(&admin(), me, false).await, Err(ServiceError::Invalid(_))));
    assert!(matches!(svc.set_staff(&admin(), me, false).await, Err(ServiceError::Invalid(_))));
}

#[tokio::test]
async fn an_unknown_account_is_unknown_and_nothing_is_written() {
    let mut fakes = Fakes::finding_lia();
    fakes.store.expect_set_active().times(0);
    fakes.store.expect_set_password().times(0);
    fakes.store.expect_clear_validation().times(0);
    fakes.store.expect_lift_throttle().times(0);
    fakes.store.expect_find_by_username().returning(|_| Ok(None));
    let svc = fakes.service();
    let nobody = UserId(99);
    assert!(matches!(svc.set_active(&admin(), nobody, false).await, Err(ServiceError::UnknownUser)));
    let pw = SecretString::from("a-good-password".to_owned());
    assert!(matches!(svc.set_password(&cli(), nobody, pw).await, Err(ServiceError::UnknownUser)));
    assert!(matches!(svc.temporary_password(&admin(), nobody).await, Err(ServiceError::UnknownUser)));
    assert!(matches!(svc.clear_validation(&admin(), nobody).await, Err(ServiceError::UnknownUser)));
    assert!(matches!(svc.lift_throttle(&admin(), nobody).await, Err(ServiceError::UnknownUser)));
    assert!(matches!(svc.view(nobody).await, Err(ServiceError::UnknownUser)));
    let username = Username::parse("nobody").expect("valid");
    assert!(matches!(svc.id_of(&username).await, Err(ServiceError::UnknownUser)));
}

#[tokio::test]
async fn a_new_password_that_breaks_the_rules_is_refused_before_any_write() {
    let mut fakes = Fakes::finding_lia();
    fakes.store.expect_set_password().times(0);
    fakes.tokens.expect_revoke_user().times(0);
    let svc = fakes.service();
    for weak in ["short", "529.982.247-25", "LIA@example.gov.br", "lia costa"] {
        let e = svc.set_password(&cli(), LIA, SecretString::from(weak.to_owned())).await.expect_err(weak);
        assert!(matches!(e, ServiceError::Invalid(_)), "{weak}: {e:?}");
    }
}

#[tokio::test]
async fn a_new_password_is_stored_hashed_never_recorded_and_revokes_every_refresh_token() {
    let mut fakes = Fakes::finding_lia();
    // Every session ends, before the new hash is stored and after it.
    fakes.sessions.expect_end_all().withf(|u, except| *u == LIA && except.is_none()).times(2).returning(|_, _| Ok(1));
    fakes
        .store
        .expect_set_password()
        .withf(|id, hash, temporary, entry| {
            *id == LIA
                && hash.starts_with("pbkdf2_sha256$1000$")
                && !hash.contains("new-pass")
                && !*temporary
                && recorded(entry, &cli(), AuditAction::UserPassword, &[("password", SECRET_SET)])
        })
        .times(1)
        .returning(|_, _, _, _| Ok(true));
    fakes.tokens.expect_revoke_user().times(1).returning(|_| Ok(2));
    let revoked = fakes.service().set_password(&cli(), LIA, SecretString::from("new-pass-2026".to_owned())).await;
    assert_eq!(revoked.expect("changed"), 2);
}

#[tokio::test]
async fn a_temporary_password_is_shown_once_stored_hashed_and_must_be_changed() {
    let mut fakes = Fakes::finding_lia();
    fakes.sessions.expect_end_all().withf(|u, except| *u == LIA && except.is_none()).times(2).returning(|_, _| Ok(0));
    let seen = Arc::new(std::sync::Mutex::new(String::new()));
    let sink = Arc::clone(&seen);
    fakes
        .store
        .expect_set_password()
        .withf(|id, _, temporary, entry| {
            *id == LIA
                && *temporary
                && recorded(
                    entry,
                    &admin(),
                    AuditAction::UserTemporaryPassword,
                    &[("password", SECRET_SET), ("must_change_password", "true")],
                )
        })
        .times(1)
        .returning(move |_, hash, _, _| {
            *sink.lock().expect("lock") = hash.to_owned();
            Ok(true)
        });
    fakes.tokens.expect_revoke_user().times(1).returning(|_| Ok(1));
    let set = fakes.service().temporary_password(&admin(), LIA).await.expect("set");
    let password = set.password.expose_secret();
    assert_eq!((set.username.as_str(), set.revoked, password.len()), ("lia", 1, 19));
    let hash = seen.lock().expect("lock").clone();
    assert!(hash.starts_with("pbkdf2_sha256$") && !hash.contains(password), "only the hash is stored");
    assert!(!format!("{set:?}").contains(password), "Debug hides the password");
}

#[tokio::test]
async fn two_temporary_passwords_differ() {
    let mut fakes = Fakes::finding_lia();
    fakes.sessions.expect_end_all().returning(|_, _| Ok(0));
    fakes.store.expect_set_password().returning(|_, _, _, _| Ok(true));
    fakes.tokens.expect_revoke_user().returning(|_| Ok(0));
    let svc = fakes.service();
    let a = svc.temporary_password(&admin(), LIA).await.expect("a");
    let b = svc.temporary_password(&admin(), LIA).await.expect("b");
    assert_ne!(a.password.expose_secret(), b.password.expose_secret());
}

#[tokio::test]
async fn clearing_a_validation_is_recorded_with_the_change() {
    let mut fakes = Fakes::finding_lia();
    fakes
        .store
        .expect_clear_validation()
        .withf(|id, entry| {
            *id == LIA && recorded(entry, &admin(), AuditAction::UserClearValidation, &[("receita_validated", "false")])
        })
        .times(1)
        .returning(|_, _| Ok(true));
    fakes.service().clear_validation(&admin(), LIA).await.expect("cleared");
}

#[tokio::test]
async fn lifting_a_throttle_forgets_the_username_and_the_cpf_keys() {
    let mut fakes = Fakes::finding_lia();
    fakes
        .store
        .expect_lift_throttle()
        .withf(|keys, entry| {
            let keys: Vec<&str> = keys.iter().map(|k| k.as_str()).collect();
            keys == ["username:lia", "username:52998224725"]
                && recorded(entry, &admin(), AuditAction::UserLiftThrottle, &[])
        })
        .times(1)
        .returning(|_, _| Ok(true));
    assert!(fakes.service().lift_throttle(&admin(), LIA).await.expect("lifted"));
}

#[tokio::test]
async fn making_staff_goes_through_the_staff_service_by_username() {
    let mut fakes = Fakes::finding_lia();
    fakes.users.expect_find_summary().returning(|_| Ok(Some(lia())));
    fakes
        .users
        .expect_set_staff()
        .withf(|id, staff, entry| *id == LIA && *staff && entry.action == AuditAction::UserStaff)
        .times(1)
        .returning(|_, _, _| Ok(AccessChange::Changed));
    fakes.service().set_staff(&admin(), LIA, true).await.expect("staff");
}

#[tokio::test]
async fn a_new_account_is_recorded_with_its_cpf_masked_and_no_password() {
    let mut fakes = Fakes::new();
    fakes
        .store
        .expect_create()
        .withf(|user, staff, temporary, entry| {
            user.password_hash.starts_with("pbkdf2_sha256$")
                && *staff
                && !*temporary
                && entry.action == AuditAction::UserCreate
                && entry.changes.iter().any(|(k, v)| k == "cpf" && v == "529.***.***-25")
                && entry.changes.iter().any(|(k, v)| k == "password" && v == SECRET_SET)
                && !entry.changes.iter().any(|(_, v)| v.contains("52998224725") || v.contains("a-good-password"))
        })
        .times(1)
        .returning(|_, _, _, _| Ok(LIA));
    let id = fakes.service().create(&cli(), new_account()).await.expect("created");
    assert_eq!(id, LIA);
}

fn new_account() -> NewAccount {
    NewAccount {
        fields: AccountFields {
            username: Username::parse("lia").expect("username"),
            cpf: Some(Cpf::parse("52998224725").expect("cpf")),
            name: String::new(),
            data: UserData::default(),
            is_active: true,
            is_staff: true,
        },
        password: SecretString::from("a-good-password".to_owned()),
    }
}

#[tokio::test]
async fn a_taken_username_or_cpf_is_a_clear_refusal_not_a_storage_error() {
    let mut fakes = Fakes::new();
    fakes.store.expect_create().times(1).returning(|_, _, _, _| Err(RepositoryError::Conflict("username".into())));
    let e = fakes.service().create(&cli(), new_account()).await.expect_err("taken");
    assert!(matches!(&e, ServiceError::Invalid(m) if m.contains("already exists")), "{e:?}");
}

#[tokio::test]
async fn a_search_page_reads_one_more_account_to_offer_the_next_and_holds_at_most_five_hundred() {
    let mut fakes = Fakes::new();
    fakes
        .store
        .expect_search()
        .withf(|query, after, limit| query.text() == "lia" && *after == Some("ana~1") && *limit == 9)
        .times(1)
        .returning(|_, _, _| {
            let found = |id: i64, username: &str| {
                (format!("lia~{id}"), AccountRecord { id: UserId(id), username: username.into(), ..lia() })
            };
            Ok((vec![found(2, "bia"), found(3, "lia"), found(4, "lia2")], 1_001))
        });
    fakes
        .store
        .expect_search()
        .withf(|_, after, _| after.is_none())
        .times(1)
        .returning(|_, _, _| Ok((vec![("lia".into(), lia())], 1)));
    let svc = fakes.service();
    let page = svc.search(&AccountQuery::parse("lia"), Some("ana~1"), 2).await.expect("page");
    let shown: Vec<&str> = page.accounts.iter().map(|a| a.username.as_str()).collect();
    assert_eq!(shown, ["bia", "lia"], "the page holds its size");
    assert_eq!(page.next.as_deref(), Some("lia~3"), "the next page follows the place of the last shown");
    assert_eq!(page.tally, Tally::MoreThan(1_000));
    let last = svc.search(&AccountQuery::parse("lia"), None, 2).await.expect("page");
    assert_eq!((last.accounts.len(), last.next, last.tally), (1, None, Tally::Exactly(1)));
    for per_page in [0, 501] {
        let refused = svc.search(&AccountQuery::default(), None, per_page).await;
        assert!(matches!(refused, Err(ServiceError::Invalid(_))), "{per_page}");
    }
}

#[tokio::test]
async fn a_search_in_username_order_reads_one_row_more_than_the_page() {
    let mut fakes = Fakes::new();
    fakes.store.expect_search().withf(|_, _, limit| *limit == 21).times(2).returning(|_, _, _| Ok((vec![], 0)));
    let svc = fakes.service();
    for typed in ["", "529.982.247-25"] {
        svc.search(&AccountQuery::parse(typed), None, 20).await.expect("page");
    }
}

#[tokio::test]
async fn an_account_found_at_two_places_is_shown_once_and_the_next_page_starts_after_what_was_read() {
    let found = |term: &str, id: i64| (format!("{term}~{id}"), AccountRecord { id: UserId(id), ..lia() });
    let mut fakes = Fakes::new();
    // Two a page: 7 at "soares" and "souza soares", 8 and 9 follow.
    fakes.store.expect_search().withf(|_, after, limit| after.is_none() && *limit == 9).times(1).returning(
        move |_, _, _| {
            Ok((vec![found("soares", 7), found("souza", 8), found("souza soares", 7), found("sousa", 9)], 3))
        },
    );
    // The rows ran out with duplicates only: the next page starts after them.
    fakes
        .store
        .expect_search()
        .withf(|_, after, limit| *after == Some("x") && *limit == 6)
        .times(1)
        .returning(move |_, _, _| Ok(((0..6).map(|_| found("souza", 8)).collect(), 3)));
    let svc = fakes.service();
    let page = svc.search(&AccountQuery::parse("so"), None, 2).await.expect("page");
    let ids: Vec<i64> = page.accounts.iter().map(|a| a.id.0).collect();
    assert_eq!(ids, [7, 8]);
    assert_eq!(page.next.as_deref(), Some("souza soares~7"), "after the duplicate read, before the next account");
    let page = svc.search(&AccountQuery::parse("so"), Some("x"), 1).await.expect("page");
    assert_eq!((page.accounts.len(), page.next.as_deref()), (1, Some("souza~8")), "more may follow a full window");
}

#[tokio::test]
async fn the_view_masks_the_cpf_and_lists_grants_and_recent_logins() {
    let mut fakes = Fakes::finding_lia();
    fakes.factors.expect_has_factor().returning(|_| Ok(false));
    fakes.grants.expect_list().returning(|_| Ok(vec![]));
    fakes
        .logins
        .expect_recent()
        .withf(|id, limit| *id == LIA && *limit == 10)
        .returning(|_, _| Ok(vec![LoginRecord { at: 1_800_000_100, via: LoginVia::Pair }]));
    let view = fakes.service().view(LIA).await.expect("view");
    assert_eq!(view.masked_cpf.as_deref(), Some("529.***.***-25"));
    assert_eq!(view.logins.len(), 1);
}

#[tokio::test]
async fn the_login_history_keeps_180_days_and_20_a_person() {
    let mut fakes = Fakes::new();
    fakes.clock.expect_now().return_const(1_800_000_000_i64);
    fakes
        .logins
        .expect_purge()
        .withf(|before, keep, limit| *before == 1_800_000_000 - 180 * 86_400 && *keep == 20 && *limit == 500)
        .times(1)
        .returning(|_, _, _| Ok(4));
    assert_eq!(fakes.service().purge_login_history(500).await.expect("purged"), 4);
}

fn new_temporary_account() -> AccountFields {
    AccountFields {
        username: Username::parse("lia").expect("username"),
        cpf: Some(Cpf::parse("52998224725").expect("cpf")),
        name: "Lia Costa".into(),
        data: UserData { email: "lia@example.gov.br".into(), ..UserData::default() },
        is_active: true,
        is_staff: false,
    }
}

#[tokio::test]
async fn an_account_with_a_temporary_password_is_one_write_that_must_change_it_and_records_no_password() {
    let mut fakes = Fakes::new();
    let written = Arc::new(std::sync::Mutex::new((String::new(), Vec::new())));
    let seen = Arc::clone(&written);
    fakes
        .store
        .expect_create()
        .withf(|user, staff, temporary, entry| {
            user.username.as_str() == "lia"
                && !*staff
                && *temporary
                && entry.action == AuditAction::UserCreate
                && entry.target == AuditTarget::User("lia".into())
                && entry.changes.iter().any(|(k, v)| k == "cpf" && v == "529.***.***-25")
                && entry.changes.iter().any(|(k, v)| k == "password" && v == SECRET_SET)
                && entry.changes.iter().any(|(k, v)| k == "must_change_password" && v == "true")
                && !entry.changes.iter().any(|(_, v)| v.contains("52998224725"))
        })
        .times(1)
        .returning(move |user, _, _, entry| {
            *seen.lock().expect("lock") = (user.password_hash.clone(), entry.changes.clone());
            Ok(LIA)
        });
    let outcome = fakes.service().create_with_temporary_password(&admin(), new_temporary_account()).await;
    let TemporaryAccountOutcome::Created { id, password } = outcome.expect("created") else {
        panic!("not created");
    };
    assert_eq!((id, password.username.as_str(), password.revoked), (LIA, "lia", 0));
    let clear = password.password.expose_secret().to_owned();
    assert_eq!(clear.len(), 19, "{clear}");
    let (stored, changes) = written.lock().expect("lock").clone();
    assert!(stored.starts_with("pbkdf2_sha256$") && !stored.contains(&clear), "only the hash is stored");
    assert!(changes.iter().all(|(_, v)| !v.contains(&clear)), "the password is in no recorded value");
}

#[tokio::test]
async fn a_taken_field_of_an_account_with_a_temporary_password_is_named() {
    for (conflict, field) in
        [("username", TakenField::Username), ("cpf", TakenField::Cpf), ("email", TakenField::Email)]
    {
        let mut fakes = Fakes::new();
        fakes
            .store
            .expect_create()
            .times(1)
            .returning(move |_, _, _, _| Err(RepositoryError::Conflict(conflict.into())));
        let outcome = fakes.service().create_with_temporary_password(&cli(), new_temporary_account()).await;
        assert!(matches!(outcome, Ok(TemporaryAccountOutcome::Taken(f)) if f == field), "{conflict}: {outcome:?}");
    }
}

#[tokio::test]
async fn an_account_with_a_temporary_password_is_a_storage_error_when_storage_is_down() {
    let mut fakes = Fakes::new();
    fakes.store.expect_create().returning(|_, _, _, _| Err(RepositoryError::Unexpected("down".into())));
    let outcome = fakes.service().create_with_temporary_password(&cli(), new_temporary_account()).await;
    assert!(matches!(outcome, Err(ServiceError::Storage(_))), "{outcome:?}");
}

#[tokio::test]
async fn ending_every_session_is_audited_first_and_an_unwritable_trail_ends_nothing() {
    let mut fakes = Fakes::finding_lia();
    fakes.sessions.expect_end_all().withf(|u, except| *u == LIA && except.is_none()).times(1).returning(|_, _| Ok(3));
    let mut trail = MockAuditTrail::new();
    trail
        .expect_append()
        .withf(|entry| recorded(entry, &cli(), AuditAction::UserEndSessions, &[]))
        .times(1)
        .returning(|_| Ok(()));
    let svc = fakes.service_with_trail(trail);
    assert_eq!(svc.end_sessions(&cli(), LIA).await.expect("ended"), 3);
    let unknown = svc.end_sessions(&cli(), UserId(99)).await;
    assert!(matches!(unknown, Err(ServiceError::UnknownUser)), "{unknown:?}");

    let mut fakes = Fakes::finding_lia();
    fakes.sessions.expect_end_all().times(0);
    let mut trail = MockAuditTrail::new();
    trail.expect_append().returning(|_| Err(RepositoryError::Unexpected("disk full".into())));
    let failed = fakes.service_with_trail(trail).end_sessions(&admin(), LIA).await;
    assert!(matches!(failed, Err(ServiceError::Storage(_))), "{failed:?}");
}

#[tokio::test]
async fn resetting_second_factors_is_audited_first_removes_them_and_ends_the_sessions() {
    let mut fakes = Fakes::finding_lia();
    fakes.factors.expect_remove_all().withf(|u| *u == LIA).times(1).returning(|_| Ok(true));
    fakes.sessions.expect_end_all().withf(|u, except| *u == LIA && except.is_none()).times(1).returning(|_, _| Ok(2));
    let mut trail = MockAuditTrail::new();
    trail
        .expect_append()
        .withf(|entry| recorded(entry, &admin(), AuditAction::UserResetSecondFactor, &[]))
        .times(1)
        .returning(|_| Ok(()));
    assert!(fakes.service_with_trail(trail).reset_second_factors(&admin(), LIA).await.expect("reset"));

    let mut fakes = Fakes::finding_lia();
    fakes.factors.expect_remove_all().times(0);
    let mut trail = MockAuditTrail::new();
    trail.expect_append().returning(|_| Err(RepositoryError::Unexpected("disk full".into())));
    let failed = fakes.service_with_trail(trail).reset_second_factors(&admin(), LIA).await;
    assert!(matches!(failed, Err(ServiceError::Storage(_))), "nothing removed unaudited: {failed:?}");
}
