//! The user-management API's storage: the API token (stored as its digest,
//! found by its lookup part, replaced at once, audited in the same
//! transaction), pre-registration (also under concurrent writers of one
//! CPF), the look-ups, and the claim of a pre-registered account at
//! sign-up.

use credencial_domain::account::{Registration, SignupForm, UniqueField};
use credencial_domain::admin::{
    Actor, ApiPermission, ApiPermissions, AuditAction, AuditTarget, DirectoryKey, IssuedApiToken, NewAuditEntry, Page,
    PreRegistration, PreRegistrationForm, PresentedApiToken,
};
use credencial_domain::oauth::ClientId;
use credencial_domain::Cpf;
use credencial_ports::{PreRegistered, Registered};
use credencial_storage_contract::{contract, Backend, Engine};

use crate::account::support::client;

contract!(
    a_token_is_found_by_its_lookup_checked_by_its_digest_and_replaced_at_once,
    a_deactivated_application_s_token_is_not_found,
    api_access_sets_the_permissions_and_client_credentials_of_a_confidential_client_only,
    a_pre_registration_creates_once_and_answers_the_existing_account_after,
    concurrent_pre_registrations_of_one_cpf_create_one_account,
    users_are_listed_by_cpf_a_page_at_a_time_in_cpf_order,
    a_sign_up_with_the_cpf_and_e_mail_claims_the_pre_registered_account,
    a_claim_with_a_username_of_another_account_is_refused_as_taken,
);

const CPF: &str = "52998224725";

fn client_id() -> ClientId {
    ClientId::parse("portal").expect("valid")
}

fn entry(action: AuditAction, target: AuditTarget) -> NewAuditEntry {
    NewAuditEntry::new(Actor::Application(client_id()), action, target)
}

async fn audit_count<B: Backend>(b: &B, action: &str) -> i64 {
    b.count(&format!("SELECT count(*) FROM audit_log WHERE action = '{action}'")).await
}

fn joana(email: &str) -> PreRegistration {
    pre_registration(CPF, email, "1990-04-12")
}

fn pre_registration(cpf: &str, email: &str, born: &str) -> PreRegistration {
    PreRegistration::parse(PreRegistrationForm {
        cpf: Some(cpf),
        email: Some(email),
        nome: Some("Joana Silva"),
        genero: Some("F"),
        data_de_nascimento: Some(born),
    })
    .expect("valid")
}

fn pre_registration_audit() -> NewAuditEntry {
    entry(AuditAction::ApiUserCreate, AuditTarget::User(CPF.into()))
}

