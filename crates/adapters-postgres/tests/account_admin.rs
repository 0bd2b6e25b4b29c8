//! The account administration's storage against a real PostgreSQL
//! (127.0.0.1:5432, or `TEST_DATABASE_URL`): the search, the audited
//! changes (a change and its audit entry are stored together or not at
//! all), and the login history.

use credencial_adapters_postgres::testing::TestDatabase;
use credencial_adapters_postgres::{
    PgAccountAdminStore, PgLoginFailureLog, PgLoginHistory, PgRefreshTokenStore, PgUserRepository,
};
use credencial_domain::admin::{AccountQuery, Actor, AuditAction, AuditTarget, LoginVia, NewAuditEntry, Page};
use credencial_domain::throttle::ThrottleKey;
use credencial_domain::{UserData, UserId, Username};
use credencial_ports::{
    AccountAdminStore, LoginFailureLog, LoginHistory, NewRefreshToken, NewUser, RefreshTokenStore, RepositoryError,
    UserRepository,
};

fn entry(action: AuditAction, username: &str) -> NewAuditEntry {
    NewAuditEntry::new(
        Actor::Staff { id: UserId(1), username: "admin".into() },
        action,
        AuditTarget::User(username.into()),
    )
}

/// An entry the table refuses (an actor name over 200 characters): its
/// change must not be stored either.
fn refused_entry(action: AuditAction) -> NewAuditEntry {
    NewAuditEntry::new(Actor::Cli { os_user: "x".repeat(300) }, action, AuditTarget::User("ana".into()))
}

async fn audit_count(db: &TestDatabase, action: AuditAction) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM audit_log WHERE action = $1")
        .bind(action.code())
        .fetch_one(&db.pool)
        .await
        .expect("count")
}

async fn flag(db: &TestDatabase, column: &str, id: UserId) -> bool {
    sqlx::query_scalar(&format!("SELECT {column} FROM users WHERE id = $1"))
        .bind(id.0)
        .fetch_one(&db.pool)
        .await
        .expect("flag")
}

async fn usernames(store: &PgAccountAdminStore, typed: &str, page: Page) -> (Vec<String>, u64) {
    let (found, total) = store.search(&AccountQuery::parse(typed), page).await.expect("search");
    (found.into_iter().map(|a| a.username).collect(), total)
}

#[tokio::test]
async fn search_finds_by_part_of_the_username_name_or_e_mail_ignoring_case_and_by_whole_cpf() {
    let db = TestDatabase::new().await;
    db.create_user("ana", Some("52998224725")).await;
    db.create_user("bruno", Some("11144477735")).await;
    db.create_user("anabela", None).await;
    let store = PgAccountAdminStore::new(db.pool.clone());
    let first = Page::new(1, 20);
    assert_eq!(usernames(&store, "ANA", first).await, (vec!["ana".into(), "anabela".into()], 2), "username part");
    assert_eq!(usernames(&store, "full bru", first).await, (vec!["bruno".into()], 1), "name part");
    assert_eq!(usernames(&store, "bruno@EXAMPLE", first).await, (vec!["bruno".into()], 1), "e-mail part");
    assert_eq!(usernames(&store, "529.982.247-25", first).await, (vec!["ana".into()], 1), "formatted CPF");
    assert_eq!(usernames(&store, "11144477735", first).await, (vec!["bruno".into()], 1), "CPF digits");
    assert_eq!(usernames(&store, "%", first).await, (vec![], 0), "a wildcard is taken literally");
    assert_eq!(usernames(&store, "", first).await.1, 3, "an empty search lists everyone");
}

#[tokio::test]
async fn search_pages_hold_the_page_size_and_count_every_match() {
    let db = TestDatabase::new().await;
    for name in ["u1", "u2", "u3", "u4", "u5"] {
        db.create_user(name, None).await;
    }
    let store = PgAccountAdminStore::new(db.pool.clone());
    assert_eq!(usernames(&store, "u", Page::new(1, 2)).await, (vec!["u1".into(), "u2".into()], 5));
    assert_eq!(usernames(&store, "u", Page::new(3, 2)).await, (vec!["u5".into()], 5));
    assert_eq!(usernames(&store, "u", Page::new(9, 2)).await, (vec![], 5), "past the end: empty, same total");
}

