//! The refresh-token store's grace window (a replay inside it answers the
//! sealed pair of the first rotation) and its revocation of one token with
//! its family, against a real PostgreSQL: a fresh database per test.

use credencial_adapters_postgres::testing::TestDatabase;
use credencial_adapters_postgres::{PgRefreshTokenStore, PgUserRepository};
use credencial_domain::{UserData, UserId, Username};
use credencial_ports::{
    GraceRotation, NewRefreshToken, NewUser, RefreshTokenStore, Rotation, TokenRevocation, UserRepository,
};

const DJANGO_HASH: &str = "pbkdf2_sha256$870000$Xy9+Zk/Q1aB2cD3eF4gH5i$K8mN0pQ+rS/tUvWxYz1A2bC3dE4fG5hI6jK7lM8nO9p=";
/// The rotation time of every test (Unix seconds).
const AT: i64 = 1_900_000_000;

async fn setup() -> (TestDatabase, PgRefreshTokenStore, UserId) {
    let db = TestDatabase::new().await;
    let users = PgUserRepository::new(db.pool.clone());
    let ana = users
        .create(NewUser {
            username: Username::parse("ana").expect("valid"),
            password_hash: DJANGO_HASH.to_owned(),
            is_active: true,
            data: UserData {
                identificacao: "ana-1".into(),
                nome_usual: "Ana".into(),
                email: "ana@example.org".into(),
                campus: "CNAT".into(),
                tipo_usuario: "Servidor".into(),
            },
            name: "Ana".into(),
            cpf: None,
        })
        .await
        .expect("ana");
    let tokens = PgRefreshTokenStore::new(db.pool.clone());
    tokens.record(token("old", ana), "fam").await.expect("record");
    (db, tokens, ana)
}

fn token(jti: &str, user_id: UserId) -> NewRefreshToken {
    NewRefreshToken { jti: jti.to_owned(), user_id, expires_at: 4_102_444_800 }
}

/// A rotation at `at` with a 10 s window, keeping `sealed`.
fn grace(sealed: &[u8], at: i64) -> Option<GraceRotation> {
    Some(GraceRotation { sealed_successor: sealed.to_vec(), at, covered_since: at - 10 })
}

#[tokio::test]
async fn a_replay_within_the_window_gets_the_sealed_pair_and_records_nothing() {
    let (db, tokens, ana) = setup().await;
    assert_eq!(
        tokens.rotate("old", ana, token("new", ana), grace(b"pair-1", AT)).await.expect("rotate"),
        Rotation::Rotated
    );

    let again = tokens.rotate("old", ana, token("new-2", ana), grace(b"pair-2", AT + 3)).await.expect("replay");
    assert_eq!(again, Rotation::Repeated { sealed: b"pair-1".to_vec() });
    assert!(tokens.is_current("new").await.expect("query"), "the family lives");
    assert!(!tokens.is_current("new-2").await.expect("query"), "nothing recorded for the replay");
    let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM refresh_tokens").fetch_one(&db.pool).await.expect("n");
    assert_eq!(rows, 2);
}

#[tokio::test]
async fn a_replay_after_the_window_is_a_replay_and_never_reads_the_sealed_pair() {
    let (_db, tokens, ana) = setup().await;
    tokens.rotate("old", ana, token("new", ana), grace(b"pair-1", AT)).await.expect("rotate");

    let late = tokens.rotate("old", ana, token("new-2", ana), grace(b"pair-2", AT + 11)).await.expect("late replay");
    assert_eq!(late, Rotation::Replayed { family: "fam".into() });
}

#[tokio::test]
async fn a_replay_without_a_window_is_a_replay_even_right_after_the_rotation() {
    let (_db, tokens, ana) = setup().await;
    tokens.rotate("old", ana, token("new", ana), grace(b"pair-1", AT)).await.expect("rotate");
    let replay = tokens.rotate("old", ana, token("new-2", ana), None).await.expect("replay");
    assert_eq!(replay, Rotation::Replayed { family: "fam".into() });
}

#[tokio::test]
async fn a_replay_after_the_successor_was_used_is_a_replay_within_the_window_too() {
    let (_db, tokens, ana) = setup().await;
    tokens.rotate("old", ana, token("new", ana), grace(b"pair-1", AT)).await.expect("rotate");
    assert_eq!(
        tokens.rotate("new", ana, token("newer", ana), grace(b"pair-2", AT + 1)).await.expect("successor rotated"),
        Rotation::Rotated
    );
    let replay = tokens.rotate("old", ana, token("x", ana), grace(b"pair-3", AT + 2)).await.expect("replay");
    assert_eq!(replay, Rotation::Replayed { family: "fam".into() });
}

#[tokio::test]
async fn a_replay_after_the_family_was_revoked_is_not_repeated() {
    let (_db, tokens, ana) = setup().await;
    tokens.rotate("old", ana, token("new", ana), grace(b"pair-1", AT)).await.expect("rotate");
    assert_eq!(tokens.revoke_family("fam").await.expect("revoke"), 1);
    let replay = tokens.rotate("old", ana, token("x", ana), grace(b"pair-2", AT + 1)).await.expect("replay");
    assert_eq!(replay, Rotation::Replayed { family: "fam".into() });
}