async fn a_token_is_found_by_its_lookup_checked_by_its_digest_and_replaced_at_once<B: Backend>() {
    let b = B::fresh().await;
    client(&b, "portal", "Portal").await;
    let directory = b.directory();
    let state = directory.api_token_state(&client_id()).await.expect("read").expect("client");
    assert_eq!((state.name.as_str(), state.permissions, state.has_token), ("Portal", ApiPermissions::NONE, false));
    let read = ApiPermissions::NONE.with(ApiPermission::UsersRead);
    let first = IssuedApiToken::from_random([1; 8], [2; 32]);
    let audit = entry(AuditAction::ClientApiToken, AuditTarget::Client(client_id()));
    assert!(directory.set_api_token(&client_id(), first.lookup(), first.digest(), read, &audit).await.expect("set"));
    let found = directory.find_api_client(first.lookup()).await.expect("read").expect("found");
    assert_eq!((found.client_id.as_str(), found.permissions), ("portal", read));
    let presented = PresentedApiToken::parse(first.text()).expect("shape");
    assert!(presented.matches(Some(&found.digest)));
    // Only the digest is stored.
    let digest: String = first.digest().0.iter().map(|byte| format!("{byte:02x}")).collect();
    let stored = match B::ENGINE {
        Engine::Postgres => format!("decode('{digest}', 'hex')"),
        Engine::Sqlite => format!("x'{digest}'"),
    };
    let sql = format!("SELECT count(*) FROM oauth_clients WHERE client_id = 'portal' AND api_token_hash = {stored}");
    assert_eq!(b.count(&sql).await, 1);
    let state = directory.api_token_state(&client_id()).await.expect("read").expect("client");
    assert_eq!((state.name.as_str(), state.permissions, state.has_token), ("Portal", read, true));

    let second = IssuedApiToken::from_random([3; 8], [4; 32]);
    let both = read.with(ApiPermission::UsersCreate);
    assert!(directory.set_api_token(&client_id(), second.lookup(), second.digest(), both, &audit).await.expect("set"));
    assert!(directory.find_api_client(first.lookup()).await.expect("read").is_none(), "the old token is gone");
    assert_eq!(directory.find_api_client(second.lookup()).await.expect("read").expect("found").permissions, both);
    assert_eq!(audit_count(&b, "client.api_token").await, 2);

    let unknown = ClientId::parse("nenhum").expect("valid");
    assert!(!directory.set_api_token(&unknown, "0000000000000000", second.digest(), both, &audit).await.expect("ok"));
    assert!(directory.api_token_state(&unknown).await.expect("read").is_none());
    assert_eq!(audit_count(&b, "client.api_token").await, 2, "nothing appended for no change");

    let refused = NewAuditEntry::new(
        Actor::Cli { os_user: "x".repeat(300) },
        AuditAction::ClientApiToken,
        AuditTarget::Client(client_id()),
    );
    let third = IssuedApiToken::from_random([5; 8], [6; 32]);
    assert!(directory.set_api_token(&client_id(), third.lookup(), third.digest(), read, &refused).await.is_err());
    assert!(directory.find_api_client(third.lookup()).await.expect("read").is_none(), "nothing without its entry");
    assert!(directory.find_api_client(second.lookup()).await.expect("read").is_some());
}

async fn a_deactivated_application_s_token_is_not_found<B: Backend>() {
    let b = B::fresh().await;
    client(&b, "portal", "Portal").await;
    let directory = b.directory();
    let token = IssuedApiToken::from_random([1; 8], [2; 32]);
    let audit = entry(AuditAction::ClientApiToken, AuditTarget::Client(client_id()));
    let read = ApiPermissions::NONE.with(ApiPermission::UsersRead);
    assert!(directory.set_api_token(&client_id(), token.lookup(), token.digest(), read, &audit).await.expect("set"));
    b.execute("UPDATE oauth_clients SET is_active = FALSE WHERE client_id = 'portal'").await;
    assert!(directory.find_api_client(token.lookup()).await.expect("read").is_none());
}

async fn api_access_sets_the_permissions_and_client_credentials_of_a_confidential_client_only<B: Backend>() {
    let b = B::fresh().await;
    client(&b, "portal", "Portal").await;
    let directory = b.directory();
    let state = directory.api_token_state(&client_id()).await.expect("read").expect("client");
    assert_eq!((state.client_credentials, state.confidential, state.is_active), (false, false, true), "off by default");
    let read = ApiPermissions::NONE.with(ApiPermission::UsersRead);
    let audit = entry(AuditAction::ClientApiAccess, AuditTarget::Client(client_id()));
    // A public client cannot be allowed the grant: storage refuses it too,
    // and nothing is written (nor audited).
    assert!(directory.set_api_access(&client_id(), read, true, &audit).await.is_err());
    assert_eq!(audit_count(&b, "client.api_access").await, 0);
    assert_eq!(
        directory.api_token_state(&client_id()).await.expect("read").expect("client").permissions,
        ApiPermissions::NONE
    );
    b.execute(
        "UPDATE oauth_clients SET confidential = TRUE, secret_hash = 'pbkdf2_sha256$1$s$h' WHERE client_id = 'portal'",
    )
    .await;
    assert!(directory.set_api_access(&client_id(), read, true, &audit).await.expect("set"));
    let state = directory.api_token_state(&client_id()).await.expect("read").expect("client");
    assert_eq!(
        (state.permissions, state.client_credentials, state.confidential, state.has_token),
        (read, true, true, false)
    );
    assert_eq!(audit_count(&b, "client.api_access").await, 1);
    // Turned off again, the permissions stay for the static token.
    assert!(directory.set_api_access(&client_id(), read, false, &audit).await.expect("set"));
    let state = directory.api_token_state(&client_id()).await.expect("read").expect("client");
    assert_eq!((state.permissions, state.client_credentials), (read, false));
    let unknown = ClientId::parse("nenhum").expect("valid");
    assert!(!directory.set_api_access(&unknown, read, true, &audit).await.expect("ok"));
    assert_eq!(audit_count(&b, "client.api_access").await, 2, "nothing appended for no change");
    b.execute("UPDATE oauth_clients SET is_active = FALSE WHERE client_id = 'portal'").await;
    assert!(!directory.api_token_state(&client_id()).await.expect("read").expect("client").is_active);
}

