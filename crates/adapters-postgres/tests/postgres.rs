//! The PostgreSQL adapters against a real PostgreSQL (127.0.0.1:5432, or
//! `TEST_DATABASE_URL`): every test gets a fresh, migrated database.

use credencial_adapters_postgres::testing::TestDatabase;
use credencial_adapters_postgres::{PgRefreshTokenStore, PgUserRepository};
use credencial_domain::{UserData, UserId, Username};
use credencial_ports::{NewUser, RepositoryError, UserRepository};

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

async fn count_users(db: &TestDatabase, username: &str) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM users WHERE username = $1")
        .bind(username)
        .fetch_one(&db.pool)
        .await
        .expect("count users")
}

async fn deactivate(db: &TestDatabase, id: UserId) {
    let done = sqlx::query("UPDATE users SET is_active = false WHERE id = $1")
        .bind(id.0)
        .execute(&db.pool)
        .await
        .expect("deactivate");
    assert_eq!(done.rows_affected(), 1);
}

/// A database with one active user, its id, and both adapters on the pool.
async fn setup() -> (TestDatabase, PgUserRepository, PgRefreshTokenStore, UserId) {
    let db = TestDatabase::new().await;
    let users = PgUserRepository::new(db.pool.clone());
    let tokens = PgRefreshTokenStore::new(db.pool.clone());
    let id = users.create(new_user("ana")).await.expect("create ana");
    (db, users, tokens, id)
}

// ---------------------------------------------------------------- users

#[tokio::test]
async fn created_user_is_found_by_username_with_the_same_credentials() {
    let db = TestDatabase::new().await;
    let users = PgUserRepository::new(db.pool.clone());
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

    let found = users.find_credentials("bia").await.expect("query").expect("bia exists");
    assert_eq!(found.id, bia);
    assert_eq!(found.username, "bia");
    assert_eq!(found.password_hash.as_str(), "pbkdf2_sha256$1$s$h=");
    assert!(!found.is_active, "an inactive user is returned as inactive");
}

#[tokio::test]
async fn creating_a_duplicate_username_is_a_conflict() {
    let db = TestDatabase::new().await;
    let users = PgUserRepository::new(db.pool.clone());
    let first = users.create(new_user("ana")).await.expect("create ana");

    let mut again = new_user("ana");
    again.password_hash = "pbkdf2_sha256$1$other$other=".to_owned();
    let err = users.create(again).await.expect_err("duplicate username");
    assert!(matches!(err, RepositoryError::Conflict(_)), "{err:?}");

    assert_eq!(count_users(&db, "ana").await, 1);
    let found = users.find_credentials("ana").await.expect("query").expect("ana exists");
    assert_eq!(found.id, first);
    assert_eq!(found.password_hash.as_str(), DJANGO_HASH, "the first user is untouched");
}

#[tokio::test]
async fn unknown_username_has_no_credentials() {
    let (_db, users, _tokens, _id) = setup().await;
    assert!(users.find_credentials("nobody").await.expect("query").is_none());
    assert!(users.find_credentials("").await.expect("query").is_none());
    assert!(users.find_credentials("an%").await.expect("query").is_none(), "no LIKE matching");
}

#[tokio::test]
async fn usernames_match_exactly_and_case_sensitively() {
    let db = TestDatabase::new().await;
    let users = PgUserRepository::new(db.pool.clone());
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

#[tokio::test]
async fn active_user_data_is_returned_as_stored() {
    let (_db, users, _tokens, ana) = setup().await;
    let bia = users.create(new_user("bia")).await.expect("create bia");

    let data = users.find_active_user_data(ana).await.expect("query");
    assert_eq!(data, Some(user_data("ana")));
    let data = users.find_active_user_data(bia).await.expect("query");
    assert_eq!(data, Some(user_data("bia")));
}

#[tokio::test]
async fn inactive_user_has_no_active_user_data() {
    let (db, users, _tokens, ana) = setup().await;
    let mut created_inactive = new_user("bia");
    created_inactive.is_active = false;
    let bia = users.create(created_inactive).await.expect("create bia");
    assert_eq!(users.find_active_user_data(bia).await.expect("query"), None);

    assert!(users.find_active_user_data(ana).await.expect("query").is_some());
    deactivate(&db, ana).await;
    assert_eq!(users.find_active_user_data(ana).await.expect("query"), None);
}

#[tokio::test]
async fn unknown_user_id_has_no_active_user_data() {
    let (_db, users, _tokens, ana) = setup().await;
    assert_eq!(users.find_active_user_data(UserId(ana.0 + 1000)).await.expect("query"), None);
    assert_eq!(users.find_active_user_data(UserId(-1)).await.expect("query"), None);
}

#[tokio::test]
async fn a_cpf_that_is_not_eleven_digits_is_refused_and_leaves_no_row() {
    let db = TestDatabase::new().await;
    let users = PgUserRepository::new(db.pool.clone());

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
    for (i, cpf) in bad.into_iter().enumerate() {
        let username = format!("user{i}");
        let mut user = new_user(&username);
        user.cpf = Some(cpf.to_owned());
        let result = users.create(user).await;
        assert!(result.is_err(), "CPF {cpf:?} must be refused, got {result:?}");
        assert_eq!(count_users(&db, &username).await, 0, "no row left for CPF {cpf:?}");
        assert!(users.find_credentials(&username).await.expect("query").is_none());
    }

    // The same user with a well-formed CPF (or none) is accepted.
    let mut good = new_user("user0");
    good.cpf = Some("12345678909".to_owned());
    users.create(good).await.expect("11 digits are accepted");
    users.create(new_user("user1")).await.expect("no CPF is accepted");
    let stored: Option<String> = sqlx::query_scalar("SELECT cpf::text FROM users WHERE username = 'user0'")
        .fetch_one(&db.pool)
        .await
        .expect("read cpf");
    assert_eq!(stored.as_deref(), Some("12345678909"));
}

#[tokio::test]
async fn a_cpf_belongs_to_one_user_only() {
    let db = TestDatabase::new().await;
    let users = PgUserRepository::new(db.pool.clone());
    let mut ana = new_user("ana");
    ana.cpf = Some("12345678909".to_owned());
    users.create(ana).await.expect("create ana");
    let mut bia = new_user("bia");
    bia.cpf = Some("12345678909".to_owned());
    let err = users.create(bia).await.expect_err("CPF taken");
    assert!(matches!(err, RepositoryError::Conflict(_)), "{err:?}");
    assert_eq!(count_users(&db, "bia").await, 0);
}

#[tokio::test]
async fn a_django_hash_is_stored_and_returned_byte_for_byte() {
    let db = TestDatabase::new().await;
    let users = PgUserRepository::new(db.pool.clone());
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
        let raw: String = sqlx::query_scalar("SELECT password FROM users WHERE username = $1")
            .bind(&username)
            .fetch_one(&db.pool)
            .await
            .expect("raw column");
        assert_eq!(raw.as_bytes(), hash.as_bytes(), "the column holds the text as is");
    }
}
