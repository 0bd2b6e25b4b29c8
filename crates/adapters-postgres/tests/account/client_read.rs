//! The client's profile read (`ProfileRepository::read_for_client`): the
//! grant check and the access-log row ride on the statement that reads the
//! own profile; a row is written exactly when the profile is answered, also
//! while the person revokes the client at the same moment.

use std::sync::Arc;

use credencial_adapters_postgres::account::{PgAccessLog, PgGrantRepository};
use credencial_adapters_postgres::testing::TestDatabase;
use credencial_adapters_postgres::PgProfileRepository;
use credencial_domain::account::AccessLogPage;
use credencial_domain::oauth::ClientId;
use credencial_domain::UserId;
use credencial_ports::account::{AccessLog, AccessLogEntry, GrantRepository};
use credencial_ports::{ClientRead, ProfileRepository};

use crate::support::{client, scopes, user, NOW};

fn entry(user: UserId, client: &ClientId, request_id: &str) -> AccessLogEntry {
    AccessLogEntry {
        user,
        client: client.clone(),
        scopes: scopes("dados_publicos cpf email cnes"),
        at: NOW,
        request_id: request_id.to_owned(),
    }
}

async fn logged(db: &TestDatabase, user: UserId) -> u64 {
    PgAccessLog::new(db.pool.clone()).list(user, AccessLogPage::FIRST).await.expect("list").1
}

#[tokio::test]
async fn a_granted_read_answers_the_own_profile_and_writes_its_entry() {
    let db = TestDatabase::new().await;
    let ana = user(&db, "ana", Some("52998224725")).await;
    let host = client(&db, "demo-host", "Demo").await;
    PgGrantRepository::new(db.pool.clone()).widen(ana, &host, scopes("cnes"), NOW).await.expect("grant");
    let profiles = PgProfileRepository::new(db.pool.clone());
    let read = profiles.read_for_client(&entry(ana, &host, "req-1")).await.expect("read");
    let own = profiles.own_profile(ana).await.expect("own").expect("exists");
    assert_eq!(read, ClientRead::Answered(own), "the same data as the own read");
    let (rows, total) = PgAccessLog::new(db.pool.clone()).list(ana, AccessLogPage::FIRST).await.expect("list");
    assert_eq!(total, 1);
    assert_eq!(
        (rows[0].client_id.as_str(), rows[0].scopes, rows[0].at, rows[0].request_id.as_str()),
        ("demo-host", scopes("dados_publicos cpf email cnes"), NOW, "req-1")
    );
}

#[tokio::test]
async fn a_grant_narrowed_below_the_read_answers_nothing_and_writes_nothing() {
    let db = TestDatabase::new().await;
    let ana = user(&db, "ana", None).await;
    let host = client(&db, "demo-host", "Demo").await;
    let grants = PgGrantRepository::new(db.pool.clone());
    let profiles = PgProfileRepository::new(db.pool.clone());
    // Revoked, then granted again without `cnes`: a token that still
    // carries `cnes` is refused, not answered until it expires.
    grants.widen(ana, &host, scopes("cnes"), NOW).await.expect("grant");
    grants.revoke(ana, &host).await.expect("revoke");
    grants.widen(ana, &host, scopes("formacao_academica"), NOW).await.expect("narrower grant");
    assert_eq!(profiles.read_for_client(&entry(ana, &host, "r")).await.expect("read"), ClientRead::NotGranted);
    assert_eq!(logged(&db, ana).await, 0);
    // The required scopes count as granted even when none is stored.
    let mut required_only = entry(ana, &host, "r2");
    required_only.scopes = scopes("dados_publicos cpf email");
    assert!(matches!(profiles.read_for_client(&required_only).await.expect("read"), ClientRead::Answered(_)));
    assert_eq!(logged(&db, ana).await, 1);
}

#[tokio::test]
async fn without_a_grant_or_an_active_user_nothing_is_answered_or_written() {
    let db = TestDatabase::new().await;
    let ana = user(&db, "ana", None).await;
    let host = client(&db, "demo-host", "Demo").await;
    let other = client(&db, "other-app", "Other").await;
    let grants = PgGrantRepository::new(db.pool.clone());
    let profiles = PgProfileRepository::new(db.pool.clone());
    grants.widen(ana, &other, scopes(""), NOW).await.expect("a grant to another client");
    assert_eq!(profiles.read_for_client(&entry(ana, &host, "r")).await.expect("read"), ClientRead::NotGranted);
    grants.widen(ana, &host, scopes(""), NOW).await.expect("grant");
    assert!(grants.revoke(ana, &host).await.expect("revoke"));
    assert_eq!(profiles.read_for_client(&entry(ana, &host, "r")).await.expect("read"), ClientRead::NotGranted);
    grants.widen(ana, &host, scopes(""), NOW).await.expect("grant again");
    sqlx::query("UPDATE users SET is_active = FALSE WHERE id = $1").bind(ana.0).execute(&db.pool).await.expect("off");
    assert_eq!(profiles.read_for_client(&entry(ana, &host, "r")).await.expect("read"), ClientRead::UnknownUser);
    let nobody = UserId(ana.0 + 1000);
    assert_eq!(profiles.read_for_client(&entry(nobody, &host, "r")).await.expect("read"), ClientRead::UnknownUser);
    assert_eq!(logged(&db, ana).await, 0);
}

