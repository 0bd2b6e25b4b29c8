//! What only PostgreSQL does: several service instances (pools) on one
//! database, and its row locks. The ports' behaviour on one instance is
//! the contract suite's (`crates/storage-contract`), run on both engines.

use std::time::Duration;

use credencial_adapters_postgres::testing::{setup_audit, TestDatabase};
use credencial_adapters_postgres::{
    connect, PgAuthorizationCodeStore, PgLoginFailureLog, PgOAuthClientRepository, PgRefreshTokenStore,
};
use credencial_domain::oauth::{ClientId, CodeChallenge, CodeGrant, CodeHash};
use credencial_domain::throttle::{ClientAddress, ThrottleKey};
use credencial_domain::{ScopeSet, UserId, Username};
use credencial_ports::{
    AuthorizationCodeStore, LoginFailureLog, NewAuthorizationCode, NewRefreshToken, OAuthClient, OAuthClientRepository,
    RefreshTokenStore, Rotation,
};

const NOW: i64 = 1_900_000_000;
const NOW_MS: i64 = 1_900_000_000_123;
const WINDOW_MS: i64 = 300_000;

fn token(jti: &str, user_id: UserId) -> NewRefreshToken {
    NewRefreshToken { jti: jti.to_owned(), user_id, expires_at: 4_102_444_800 }
}

fn ana_key() -> ThrottleKey {
    ThrottleKey::username(&Username::parse("ana").expect("username"))
}

fn bruno_key() -> ThrottleKey {
    ThrottleKey::username(&Username::parse("bruno").expect("username"))
}

fn portal() -> ClientId {
    ClientId::parse("portal").expect("client id")
}

fn grant(user: UserId) -> CodeGrant {
    CodeGrant {
        client_id: portal(),
        user_id: user,
        redirect_uri: "https://portal.example.gov.br/callback".to_owned(),
        redirect_uri_explicit: true,
        scopes: ScopeSet::parse_strict("dados_publicos cpf email cnes").expect("scopes"),
        code_challenge: CodeChallenge::parse_s256("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"),
        expires_at: NOW + 60,
        nonce: None,
        auth_time: None,
        acr: None,
        amr: None,
        sid: None,
    }
}

