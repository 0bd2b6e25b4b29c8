//! The PostgreSQL adapters against a real PostgreSQL (127.0.0.1:5432, or
//! `TEST_DATABASE_URL`): every test gets a fresh, migrated database.

use std::time::Duration;

use credencial_adapters_postgres::testing::TestDatabase;
use credencial_adapters_postgres::{PgRefreshTokenStore, PgUserRepository};
use credencial_domain::{UserData, UserId, Username};
use credencial_ports::{NewRefreshToken, NewUser, RefreshTokenStore, Rotation, UserRepository};

/// A Django PBKDF2-SHA256 hash as Django writes it (salt and base64 hash
/// with `+`, `/` and `=`).
const DJANGO_HASH: &str = "pbkdf2_sha256$870000$Xy9+Zk/Q1aB2cD3eF4gH5i$K8mN0pQ+rS/tUvWxYz1A2bC3dE4fG5hI6jK7lM8nO9p=";

fn user_data(tag: &str) -> UserData {
    UserData {
        identificacao: format!("{tag}-1234567"),
        nome_usual: format!("Nome {tag} Ção"),
        email: format!("{tag}@example.org"),
        campus: "CNAT".to_owned(),
        tipo_usuario: "Servidor".to_owned(),
    }
}

fn new_user(username: &str) -> NewUser {
    NewUser {
        username: Username::parse(username).expect("valid username"),
        password_hash: DJANGO_HASH.to_owned(),
        is_active: true,
        data: user_data(username),
        name: format!("Full name of {username}"),
        cpf: None,
    }
}

fn token(jti: &str, user_id: UserId) -> NewRefreshToken {
    NewRefreshToken {
        jti: jti.to_owned(),
        user_id,
        expires_at: 4_102_444_800, // 2100-01-01
    }
}

async fn deactivate(db: &TestDatabase, id: UserId) {
    let done = sqlx::query("UPDATE users SET is_active = false WHERE id = $1")
        .bind(id.0)
        .execute(&db.pool)
        .await
        .expect("deactivate");
    assert_eq!(done.rows_affected(), 1);
}

/// A database with one active user, its id, and both adapters on the pool.
async fn setup() -> (TestDatabase, PgUserRepository, PgRefreshTokenStore, UserId) {
    let db = TestDatabase::new().await;
    let users = PgUserRepository::new(db.pool.clone());
    let tokens = PgRefreshTokenStore::new(db.pool.clone());
    let id = users.create(new_user("ana")).await.expect("create ana");
    (db, users, tokens, id)
}

// ---------------------------------------------------------- refresh tokens

#[tokio::test]
async fn a_recorded_token_is_current() {
    let (_db, _users, tokens, ana) = setup().await;
    tokens.record(token("a", ana), "a").await.expect("record");
    assert!(tokens.is_current("a").await.expect("query"));
}

#[tokio::test]
async fn an_unknown_jti_is_not_current() {
    let (_db, _users, tokens, ana) = setup().await;
    tokens.record(token("a", ana), "a").await.expect("record");
    for jti in ["b", "", "A", "a ", "%"] {
        assert!(!tokens.is_current(jti).await.expect("query"), "{jti:?}");
    }
}

#[tokio::test]
async fn rotating_a_current_token_makes_the_new_one_current_and_the_old_one_not() {
    let (_db, _users, tokens, ana) = setup().await;
    tokens.record(token("old", ana), "old").await.expect("record");

    assert_eq!(tokens.rotate("old", ana, token("new", ana), None).await.expect("rotate"), Rotation::Rotated);
    assert!(!tokens.is_current("old").await.expect("query"));
    assert!(tokens.is_current("new").await.expect("query"));
}

#[tokio::test]
async fn rotating_an_already_rotated_token_fails_and_records_nothing() {
    let (_db, _users, tokens, ana) = setup().await;
    tokens.record(token("old", ana), "old").await.expect("record");
    assert_eq!(tokens.rotate("old", ana, token("new1", ana), None).await.expect("first rotation"), Rotation::Rotated);

    assert_eq!(
        tokens.rotate("old", ana, token("new2", ana), None).await.expect("second rotation"),
        Rotation::Replayed { family: "old".into() }
    );
    assert!(!tokens.is_current("new2").await.expect("query"), "the second new jti is not recorded");
    assert!(!tokens.is_current("old").await.expect("query"));
    assert!(tokens.is_current("new1").await.expect("query"), "the first rotation stands");
}