#[tokio::test]
async fn a_rotation_without_a_window_keeps_nothing() {
    let (db, tokens, ana) = setup().await;
    tokens.rotate("old", ana, token("new", ana), None).await.expect("rotate");
    let kept: Option<Vec<u8>> = sqlx::query_scalar("SELECT successor_sealed FROM refresh_tokens WHERE jti = 'old'")
        .fetch_one(&db.pool)
        .await
        .expect("row");
    assert_eq!(kept, None);
    let replay = tokens.rotate("old", ana, token("x", ana), grace(b"p", AT)).await.expect("replay");
    assert_eq!(replay, Rotation::Replayed { family: "fam".into() }, "nothing sealed, nothing to repeat");
}

#[tokio::test]
async fn forgetting_clears_the_sealed_pairs_of_rotations_before_the_cutoff_only() {
    let (db, tokens, ana) = setup().await;
    tokens.record(token("other", ana), "fam-2").await.expect("record");
    tokens.rotate("old", ana, token("new", ana), grace(b"early", AT)).await.expect("rotate");
    tokens.rotate("other", ana, token("other-new", ana), grace(b"late", AT + 20)).await.expect("rotate");

    assert_eq!(tokens.forget_sealed(AT + 10).await.expect("forget"), 1);
    let kept: Vec<Option<Vec<u8>>> =
        sqlx::query_scalar("SELECT successor_sealed FROM refresh_tokens WHERE jti IN ('old', 'other') ORDER BY jti")
            .fetch_all(&db.pool)
            .await
            .expect("rows");
    assert_eq!(kept, [None, Some(b"late".to_vec())]);
    assert_eq!(tokens.forget_sealed(AT + 10).await.expect("again"), 0);
    let replay = tokens.rotate("old", ana, token("x", ana), grace(b"p", AT + 1)).await.expect("replay");
    assert_eq!(replay, Rotation::Replayed { family: "fam".into() }, "a forgotten pair is never answered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_concurrent_rotations_of_one_token_both_get_the_same_pair() {
    for round in 0..8 {
        let (_db, tokens, ana) = setup().await;
        let start = std::sync::Arc::new(tokio::sync::Barrier::new(2));
        let handles: Vec<_> = (0..2)
            .map(|i| {
                let (tokens, start) = (tokens.clone(), start.clone());
                tokio::spawn(async move {
                    start.wait().await;
                    let sealed = format!("pair-{i}").into_bytes();
                    tokens.rotate("old", ana, token(&format!("new-{i}"), ana), grace(&sealed, AT)).await
                })
            })
            .collect();
        let outcomes: Vec<Rotation> = futures_util::future::join_all(handles)
            .await
            .into_iter()
            .map(|joined| joined.expect("task").expect("rotate"))
            .collect();
        let winner = outcomes.iter().position(|o| *o == Rotation::Rotated).expect("one rotation wins");
        let loser = 1 - winner;
        assert_eq!(
            outcomes[loser],
            Rotation::Repeated { sealed: format!("pair-{winner}").into_bytes() },
            "round {round}: the other gets the winner's pair"
        );
        assert!(tokens.is_current(&format!("new-{winner}")).await.expect("query"));
        assert!(!tokens.is_current(&format!("new-{loser}")).await.expect("query"));
    }
}

#[tokio::test]
async fn revoking_a_current_token_ends_its_family_and_no_other() {
    let (_db, tokens, ana) = setup().await;
    tokens.rotate("old", ana, token("new", ana), None).await.expect("rotate");
    tokens.record(token("elsewhere", ana), "fam-2").await.expect("another login");

    assert_eq!(tokens.revoke_token("new", ana).await.expect("revoke"), TokenRevocation::Revoked);
    assert!(!tokens.is_current("new").await.expect("query"));
    assert!(tokens.is_current("elsewhere").await.expect("query"), "another family stays");
    assert_eq!(tokens.revoke_token("new", ana).await.expect("again"), TokenRevocation::WasRevoked);
    assert_eq!(
        tokens.rotate("new", ana, token("x", ana), None).await.expect("rotate"),
        Rotation::Refused,
        "a revoked token is no replay"
    );
}

#[tokio::test]
async fn revoking_a_rotated_token_ends_its_familys_current_token() {
    let (_db, tokens, ana) = setup().await;
    tokens.rotate("old", ana, token("new", ana), None).await.expect("rotate");
    assert_eq!(tokens.revoke_token("old", ana).await.expect("revoke"), TokenRevocation::WasRotated);
    assert!(!tokens.is_current("new").await.expect("query"), "the family's current token is revoked");
}

#[tokio::test]
async fn revoking_an_unknown_token_or_another_users_changes_nothing() {
    let (_db, tokens, ana) = setup().await;
    assert_eq!(tokens.revoke_token("never-issued", ana).await.expect("revoke"), TokenRevocation::Unknown);
    assert_eq!(tokens.revoke_token("old", UserId(ana.0 + 1)).await.expect("revoke"), TokenRevocation::Unknown);
    assert!(tokens.is_current("old").await.expect("query"));
}
