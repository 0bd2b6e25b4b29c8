//! The user-management API's storage against a real PostgreSQL: the API
//! token (stored as its digest, found by its lookup part, replaced at once,
//! audited in the same transaction), pre-registration (also under
//! concurrent writers of one CPF) and the claim of a pre-registered account
//! at sign-up.

use credencial_adapters_postgres::testing::TestDatabase;
use credencial_adapters_postgres::{PgUserDirectory, PgUserRepository};
use credencial_domain::account::{Registration, SignupForm, UniqueField};
use credencial_domain::admin::{
    Actor, ApiPermission, ApiPermissions, AuditAction, AuditTarget, DirectoryKey, IssuedApiToken, NewAuditEntry, Page,
    PreRegistration, PreRegistrationForm, PresentedApiToken,
};
use credencial_domain::oauth::ClientId;
use credencial_domain::Cpf;
use credencial_ports::{PreRegistered, Registered, UserDirectory, UserRepository};

const CPF: &str = "52998224725";

fn client_id() -> ClientId {
    ClientId::parse("portal").expect("valid")
}

async fn register_client(db: &TestDatabase) {
    // Plain SQL: the test needs a row, not the client registry's rules.
    sqlx::query(
        "INSERT INTO oauth_clients (client_id, name, confidential, redirect_uris) \
         VALUES ('portal', 'Portal', FALSE, '{http://127.0.0.1:9/cb}')",
    )
    .execute(&db.pool)
    .await
    .expect("client");
}

fn entry(action: AuditAction, target: AuditTarget) -> NewAuditEntry {
    NewAuditEntry::new(Actor::Application(client_id()), action, target)
}

async fn audit_count(db: &TestDatabase, action: &str) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM audit_log WHERE action = $1")
        .bind(action)
        .fetch_one(&db.pool)
        .await
        .expect("count")
}

fn joana(email: &str) -> PreRegistration {
    PreRegistration::parse(PreRegistrationForm {
        cpf: Some(CPF),
        email: Some(email),
        nome: Some("Joana Silva"),
        genero: Some("F"),
        data_de_nascimento: Some("1990-04-12"),
    })
    .expect("valid")
}

#[tokio::test]
async fn a_token_is_found_by_its_lookup_checked_by_its_digest_and_replaced_at_once() {
    let db = TestDatabase::new().await;
    register_client(&db).await;
    let directory = PgUserDirectory::new(db.pool.clone());
    let read = ApiPermissions::NONE.with(ApiPermission::UsersRead);
    let first = IssuedApiToken::from_random([1; 8], [2; 32]);
    let audit = entry(AuditAction::ClientApiToken, AuditTarget::Client(client_id()));
    assert!(directory.set_api_token(&client_id(), first.lookup(), first.digest(), read, &audit).await.expect("set"));
    let found = directory.find_api_client(first.lookup()).await.expect("read").expect("found");
    assert_eq!((found.client_id.as_str(), found.permissions), ("portal", read));
    let presented = PresentedApiToken::parse(first.text()).expect("shape");
    assert!(presented.matches(Some(&found.digest)));
    // Only the digest is stored.
    let stored: Vec<u8> = sqlx::query_scalar("SELECT api_token_hash FROM oauth_clients WHERE client_id = 'portal'")
        .fetch_one(&db.pool)
        .await
        .expect("row");
    assert_eq!(stored, first.digest().0.to_vec());
    let state = directory.api_token_state(&client_id()).await.expect("read").expect("client");
    assert_eq!((state.name.as_str(), state.permissions, state.has_token), ("Portal", read, true));

    let second = IssuedApiToken::from_random([3; 8], [4; 32]);
    let both = read.with(ApiPermission::UsersCreate);
    assert!(directory.set_api_token(&client_id(), second.lookup(), second.digest(), both, &audit).await.expect("set"));
    assert!(directory.find_api_client(first.lookup()).await.expect("read").is_none(), "the old token is gone");
    assert_eq!(directory.find_api_client(second.lookup()).await.expect("read").expect("found").permissions, both);
    assert_eq!(audit_count(&db, "client.api_token").await, 2);

    let unknown = ClientId::parse("nenhum").expect("valid");
    assert!(!directory.set_api_token(&unknown, "0000000000000000", second.digest(), both, &audit).await.expect("ok"));
    assert!(directory.api_token_state(&unknown).await.expect("read").is_none());
    assert_eq!(audit_count(&db, "client.api_token").await, 2, "nothing appended for no change");
}

