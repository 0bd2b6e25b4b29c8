//! The account administration's storage: the search, the audited changes
//! (a change and its audit entry are stored together or not at all), and
//! the login history.

use credencial_domain::admin::{AccountQuery, Actor, AuditAction, AuditTarget, LoginVia, NewAuditEntry, COUNT_LIMIT};
use credencial_domain::throttle::ThrottleKey;
use credencial_domain::{UserData, UserId, Username};
use credencial_ports::{AccessChange, AccountAdminStore, NewUser, RepositoryError};
use credencial_storage_contract::{contract, Backend, Engine};

use crate::account::support::user;

contract!(
    search_finds_by_part_of_the_username_name_or_e_mail_ignoring_case_and_by_whole_cpf,
    search_pages_are_read_by_username_and_the_text_holds_on_every_page,
    a_search_counts_up_to_its_bound_and_finds_a_changed_name,
    a_deactivation_and_its_audit_entry_are_stored_together_or_not_at_all,
    a_temporary_password_must_be_changed_and_the_owners_change_clears_it,
    clearing_a_validation_unfreezes_the_account_and_is_audited,
    lifting_a_throttle_forgets_the_given_keys_only,
    a_created_account_may_be_staff_and_a_taken_username_is_a_conflict_with_no_entry,
    a_new_account_may_have_a_temporary_password_and_a_taken_cpf_or_email_is_named,
    the_login_history_answers_the_newest_first_and_is_bounded,
);

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

async fn audit_count<B: Backend>(b: &B, action: AuditAction) -> i64 {
    b.count(&format!("SELECT count(*) FROM audit_log WHERE action = '{}'", action.code())).await
}

async fn usernames(store: &dyn AccountAdminStore, typed: &str, after: Option<&str>, limit: u32) -> (Vec<String>, u64) {
    let (found, total) = store.search(&AccountQuery::parse(typed), after, limit).await.expect("search");
    (found.into_iter().map(|a| a.username).collect(), total)
}

async fn search_finds_by_part_of_the_username_name_or_e_mail_ignoring_case_and_by_whole_cpf<B: Backend>() {
    let b = B::fresh().await;
    user(&b, "ana", Some("52998224725")).await;
    user(&b, "bruno", Some("11144477735")).await;
    user(&b, "anabela", None).await;
    user(&b, "ana_x", None).await;
    let store = b.account_admin();
    let first = (None, 20);
    let found = usernames(&*store, "ANA", first.0, first.1).await;
    assert_eq!(found, (vec!["ana".into(), "ana_x".into(), "anabela".into()], 3), "username part");
    assert_eq!(usernames(&*store, "full bru", first.0, first.1).await, (vec!["bruno".into()], 1), "name part");
    assert_eq!(usernames(&*store, "bruno@EXAMPLE", first.0, first.1).await, (vec!["bruno".into()], 1), "e-mail part");
    assert_eq!(usernames(&*store, "529.982.247-25", first.0, first.1).await, (vec!["ana".into()], 1), "formatted CPF");
    assert_eq!(usernames(&*store, "11144477735", first.0, first.1).await, (vec!["bruno".into()], 1), "CPF digits");
    assert_eq!(usernames(&*store, "%", first.0, first.1).await, (vec![], 0), "a wildcard is taken literally");
    assert_eq!(usernames(&*store, "a_x", first.0, first.1).await, (vec!["ana_x".into()], 1), "so is an underscore");
    assert_eq!(usernames(&*store, "", first.0, first.1).await.1, 4, "an empty search lists everyone");
    // A whole address is that account's, by its key (not a substring).
    assert_eq!(
        usernames(&*store, "BRUNO@example.GOV.br", first.0, first.1).await,
        (vec!["bruno".into()], 1),
        "whole e-mail"
    );
    assert_eq!(
        usernames(&*store, "na@example.gov.br", first.0, first.1).await,
        (vec![], 0),
        "no substring of an address"
    );
}

async fn search_pages_are_read_by_username_and_the_text_holds_on_every_page<B: Backend>() {
    let b = B::fresh().await;
    for name in ["u1", "u2", "u3", "u4", "u5"] {
        user(&b, name, None).await;
    }
    let store = b.account_admin();
    // A text of three characters or more goes through the trigram index,
    // a shorter one row by row: both page the same way.
    for typed in ["u", "Full u"] {
        assert_eq!(usernames(&*store, typed, None, 2).await, (vec!["u1".into(), "u2".into()], 5), "{typed}");
        assert_eq!(usernames(&*store, typed, Some("u2"), 2).await, (vec!["u3".into(), "u4".into()], 5), "{typed}");
        assert_eq!(usernames(&*store, typed, Some("u4"), 2).await, (vec!["u5".into()], 5), "{typed}");
        assert_eq!(usernames(&*store, typed, Some("u5"), 2).await, (vec![], 5), "{typed}: past the end");
    }
    assert_eq!(usernames(&*store, "", Some("u3"), 9).await, (vec!["u4".into(), "u5".into()], 5), "everyone");
    assert_eq!(usernames(&*store, "", Some("a"), 1).await.0, vec!["u1".to_owned()], "any text is a place");
}