#[tokio::test]
async fn rotating_an_unknown_token_fails_and_records_nothing() {
    let (_db, _users, tokens, ana) = setup().await;
    assert_eq!(tokens.rotate("never-issued", ana, token("new", ana), None).await.expect("rotate"), Rotation::Refused);
    assert!(!tokens.is_current("new").await.expect("query"));
}

#[tokio::test]
async fn rotating_with_another_users_id_fails_and_the_old_token_stays_current() {
    let (_db, users, tokens, ana) = setup().await;
    let bia = users.create(new_user("bia")).await.expect("create bia");
    tokens.record(token("old", ana), "old").await.expect("record");

    assert_eq!(tokens.rotate("old", bia, token("new-bia", bia), None).await.expect("rotate as bia"), Rotation::Refused);
    assert!(!tokens.is_current("new-bia").await.expect("query"));
    assert_eq!(
        tokens.rotate("old", UserId(ana.0 + 1000), token("new-x", ana), None).await.expect("rotate as nobody"),
        Rotation::Refused
    );
    assert!(!tokens.is_current("new-x").await.expect("query"));
    assert!(tokens.is_current("old").await.expect("query"), "the old token is still current");

    // ...and its owner can still rotate it.
    assert_eq!(tokens.rotate("old", ana, token("new", ana), None).await.expect("rotate as ana"), Rotation::Rotated);
    assert!(tokens.is_current("new").await.expect("query"));
}

#[tokio::test]
async fn rotating_the_token_of_a_deactivated_user_fails() {
    let (db, _users, tokens, ana) = setup().await;
    tokens.record(token("old", ana), "old").await.expect("record");
    deactivate(&db, ana).await;

    assert_eq!(tokens.rotate("old", ana, token("new", ana), None).await.expect("rotate"), Rotation::Refused);
    assert!(!tokens.is_current("new").await.expect("query"), "no token issued to an inactive user");
}

#[tokio::test]
async fn a_rotated_token_joins_the_family_of_the_one_it_replaces() {
    let (db, _users, tokens, ana) = setup().await;
    tokens.record(token("first", ana), "code:portal:ab12").await.expect("record");
    assert_eq!(tokens.rotate("first", ana, token("second", ana), None).await.expect("rotate"), Rotation::Rotated);
    assert_eq!(tokens.rotate("second", ana, token("third", ana), None).await.expect("rotate"), Rotation::Rotated);
    let families: Vec<String> = sqlx::query_scalar("SELECT family FROM refresh_tokens ORDER BY created_at, jti")
        .fetch_all(&db.pool)
        .await
        .expect("families");
    assert_eq!(families, ["code:portal:ab12"; 3]);
}

#[tokio::test]
async fn revoking_a_family_ends_its_current_token_and_no_other_familys() {
    let (_db, users, tokens, ana) = setup().await;
    let bia = users.create(new_user("bia")).await.expect("create bia");
    tokens.record(token("a", ana), "a").await.expect("record");
    assert_eq!(tokens.rotate("a", ana, token("b", ana), None).await.expect("a -> b"), Rotation::Rotated);
    tokens.record(token("x", ana), "x").await.expect("another login of ana");
    tokens.record(token("y", bia), "y").await.expect("bia's login");

    assert_eq!(tokens.revoke_family("a").await.expect("revoke"), 1, "b, the family's only current token");
    assert!(!tokens.is_current("b").await.expect("query"));
    assert!(tokens.is_current("x").await.expect("query"), "another family of the same user stays");
    assert!(tokens.is_current("y").await.expect("query"));
    assert_eq!(tokens.revoke_family("a").await.expect("again"), 0);
    assert_eq!(tokens.revoke_family("never-issued").await.expect("unknown"), 0);
    assert_eq!(
        tokens.rotate("b", ana, token("c", ana), None).await.expect("rotate a revoked token"),
        Rotation::Refused,
        "a revoked token presented again is refused, but it is no replay: its family has nothing left to revoke"
    );
    assert!(!tokens.is_current("c").await.expect("query"), "nothing recorded");
}