async fn a_pre_registration_creates_once_and_answers_the_existing_account_after<B: Backend>() {
    let b = B::fresh().await;
    let directory = b.directory();
    let audit = pre_registration_audit();
    let created = directory.pre_register(&joana("joana@example.org"), "!unusable", &audit).await.expect("ok");
    let PreRegistered::Created(user) = created else { panic!("{created:?}") };
    assert_eq!(
        (user.username.as_str(), user.cpf.as_str(), user.email.as_str(), user.nome.as_str(), user.genero.as_str()),
        (CPF, CPF, "joana@example.org", "Joana Silva", "F")
    );
    assert_eq!((user.data_de_nascimento.as_deref(), user.validado), (Some("1990-04-12"), false));
    let again = directory.pre_register(&joana("outra@example.org"), "!unusable", &audit).await.expect("ok");
    assert_eq!(again, PreRegistered::Existing(user.clone()));
    assert_eq!(audit_count(&b, "api.user_create").await, 1);
    let by_email = DirectoryKey::parse("JOANA@example.org").expect("key");
    assert_eq!(directory.find_user(&by_email).await.expect("read"), Some(user.clone()));
    let by_cpf = DirectoryKey::parse("529.982.247-25").expect("key");
    assert_eq!(directory.find_user(&by_cpf).await.expect("read"), Some(user.clone()));
    let nobody = DirectoryKey::parse("nobody@example.org").expect("key");
    assert_eq!(directory.find_user(&nobody).await.expect("read"), None);
    // Another CPF with joana's e-mail is refused, nothing written.
    let other = pre_registration("11144477735", "Joana@Example.org", "1980-01-01");
    let taken = directory.pre_register(&other, "!unusable", &audit).await.expect("ok");
    assert_eq!(taken, PreRegistered::Taken(vec![UniqueField::Email]));
    assert_eq!(audit_count(&b, "api.user_create").await, 1);
    assert_eq!(b.count("SELECT count(*) FROM users").await, 1);
}

async fn concurrent_pre_registrations_of_one_cpf_create_one_account<B: Backend>() {
    let b = B::fresh().await;
    let directory = b.directory();
    let attempts = (0..8).map(|i| {
        let directory = directory.clone();
        tokio::spawn(async move {
            directory
                .pre_register(&joana(&format!("joana{i}@example.org")), "!unusable", &pre_registration_audit())
                .await
                .expect("ok")
        })
    });
    let outcomes: Vec<_> =
        futures_util::future::join_all(attempts).await.into_iter().map(|o| o.expect("task")).collect();
    let created = outcomes.iter().filter(|o| matches!(o, PreRegistered::Created(_))).count();
    let existing = outcomes.iter().filter(|o| matches!(o, PreRegistered::Existing(_))).count();
    assert_eq!((created, existing), (1, 7));
    assert_eq!(audit_count(&b, "api.user_create").await, 1);
    assert_eq!(b.count("SELECT count(*) FROM users").await, 1);
}

