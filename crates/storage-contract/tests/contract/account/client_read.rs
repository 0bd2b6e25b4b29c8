//! The client's profile read (`ProfileRepository::read_for_client`) and
//! userinfo read: the grant check and the access-log entry go with the
//! read; an entry is written exactly when the data is answered, also while
//! the person revokes the client at the same moment.

use credencial_domain::account::AccessLogPage;
use credencial_domain::oauth::ClientId;
use credencial_domain::UserId;
use credencial_ports::account::AccessLogEntry;
use credencial_ports::ClientRead;
use credencial_storage_contract::{contract, Backend};

use super::support::{client, scopes, user, NOW};

contract!(
    a_granted_read_answers_the_own_profile_and_writes_its_entry,
    a_grant_narrowed_below_the_read_answers_nothing_and_writes_nothing,
    without_a_grant_or_an_active_user_nothing_is_answered_or_written,
    a_log_that_cannot_be_written_fails_the_read,
    reads_racing_a_revocation_are_logged_exactly_when_answered,
    the_userinfo_read_answers_the_identity_and_writes_its_entry_under_the_same_rules,
    concurrent_reads_are_each_logged_once_and_an_entry_the_table_refuses_fails_only_its_read,
);

fn entry(user: UserId, client: &ClientId, request_id: &str) -> AccessLogEntry {
    AccessLogEntry {
        user,
        client: client.clone(),
        scopes: scopes("dados_publicos cpf email cnes"),
        at: NOW,
        request_id: request_id.to_owned(),
    }
}

async fn logged<B: Backend>(b: &B, user: UserId) -> u64 {
    b.access_log().list(user, AccessLogPage::FIRST).await.expect("list").1
}

async fn a_granted_read_answers_the_own_profile_and_writes_its_entry<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", Some("52998224725")).await;
    let host = client(&b, "demo-host", "Demo").await;
    b.grants().widen(ana, &host, scopes("cnes"), NOW).await.expect("grant");
    let profiles = b.profiles();
    let read = profiles.read_for_client(&entry(ana, &host, "req-1")).await.expect("read");
    let own = profiles.own_profile(ana).await.expect("own").expect("exists");
    assert_eq!(read, ClientRead::Answered(own), "the same data as the own read");
    let (rows, total) = b.access_log().list(ana, AccessLogPage::FIRST).await.expect("list");
    assert_eq!(total, 1);
    assert_eq!(
        (rows[0].client_id.as_str(), rows[0].scopes, rows[0].at, rows[0].request_id.as_str()),
        ("demo-host", scopes("dados_publicos cpf email cnes"), NOW, "req-1")
    );
}

async fn a_grant_narrowed_below_the_read_answers_nothing_and_writes_nothing<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let host = client(&b, "demo-host", "Demo").await;
    let grants = b.grants();
    let profiles = b.profiles();
    // Revoked, then granted again without `cnes`: a token that still
    // carries `cnes` is refused, not answered until it expires.
    grants.widen(ana, &host, scopes("cnes"), NOW).await.expect("grant");
    grants.revoke(ana, &host).await.expect("revoke");
    grants.widen(ana, &host, scopes("formacao_academica"), NOW).await.expect("narrower grant");
    assert_eq!(profiles.read_for_client(&entry(ana, &host, "r")).await.expect("read"), ClientRead::NotGranted);
    assert_eq!(logged(&b, ana).await, 0);
    // The required scopes count as granted even when none is stored.
    let mut required_only = entry(ana, &host, "r2");
    required_only.scopes = scopes("dados_publicos cpf email");
    assert!(matches!(profiles.read_for_client(&required_only).await.expect("read"), ClientRead::Answered(_)));
    assert_eq!(logged(&b, ana).await, 1);
}

async fn without_a_grant_or_an_active_user_nothing_is_answered_or_written<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let host = client(&b, "demo-host", "Demo").await;
    let other = client(&b, "other-app", "Other").await;
    let grants = b.grants();
    let profiles = b.profiles();
    grants.widen(ana, &other, scopes(""), NOW).await.expect("a grant to another client");
    assert_eq!(profiles.read_for_client(&entry(ana, &host, "r")).await.expect("read"), ClientRead::NotGranted);
    grants.widen(ana, &host, scopes(""), NOW).await.expect("grant");
    assert!(grants.revoke(ana, &host).await.expect("revoke"));
    assert_eq!(profiles.read_for_client(&entry(ana, &host, "r")).await.expect("read"), ClientRead::NotGranted);
    grants.widen(ana, &host, scopes(""), NOW).await.expect("grant again");
    b.execute(&format!("UPDATE users SET is_active = FALSE WHERE id = {}", ana.0)).await;
    assert_eq!(profiles.read_for_client(&entry(ana, &host, "r")).await.expect("read"), ClientRead::UnknownUser);
    let nobody = UserId(ana.0 + 1000);
    assert_eq!(profiles.read_for_client(&entry(nobody, &host, "r")).await.expect("read"), ClientRead::UnknownUser);
    assert_eq!(logged(&b, ana).await, 0);
}

