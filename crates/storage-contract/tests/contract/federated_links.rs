//! [`credencial_ports::FederatedLinkStore`]: the accounts a brokered login
//! finds (by link, CPF and verified address), links made once, accounts
//! created and linked together — and one account for concurrent first
//! logins of one CPF —, levels kept and refreshed, links listed and
//! removed only the person's, never the last way into an account without
//! a password (also when unlinks race).

use std::sync::Arc;

use credencial_domain::federation::{Candidate, Reliability, ReliabilityLevel, Seal};
use credencial_domain::{Cpf, EmailKey, UserData, Username};
use credencial_ports::{LinkConflict, NewProviderLink, NewUser, Unlinked};
use credencial_storage_contract::{contract, Backend};

contract!(
    a_login_finds_the_linked_account_and_the_accounts_holding_the_cpf_and_address,
    a_subject_links_once_and_an_account_once_per_provider,
    a_govbr_link_proves_the_cpf_of_the_account,
    an_account_is_created_and_linked_together_or_not_at_all,
    concurrent_first_logins_of_one_cpf_make_one_account,
    levels_are_kept_and_refreshed_and_links_listed_and_removed_only_the_persons,
    concurrent_unlinks_never_remove_the_last_way_in,
);

const ANA_CPF: &str = "52998224725";

fn cpf() -> Cpf {
    Cpf::parse(ANA_CPF).expect("valid")
}

fn reliability(level: ReliabilityLevel, read_at: i64) -> Reliability {
    Reliability {
        level,
        seals: vec![Seal { id: "401".into(), updated_at: Some("2026-01-02 03:04:05".into()) }],
        read_at,
    }
}

fn link<'a>(
    provider: &'a str,
    subject: &'a str,
    proves_cpf: bool,
    reliability: Option<&'a Reliability>,
) -> NewProviderLink<'a> {
    NewProviderLink { provider, subject, proves_cpf, reliability, now: 1_800_000_000 }
}

fn new_user(username: &str, cpf: Option<Cpf>, email: &str) -> NewUser {
    NewUser {
        username: Username::parse(username).expect("username"),
        password_hash: "!sem-senha".into(),
        is_active: true,
        data: UserData { email: email.into(), ..UserData::default() },
        name: "Ana Souza".into(),
        cpf,
    }
}

async fn with_cpf<B: Backend>(b: &B, name: &str) -> credencial_domain::UserId {
    let id = b.create_user(name).await;
    b.execute(&format!("UPDATE users SET cpf = '{ANA_CPF}' WHERE id = {}", id.0)).await;
    id
}

async fn a_login_finds_the_linked_account_and_the_accounts_holding_the_cpf_and_address<B: Backend>() {
    let b = B::fresh().await;
    let ana = with_cpf(&b, "ana").await;
    let bia = b.create_user("bia").await;
    let store = b.federated_links();
    let bia_key = EmailKey::of("BIA@example.gov.br");
    let found = store.find("govbr", ANA_CPF, Some(&cpf()), Some(&bia_key)).await.expect("found");
    assert_eq!(found.linked, None);
    assert_eq!(found.by_cpf, Some(Candidate { user: ana, active: true, cpf_proven: false, email_confirmed: false }));
    assert_eq!(found.by_email.map(|c| c.user), Some(bia), "by the address's key, in any case");
    assert_eq!(store.link(ana, link("govbr", ANA_CPF, true, None)).await.expect("stored"), Ok(()));
    let found = store.find("govbr", ANA_CPF, None, None).await.expect("found");
    assert_eq!(found.linked.map(|c| c.user), Some(ana));
    assert_eq!((found.by_cpf, found.by_email), (None, None), "not looked up without a key");
    b.execute(&format!("UPDATE users SET email_verified = TRUE WHERE id = {}", bia.0)).await;
    let found = store.find("govbr", "x", None, Some(&bia_key)).await.expect("found");
    assert_eq!(found.by_email.map(|c| c.email_confirmed), Some(true), "a confirmed address says so");
    assert_eq!(
        store.find("outro", ANA_CPF, None, None).await.expect("found").linked,
        None,
        "another provider's subject"
    );
    b.execute(&format!("UPDATE users SET is_active = FALSE WHERE id = {}", ana.0)).await;
    assert_eq!(store.find("govbr", ANA_CPF, None, None).await.expect("found").linked.map(|c| c.active), Some(false));
    let empty = EmailKey::of("");
    assert_eq!(
        store.find("govbr", "x", None, Some(&empty)).await.expect("found").by_email,
        None,
        "no address finds no one"
    );
}