#[tokio::test]
async fn revoking_a_user_ends_every_family_of_that_user_only_and_is_no_replay_later() {
    let (_db, users, tokens, ana) = setup().await;
    let bia = users.create(new_user("bia")).await.expect("create bia");
    tokens.record(token("a", ana), "a").await.expect("record");
    assert_eq!(tokens.rotate("a", ana, token("b", ana), None).await.expect("a -> b"), Rotation::Rotated);
    tokens.record(token("x", ana), "code:portal:x").await.expect("ana's code grant");
    tokens.record(token("y", bia), "y").await.expect("bia's login");

    assert_eq!(tokens.revoke_user(ana).await.expect("revoke"), 2, "b and x, ana's current tokens");
    for jti in ["b", "x"] {
        assert!(!tokens.is_current(jti).await.expect("query"), "{jti}");
    }
    assert!(tokens.is_current("y").await.expect("query"), "another user's token stays");
    assert_eq!(tokens.rotate("x", ana, token("x2", ana), None).await.expect("rotate"), Rotation::Refused);
    // A genuinely rotated token presented again is still a replay.
    assert_eq!(
        tokens.rotate("a", ana, token("a2", ana), None).await.expect("rotate"),
        Rotation::Replayed { family: "a".into() }
    );
    assert_eq!(tokens.revoke_user(ana).await.expect("again"), 0);
}

#[tokio::test]
async fn purging_deletes_tokens_expired_before_the_cutoff_rotated_or_not_and_keeps_the_rest() {
    let (db, _users, tokens, ana) = setup().await;
    let expiring = |jti: &str, expires_at: i64| NewRefreshToken { jti: jti.to_owned(), user_id: ana, expires_at };
    tokens.record(expiring("old-current", 1_000), "old-current").await.expect("record");
    tokens.record(expiring("old-rotated", 1_500), "old-rotated").await.expect("record");
    assert_eq!(
        tokens.rotate("old-rotated", ana, expiring("rotated-into", 1_999), None).await.expect("rotate"),
        Rotation::Rotated
    );
    tokens.record(expiring("at-cutoff", 2_000), "at-cutoff").await.expect("record");
    tokens.record(token("live", ana), "live").await.expect("record");

    assert_eq!(tokens.purge_expired(2_000).await.expect("purge"), 3);

    let left: Vec<String> =
        sqlx::query_scalar("SELECT jti FROM refresh_tokens ORDER BY jti").fetch_all(&db.pool).await.expect("rows");
    assert_eq!(left, ["at-cutoff", "live"]);
    assert!(tokens.is_current("live").await.expect("query"), "a live token stays current");
    assert_eq!(tokens.purge_expired(2_000).await.expect("second purge"), 0, "nothing left to purge");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn of_sixteen_concurrent_rotations_of_one_token_exactly_one_wins() {
    let (db, _users, tokens, ana) = setup().await;
    tokens.record(token("old", ana), "old").await.expect("record");

    let start = std::sync::Arc::new(tokio::sync::Barrier::new(16));
    let handles: Vec<_> = (0..16)
        .map(|i| {
            let tokens = tokens.clone();
            let start = start.clone();
            tokio::spawn(async move {
                start.wait().await;
                tokens.rotate("old", ana, token(&format!("new-{i}"), ana), None).await
            })
        })
        .collect();
    let results: Vec<bool> = futures_util::future::join_all(handles)
        .await
        .into_iter()
        .map(|joined| joined.expect("task").expect("rotate") == Rotation::Rotated)
        .collect();

    assert_eq!(results.iter().filter(|won| **won).count(), 1, "{results:?}");
    let winner = results.iter().position(|won| *won).expect("one winner");
    let mut current = Vec::new();
    for i in 0..16 {
        if tokens.is_current(&format!("new-{i}")).await.expect("query") {
            current.push(i);
        }
    }
    assert_eq!(current, vec![winner], "exactly the winner's token is current");
    assert!(!tokens.is_current("old").await.expect("query"));
    let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM refresh_tokens").fetch_one(&db.pool).await.expect("count");
    assert_eq!(rows, 2, "the old token and one new token");
}

#[tokio::test]
async fn a_rotation_chain_holds_across_two_service_instances() {
    let (db, _users, first, ana) = setup().await;
    let other_pool =
        credencial_adapters_postgres::connect(&db.url, 5, Duration::from_secs(5)).await.expect("second pool");
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
