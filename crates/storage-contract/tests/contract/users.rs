//! User accounts and their credentials: creation, the look-ups by username
//! and id, the CPF's shape and uniqueness, password hashes kept as they
//! are, the owner's password change and the staff flag.

use credencial_domain::admin::{Actor, AuditAction, AuditTarget, NewAuditEntry};
use credencial_domain::{Cpf, UserData, UserId, Username};
use credencial_ports::{AccessChange, NewUser, RepositoryError};
use credencial_storage_contract::{contract, Backend};

contract!(
    created_user_is_found_by_username_with_the_same_credentials,
    creating_a_duplicate_username_is_a_conflict,
    unknown_username_has_no_credentials,
    usernames_match_exactly_and_case_sensitively,
    active_user_data_is_returned_as_stored,
    inactive_user_has_no_active_user_data,
    unknown_user_id_has_no_active_user_data,
    a_cpf_that_is_not_eleven_digits_is_refused_and_leaves_no_row,
    a_cpf_belongs_to_one_user_only,
    a_django_hash_is_stored_and_returned_byte_for_byte,
    summaries_are_found_by_username_and_id,
    the_owner_s_password_change_stores_the_hash,
    staff_is_granted_and_taken_with_its_audit_entry,
);

/// A Django PBKDF2-SHA256 hash as Django writes it (salt and base64 hash
/// with `+`, `/` and `=`).
const DJANGO_HASH: &str = "pbkdf2_sha256$870000$Xy9+Zk/Q1aB2cD3eF4gH5i$K8mN0pQ+rS/tUvWxYz1A2bC3dE4fG5hI6jK7lM8nO9p=";

fn user_data(tag: &str) -> UserData {
    UserData {
        identificacao: format!("{tag}-1234567"),
        nome_usual: format!("Nome {tag} Ção"),
        email: format!("{tag}@example.org"),
        campus: "CNAT".to_owned(),
        tipo_usuario: "Servidor".to_owned(),
    }
}

fn new_user(username: &str) -> NewUser {
    NewUser {
        username: Username::parse(username).expect("valid username"),
        password_hash: DJANGO_HASH.to_owned(),
        is_active: true,
        data: user_data(username),
        name: format!("Full name of {username}"),
        cpf: None,
    }
}

async fn count_users<B: Backend>(b: &B, username: &str) -> i64 {
    b.count(&format!("SELECT count(*) FROM users WHERE username = '{username}'")).await
}

async fn deactivate<B: Backend>(b: &B, id: UserId) {
    b.execute(&format!("UPDATE users SET is_active = FALSE WHERE id = {}", id.0)).await;
}

/// A database with one active user `ana`, and its id.
async fn setup<B: Backend>() -> (B, UserId) {
    let b = B::fresh().await;
    let id = b.users().create(new_user("ana")).await.expect("create ana");
    (b, id)
}

async fn created_user_is_found_by_username_with_the_same_credentials<B: Backend>() {
    let b = B::fresh().await;
    let users = b.users();
    let mut inactive = new_user("bia");
    inactive.is_active = false;
    inactive.password_hash = "pbkdf2_sha256$1$s$h=".to_owned();

    let ana = users.create(new_user("ana")).await.expect("create ana");
    let bia = users.create(inactive).await.expect("create bia");
    assert_ne!(ana, bia);

    let found = users.find_credentials("ana").await.expect("query").expect("ana exists");
    assert_eq!(found.id, ana);
    assert_eq!(found.username, "ana");
    assert_eq!(found.password_hash.as_str(), DJANGO_HASH);
    assert!(found.is_active);
    assert!(!found.must_change_password);

    let found = users.find_credentials("bia").await.expect("query").expect("bia exists");
    assert_eq!(found.id, bia);
    assert_eq!(found.username, "bia");
    assert_eq!(found.password_hash.as_str(), "pbkdf2_sha256$1$s$h=");
    assert!(!found.is_active, "an inactive user is returned as inactive");
}

async fn creating_a_duplicate_username_is_a_conflict<B: Backend>() {
    let b = B::fresh().await;
    let users = b.users();
    let first = users.create(new_user("ana")).await.expect("create ana");

    let mut again = new_user("ana");
    again.password_hash = "pbkdf2_sha256$1$other$other=".to_owned();
    again.data.email = "another@example.org".to_owned();
    let err = users.create(again).await.expect_err("duplicate username");
    assert!(matches!(err, RepositoryError::Conflict(_)), "{err:?}");

    assert_eq!(count_users(&b, "ana").await, 1);
    let found = users.find_credentials("ana").await.expect("query").expect("ana exists");
    assert_eq!(found.id, first);
    assert_eq!(found.password_hash.as_str(), DJANGO_HASH, "the first user is untouched");
}