async fn a_subject_links_once_and_an_account_once_per_provider<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let bia = b.create_user("bia").await;
    let store = b.federated_links();
    assert_eq!(store.link(ana, link("oidc", "s-1", false, None)).await.expect("stored"), Ok(()));
    assert_eq!(
        store.link(bia, link("oidc", "s-1", false, None)).await.expect("stored"),
        Err(LinkConflict::SubjectLinked),
        "the subject is ana's"
    );
    assert_eq!(
        store.link(ana, link("oidc", "s-2", false, None)).await.expect("stored"),
        Err(LinkConflict::AccountLinked),
        "ana has an oidc link"
    );
    assert_eq!(store.link(ana, link("govbr", ANA_CPF, true, None)).await.expect("stored"), Ok(()), "another provider");
    assert_eq!(b.count("SELECT count(*) FROM federated_links").await, 2);
}

async fn a_govbr_link_proves_the_cpf_of_the_account<B: Backend>() {
    let b = B::fresh().await;
    let ana = with_cpf(&b, "ana").await;
    let store = b.federated_links();
    assert_eq!(store.link(ana, link("oidc", "s-1", false, None)).await.expect("stored"), Ok(()));
    let found = store.find("govbr", ANA_CPF, Some(&cpf()), None).await.expect("found");
    assert_eq!(found.by_cpf.map(|c| c.cpf_proven), Some(false), "a link that proves nothing");
    // A link that says it proves a CPF proves only the CPF it names.
    assert_eq!(store.link(ana, link("govbr-outro", "11144477735", true, None)).await.expect("stored"), Ok(()));
    let found = store.find("govbr", ANA_CPF, Some(&cpf()), None).await.expect("found");
    assert_eq!(found.by_cpf.map(|c| c.cpf_proven), Some(false), "another CPF's proof");
    assert_eq!(store.link(ana, link("govbr", ANA_CPF, true, None)).await.expect("stored"), Ok(()));
    let found = store.find("govbr", ANA_CPF, Some(&cpf()), None).await.expect("found");
    assert_eq!(found.by_cpf.map(|c| c.cpf_proven), Some(true));
    assert_eq!(found.linked.map(|c| c.cpf_proven), Some(true));
}

async fn an_account_is_created_and_linked_together_or_not_at_all<B: Backend>() {
    let b = B::fresh().await;
    let store = b.federated_links();
    let level = reliability(ReliabilityLevel::Prata, 1_800_000_000);
    let ana = store
        .create_linked(
            new_user("ana.govbr", Some(cpf()), "ana@example.org"),
            link("govbr", ANA_CPF, true, Some(&level)),
        )
        .await
        .expect("stored")
        .expect("created");
    let found = store.find("govbr", ANA_CPF, None, None).await.expect("found");
    assert_eq!(found.linked.map(|c| (c.user, c.active, c.cpf_proven)), Some((ana, true, true)));
    // Each conflict is named, and neither the account nor its link is kept.
    for (user, subject, conflict) in [
        (new_user("ana.govbr", None, "outra@example.org"), "s-1", LinkConflict::UsernameTaken),
        (new_user("outra", Some(cpf()), "outra@example.org"), "s-2", LinkConflict::CpfTaken),
        (new_user("outra", None, "ANA@example.org"), "s-3", LinkConflict::EmailTaken),
    ] {
        let made = store.create_linked(user, link("oidc", subject, false, None)).await.expect("stored");
        assert_eq!(made, Err(conflict));
    }
    let linked =
        store.create_linked(new_user("outra", None, "outra@example.org"), link("govbr", ANA_CPF, true, None)).await;
    assert_eq!(linked.expect("stored"), Err(LinkConflict::SubjectLinked), "another login got there first");
    assert_eq!(b.count("SELECT count(*) FROM users").await, 1);
    assert_eq!(b.count("SELECT count(*) FROM federated_links").await, 1);
}

