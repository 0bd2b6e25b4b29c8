//! One e-mail normalisation on both engines (`users.email_key`, computed in
//! Rust): an address that differs from another account's in case or
//! Unicode form only is taken on every path that writes one, an account is
//! found by its address in any such form, and the migration that keys the
//! existing accounts names those whose addresses would share a key instead
//! of failing on the unique index.

use credencial_domain::account::{AccountDetails, DetailsForm, EmailAddress, Registration, SignupForm, UniqueField};
use credencial_domain::admin::{
    Actor, AuditAction, AuditTarget, DirectoryKey, NewAuditEntry, PreRegistration, PreRegistrationForm,
};
use credencial_domain::{Cpf, UserData, Username};
use credencial_ports::{DetailsUpdate, NewUser, PreRegistered, Registered, RepositoryError};
use credencial_storage_contract::{contract, Backend};

contract!(
    an_address_that_differs_in_case_or_unicode_form_only_is_taken_on_every_path,
    an_account_is_found_by_its_address_in_any_case_or_unicode_form,
    the_migration_names_the_accounts_whose_addresses_would_share_a_key_and_runs_once_they_do_not,
);

/// `Élodie@example.org`, the É as one code point (NFC).
const ELODIE: &str = "\u{c9}lodie@example.org";
/// The same address in lower case, the é as one code point.
const LOWER: &str = "\u{e9}lodie@example.org";
/// The same address decomposed (e + combining acute), the domain in capitals.
const DECOMPOSED: &str = "e\u{301}lodie@EXAMPLE.ORG";

fn new_user(username: &str, email: &str) -> NewUser {
    NewUser {
        username: Username::parse(username).expect("username"),
        password_hash: "pbkdf2_sha256$1$s$h".into(),
        is_active: true,
        data: UserData { email: email.into(), ..UserData::default() },
        name: format!("Full {username}"),
        cpf: None,
    }
}

fn sign_up(username: &str, cpf: &str, email: &str) -> Registration {
    Registration::parse(SignupForm {
        cpf,
        nome: "Élodie Martins",
        email,
        username,
        password: "ipê amarelo no cerrado",
        password_confirmacao: "ipê amarelo no cerrado",
    })
    .expect("a valid sign-up")
}

fn pre_registration(cpf: &str, email: &str) -> PreRegistration {
    PreRegistration::parse(PreRegistrationForm {
        cpf: Some(cpf),
        email: Some(email),
        nome: Some("Élodie Martins"),
        genero: Some("F"),
        data_de_nascimento: Some("1990-04-12"),
    })
    .expect("valid")
}

fn entry(action: AuditAction) -> NewAuditEntry {
    NewAuditEntry::new(Actor::Cli { os_user: "test".into() }, action, AuditTarget::None)
}

fn address(text: &str) -> EmailAddress {
    EmailAddress::parse(text).expect("an address")
}

async fn an_address_that_differs_in_case_or_unicode_form_only_is_taken_on_every_path<B: Backend>() {
    let b = B::fresh().await;
    let users = b.users();
    let elodie = users.create(new_user("elodie", ELODIE)).await.expect("the first account");

    // An operator's account (the CLI's insert).
    let operator = users.create(new_user("lodi", LOWER)).await;
    assert!(matches!(operator, Err(RepositoryError::Conflict(_))), "{operator:?}");
    // The panel's account.
    let created = entry(AuditAction::UserCreate);
    let panel = b.account_admin().create(new_user("lodi", DECOMPOSED), false, true, &created).await;
    assert!(matches!(&panel, Err(RepositoryError::Conflict(field)) if field == "email"), "{panel:?}");
    // A sign-up.
    let signed = users.register(&sign_up("lodi", "529.982.247-25", LOWER), "pbkdf2_sha256$1$s$h").await;
    assert_eq!(signed.expect("answered"), Registered::Taken(vec![UniqueField::Email]));
    // The user-management API's pre-registration.
    let (other_person, audit) = (pre_registration("11144477735", DECOMPOSED), entry(AuditAction::ApiUserCreate));
    let pre = b.directory().pre_register(&other_person, "!x", &audit).await;
    assert_eq!(pre.expect("answered"), PreRegistered::Taken(vec![UniqueField::Email]));
    // The owner's details form of another account.
    let other = users.create(new_user("ana", "ana@example.org")).await.expect("another account");
    let details = AccountDetails::parse(DetailsForm { nome: "Ana", email: DECOMPOSED, avatar: "" }).expect("details");
    assert_eq!(users.update_details(other, &details).await.expect("answered"), DetailsUpdate::EmailTaken);

    // Full case folding, not only lower case: ß and ss are one address.
    users.create(new_user("strasse", "STRASSE@example.de")).await.expect("an account");
    let folded = users.create(new_user("strasse2", "straße@example.de")).await;
    assert!(matches!(folded, Err(RepositoryError::Conflict(_))), "{folded:?}");

    assert_eq!(b.count("SELECT count(*) FROM users").await, 3, "elodie, ana and strasse only");
    let own = b.users().find_summary_by_id(elodie).await.expect("read").expect("elodie");
    assert_eq!(own.email, ELODIE, "the address is kept as typed");
    // The owner may type their own address in another form.
    let same = AccountDetails::parse(DetailsForm { nome: "Élodie", email: DECOMPOSED, avatar: "" }).expect("details");
    assert_eq!(users.update_details(elodie, &same).await.expect("answered"), DetailsUpdate::Updated);
}