async fn a_search_counts_up_to_its_bound_and_finds_a_changed_name<B: Backend>() {
    let b = B::fresh().await;
    let over = COUNT_LIMIT + 5;
    b.execute(&format!(
        "INSERT INTO users (username, password, name) \
         SELECT 'p' || i, '!', 'Pessoa ' || i FROM (WITH RECURSIVE n(i) AS \
         (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {over}) SELECT i FROM n) AS numbers"
    ))
    .await;
    let store = b.account_admin();
    assert_eq!(usernames(&*store, "", None, 3).await, (vec!["p1".into(), "p10".into(), "p100".into()], 1_001));
    assert_eq!(usernames(&*store, "pessoa", None, 1).await.1, COUNT_LIMIT + 1, "counted up to the bound");
    assert_eq!(usernames(&*store, "Pessoa 1004", None, 5).await, (vec!["p1004".into()], 1));
    // The index follows every change of a name and every delete.
    b.execute("UPDATE users SET name = 'Zuleica Prado' WHERE username = 'p1004'").await;
    assert_eq!(usernames(&*store, "Pessoa 1004", None, 5).await, (vec![], 0), "the old name is gone");
    assert_eq!(usernames(&*store, "zuleica", None, 5).await, (vec!["p1004".into()], 1), "the new one is found");
    b.execute("DELETE FROM users WHERE username = 'p1004'").await;
    assert_eq!(usernames(&*store, "zuleica", None, 5).await, (vec![], 0), "a deleted account is gone");
}

async fn a_deactivation_and_its_audit_entry_are_stored_together_or_not_at_all<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let store = b.account_admin();

    let refused = store.set_active(ana, false, &refused_entry(AuditAction::UserDeactivate)).await;
    assert!(matches!(refused, Err(RepositoryError::Unexpected(_))), "{refused:?}");
    assert!(store.find(ana).await.expect("find").expect("ana").is_active, "the entry failed: still active");
    assert_eq!(audit_count(&b, AuditAction::UserDeactivate).await, 0);

    let off = entry(AuditAction::UserDeactivate, "ana").with("is_active", "false");
    assert_eq!(store.set_active(ana, false, &off).await.expect("deactivated"), AccessChange::Changed);
    assert!(!store.find(ana).await.expect("find").expect("ana").is_active);
    assert_eq!(audit_count(&b, AuditAction::UserDeactivate).await, 1);

    let nobody = store.set_active(UserId(ana.0 + 999), false, &entry(AuditAction::UserDeactivate, "x")).await;
    assert_eq!(nobody.expect("no such account"), AccessChange::NotFound);
    assert_eq!(audit_count(&b, AuditAction::UserDeactivate).await, 1, "no entry without a change");
}

async fn a_temporary_password_must_be_changed_and_the_owners_change_clears_it<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let store = b.account_admin();
    let users = b.users();
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
    assert!(!creds.must_change_password);
}

async fn clearing_a_validation_unfreezes_the_account_and_is_audited<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", Some("52998224725")).await;
    b.execute(&format!("UPDATE users SET receita_validated = TRUE WHERE id = {}", ana.0)).await;
    let store = b.account_admin();
    assert!(store.find(ana).await.expect("find").expect("ana").tax_id_validated);
    assert!(store.clear_validation(ana, &entry(AuditAction::UserClearValidation, "ana")).await.expect("cleared"));
    assert_eq!(audit_count(&b, AuditAction::UserClearValidation).await, 1);
    assert!(!store.find(ana).await.expect("find").expect("ana").tax_id_validated);
    let other = credencial_domain::Cpf::parse("11144477735").expect("cpf");
    let changed = b.tax_id().change_cpf(ana, &other).await.expect("change");
    assert_eq!(changed, credencial_ports::account::CpfChange::Changed, "the CPF may change again");
}

async fn lifting_a_throttle_forgets_the_given_keys_only<B: Backend>() {
    let b = B::fresh().await;
    let window = match B::ENGINE {
        Engine::Postgres => "to_timestamp(1900000000)",
        Engine::Sqlite => "1900000000000",
    };
    b.execute(&format!(
        "INSERT INTO login_failures (key, failures, window_start) \
         VALUES ('username:ana', 3, {window}), ('username:bruno', 2, {window})"
    ))
    .await;
    let ana = ThrottleKey::username(&Username::parse("ana").expect("username"));
    let store = b.account_admin();
    assert!(store
        .lift_throttle(std::slice::from_ref(&ana), &entry(AuditAction::UserLiftThrottle, "ana"))
        .await
        .expect("lifted"));
    assert_eq!(b.count("SELECT count(*) FROM login_failures WHERE key = 'username:ana'").await, 0);
    assert_eq!(b.count("SELECT count(*) FROM login_failures WHERE key = 'username:bruno'").await, 1);
    assert!(!store.lift_throttle(&[ana], &entry(AuditAction::UserLiftThrottle, "ana")).await.expect("nothing left"));
    assert_eq!(audit_count(&b, AuditAction::UserLiftThrottle).await, 2, "each lift is recorded");
}