#[tokio::test]
async fn a_deactivation_and_its_audit_entry_are_stored_together_or_not_at_all() {
    let db = TestDatabase::new().await;
    let ana = db.create_user("ana", None).await;
    let store = PgAccountAdminStore::new(db.pool.clone());

    let refused = store.set_active(ana, false, &refused_entry(AuditAction::UserDeactivate)).await;
    assert!(matches!(refused, Err(RepositoryError::Unexpected(_))), "{refused:?}");
    assert!(flag(&db, "is_active", ana).await, "the entry failed: the account is still active");
    assert_eq!(audit_count(&db, AuditAction::UserDeactivate).await, 0);

    let off = entry(AuditAction::UserDeactivate, "ana").with("is_active", "false");
    assert!(store.set_active(ana, false, &off).await.expect("deactivated"));
    assert!(!flag(&db, "is_active", ana).await);
    assert_eq!(audit_count(&db, AuditAction::UserDeactivate).await, 1);

    let nobody = store.set_active(UserId(999), false, &entry(AuditAction::UserDeactivate, "x")).await;
    assert!(!nobody.expect("no such account"));
    assert_eq!(audit_count(&db, AuditAction::UserDeactivate).await, 1, "no entry without a change");
}

#[tokio::test]
async fn a_temporary_password_must_be_changed_and_the_owners_change_clears_it() {
    let db = TestDatabase::new().await;
    let ana = db.create_user("ana", None).await;
    let store = PgAccountAdminStore::new(db.pool.clone());
    let users = PgUserRepository::new(db.pool.clone());
    let temporary = entry(AuditAction::UserTemporaryPassword, "ana");
    assert!(store.set_password(ana, "pbkdf2_sha256$1$t$h", true, &temporary).await.expect("set"));
    let creds = users.find_credentials("ana").await.expect("read").expect("ana");
    assert!(creds.must_change_password && creds.password_hash.as_str() == "pbkdf2_sha256$1$t$h");
    assert!(store.find(ana).await.expect("find").expect("ana").must_change_password);

    assert!(users.set_password_hash(ana, "pbkdf2_sha256$1$o$h").await.expect("owner's change"));
    assert!(!users.find_credentials_by_id(ana).await.expect("read").expect("ana").must_change_password);

    let refused = store.set_password(ana, "pbkdf2_sha256$1$x$h", true, &refused_entry(AuditAction::UserPassword)).await;
    assert!(refused.is_err());
    let creds = users.find_credentials("ana").await.expect("read").expect("ana");
    assert_eq!(creds.password_hash.as_str(), "pbkdf2_sha256$1$o$h", "nothing stored without its entry");
}

#[tokio::test]
async fn clearing_a_validation_unfreezes_the_account_and_is_audited() {
    let db = TestDatabase::new().await;
    let ana = db.create_user("ana", Some("52998224725")).await;
    sqlx::query("UPDATE users SET receita_validated = TRUE WHERE id = $1")
        .bind(ana.0)
        .execute(&db.pool)
        .await
        .expect("validate");
    let store = PgAccountAdminStore::new(db.pool.clone());
    assert!(store.clear_validation(ana, &entry(AuditAction::UserClearValidation, "ana")).await.expect("cleared"));
    assert!(!flag(&db, "receita_validated", ana).await);
    assert_eq!(audit_count(&db, AuditAction::UserClearValidation).await, 1);
    assert!(!store.find(ana).await.expect("find").expect("ana").tax_id_validated);
}

#[tokio::test]
async fn lifting_a_throttle_forgets_the_given_keys_only() {
    let db = TestDatabase::new().await;
    let log = PgLoginFailureLog::new(db.pool.clone());
    let ana = ThrottleKey::username(&Username::parse("ana").expect("username"));
    let bruno = ThrottleKey::username(&Username::parse("bruno").expect("username"));
    log.record_failure(&[ana.clone(), bruno.clone()], 1_900_000_000_000, 300_000).await.expect("failures");
    let store = PgAccountAdminStore::new(db.pool.clone());
    assert!(store
        .lift_throttle(std::slice::from_ref(&ana), &entry(AuditAction::UserLiftThrottle, "ana"))
        .await
        .expect("lifted"));
    let left = log.windows(&[ana.clone(), bruno.clone()]).await.expect("windows");
    assert_eq!(left.iter().map(|w| w.key.as_str()).collect::<Vec<_>>(), ["username:bruno"]);
    assert!(!store.lift_throttle(&[ana], &entry(AuditAction::UserLiftThrottle, "ana")).await.expect("nothing left"));
    assert_eq!(audit_count(&db, AuditAction::UserLiftThrottle).await, 2, "each lift is recorded");
}

