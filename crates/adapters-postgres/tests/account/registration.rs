//! Sign-up and the account's details on the `users` table: unique
//! username, CPF and e-mail (ignoring case) also under concurrent writers,
//! login by CPF, and the migration that makes e-mail addresses unique.

use std::borrow::Cow;

use credencial_adapters_postgres::testing::TestDatabase;
use credencial_adapters_postgres::{PgProfileRepository, PgUserRepository, MIGRATOR};
use credencial_domain::account::{AccountDetails, DetailsForm, Registration, SignupForm, UniqueField};
use credencial_domain::{Cpf, UserId};
use credencial_ports::{DetailsUpdate, ProfileRepository, Registered, UserRepository};
use sqlx::migrate::Migrator;

use crate::support::user;

const CPF: &str = "529.982.247-25";
const OTHER_CPF: &str = "111.444.777-35";

fn registration(username: &str, cpf: &str, email: &str) -> Registration {
    Registration::parse(SignupForm {
        cpf,
        nome: "Carla Dias Moreira",
        email,
        username,
        password: "ipê amarelo no cerrado",
        password_confirmacao: "ipê amarelo no cerrado",
    })
    .expect("a valid sign-up")
}

fn details(nome: &str, email: &str, avatar: &str) -> AccountDetails {
    AccountDetails::parse(DetailsForm { nome, email, avatar }).expect("valid details")
}

fn cpf(raw: &str) -> Cpf {
    Cpf::parse(raw).expect("cpf")
}

#[tokio::test]
async fn a_registration_creates_an_active_account_found_by_username_cpf_and_id() {
    let db = TestDatabase::new().await;
    let users = PgUserRepository::new(db.pool.clone());
    let Registered::Created(id) =
        users.register(&registration("carla", CPF, "Carla@Example.gov.br"), "pbkdf2_sha256$1$s$h").await.expect("ok")
    else {
        panic!("not created")
    };
    let by_name = users.find_credentials("carla").await.expect("query").expect("by username");
    assert_eq!((by_name.id, by_name.password_hash.as_str(), by_name.is_active), (id, "pbkdf2_sha256$1$s$h", true));
    let by_cpf = users.find_credentials_for_cpf(&cpf(CPF), CPF).await.expect("query").expect("by cpf");
    assert_eq!((by_cpf.id, by_cpf.username.as_str()), (id, "carla"));
    assert_eq!(users.find_credentials_by_id(id).await.expect("query").map(|c| c.username).as_deref(), Some("carla"));
    assert!(users.find_credentials_for_cpf(&cpf(OTHER_CPF), OTHER_CPF).await.expect("query").is_none());
    assert!(users.find_credentials_by_id(UserId(id.0 + 1)).await.expect("query").is_none());
    // What the profile answers is what was registered.
    let own = PgProfileRepository::new(db.pool.clone()).own_profile(id).await.expect("read").expect("profile");
    assert_eq!((own.name.as_str(), own.email.as_str()), ("Carla Dias Moreira", "Carla@Example.gov.br"));
    assert_eq!(own.cpf.as_deref(), Some("52998224725"));
    assert!(!own.receita_validated);
}

#[tokio::test]
async fn a_username_equal_to_the_typed_cpf_wins_over_the_cpf() {
    let db = TestDatabase::new().await;
    let owner = user(&db, "lia", Some("52998224725")).await;
    let named = user(&db, "52998224725", None).await;
    let users = PgUserRepository::new(db.pool.clone());
    let found = users.find_credentials_for_cpf(&cpf(CPF), "52998224725").await.expect("query").expect("found");
    assert_eq!(found.id, named);
    let found = users.find_credentials_for_cpf(&cpf(CPF), CPF).await.expect("query").expect("found");
    assert_eq!(found.id, owner, "typed with punctuation, it is the CPF");
}

#[tokio::test]
async fn every_taken_value_is_answered_and_nothing_is_created() {
    let db = TestDatabase::new().await;
    let users = PgUserRepository::new(db.pool.clone());
    let first = users.register(&registration("carla", CPF, "carla@example.gov.br"), "h").await.expect("ok");
    assert!(matches!(first, Registered::Created(_)));
    let cases = [
        (registration("carla", OTHER_CPF, "c2@example.gov.br"), vec![UniqueField::Username]),
        (registration("carla2", CPF, "c2@example.gov.br"), vec![UniqueField::Cpf]),
        (registration("carla2", OTHER_CPF, "CARLA@example.GOV.br"), vec![UniqueField::Email]),
        (
            registration("carla", CPF, "Carla@Example.gov.br"),
            vec![UniqueField::Cpf, UniqueField::Email, UniqueField::Username],
        ),
    ];
    for (attempt, taken) in cases {
        assert_eq!(users.register(&attempt, "h").await.expect("answered"), Registered::Taken(taken));
    }
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM users").fetch_one(&db.pool).await.expect("count");
    assert_eq!(count, 1);
}

