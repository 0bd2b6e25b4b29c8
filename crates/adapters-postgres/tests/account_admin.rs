//! The pair's login record against a real PostgreSQL (127.0.0.1:5432, or
//! `TEST_DATABASE_URL`): a login is stored with its refresh token. The
//! account administration's own tests are in the storage contract
//! (crates/storage-contract).

use credencial_adapters_postgres::testing::TestDatabase;
use credencial_adapters_postgres::{PgLoginHistory, PgRefreshTokenStore};
use credencial_domain::admin::LoginVia;
use credencial_domain::UserId;
use credencial_ports::{LoginHistory, NewRefreshToken, RefreshTokenStore};

#[tokio::test]
async fn a_pair_login_is_recorded_with_its_refresh_token_and_the_history_is_bounded() {
    let db = TestDatabase::new().await;
    let ana = db.create_user("ana", None).await;
    let tokens = PgRefreshTokenStore::new(db.pool.clone());
    let history = PgLoginHistory::new(db.pool.clone());
    for i in 0..5 {
        let token = NewRefreshToken { jti: format!("jti-{i}"), user_id: ana, expires_at: 4_000_000_000 };
        tokens.record_login(token, &format!("jti-{i}"), LoginVia::Pair).await.expect("recorded");
    }
    history.record(ana, LoginVia::Account).await.expect("web login");
    let recent = history.recent(ana, 3).await.expect("recent");
    assert_eq!(recent.iter().map(|l| l.via).collect::<Vec<_>>(), [LoginVia::Account, LoginVia::Pair, LoginVia::Pair]);
    assert!(tokens.is_current("jti-4").await.expect("current"), "the token is stored with the login");

    let missing = NewRefreshToken { jti: "orphan".into(), user_id: UserId(999), expires_at: 4_000_000_000 };
    assert!(tokens.record_login(missing, "orphan", LoginVia::Pair).await.is_err(), "no login without its token");

    assert_eq!(history.purge(0, 2).await.expect("purged"), 4, "only the 2 newest are kept");
    assert_eq!(history.recent(ana, 10).await.expect("recent").len(), 2);
    assert_eq!(history.purge(4_000_000_000, 2).await.expect("purged"), 2, "then by age");
}