async fn a_created_account_may_be_staff_and_a_taken_username_is_a_conflict_with_no_entry<B: Backend>() {
    let b = B::fresh().await;
    let store = b.account_admin();
    let new = || NewUser {
        username: Username::parse("lia").expect("username"),
        password_hash: "pbkdf2_sha256$1$s$h".into(),
        is_active: true,
        data: UserData::default(),
        name: "Lia".into(),
        cpf: None,
    };
    let id = store.create(new(), true, false, &entry(AuditAction::UserCreate, "lia")).await.expect("created");
    let created = store.find(id).await.expect("find").expect("lia");
    assert!(created.is_staff && !created.must_change_password);
    assert_eq!(store.find_by_username(&Username::parse("lia").expect("username")).await.expect("find"), Some(created));
    let again = store.create(new(), false, false, &entry(AuditAction::UserCreate, "lia")).await;
    assert!(matches!(&again, Err(RepositoryError::Conflict(field)) if field == "username"), "{again:?}");
    assert_eq!(audit_count(&b, AuditAction::UserCreate).await, 1);
}

async fn a_new_account_may_have_a_temporary_password_and_a_taken_cpf_or_email_is_named<B: Backend>() {
    let b = B::fresh().await;
    let store = b.account_admin();
    let new = |username: &str, cpf: Option<&str>, email: &str| NewUser {
        username: Username::parse(username).expect("username"),
        password_hash: "pbkdf2_sha256$1$s$h".into(),
        is_active: true,
        data: UserData { email: email.into(), ..UserData::default() },
        name: String::new(),
        cpf: cpf.map(|c| credencial_domain::Cpf::parse(c).expect("cpf")),
    };
    let audit = || entry(AuditAction::UserCreate, "lia");
    let id =
        store.create(new("lia", Some("52998224725"), "lia@example.org"), false, true, &audit()).await.expect("created");
    assert!(store.find(id).await.expect("find").expect("lia").must_change_password);
    let cpf = store.create(new("rui", Some("52998224725"), "rui@example.org"), false, true, &audit()).await;
    assert!(matches!(&cpf, Err(RepositoryError::Conflict(field)) if field == "cpf"), "{cpf:?}");
    let email = store.create(new("rui", None, "LIA@example.org"), false, true, &audit()).await;
    assert!(matches!(&email, Err(RepositoryError::Conflict(field)) if field == "email"), "{email:?}");
    assert_eq!(audit_count(&b, AuditAction::UserCreate).await, 1, "no entry without its account");
    assert_eq!(b.count("SELECT count(*) FROM users").await, 1);
}

async fn the_login_history_answers_the_newest_first_and_is_bounded<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let bruno = user(&b, "bruno", None).await;
    let history = b.login_history();
    for via in [LoginVia::Pair, LoginVia::Pair, LoginVia::OAuth, LoginVia::Pair, LoginVia::Account] {
        history.record(ana, via).await.expect("recorded");
    }
    history.record(bruno, LoginVia::OAuth).await.expect("recorded");
    let recent = history.recent(ana, 3).await.expect("recent");
    assert_eq!(recent.iter().map(|l| l.via).collect::<Vec<_>>(), [LoginVia::Account, LoginVia::Pair, LoginVia::OAuth]);
    let now =
        i64::try_from(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs())
            .expect("seconds");
    assert!(recent.iter().all(|l| (now - 60..=now + 60).contains(&l.at)), "recorded now");
    assert!(history.record(UserId(ana.0 + 999), LoginVia::Pair).await.is_err(), "no login of an unknown user");

    // At most `limit` rows a call; the caller calls again until one is short.
    assert_eq!(history.purge(0, 2, 2).await.expect("purged"), 2, "bounded by the limit");
    assert_eq!(history.purge(0, 2, 100).await.expect("purged"), 1, "only ana's 2 newest are kept, bruno's 1 stays");
    assert_eq!(history.purge(0, 2, 100).await.expect("purged"), 0);
    assert_eq!(history.recent(ana, 10).await.expect("recent").len(), 2);
    assert_eq!(history.recent(bruno, 10).await.expect("recent").len(), 1);
    assert_eq!(history.purge(now + 3_600, 2, 2).await.expect("purged"), 2, "then by age, bounded");
    assert_eq!(history.purge(now + 3_600, 2, 2).await.expect("purged"), 1, "the last one");
    assert!(history.recent(ana, 10).await.expect("recent").is_empty());
}