async fn a_log_that_cannot_be_written_fails_the_read<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let host = client(&b, "demo-host", "Demo").await;
    b.grants().widen(ana, &host, scopes("cnes"), NOW).await.expect("grant");
    let profiles = b.profiles();
    let too_long = "x".repeat(201);
    assert!(profiles.read_for_client(&entry(ana, &host, &too_long)).await.is_err(), "the CHECK refuses the row");
    assert_eq!(logged(&b, ana).await, 0);
    b.execute("DROP TABLE access_log").await;
    assert!(profiles.read_for_client(&entry(ana, &host, "r")).await.is_err());
}

async fn reads_racing_a_revocation_are_logged_exactly_when_answered<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let host = client(&b, "demo-host", "Demo").await;
    let grants = b.grants();
    grants.widen(ana, &host, scopes(""), NOW).await.expect("grant");
    let profiles = b.profiles();
    let reads: Vec<_> = (0..40)
        .map(|i| {
            let (profiles, host) = (profiles.clone(), host.clone());
            tokio::spawn(async move { profiles.read_for_client(&entry(ana, &host, &format!("r{i}"))).await })
        })
        .collect();
    let revoke = {
        let (grants, host) = (grants.clone(), host.clone());
        tokio::spawn(async move { grants.revoke(ana, &host).await })
    };
    let mut answered = 0;
    for read in reads {
        match read.await.expect("task").expect("read") {
            ClientRead::Answered(_) => answered += 1,
            ClientRead::NotGranted => {}
            ClientRead::UnknownUser => panic!("ana exists"),
        }
    }
    assert!(revoke.await.expect("task").expect("revoke"));
    assert_eq!(logged(&b, ana).await, answered, "one entry per answered read, none for a refused one");
    assert_eq!(
        profiles.read_for_client(&entry(ana, &host, "after")).await.expect("read"),
        ClientRead::NotGranted,
        "after the revocation, every read is refused"
    );
}

async fn the_userinfo_read_answers_the_identity_and_writes_its_entry_under_the_same_rules<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", Some("52998224725")).await;
    let host = client(&b, "demo-host", "Demo").await;
    let profiles = b.profiles();
    let mut read = entry(ana, &host, "ui-1");
    read.scopes = scopes("dados_publicos cpf email");
    assert_eq!(profiles.identity_for_client(&read).await.expect("read"), ClientRead::NotGranted, "no grant yet");
    assert_eq!(logged(&b, ana).await, 0);

    b.grants().widen(ana, &host, scopes(""), NOW).await.expect("grant");
    let ClientRead::Answered(identity) = profiles.identity_for_client(&read).await.expect("read") else {
        panic!("granted");
    };
    let own = profiles.own_profile(ana).await.expect("own").expect("exists");
    assert_eq!(identity.username, "ana");
    assert_eq!(
        (identity.name, identity.avatar, identity.cpf, identity.email),
        (own.name, own.avatar, own.cpf, own.email)
    );
    let (rows, total) = b.access_log().list(ana, AccessLogPage::FIRST).await.expect("list");
    assert_eq!(total, 1);
    assert_eq!((rows[0].scopes, rows[0].request_id.as_str()), (scopes("dados_publicos cpf email"), "ui-1"));

    b.execute(&format!("UPDATE users SET is_active = FALSE WHERE id = {}", ana.0)).await;
    assert_eq!(profiles.identity_for_client(&read).await.expect("read"), ClientRead::UnknownUser);
    b.execute("DROP TABLE access_log").await;
    b.execute(&format!("UPDATE users SET is_active = TRUE WHERE id = {}", ana.0)).await;
    assert!(profiles.identity_for_client(&read).await.is_err(), "an entry that cannot be written fails the read");
}

/// Reads arriving together share their log's commit (a group): each is
/// still answered exactly when its own entry is written, and one entry the
/// table refuses fails its own read, not the others of its group.
async fn concurrent_reads_are_each_logged_once_and_an_entry_the_table_refuses_fails_only_its_read<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let bia = user(&b, "bia", None).await;
    let host = client(&b, "demo-host", "Demo").await;
    for person in [ana, bia] {
        b.grants().widen(person, &host, scopes("cnes"), NOW).await.expect("grant");
    }
    let profiles = b.profiles();
    let reads: Vec<_> = (0..60)
        .map(|i| {
            let (profiles, host) = (profiles.clone(), host.clone());
            let person = if i % 2 == 0 { ana } else { bia };
            let request_id = if i == 31 { "x".repeat(201) } else { format!("r{i}") };
            tokio::spawn(async move { (i, profiles.read_for_client(&entry(person, &host, &request_id)).await) })
        })
        .collect();
    for read in reads {
        let (i, answer) = read.await.expect("task");
        if i == 31 {
            assert!(answer.is_err(), "the CHECK refuses read 31's entry");
        } else {
            assert!(matches!(answer, Ok(ClientRead::Answered(_))), "read {i}: {answer:?}");
        }
    }
    for (person, first) in [(ana, 0), (bia, 1)] {
        let (rows, total) = b.access_log().list(person, AccessLogPage::FIRST).await.expect("list");
        let mut ids: Vec<String> = rows.into_iter().map(|r| r.request_id).collect();
        ids.sort();
        let mut expected: Vec<String> = (first..60).step_by(2).filter(|i| *i != 31).map(|i| format!("r{i}")).collect();
        expected.sort();
        assert_eq!((total, ids), (expected.len() as u64, expected), "one entry per answered read");
    }
}