#[tokio::test]
async fn of_concurrent_sign_ups_with_one_cpf_or_one_e_mail_exactly_one_wins() {
    let db = TestDatabase::new().await;
    let users = PgUserRepository::new(db.pool.clone());
    // The same CPF, every other value different.
    let attempts = (0..8).map(|i| {
        let users = users.clone();
        async move { users.register(&registration(&format!("person{i}"), CPF, &format!("p{i}@x.gov.br")), "h").await }
    });
    let outcomes: Vec<_> = futures_util::future::join_all(attempts).await.into_iter().map(|r| r.expect("ok")).collect();
    let created = outcomes.iter().filter(|o| matches!(o, Registered::Created(_))).count();
    assert_eq!(created, 1, "{outcomes:?}");
    assert!(outcomes
        .iter()
        .all(|o| matches!(o, Registered::Created(_)) || *o == Registered::Taken(vec![UniqueField::Cpf])));
    // The same e-mail address in different cases.
    let cpfs = ["111.444.777-35", "123.456.789-09", "935.411.347-80", "390.533.447-05"];
    let attempts = cpfs.iter().enumerate().map(|(i, c)| {
        let users = users.clone();
        let email = if i % 2 == 0 { "Same@X.gov.br" } else { "same@x.GOV.BR" };
        async move { users.register(&registration(&format!("other{i}"), c, email), "h").await }
    });
    let outcomes: Vec<_> = futures_util::future::join_all(attempts).await.into_iter().map(|r| r.expect("ok")).collect();
    let created = outcomes.iter().filter(|o| matches!(o, Registered::Created(_))).count();
    assert_eq!(created, 1, "{outcomes:?}");
    assert!(outcomes
        .iter()
        .all(|o| matches!(o, Registered::Created(_)) || *o == Registered::Taken(vec![UniqueField::Email])));
}

#[tokio::test]
async fn details_are_stored_unless_another_account_has_the_e_mail() {
    let db = TestDatabase::new().await;
    let ana = user(&db, "ana", None).await;
    let bia = user(&db, "bia", None).await;
    let users = PgUserRepository::new(db.pool.clone());
    let profiles = PgProfileRepository::new(db.pool.clone());
    let mine = details("Ana B. Souza", "ANA@example.gov.br", "https://img.example.gov.br/ana.png");
    assert_eq!(users.update_details(ana, &mine).await.expect("ok"), DetailsUpdate::Updated, "own address, new case");
    let own = profiles.own_profile(ana).await.expect("read").expect("profile");
    assert_eq!(
        (own.name.as_str(), own.email.as_str(), own.avatar.as_str()),
        ("Ana B. Souza", "ANA@example.gov.br", "https://img.example.gov.br/ana.png")
    );
    let theirs = details("Bia", "ana@EXAMPLE.gov.br", "");
    assert_eq!(users.update_details(bia, &theirs).await.expect("ok"), DetailsUpdate::EmailTaken);
    let own = profiles.own_profile(bia).await.expect("read").expect("profile");
    assert_eq!((own.name.as_str(), own.email.as_str()), ("Full bia", "bia@example.gov.br"), "nothing changed");
    assert_eq!(users.update_details(UserId(ana.0 + 100), &theirs).await.expect("ok"), DetailsUpdate::NotFound);
    sqlx::query("UPDATE users SET is_active = FALSE WHERE id = $1")
        .bind(bia.0)
        .execute(&db.pool)
        .await
        .expect("deactivate");
    assert_eq!(
        users.update_details(bia, &details("Bia", "b@x.gov.br", "")).await.expect("ok"),
        DetailsUpdate::NotFound
    );
}

#[tokio::test]
async fn accounts_without_an_e_mail_address_never_collide() {
    let db = TestDatabase::new().await;
    for name in ["op1", "op2"] {
        sqlx::query("INSERT INTO users (username, password, email) VALUES ($1, 'h', '')")
            .bind(name)
            .execute(&db.pool)
            .await
            .expect("an operator's account without an address");
    }
}

#[tokio::test]
async fn the_unique_e_mail_migration_stops_on_shared_addresses_and_names_the_query_that_lists_them() {
    let db = TestDatabase::new_unmigrated().await;
    let before: Vec<_> = MIGRATOR.iter().filter(|m| m.version < 20261125000020).cloned().collect();
    Migrator { migrations: Cow::Owned(before), ..Migrator::DEFAULT }.run(&db.pool).await.expect("older migrations");
    for (name, email) in [("a", "Shared@x.gov.br"), ("b", "shared@X.gov.br"), ("c", ""), ("d", "")] {
        sqlx::query("INSERT INTO users (username, password, email) VALUES ($1, 'h', $2)")
            .bind(name)
            .bind(email)
            .execute(&db.pool)
            .await
            .expect("user");
    }
    // One connection for both runs: sqlx's migration lock is a session
    // advisory lock that a failed run leaves held on its connection, so a
    // second run on another pooled connection would wait for it forever.
    let mut conn = db.pool.acquire().await.expect("connection");
    let e = MIGRATOR.run(&mut *conn).await.expect_err("refused").to_string();
    assert!(e.contains("1 address(es) are shared by more than one account"), "{e}");
    assert!(e.contains("SELECT lower(email), array_agg(username) FROM users"), "{e}");
    sqlx::query("UPDATE users SET email = 'b@x.gov.br' WHERE username = 'b'").execute(&db.pool).await.expect("fix");
    MIGRATOR.run(&mut *conn).await.expect("runs once the addresses are resolved");
}