#[tokio::test]
async fn a_pre_registration_creates_once_and_answers_the_existing_account_after() {
    let db = TestDatabase::new().await;
    let directory = PgUserDirectory::new(db.pool.clone());
    let audit = entry(AuditAction::ApiUserCreate, AuditTarget::User(CPF.into()));
    let created = directory.pre_register(&joana("joana@example.org"), "!unusable", &audit).await.expect("ok");
    let PreRegistered::Created(user) = created else { panic!("{created:?}") };
    assert_eq!(
        (user.username.as_str(), user.cpf.as_str(), user.data_de_nascimento.as_deref()),
        (CPF, CPF, Some("1990-04-12"))
    );
    let again = directory.pre_register(&joana("outra@example.org"), "!unusable", &audit).await.expect("ok");
    assert_eq!(again, PreRegistered::Existing(user.clone()));
    assert_eq!(audit_count(&db, "api.user_create").await, 1);
    let by_email = DirectoryKey::parse("JOANA@example.org").expect("key");
    assert_eq!(directory.find_user(&by_email).await.expect("read"), Some(user.clone()));
    let listed = directory
        .list_by_cpfs(&[Cpf::parse(CPF).expect("cpf"), Cpf::parse("11144477735").expect("cpf")], Page::new(1, 100))
        .await
        .expect("list");
    assert_eq!(listed, vec![user]);
    // Another CPF with joana's e-mail is refused, nothing written.
    let other = PreRegistration::parse(PreRegistrationForm {
        cpf: Some("11144477735"),
        email: Some("Joana@Example.org"),
        nome: Some("Outra"),
        genero: Some("M"),
        data_de_nascimento: Some("1980-01-01"),
    })
    .expect("valid");
    let taken = directory.pre_register(&other, "!unusable", &audit).await.expect("ok");
    assert_eq!(taken, PreRegistered::Taken(vec![UniqueField::Email]));
    assert_eq!(audit_count(&db, "api.user_create").await, 1);
}

#[tokio::test]
async fn concurrent_pre_registrations_of_one_cpf_create_one_account() {
    let db = TestDatabase::new().await;
    let attempts = (0..8).map(|i| {
        let directory = PgUserDirectory::new(db.pool.clone());
        async move {
            let audit = entry(AuditAction::ApiUserCreate, AuditTarget::User(CPF.into()));
            directory.pre_register(&joana(&format!("joana{i}@example.org")), "!unusable", &audit).await.expect("ok")
        }
    });
    let outcomes = futures_util::future::join_all(attempts).await;
    let created = outcomes.iter().filter(|o| matches!(o, PreRegistered::Created(_))).count();
    let existing = outcomes.iter().filter(|o| matches!(o, PreRegistered::Existing(_))).count();
    assert_eq!((created, existing), (1, 7));
    assert_eq!(audit_count(&db, "api.user_create").await, 1);
}

fn sign_up(username: &str, email: &str) -> Registration {
    Registration::parse(SignupForm {
        cpf: "529.982.247-25",
        nome: "Joana Silva Santos",
        email,
        username,
        password: "ipê amarelo no cerrado",
        password_confirmacao: "ipê amarelo no cerrado",
    })
    .expect("valid sign-up")
}

#[tokio::test]
async fn a_sign_up_with_the_cpf_and_e_mail_claims_the_pre_registered_account() {
    let db = TestDatabase::new().await;
    let directory = PgUserDirectory::new(db.pool.clone());
    let users = PgUserRepository::new(db.pool.clone());
    let audit = entry(AuditAction::ApiUserCreate, AuditTarget::User(CPF.into()));
    directory.pre_register(&joana("joana@example.org"), "!unusable", &audit).await.expect("ok");
    let id: i64 = sqlx::query_scalar("SELECT id FROM users").fetch_one(&db.pool).await.expect("id");

    // Another e-mail: the CPF is taken.
    let refused = users.register(&sign_up("joana", "outra@example.org"), "pbkdf2_sha256$1$s$h").await.expect("ok");
    assert!(matches!(&refused, Registered::Taken(fields) if fields.contains(&UniqueField::Cpf)), "{refused:?}");
    // The same CPF and e-mail, concurrently: one claim wins, never a second account.
    let claims = (0..4).map(|i| {
        let users = PgUserRepository::new(db.pool.clone());
        async move { users.register(&sign_up(&format!("joana{i}"), "JOANA@example.org"), "pbkdf2_sha256$1$s$h").await }
    });
    let outcomes = futures_util::future::join_all(claims).await;
    let won: Vec<i64> = outcomes
        .iter()
        .filter_map(|o| match o {
            Ok(Registered::Created(id)) => Some(id.0),
            _ => None,
        })
        .collect();
    assert_eq!(won, vec![id]);
    let (count, password, active): (i64, String, bool) =
        sqlx::query_as("SELECT (SELECT count(*) FROM users), password, is_active FROM users WHERE id = $1")
            .bind(id)
            .fetch_one(&db.pool)
            .await
            .expect("row");
    assert_eq!((count, password.as_str(), active), (1, "pbkdf2_sha256$1$s$h", true));
}

#[tokio::test]
async fn a_claim_with_a_username_of_another_account_is_refused_as_taken() {
    let db = TestDatabase::new().await;
    let directory = PgUserDirectory::new(db.pool.clone());
    let users = PgUserRepository::new(db.pool.clone());
    let audit = entry(AuditAction::ApiUserCreate, AuditTarget::User(CPF.into()));
    directory.pre_register(&joana("joana@example.org"), "!unusable", &audit).await.expect("ok");
    sqlx::query("INSERT INTO users (username, password) VALUES ('lia', 'x')").execute(&db.pool).await.expect("lia");
    let refused = users.register(&sign_up("lia", "joana@example.org"), "pbkdf2_sha256$1$s$h").await.expect("ok");
    assert_eq!(refused, Registered::Taken(vec![UniqueField::Username]));
    let password: String = sqlx::query_scalar("SELECT password FROM users WHERE cpf = $1")
        .bind(CPF)
        .fetch_one(&db.pool)
        .await
        .expect("row");
    assert_eq!(password, "!unusable", "still pre-registered");
}