#[tokio::test]
async fn a_log_that_cannot_be_written_fails_the_read() {
    let db = TestDatabase::new().await;
    let ana = user(&db, "ana", None).await;
    let host = client(&db, "demo-host", "Demo").await;
    PgGrantRepository::new(db.pool.clone()).widen(ana, &host, scopes("cnes"), NOW).await.expect("grant");
    let profiles = PgProfileRepository::new(db.pool.clone());
    let too_long = "x".repeat(201);
    assert!(profiles.read_for_client(&entry(ana, &host, &too_long)).await.is_err(), "the CHECK refuses the row");
    sqlx::query("DROP TABLE access_log").execute(&db.pool).await.expect("drop");
    assert!(profiles.read_for_client(&entry(ana, &host, "r")).await.is_err());
}

#[tokio::test]
async fn reads_racing_a_revocation_are_logged_exactly_when_answered() {
    let db = TestDatabase::new().await;
    let ana = user(&db, "ana", None).await;
    let host = client(&db, "demo-host", "Demo").await;
    let grants = Arc::new(PgGrantRepository::new(db.pool.clone()));
    grants.widen(ana, &host, scopes(""), NOW).await.expect("grant");
    let profiles = Arc::new(PgProfileRepository::new(db.pool.clone()));
    let reads: Vec<_> = (0..40)
        .map(|i| {
            let (profiles, host) = (Arc::clone(&profiles), host.clone());
            tokio::spawn(async move { profiles.read_for_client(&entry(ana, &host, &format!("r{i}"))).await })
        })
        .collect();
    let revoke = {
        let (grants, host) = (Arc::clone(&grants), host.clone());
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
    assert_eq!(logged(&db, ana).await, answered, "one entry per answered read, none for a refused one");
    assert_eq!(
        profiles.read_for_client(&entry(ana, &host, "after")).await.expect("read"),
        ClientRead::NotGranted,
        "after the revocation, every read is refused"
    );
}

// ------------------------------------------------- the userinfo read (OIDC)

#[tokio::test]
async fn the_userinfo_read_answers_the_identity_and_writes_its_entry_under_the_same_rules() {
    let db = TestDatabase::new().await;
    let ana = user(&db, "ana", Some("52998224725")).await;
    let host = client(&db, "demo-host", "Demo").await;
    let profiles = PgProfileRepository::new(db.pool.clone());
    let mut read = entry(ana, &host, "ui-1");
    read.scopes = scopes("dados_publicos cpf email");
    assert_eq!(profiles.identity_for_client(&read).await.expect("read"), ClientRead::NotGranted, "no grant yet");
    assert_eq!(logged(&db, ana).await, 0);

    PgGrantRepository::new(db.pool.clone()).widen(ana, &host, scopes(""), NOW).await.expect("grant");
    let ClientRead::Answered(identity) = profiles.identity_for_client(&read).await.expect("read") else {
        panic!("granted");
    };
    let own = profiles.own_profile(ana).await.expect("own").expect("exists");
    assert_eq!(identity.username, "ana");
    assert_eq!(
        (identity.name, identity.avatar, identity.cpf, identity.email),
        (own.name, own.avatar, own.cpf, own.email)
    );
    let (rows, total) = PgAccessLog::new(db.pool.clone()).list(ana, AccessLogPage::FIRST).await.expect("list");
    assert_eq!(total, 1);
    assert_eq!((rows[0].scopes, rows[0].request_id.as_str()), (scopes("dados_publicos cpf email"), "ui-1"));

    sqlx::query("UPDATE users SET is_active = FALSE WHERE id = $1").bind(ana.0).execute(&db.pool).await.expect("off");
    assert_eq!(profiles.identity_for_client(&read).await.expect("read"), ClientRead::UnknownUser);
    sqlx::query("DROP TABLE access_log").execute(&db.pool).await.expect("drop");
    sqlx::query("UPDATE users SET is_active = TRUE WHERE id = $1").bind(ana.0).execute(&db.pool).await.expect("on");
    assert!(profiles.identity_for_client(&read).await.is_err(), "an entry that cannot be written fails the read");
    assert_eq!(total, 1);
}