async fn users_are_listed_by_cpf_a_page_at_a_time_in_cpf_order<B: Backend>() {
    let b = B::fresh().await;
    let directory = b.directory();
    let cpfs = ["52998224725", "11144477735", "12345678909", "93541134780"];
    for (i, cpf) in cpfs.iter().enumerate() {
        let user = pre_registration(cpf, &format!("p{i}@example.org"), "1990-04-12");
        directory.pre_register(&user, "!unusable", &pre_registration_audit()).await.expect("ok");
    }
    let asked: Vec<Cpf> = ["52998224725", "12345678909", "93541134780", "39053344705"]
        .iter()
        .map(|c| Cpf::parse(c).expect("cpf"))
        .collect();
    let page = |n| directory.list_by_cpfs(&asked, Page::new(n, 2));
    let first: Vec<String> = page(1).await.expect("page 1").into_iter().map(|u| u.cpf).collect();
    assert_eq!(first, ["12345678909", "52998224725"], "in CPF order, only the asked ones");
    let second: Vec<String> = page(2).await.expect("page 2").into_iter().map(|u| u.cpf).collect();
    assert_eq!(second, ["93541134780"]);
    assert!(page(3).await.expect("page 3").is_empty());
    assert!(directory.list_by_cpfs(&[], Page::new(1, 100)).await.expect("none asked").is_empty());
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

async fn a_sign_up_with_the_cpf_and_e_mail_claims_the_pre_registered_account<B: Backend>() {
    let b = B::fresh().await;
    let directory = b.directory();
    directory.pre_register(&joana("joana@example.org"), "!unusable", &pre_registration_audit()).await.expect("ok");
    let cpf = Cpf::parse(CPF).expect("cpf");
    let id = b.users().find_credentials_for_cpf(&cpf, CPF).await.expect("read").expect("pre-registered").id;

    // Another e-mail: the CPF is taken.
    let refused = b.users().register(&sign_up("joana", "outra@example.org"), "pbkdf2_sha256$1$s$h").await.expect("ok");
    assert!(matches!(&refused, Registered::Taken(fields) if fields.contains(&UniqueField::Cpf)), "{refused:?}");
    // The same CPF and e-mail, concurrently: one claim wins, never a second account.
    let claims = (0..4).map(|i| {
        let users = b.users();
        tokio::spawn(async move {
            users.register(&sign_up(&format!("joana{i}"), "JOANA@example.org"), "pbkdf2_sha256$1$s$h").await
        })
    });
    let outcomes = futures_util::future::join_all(claims).await;
    let won: Vec<i64> = outcomes
        .iter()
        .filter_map(|o| match o {
            Ok(Ok(Registered::Created(id))) => Some(id.0),
            _ => None,
        })
        .collect();
    assert_eq!(won, vec![id.0]);
    assert_eq!(b.count("SELECT count(*) FROM users").await, 1);
    let claimed = b.users().find_credentials_by_id(id).await.expect("read").expect("claimed");
    assert_eq!((claimed.password_hash.as_str(), claimed.is_active), ("pbkdf2_sha256$1$s$h", true));
    assert!(claimed.username.starts_with("joana"), "the chosen username: {}", claimed.username);
}

async fn a_claim_with_a_username_of_another_account_is_refused_as_taken<B: Backend>() {
    let b = B::fresh().await;
    let directory = b.directory();
    directory.pre_register(&joana("joana@example.org"), "!unusable", &pre_registration_audit()).await.expect("ok");
    b.execute("INSERT INTO users (username, password) VALUES ('lia', 'x')").await;
    let refused = b.users().register(&sign_up("lia", "joana@example.org"), "pbkdf2_sha256$1$s$h").await.expect("ok");
    assert_eq!(refused, Registered::Taken(vec![UniqueField::Username]));
    let cpf = Cpf::parse(CPF).expect("cpf");
    let still = b.users().find_credentials_for_cpf(&cpf, CPF).await.expect("read").expect("pre-registered");
    assert_eq!((still.username.as_str(), still.password_hash.as_str()), (CPF, "!unusable"), "still pre-registered");
}