async fn an_account_is_found_by_its_address_in_any_case_or_unicode_form<B: Backend>() {
    let b = B::fresh().await;
    let directory = b.directory();
    let (elodie, audit) = (pre_registration("52998224725", ELODIE), entry(AuditAction::ApiUserCreate));
    let created = directory.pre_register(&elodie, "!x", &audit).await;
    assert!(matches!(created.expect("ok"), PreRegistered::Created(_)));
    for typed in [ELODIE, LOWER, DECOMPOSED, " \u{c9}LODIE@example.org "] {
        let found = directory.find_user(&DirectoryKey::Email(address(typed))).await.expect("read");
        assert_eq!(found.map(|u| u.email).as_deref(), Some(ELODIE), "{typed:?}");
    }
    let nobody = directory.find_user(&DirectoryKey::Email(address("elodie@example.org"))).await.expect("read");
    assert!(nobody.is_none(), "an accent is a letter of its own");
    // The sign-up that claims the pre-registered account compares the
    // address by its key too.
    let cpf = Cpf::parse("52998224725").expect("cpf");
    let pre = b.users().find_credentials_for_cpf(&cpf, "52998224725").await.expect("read").expect("pre-registered");
    let claimed = b.users().register(&sign_up("elodie", "529.982.247-25", DECOMPOSED), "pbkdf2_sha256$1$s$h").await;
    assert_eq!(claimed.expect("answered"), Registered::Created(pre.id));
}

async fn the_migration_names_the_accounts_whose_addresses_would_share_a_key_and_runs_once_they_do_not<B: Backend>() {
    // The schema of the previous release, whose uniqueness was lower(email):
    // it holds these two (SQLite's lower() folds ASCII only; neither engine's
    // composes an accent).
    let b = B::before(B::EMAIL_KEY_MIGRATION).await;
    for (username, email) in [("elodie", ELODIE), ("lodi", DECOMPOSED), ("ana", "Ana@example.org"), ("sem", "")] {
        b.execute(&format!("INSERT INTO users (username, password, email) VALUES ('{username}', 'h', '{email}')"))
            .await;
    }
    let stopped = b.migrate().await.expect_err("two accounts would share a key");
    assert!(
        stopped.contains(&format!(
            "{LOWER}: account 1 \"elodie\" <{ELODIE}>, account 2 \"lodi\" <{DECOMPOSED}>. Give each of these \
             accounts its own address (or none), then run `credencial migrate` again"
        )),
        "{stopped}"
    );
    assert!(stopped.contains("1 e-mail address(es) are shared"), "{stopped}");
    assert!(!stopped.contains("ana"), "only the accounts that share a key: {stopped}");
    assert_eq!(b.count("SELECT count(*) FROM users WHERE email_key IS NOT NULL").await, 0, "nothing was keyed");

    b.execute("UPDATE users SET email = 'lodi@example.org' WHERE username = 'lodi'").await;
    b.migrate().await.expect("the addresses are resolved");
    assert_eq!(b.count(&format!("SELECT count(*) FROM users WHERE email_key = '{LOWER}'")).await, 1);
    assert_eq!(b.count("SELECT count(*) FROM users WHERE email_key = 'ana@example.org'").await, 1);
    assert_eq!(b.count("SELECT count(*) FROM users WHERE email_key = ''").await, 1, "no address, an empty key");
    // From here the key is unique.
    let again = b.users().create(new_user("outra", LOWER)).await;
    assert!(matches!(again, Err(RepositoryError::Conflict(_))), "{again:?}");
    b.migrate().await.expect("a second run has nothing to do");
}