async fn concurrent_first_logins_of_one_cpf_make_one_account<B: Backend>() {
    let b = B::fresh().await;
    let store = b.federated_links();
    let tries = (0..8).map(|i| {
        let store = Arc::clone(&store);
        tokio::spawn(async move {
            store
                .create_linked(
                    new_user(&format!("ana{i}"), Some(cpf()), &format!("ana{i}@example.org")),
                    link("govbr", ANA_CPF, true, None),
                )
                .await
                .expect("stored")
        })
    });
    let made: Vec<_> = futures_util::future::join_all(tries).await.into_iter().map(|r| r.expect("joined")).collect();
    let winners: Vec<_> = made.iter().filter_map(|made| made.as_ref().ok()).collect();
    assert!(
        made.iter().all(|made| matches!(made, Ok(_) | Err(LinkConflict::CpfTaken | LinkConflict::SubjectLinked))),
        "the others lost the race: {made:?}"
    );
    assert_eq!(winners.len(), 1, "one account: {made:?}");
    let found = store.find("govbr", ANA_CPF, None, None).await.expect("found");
    assert_eq!(found.linked.map(|c| c.user), Some(*winners[0]), "the losers find the winner's account");
    assert_eq!(b.count("SELECT count(*) FROM users").await, 1);
}

async fn levels_are_kept_and_refreshed_and_links_listed_and_removed_only_the_persons<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let bia = b.create_user("bia").await;
    let store = b.federated_links();
    let bronze = reliability(ReliabilityLevel::Bronze, 100);
    assert_eq!(store.link(ana, link("govbr", ANA_CPF, true, Some(&bronze))).await.expect("stored"), Ok(()));
    assert_eq!(store.link(ana, link("oidc", "s-1", false, None)).await.expect("stored"), Ok(()));
    let links = store.links_of(ana).await.expect("listed");
    assert_eq!(links.iter().map(|l| l.provider.as_str()).collect::<Vec<_>>(), ["govbr", "oidc"]);
    assert_eq!(links[0].reliability, Some(bronze));
    assert!(links[0].proves_cpf);
    assert_eq!(links[1].reliability, None);
    let ouro = reliability(ReliabilityLevel::Ouro, 200);
    assert!(store.record_level("govbr", ANA_CPF, Some(&ouro)).await.expect("recorded"));
    assert!(!store.record_level("govbr", "11144477735", Some(&ouro)).await.expect("no such link"));
    assert_eq!(store.links_of(ana).await.expect("listed")[0].reliability, Some(ouro));
    assert!(store.record_level("govbr", ANA_CPF, None).await.expect("recorded"));
    assert_eq!(store.links_of(ana).await.expect("listed")[0].reliability, None, "a login without a level keeps none");
    assert_eq!(store.unlink(bia, "govbr", true).await.expect("not bia's"), Unlinked::NotLinked);
    assert_eq!(store.unlink(ana, "govbr", false).await.expect("removed"), Unlinked::Removed, "another link stays");
    assert_eq!(store.unlink(ana, "govbr", true).await.expect("gone already"), Unlinked::NotLinked);
    assert_eq!(store.unlink(ana, "oidc", false).await.expect("kept"), Unlinked::LastWayIn, "her only way in");
    assert_eq!(store.links_of(ana).await.expect("listed").len(), 1);
    assert_eq!(store.unlink(ana, "oidc", true).await.expect("removed"), Unlinked::Removed, "with a password");
    assert!(store.links_of(ana).await.expect("listed").is_empty());
    assert!(store.links_of(bia).await.expect("listed").is_empty());
}

async fn concurrent_unlinks_never_remove_the_last_way_in<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let store = b.federated_links();
    for provider in ["govbr", "oidc", "outro"] {
        let subject = format!("{provider}-ana");
        assert_eq!(store.link(ana, link(provider, &subject, false, None)).await.expect("stored"), Ok(()));
    }
    let outcomes = crate::race::at_once(3, |i| {
        let store = b.federated_links();
        let provider = ["govbr", "oidc", "outro"][i];
        async move { store.unlink(ana, provider, false).await.expect("answered") }
    })
    .await;
    let removed = outcomes.iter().filter(|o| **o == Unlinked::Removed).count();
    assert_eq!(removed, 2, "{outcomes:?}");
    assert_eq!(store.links_of(ana).await.expect("listed").len(), 1, "one way in stays");
}
