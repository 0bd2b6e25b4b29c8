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
    search_finds_by_the_start_of_a_name_word_username_or_e_mail_ignoring_case_and_by_whole_cpf,
    a_search_by_words_finds_any_word_of_the_name_onwards_folding_accented_capitals,
    search_pages_are_read_by_key_and_the_text_holds_on_every_page,
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
    (found.into_iter().map(|(_, a)| a.username).collect(), total)
}

async fn search_finds_by_the_start_of_a_name_word_username_or_e_mail_ignoring_case_and_by_whole_cpf<B: Backend>() {
    let b = B::fresh().await;
    user(&b, "ana", Some("52998224725")).await;
    user(&b, "bruno", Some("11144477735")).await;
    user(&b, "anabela", None).await;
    user(&b, "ana_x", None).await;
    let store = b.account_admin();
    let first = (None, 20);
    // ana's username and address both match: she is counted once.
    let found = usernames(&*store, "ANA", first.0, first.1).await;
    assert_eq!(
        found,
        (vec!["ana".into(), "ana".into(), "ana_x".into(), "ana_x".into(), "anabela".into(), "anabela".into()], 3)
    );
    assert_eq!(usernames(&*store, "full bru", first.0, first.1).await, (vec!["bruno".into()], 1), "the name's start");
    assert_eq!(
        usernames(&*store, "bruno@EXAMPLE", first.0, first.1).await,
        (vec!["bruno".into()], 1),
        "e-mail's start"
    );
    assert_eq!(usernames(&*store, "529.982.247-25", first.0, first.1).await, (vec!["ana".into()], 1), "formatted CPF");
    assert_eq!(usernames(&*store, "11144477735", first.0, first.1).await, (vec!["bruno".into()], 1), "CPF digits");
    assert_eq!(usernames(&*store, "%", first.0, first.1).await, (vec![], 0), "a wildcard is taken literally");
    assert_eq!(usernames(&*store, "ana_", first.0, first.1).await.1, 1, "so is an underscore");
    assert_eq!(usernames(&*store, "runo", first.0, first.1).await, (vec![], 0), "the middle of a word is not a start");
    assert_eq!(usernames(&*store, "", first.0, first.1).await.1, 4, "an empty search lists everyone");
    // A whole address is that account's, by its key (not a prefix).
    assert_eq!(
        usernames(&*store, "BRUNO@example.GOV.br", first.0, first.1).await,
        (vec!["bruno".into()], 1),
        "whole e-mail"
    );
    assert_eq!(usernames(&*store, "na@example.gov.br", first.0, first.1).await, (vec![], 0), "no part of an address");
}

async fn a_search_by_words_finds_any_word_of_the_name_onwards_folding_accented_capitals<B: Backend>() {
    let b = B::fresh().await;
    let maria = user(&b, "m1", None).await;
    let erica = user(&b, "m2", None).await;
    user(&b, "m3", None).await;
    let name = |id: UserId, name: &str| format!("UPDATE users SET name = '{name}' WHERE id = {}", id.0);
    b.execute(&name(maria, "  Maria   da Souza  Lima ")).await;
    b.execute(&name(erica, "ÉRICA ÂNGELA SOUZA")).await;
    let store = b.account_admin();
    let found = |typed: &'static str| {
        let store = store.clone();
        async move { usernames(&*store, typed, None, 20).await }
    };
    assert_eq!(found("maria da sou").await, (vec!["m1".into()], 1), "the name's start, spaces as one");
    // By matching term: "souza" (m2) before "souza lima" (m1).
    assert_eq!(found("SOUZA").await, (vec!["m2".into(), "m1".into()], 2), "a later word");
    assert_eq!(found("souza lima").await, (vec!["m1".into()], 1), "a later word onwards");
    assert_eq!(found("érica âng").await, (vec!["m2".into()], 1), "accented capitals are folded");
    assert_eq!(found("Ângela").await, (vec!["m2".into()], 1));
    assert_eq!(found("maria souza").await, (vec![], 0), "words in the name's order, none skipped");
    assert_eq!(found("erica").await, (vec![], 0), "accents are letters of their own");
}

async fn search_pages_are_read_by_key_and_the_text_holds_on_every_page<B: Backend>() {
    let b = B::fresh().await;
    for name in ["u1", "u2", "u3", "u4", "u5"] {
        user(&b, name, None).await;
    }
    let store = b.account_admin();
    let page = |typed: &'static str, after: Option<String>| {
        let store = store.clone();
        async move {
            let (found, total) = store.search(&AccountQuery::parse(typed), after.as_deref(), 2).await.expect("search");
            let next = found.last().map(|(place, _)| place.clone());
            (found.into_iter().map(|(_, a)| a.name).collect::<Vec<_>>(), total, next)
        }
    };
    // By words ("Full u1" … : the names' start, each account once).
    let (first, total, next) = page("Full u", None).await;
    assert_eq!((first, total), (vec!["Full u1".to_owned(), "Full u2".to_owned()], 5));
    let (second, _, next) = page("Full u", next).await;
    assert_eq!(second, ["Full u3", "Full u4"]);
    let (third, _, next) = page("Full u", next).await;
    assert_eq!(third, ["Full u5"]);
    assert_eq!(page("Full u", next).await.0, Vec::<String>::new(), "past the end");
    assert_eq!(page("Full u", Some("zzz".into())).await.0, Vec::<String>::new(), "any text is a place");
    assert_eq!(page("Full u", Some("full u3".into())).await.0, ["Full u3", "Full u4"], "a place without an id");
    // Everyone, by username.
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
    // The terms follow every change of a name or username and every delete.
    b.execute("UPDATE users SET name = 'Zuleica Prado' WHERE username = 'p1004'").await;
    assert_eq!(usernames(&*store, "Pessoa 1004", None, 5).await, (vec![], 0), "the old name is gone");
    assert_eq!(usernames(&*store, "prado", None, 5).await, (vec!["p1004".into()], 1), "the new one is found");
    b.execute("UPDATE users SET username = 'zq9' WHERE username = 'p1004'").await;
    assert_eq!(usernames(&*store, "p1004", None, 5).await, (vec![], 0), "the old username is gone");
    assert_eq!(usernames(&*store, "zq", None, 5).await, (vec!["zq9".into()], 1), "the new one is found");
    b.execute("DELETE FROM users WHERE username = 'zq9'").await;
    assert_eq!(usernames(&*store, "zuleica", None, 5).await, (vec![], 0), "a deleted account is gone");
    assert_eq!(b.count("SELECT count(*) FROM user_search_terms WHERE term LIKE 'zuleica%'").await, 0, "and its terms");
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