async fn unknown_username_has_no_credentials<B: Backend>() {
    let (b, _id) = setup::<B>().await;
    let users = b.users();
    assert!(users.find_credentials("nobody").await.expect("query").is_none());
    assert!(users.find_credentials("").await.expect("query").is_none());
    assert!(users.find_credentials("an%").await.expect("query").is_none(), "no LIKE matching");
    assert!(users.find_credentials("an_").await.expect("query").is_none(), "no LIKE matching");
}

async fn usernames_match_exactly_and_case_sensitively<B: Backend>() {
    let b = B::fresh().await;
    let users = b.users();
    let upper = users.create(new_user("Ana")).await.expect("create Ana");

    for other in ["ana", "ANA", "aNA", "Ana ", " Ana", "An", "Anaa"] {
        assert!(users.find_credentials(other).await.expect("query").is_none(), "{other:?} must not find \"Ana\"");
    }
    let found = users.find_credentials("Ana").await.expect("query").expect("exact match");
    assert_eq!(found.id, upper);

    // Being case-sensitive, "ana" is a different username that can coexist
    // (with an e-mail address of its own: addresses are unique ignoring case).
    let mut ana = new_user("ana");
    ana.data.email = "ana.lower@example.gov.br".into();
    let lower = users.create(ana).await.expect("create ana");
    assert_ne!(lower, upper);
    assert_eq!(users.find_credentials("ana").await.expect("query").expect("ana").id, lower);
    assert_eq!(users.find_credentials("Ana").await.expect("query").expect("Ana").id, upper);
}

async fn active_user_data_is_returned_as_stored<B: Backend>() {
    let (b, ana) = setup::<B>().await;
    let users = b.users();
    let bia = users.create(new_user("bia")).await.expect("create bia");

    assert_eq!(users.find_active_user_data(ana).await.expect("query"), Some(user_data("ana")));
    assert_eq!(users.find_active_user_data(bia).await.expect("query"), Some(user_data("bia")));
}

async fn inactive_user_has_no_active_user_data<B: Backend>() {
    let (b, ana) = setup::<B>().await;
    let users = b.users();
    let mut created_inactive = new_user("bia");
    created_inactive.is_active = false;
    let bia = users.create(created_inactive).await.expect("create bia");
    assert_eq!(users.find_active_user_data(bia).await.expect("query"), None);

    assert!(users.find_active_user_data(ana).await.expect("query").is_some());
    deactivate(&b, ana).await;
    assert_eq!(users.find_active_user_data(ana).await.expect("query"), None);
}

async fn unknown_user_id_has_no_active_user_data<B: Backend>() {
    let (b, ana) = setup::<B>().await;
    let users = b.users();
    assert_eq!(users.find_active_user_data(UserId(ana.0 + 1000)).await.expect("query"), None);
    assert_eq!(users.find_active_user_data(UserId(-1)).await.expect("query"), None);
}

async fn a_cpf_that_is_not_eleven_digits_is_refused_and_leaves_no_row<B: Backend>() {
    let b = B::fresh().await;
    let users = b.users();

    let bad = [
        "",               // empty
        "1234567890",     // 10 digits
        "123456789012",   // 12 digits
        "1234567890a",    // a letter
        "1234567890 ",    // trailing space
        " 1234567890",    // leading space
        "123.456.789-09", // formatted
        "١٢٣٤٥٦٧٨٩٠١",    // Arabic-Indic digits
    ];
    // The port takes a checked `Cpf` only; the schema refuses a malformed
    // one written by anything else (an operator's SQL, an import).
    for (i, cpf) in bad.into_iter().enumerate() {
        let username = format!("user{i}");
        let insert = format!("INSERT INTO users (username, password, cpf) VALUES ('{username}', 'h', '{cpf}')");
        let result = b.try_execute(&insert).await;
        assert!(result.is_err(), "CPF {cpf:?} must be refused, got {result:?}");
        assert_eq!(count_users(&b, &username).await, 0, "no row left for CPF {cpf:?}");
        assert!(users.find_credentials(&username).await.expect("query").is_none());
    }

    // The same user with a well-formed CPF (or none) is accepted.
    let mut good = new_user("user0");
    good.cpf = Some(Cpf::parse("12345678909").expect("cpf"));
    users.create(good).await.expect("11 digits are accepted");
    users.create(new_user("user1")).await.expect("no CPF is accepted");
    let stored = users.find_summary(&Username::parse("user0").expect("username")).await.expect("read").expect("user0");
    assert_eq!(stored.cpf.as_deref(), Some("12345678909"));
}

