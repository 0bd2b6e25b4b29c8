//! Sign-up and the account's details on the users' table: unique username,
//! CPF and e-mail (ignoring case) also under concurrent writers, and login
//! by CPF.

use std::sync::Arc;

use credencial_domain::account::{AccountDetails, DetailsForm, Registration, SignupForm, UniqueField};
use credencial_domain::{Cpf, UserId};
use credencial_ports::{DetailsUpdate, Registered, UserRepository};
use credencial_storage_contract::{contract, Backend};

use super::support::user;

contract!(
    a_registration_creates_an_active_account_found_by_username_cpf_and_id,
    a_username_equal_to_the_typed_cpf_wins_over_the_cpf,
    every_taken_value_is_answered_and_nothing_is_created,
    of_concurrent_sign_ups_with_one_cpf_or_one_e_mail_exactly_one_wins,
    details_are_stored_unless_another_account_has_the_e_mail,
    accounts_without_an_e_mail_address_never_collide,
);

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

async fn a_registration_creates_an_active_account_found_by_username_cpf_and_id<B: Backend>() {
    let b = B::fresh().await;
    let users = b.users();
    let Registered::Created(id) =
        users.register(&registration("carla", CPF, "Carla@Example.gov.br"), "pbkdf2_sha256$1$s$h").await.expect("ok")
    else {
        panic!("not created")
    };
    let by_name = users.find_credentials("carla").await.expect("query").expect("by username");
    assert_eq!((by_name.id, by_name.password_hash.as_str(), by_name.is_active), (id, "pbkdf2_sha256$1$s$h", true));
    assert!(!by_name.must_change_password);
    let by_cpf = users.find_credentials_for_cpf(&cpf(CPF), CPF).await.expect("query").expect("by cpf");
    assert_eq!((by_cpf.id, by_cpf.username.as_str()), (id, "carla"));
    assert_eq!(users.find_credentials_by_id(id).await.expect("query").map(|c| c.username).as_deref(), Some("carla"));
    assert!(users.find_credentials_for_cpf(&cpf(OTHER_CPF), OTHER_CPF).await.expect("query").is_none());
    assert!(users.find_credentials_by_id(UserId(id.0 + 1)).await.expect("query").is_none());
    // What the profile answers is what was registered.
    let own = b.profiles().own_profile(id).await.expect("read").expect("profile");
    assert_eq!((own.name.as_str(), own.email.as_str()), ("Carla Dias Moreira", "Carla@Example.gov.br"));
    assert_eq!(own.cpf.as_deref(), Some("52998224725"));
    assert!(!own.receita_validated);
}

async fn a_username_equal_to_the_typed_cpf_wins_over_the_cpf<B: Backend>() {
    let b = B::fresh().await;
    let owner = user(&b, "lia", Some("52998224725")).await;
    let named = user(&b, "52998224725", None).await;
    let users = b.users();
    let found = users.find_credentials_for_cpf(&cpf(CPF), "52998224725").await.expect("query").expect("found");
    assert_eq!(found.id, named);
    let found = users.find_credentials_for_cpf(&cpf(CPF), CPF).await.expect("query").expect("found");
    assert_eq!(found.id, owner, "typed with punctuation, it is the CPF");
}

async fn every_taken_value_is_answered_and_nothing_is_created<B: Backend>() {
    let b = B::fresh().await;
    let users = b.users();
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
    assert_eq!(b.count("SELECT count(*) FROM users").await, 1);
}

/// Runs `attempts` at once and checks that exactly one is created and
/// every other one is refused for `taken` alone.
async fn exactly_one_created(users: &Arc<dyn UserRepository>, attempts: Vec<Registration>, taken: UniqueField) {
    let tasks = attempts.into_iter().map(|attempt| {
        let users = users.clone();
        tokio::spawn(async move { users.register(&attempt, "h").await })
    });
    let outcomes: Vec<_> =
        futures_util::future::join_all(tasks).await.into_iter().map(|r| r.expect("task").expect("ok")).collect();
    let created = outcomes.iter().filter(|o| matches!(o, Registered::Created(_))).count();
    assert_eq!(created, 1, "{outcomes:?}");
    assert!(outcomes.iter().all(|o| matches!(o, Registered::Created(_)) || *o == Registered::Taken(vec![taken])));
}

async fn of_concurrent_sign_ups_with_one_cpf_or_one_e_mail_exactly_one_wins<B: Backend>() {
    let b = B::fresh().await;
    let users = b.users();
    // The same CPF, every other value different.
    let same_cpf = (0..8).map(|i| registration(&format!("person{i}"), CPF, &format!("p{i}@x.gov.br"))).collect();
    exactly_one_created(&users, same_cpf, UniqueField::Cpf).await;
    // The same e-mail address in different cases.
    let cpfs = ["111.444.777-35", "123.456.789-09", "935.411.347-80", "390.533.447-05"];
    let same_email = cpfs
        .into_iter()
        .enumerate()
        .map(|(i, c)| registration(&format!("other{i}"), c, if i % 2 == 0 { "Same@X.gov.br" } else { "same@x.GOV.BR" }))
        .collect();
    exactly_one_created(&users, same_email, UniqueField::Email).await;
    assert_eq!(b.count("SELECT count(*) FROM users").await, 2);
}

async fn details_are_stored_unless_another_account_has_the_e_mail<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let bia = user(&b, "bia", None).await;
    let users = b.users();
    let profiles = b.profiles();
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
    b.execute(&format!("UPDATE users SET is_active = FALSE WHERE id = {}", bia.0)).await;
    assert_eq!(
        users.update_details(bia, &details("Bia", "b@x.gov.br", "")).await.expect("ok"),
        DetailsUpdate::NotFound
    );
}

async fn accounts_without_an_e_mail_address_never_collide<B: Backend>() {
    let b = B::fresh().await;
    for name in ["op1", "op2"] {
        b.execute(&format!("INSERT INTO users (username, password, email) VALUES ('{name}', 'h', '')")).await;
    }
    assert_eq!(b.count("SELECT count(*) FROM users WHERE email = ''").await, 2);
}