#[tokio::test]
async fn a_rotation_chain_holds_across_two_service_instances() {
    let db = TestDatabase::new().await;
    let ana = db.create_user("ana", None).await;
    let first = PgRefreshTokenStore::new(db.pool.clone());
    let other_pool = connect(&db.url, 5, Duration::from_secs(5)).await.expect("second pool");
    let second = PgRefreshTokenStore::new(other_pool.clone());

    first.record(token("a", ana), "a").await.expect("record a");
    assert!(second.is_current("a").await.expect("query"), "seen by the other instance");

    assert_eq!(first.rotate("a", ana, token("b", ana), None).await.expect("a -> b"), Rotation::Rotated);
    assert!(!second.is_current("a").await.expect("query"));
    assert!(second.is_current("b").await.expect("query"));
    assert_eq!(
        second.rotate("a", ana, token("b2", ana), None).await.expect("replay a elsewhere"),
        Rotation::Replayed { family: "a".into() }
    );

    assert_eq!(second.rotate("b", ana, token("c", ana), None).await.expect("b -> c"), Rotation::Rotated);
    assert!(!first.is_current("b").await.expect("query"));
    assert!(first.is_current("c").await.expect("query"));
    assert_eq!(
        first.rotate("b", ana, token("c2", ana), None).await.expect("replay b elsewhere"),
        Rotation::Replayed { family: "a".into() },
        "b joined a's family"
    );
    for jti in ["b2", "c2"] {
        assert!(!first.is_current(jti).await.expect("query"), "{jti}");
        assert!(!second.is_current(jti).await.expect("query"), "{jti}");
    }
    other_pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn of_sixteen_concurrent_redemptions_on_two_instances_exactly_one_wins() {
    let db = TestDatabase::new().await;
    let ana = db.create_user("ana", None).await;
    let client = OAuthClient {
        client_id: portal(),
        name: "Portal".into(),
        secret_hash: Some("pbkdf2_sha256$1$s$h".into()),
        redirect_uris: vec!["https://portal.example.gov.br/callback".into()],
        post_logout_redirect_uris: vec![],
        confidential: true,
        require_pkce: false,
        requires_second_factor: false,
        minimum_govbr_level: None,
        enabled_scopes: ScopeSet::empty(),
        is_active: true,
        created_at: 0,
        backchannel_logout_uri: None,
    };
    PgOAuthClientRepository::new(db.pool.clone()).create(client, &setup_audit()).await.expect("client");
    let first = PgAuthorizationCodeStore::new(db.pool.clone());
    first
        .store(NewAuthorizationCode { code_hash: CodeHash::of("race"), grant: grant(ana), session: None })
        .await
        .expect("store");
    let other_pool = connect(&db.url, 8, Duration::from_secs(5)).await.expect("second pool");
    let instances = [first, PgAuthorizationCodeStore::new(other_pool.clone())];

    // One task polls them all: each redemption holds its own connection,
    // half of them on each instance's pool, so they race in the server.
    let (race, portal) = (CodeHash::of("race"), portal());
    let redemptions = (0..16).map(|i| instances[i % 2].redeem(&race, &portal, NOW));
    let results: Vec<Option<CodeGrant>> = futures_util::future::try_join_all(redemptions).await.expect("redemptions");
    let winners: Vec<_> = results.iter().flatten().collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    assert_eq!(winners[0], &grant(ana));
    other_pool.close().await;
}

#[tokio::test]
async fn concurrent_failures_on_two_pools_all_count() {
    let db = TestDatabase::new().await;
    let other_pool = connect(&db.url, 5, Duration::from_secs(5)).await.expect("pool");
    let logs = [PgLoginFailureLog::new(db.pool.clone()), PgLoginFailureLog::new(other_pool)];
    let here = ThrottleKey::address(ClientAddress::of("192.0.2.1".parse().expect("ip")));
    // Half of the attempts name the keys in the other order: rows are still
    // locked in one order, so no two statements deadlock.
    let orders = [vec![ana_key(), here.clone()], vec![here.clone(), ana_key()]];
    let failures = (0..40).map(|i| logs[i % 2].record_failure(&orders[(i / 2) % 2], NOW_MS + i as i64, WINDOW_MS));
    futures_util::future::try_join_all(failures).await.expect("recorded");
    let windows = logs[1].windows(&[ana_key(), here]).await.expect("windows");
    assert_eq!(windows.len(), 2);
    for window in windows {
        assert_eq!(window.failures, 40, "{}", window.key);
    }
}

#[tokio::test]
async fn purging_failures_skips_a_row_that_is_locked_instead_of_waiting_for_it() {
    let db = TestDatabase::new().await;
    let log = PgLoginFailureLog::new(db.pool.clone());
    let old = NOW_MS - WINDOW_MS - 1;
    log.record_failure(&[ana_key()], old, WINDOW_MS).await.expect("old ana");
    log.record_failure(&[bruno_key()], old, WINDOW_MS).await.expect("old bruno");
    // Another transaction holds ana's row, as a failure being recorded does.
    let mut holder = db.pool.begin().await.expect("begin");
    sqlx::query("SELECT 1 FROM login_failures WHERE key = 'username:ana' FOR UPDATE")
        .execute(&mut *holder)
        .await
        .expect("lock");
    let purged = tokio::time::timeout(Duration::from_secs(5), log.purge_started_before(NOW_MS - WINDOW_MS, 100))
        .await
        .expect("the purge does not wait for the lock")
        .expect("purge");
    assert_eq!(purged, 1);
    assert!(log.windows(&[bruno_key()]).await.expect("windows").is_empty());
    holder.rollback().await.expect("rollback");
    assert_eq!(log.windows(&[ana_key()]).await.expect("windows").len(), 1, "the locked row waits for the next purge");
    assert_eq!(log.purge_started_before(NOW_MS - WINDOW_MS, 100).await.expect("purge"), 1);
}