async fn a_cpf_belongs_to_one_user_only<B: Backend>() {
    let b = B::fresh().await;
    let users = b.users();
    let mut ana = new_user("ana");
    ana.cpf = Some(Cpf::parse("12345678909").expect("cpf"));
    users.create(ana).await.expect("create ana");
    let mut bia = new_user("bia");
    bia.cpf = Some(Cpf::parse("12345678909").expect("cpf"));
    let err = users.create(bia).await.expect_err("CPF taken");
    assert!(matches!(err, RepositoryError::Conflict(_)), "{err:?}");
    assert_eq!(count_users(&b, "bia").await, 0);
}

async fn a_django_hash_is_stored_and_returned_byte_for_byte<B: Backend>() {
    let b = B::fresh().await;
    let users = b.users();
    let hashes = [
        DJANGO_HASH.to_owned(),
        // Django's default salt alphabet, a long iteration count, padding.
        "pbkdf2_sha256$1000000$AbCdEfGhIjKlMnOpQrStUv$Zm9vYmFyYmF6cXV4+/==".to_owned(),
        // Trailing whitespace and a very long salt survive unchanged.
        format!("pbkdf2_sha256$600000${}$aGFzaA== ", "s".repeat(200)),
    ];
    for (i, hash) in hashes.iter().enumerate() {
        let username = format!("u{i}");
        let mut user = new_user(&username);
        user.password_hash = hash.clone();
        users.create(user).await.expect("create");
        let found = users.find_credentials(&username).await.expect("query").expect("exists");
        assert_eq!(found.password_hash.as_bytes(), hash.as_bytes());
        let sql = format!("SELECT count(*) FROM users WHERE username = '{username}' AND password = '{hash}'");
        assert_eq!(b.count(&sql).await, 1, "the column holds the text as is");
    }
}

async fn summaries_are_found_by_username_and_id<B: Backend>() {
    let b = B::fresh().await;
    let users = b.users();
    let mut ana = new_user("ana");
    ana.cpf = Some(Cpf::parse("52998224725").expect("cpf"));
    let id = users.create(ana).await.expect("create");
    let by_name = users.find_summary(&Username::parse("ana").expect("username")).await.expect("read").expect("ana");
    let by_id = users.find_summary_by_id(id).await.expect("read").expect("ana");
    assert_eq!(by_name, by_id);
    assert_eq!(
        (by_id.id, by_id.username.as_str(), by_id.name.as_str(), by_id.email.as_str(), by_id.cpf.as_deref()),
        (id, "ana", "Full name of ana", "ana@example.org", Some("52998224725"))
    );
    assert!(by_id.is_active && !by_id.is_staff && !by_id.tax_id_validated && !by_id.must_change_password);
    let now =
        i64::try_from(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs())
            .expect("seconds");
    assert!((now - 60..=now + 60).contains(&by_id.created_at), "created now: {}", by_id.created_at);
    deactivate(&b, id).await;
    assert!(!users.find_summary_by_id(id).await.expect("read").expect("inactive, still found").is_active);
    assert!(users.find_summary_by_id(UserId(id.0 + 1)).await.expect("read").is_none());
    assert!(users.find_summary(&Username::parse("Ana").expect("username")).await.expect("read").is_none());
}

async fn the_owner_s_password_change_stores_the_hash<B: Backend>() {
    let (b, ana) = setup::<B>().await;
    let users = b.users();
    assert!(users.set_password_hash(ana, "pbkdf2_sha256$1$new$h").await.expect("changed"));
    let found = users.find_credentials_by_id(ana).await.expect("read").expect("ana");
    assert_eq!(found.password_hash.as_str(), "pbkdf2_sha256$1$new$h");
    assert!(!users.set_password_hash(UserId(ana.0 + 1), "x").await.expect("no such user"));
}

async fn staff_is_granted_and_taken_with_its_audit_entry<B: Backend>() {
    let (b, ana) = setup::<B>().await;
    let users = b.users();
    let audit = |staff: bool| {
        NewAuditEntry::new(
            Actor::Cli { os_user: "root".into() },
            AuditAction::UserStaff,
            AuditTarget::User("ana".into()),
        )
        .with("is_staff", if staff { "true" } else { "false" })
    };
    assert_eq!(users.find_active_staff(ana).await.expect("read"), None);
    assert_eq!(users.set_staff(ana, true, &audit(true)).await.expect("staff"), AccessChange::Changed);
    assert_eq!(users.find_active_staff(ana).await.expect("read").as_deref(), Some("ana"));
    deactivate(&b, ana).await;
    assert_eq!(users.find_active_staff(ana).await.expect("read"), None, "an inactive account is no staff");
    assert_eq!(users.set_staff(ana, false, &audit(false)).await.expect("not staff"), AccessChange::Changed);
    let nobody = users.set_staff(UserId(ana.0 + 1), true, &audit(true)).await.expect("no such user");
    assert_eq!(nobody, AccessChange::NotFound);
    assert_eq!(b.count("SELECT count(*) FROM audit_log WHERE action = 'user.staff'").await, 2, "one per change");
}
