//! Two handles on one database file, as a CLI command beside a serving
//! instance has them: each has its own writer connection, so their writes
//! meet at SQLite's file lock (`BEGIN IMMEDIATE` and the busy timeout),
//! not in one writer's queue. Rotations and redemptions stay single-use.

use credencial_adapters_sqlite::testing::TestDatabase;
use credencial_adapters_sqlite::{
    SqliteAuthorizationCodeStore, SqliteDb, SqliteLoginFailureLog, SqliteRefreshTokenStore,
};
use credencial_domain::oauth::{ClientId, CodeGrant, CodeHash};
use credencial_domain::throttle::ThrottleKey;
use credencial_domain::{ScopeSet, UserId, Username};
use credencial_ports::{
    AuthorizationCodeStore, GraceRotation, LoginFailureLog, NewAuthorizationCode, NewRefreshToken, RefreshTokenStore,
    Rotation,
};

const NOW: i64 = 1_900_000_000;

/// A migrated file with user 1 (`ana`) and client `portal`, and two
/// handles on it.
struct TwoHandles {
    first: SqliteDb,
    second: SqliteDb,
    /// The file; its directory goes with it.
    _file: TestDatabase,
}

impl TwoHandles {
    async fn new() -> Self {
        let file = TestDatabase::new().await;
        let first = file.db.clone();
        sqlx::query("INSERT INTO users (id, username, password) VALUES (1, 'ana', 'pbkdf2_sha256$1$s$h')")
            .execute(first.writer())
            .await
            .expect("ana");
        sqlx::query(
            "INSERT INTO oauth_clients (client_id, name, confidential, redirect_uris) \
             VALUES ('portal', 'Portal', 0, '[\"https://p.example/cb\"]')",
        )
        .execute(first.writer())
        .await
        .expect("portal");
        let second = file.second_handle().await;
        Self { first, second, _file: file }
    }

    fn both(&self) -> [SqliteDb; 2] {
        [self.first.clone(), self.second.clone()]
    }
}

fn token(jti: &str) -> NewRefreshToken {
    NewRefreshToken { jti: jti.to_owned(), user_id: UserId(1), expires_at: 4_102_444_800 }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn of_sixteen_rotations_through_two_handles_one_wins_and_the_others_get_its_pair() {
    let files = TwoHandles::new().await;
    SqliteRefreshTokenStore::new(files.first.clone()).record(token("old"), "fam").await.expect("record");
    // One task polls them all; each handle's writer connection runs on a
    // thread of its own, so the two handles meet at the file's lock.
    let stores = files.both().map(SqliteRefreshTokenStore::new);
    let rotations = (0..16).map(|i| {
        let grace =
            GraceRotation { sealed_successor: format!("pair-{i}").into_bytes(), at: NOW, covered_since: NOW - 10 };
        stores[i % 2].rotate("old", UserId(1), token(&format!("new-{i}")), Some(grace))
    });
    let outcomes: Vec<Rotation> =
        futures_util::future::try_join_all(rotations).await.expect("no error, no `database is locked`");
    let winner = outcomes.iter().position(|o| *o == Rotation::Rotated).expect("one wins");
    for (i, outcome) in outcomes.iter().enumerate().filter(|(i, _)| *i != winner) {
        assert_eq!(outcome, &Rotation::Repeated { sealed: format!("pair-{winner}").into_bytes() }, "task {i}");
    }
    let issued: i64 =
        sqlx::query_scalar("SELECT count(*) FROM refresh_tokens").fetch_one(files.second.readers()).await.expect("n");
    assert_eq!(issued, 2, "the old token and the winner's");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn of_sixteen_redemptions_through_two_handles_exactly_one_wins() {
    let files = TwoHandles::new().await;
    let portal = ClientId::parse("portal").expect("client id");
    let grant = CodeGrant {
        client_id: portal.clone(),
        user_id: UserId(1),
        redirect_uri: "https://p.example/cb".into(),
        redirect_uri_explicit: false,
        scopes: ScopeSet::required(),
        code_challenge: None,
        expires_at: NOW + 60,
        nonce: None,
        auth_time: None,
        acr: None,
        amr: None,
        sid: None,
    };
    let code = NewAuthorizationCode { code_hash: CodeHash::of("race"), grant, session: None };
    SqliteAuthorizationCodeStore::new(files.first.clone()).store(code).await.expect("store");
    let stores = files.both().map(SqliteAuthorizationCodeStore::new);
    let race = CodeHash::of("race");
    let redemptions = (0..16).map(|i| stores[i % 2].redeem(&race, &portal, NOW));
    let results = futures_util::future::try_join_all(redemptions).await.expect("no error");
    let won = results.into_iter().filter(Option::is_some).count();
    assert_eq!(won, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn failures_recorded_through_two_handles_all_count() {
    let files = TwoHandles::new().await;
    let ana = ThrottleKey::username(&Username::parse("ana").expect("username"));
    let logs = files.both().map(SqliteLoginFailureLog::new);
    let failures =
        (0..16).map(|i| logs[i % 2].record_failure(std::slice::from_ref(&ana), NOW * 1000 + i as i64, 300_000));
    futures_util::future::try_join_all(failures).await.expect("recorded");
    let windows = SqliteLoginFailureLog::new(files.second.clone()).windows(&[ana]).await.expect("windows");
    assert_eq!(windows.iter().map(|w| w.failures).collect::<Vec<_>>(), [16]);
}