#[tokio::test]
async fn a_created_account_may_be_staff_and_a_taken_username_is_a_conflict_with_no_entry() {
    let db = TestDatabase::new().await;
    let store = PgAccountAdminStore::new(db.pool.clone());
    let new = || NewUser {
        username: Username::parse("lia").expect("username"),
        password_hash: "pbkdf2_sha256$1$s$h".into(),
        is_active: true,
        data: UserData::default(),
        name: "Lia".into(),
        cpf: None,
    };
    let id = store.create(new(), true, false, &entry(AuditAction::UserCreate, "lia")).await.expect("created");
    assert!(flag(&db, "is_staff", id).await);
    assert!(!flag(&db, "must_change_password", id).await);
    let again = store.create(new(), false, false, &entry(AuditAction::UserCreate, "lia")).await;
    assert!(matches!(&again, Err(RepositoryError::Conflict(field)) if field == "username"), "{again:?}");
    assert_eq!(audit_count(&db, AuditAction::UserCreate).await, 1);
}

#[tokio::test]
async fn a_new_account_may_have_a_temporary_password_and_a_taken_cpf_or_email_is_named() {
    let db = TestDatabase::new().await;
    let store = PgAccountAdminStore::new(db.pool.clone());
    let new = |username: &str, cpf: Option<&str>, email: &str| NewUser {
        username: Username::parse(username).expect("username"),
        password_hash: "pbkdf2_sha256$1$s$h".into(),
        is_active: true,
        data: UserData { email: email.into(), ..UserData::default() },
        name: String::new(),
        cpf: cpf.map(str::to_owned),
    };
    let audit = || entry(AuditAction::UserCreate, "lia");
    let id =
        store.create(new("lia", Some("52998224725"), "lia@example.org"), false, true, &audit()).await.expect("created");
    assert!(flag(&db, "must_change_password", id).await);
    let cpf = store.create(new("rui", Some("52998224725"), "rui@example.org"), false, true, &audit()).await;
    assert!(matches!(&cpf, Err(RepositoryError::Conflict(field)) if field == "cpf"), "{cpf:?}");
    let email = store.create(new("rui", None, "LIA@example.org"), false, true, &audit()).await;
    assert!(matches!(&email, Err(RepositoryError::Conflict(field)) if field == "email"), "{email:?}");
    assert_eq!(audit_count(&db, AuditAction::UserCreate).await, 1, "no entry without its account");
}

#[tokio::test]
async fn a_pair_login_is_recorded_with_its_refresh_token_and_the_history_is_bounded() {
    let db = TestDatabase::new().await;
    let ana = db.create_user("ana", None).await;
    let tokens = PgRefreshTokenStore::new(db.pool.clone());
    let history = PgLoginHistory::new(db.pool.clone());
    for i in 0..5 {
        let token = NewRefreshToken { jti: format!("jti-{i}"), user_id: ana, expires_at: 4_000_000_000 };
        tokens.record_login(token, &format!("jti-{i}"), LoginVia::Pair).await.expect("recorded");
    }
    history.record(ana, LoginVia::Account).await.expect("web login");
    let recent = history.recent(ana, 3).await.expect("recent");
    assert_eq!(recent.iter().map(|l| l.via).collect::<Vec<_>>(), [LoginVia::Account, LoginVia::Pair, LoginVia::Pair]);
    assert!(tokens.is_current("jti-4").await.expect("current"), "the token is stored with the login");

    let missing = NewRefreshToken { jti: "orphan".into(), user_id: UserId(999), expires_at: 4_000_000_000 };
    assert!(tokens.record_login(missing, "orphan", LoginVia::Pair).await.is_err(), "no login without its token");

    assert_eq!(history.purge(0, 2).await.expect("purged"), 4, "only the 2 newest are kept");
    assert_eq!(history.recent(ana, 10).await.expect("recent").len(), 2);
    assert_eq!(history.purge(4_000_000_000, 2).await.expect("purged"), 2, "then by age");
}
