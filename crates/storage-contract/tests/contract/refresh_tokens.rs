//! [`RefreshTokenStore`]: recording (with a login), rotation within a
//! family, replay, the grace window, revocation of a token, a family or a
//! user, the purge, and rotations racing on one token.

use std::sync::Arc;

use credencial_domain::admin::LoginVia;
use credencial_domain::UserId;
use credencial_ports::{GraceRotation, NewRefreshToken, RefreshTokenStore, Rotation, TokenRevocation};
use credencial_storage_contract::{contract, Backend};

/// The rotation time of the grace-window tests (Unix seconds).
const AT: i64 = 1_900_000_000;

fn token(jti: &str, user_id: UserId) -> NewRefreshToken {
    NewRefreshToken {
        jti: jti.to_owned(),
        user_id,
        expires_at: 4_102_444_800, // 2100-01-01
    }
}

/// A rotation at `at` with a 10 s window, keeping `sealed`.
fn grace(sealed: &[u8], at: i64) -> Option<GraceRotation> {
    Some(GraceRotation { sealed_successor: sealed.to_vec(), at, covered_since: at - 10 })
}

/// A backend with user ana, and ana's token `old`, first of family `fam`.
async fn with_old_token<B: Backend>() -> (B, Arc<dyn RefreshTokenStore>, UserId) {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let tokens = b.refresh_tokens();
    tokens.record(token("old", ana), "fam").await.expect("record");
    (b, tokens, ana)
}

async fn current(tokens: &Arc<dyn RefreshTokenStore>, jti: &str) -> bool {
    tokens.is_current(jti).await.expect("is_current")
}

async fn deactivate<B: Backend>(b: &B, id: UserId) {
    b.execute(&format!("UPDATE users SET is_active = FALSE WHERE id = {}", id.0)).await;
}

// ------------------------------------------------------- record, is_current

async fn a_recorded_token_is_current_and_no_other_jti_is<B: Backend>() {
    let (_b, tokens, _ana) = with_old_token::<B>().await;
    assert!(current(&tokens, "old").await);
    for jti in ["b", "", "OLD", "old ", "%", "ol_"] {
        assert!(!current(&tokens, jti).await, "{jti:?}");
    }
}

async fn a_login_is_recorded_with_its_token_or_neither_is<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let tokens = b.refresh_tokens();
    tokens.record_login(token("pair-1", ana), "pair-1", LoginVia::Pair).await.expect("login");
    tokens.record_login(token("oauth-1", ana), "code:portal:1", LoginVia::OAuth).await.expect("login");
    assert!(current(&tokens, "pair-1").await && current(&tokens, "oauth-1").await);
    let logins = |via: &str| format!("SELECT count(*) FROM user_logins WHERE user_id = {} AND via = '{via}'", ana.0);
    assert_eq!(b.count(&logins("pair")).await, 1);
    assert_eq!(b.count(&logins("oauth")).await, 1);

    // A token the store refuses (its jti is taken): no login either.
    let again = tokens.record_login(token("pair-1", ana), "pair-2", LoginVia::Pair).await;
    assert!(again.is_err(), "{again:?}");
    assert_eq!(b.count(&logins("pair")).await, 1, "no login without its token");
    // A login the store refuses (no such user): no token either.
    let orphan = tokens.record_login(token("orphan", UserId(ana.0 + 1000)), "orphan", LoginVia::Pair).await;
    assert!(orphan.is_err(), "{orphan:?}");
    assert!(!current(&tokens, "orphan").await, "no token without its login");
    assert_eq!(b.count("SELECT count(*) FROM user_logins").await, 2);
}

// ------------------------------------------------------------------ rotate

async fn rotating_a_current_token_makes_the_new_one_current_and_the_old_one_not<B: Backend>() {
    let (_b, tokens, ana) = with_old_token::<B>().await;
    assert_eq!(tokens.rotate("old", ana, token("new", ana), None).await.expect("rotate"), Rotation::Rotated);
    assert!(!current(&tokens, "old").await);
    assert!(current(&tokens, "new").await);
}

async fn rotating_an_already_rotated_token_is_a_replay_of_its_family_and_records_nothing<B: Backend>() {
    let (_b, tokens, ana) = with_old_token::<B>().await;
    assert_eq!(tokens.rotate("old", ana, token("new1", ana), None).await.expect("first"), Rotation::Rotated);
    assert_eq!(
        tokens.rotate("old", ana, token("new2", ana), None).await.expect("second"),
        Rotation::Replayed { family: "fam".into() }
    );
    assert!(!current(&tokens, "new2").await, "the second new jti is not recorded");
    assert!(!current(&tokens, "old").await);
    assert!(current(&tokens, "new1").await, "the first rotation stands");
}

async fn rotating_an_unknown_or_another_users_token_is_refused_and_changes_nothing<B: Backend>() {
    let (b, tokens, ana) = with_old_token::<B>().await;
    let bia = b.create_user("bia").await;
    assert_eq!(tokens.rotate("never-issued", ana, token("n1", ana), None).await.expect("unknown"), Rotation::Refused);
    assert_eq!(tokens.rotate("old", bia, token("n2", bia), None).await.expect("as bia"), Rotation::Refused);
    assert_eq!(
        tokens.rotate("old", UserId(ana.0 + 1000), token("n3", ana), None).await.expect("as nobody"),
        Rotation::Refused
    );
    for jti in ["n1", "n2", "n3"] {
        assert!(!current(&tokens, jti).await, "{jti}");
    }
    assert!(current(&tokens, "old").await, "the old token is still current");
    assert_eq!(tokens.rotate("old", ana, token("new", ana), None).await.expect("as ana"), Rotation::Rotated);
}

async fn rotating_the_token_of_a_deactivated_user_is_refused_and_issues_nothing<B: Backend>() {
    let (b, tokens, ana) = with_old_token::<B>().await;
    deactivate(&b, ana).await;
    assert_eq!(tokens.rotate("old", ana, token("new", ana), None).await.expect("rotate"), Rotation::Refused);
    assert!(!current(&tokens, "new").await, "no token issued to an inactive user");
    assert!(!current(&tokens, "old").await, "the inactive user's token is rotated");
}

async fn a_rotated_token_joins_the_family_of_the_one_it_replaces<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let tokens = b.refresh_tokens();
    tokens.record(token("first", ana), "code:portal:ab12").await.expect("record");
    assert_eq!(tokens.rotate("first", ana, token("second", ana), None).await.expect("rotate"), Rotation::Rotated);
    assert_eq!(tokens.rotate("second", ana, token("third", ana), None).await.expect("rotate"), Rotation::Rotated);
    assert_eq!(b.count("SELECT count(*) FROM refresh_tokens WHERE family = 'code:portal:ab12'").await, 3);
    assert_eq!(
        tokens.rotate("first", ana, token("x", ana), None).await.expect("replay"),
        Rotation::Replayed { family: "code:portal:ab12".into() },
        "a replay of any member names the family"
    );
}

// ----------------------------------------------------------- grace window

async fn a_replay_within_the_window_gets_the_sealed_pair_and_records_nothing<B: Backend>() {
    let (b, tokens, ana) = with_old_token::<B>().await;
    assert_eq!(
        tokens.rotate("old", ana, token("new", ana), grace(b"pair-1", AT)).await.expect("rotate"),
        Rotation::Rotated
    );
    let again = tokens.rotate("old", ana, token("new-2", ana), grace(b"pair-2", AT + 3)).await.expect("replay");
    assert_eq!(again, Rotation::Repeated { sealed: b"pair-1".to_vec() });
    assert!(current(&tokens, "new").await, "the family lives");
    assert!(!current(&tokens, "new-2").await, "nothing recorded for the replay");
    assert_eq!(b.count("SELECT count(*) FROM refresh_tokens").await, 2);
}

async fn a_replay_at_the_windows_edge_is_repeated_and_after_it_a_replay<B: Backend>() {
    let (_b, tokens, ana) = with_old_token::<B>().await;
    tokens.rotate("old", ana, token("new", ana), grace(b"pair-1", AT)).await.expect("rotate");
    let edge = tokens.rotate("old", ana, token("x", ana), grace(b"p", AT + 10)).await.expect("at the edge");
    assert_eq!(edge, Rotation::Repeated { sealed: b"pair-1".to_vec() }, "covered_since is inclusive");
    let late = tokens.rotate("old", ana, token("y", ana), grace(b"p", AT + 11)).await.expect("late replay");
    assert_eq!(late, Rotation::Replayed { family: "fam".into() });
}

async fn a_replay_without_a_window_is_a_replay_even_right_after_the_rotation<B: Backend>() {
    let (_b, tokens, ana) = with_old_token::<B>().await;
    tokens.rotate("old", ana, token("new", ana), grace(b"pair-1", AT)).await.expect("rotate");
    let replay = tokens.rotate("old", ana, token("new-2", ana), None).await.expect("replay");
    assert_eq!(replay, Rotation::Replayed { family: "fam".into() });
}

async fn a_replay_after_the_successor_was_used_is_a_replay_within_the_window_too<B: Backend>() {
    let (_b, tokens, ana) = with_old_token::<B>().await;
    tokens.rotate("old", ana, token("new", ana), grace(b"pair-1", AT)).await.expect("rotate");
    assert_eq!(
        tokens.rotate("new", ana, token("newer", ana), grace(b"pair-2", AT + 1)).await.expect("successor rotated"),
        Rotation::Rotated
    );
    let replay = tokens.rotate("old", ana, token("x", ana), grace(b"pair-3", AT + 2)).await.expect("replay");
    assert_eq!(replay, Rotation::Replayed { family: "fam".into() });
}

async fn a_replay_after_the_family_was_revoked_is_not_repeated<B: Backend>() {
    let (_b, tokens, ana) = with_old_token::<B>().await;
    tokens.rotate("old", ana, token("new", ana), grace(b"pair-1", AT)).await.expect("rotate");
    assert_eq!(tokens.revoke_family("fam").await.expect("revoke"), 1);
    let replay = tokens.rotate("old", ana, token("x", ana), grace(b"pair-2", AT + 1)).await.expect("replay");
    assert_eq!(replay, Rotation::Replayed { family: "fam".into() });
}

async fn a_rotation_without_a_window_keeps_nothing_to_repeat<B: Backend>() {
    let (b, tokens, ana) = with_old_token::<B>().await;
    tokens.rotate("old", ana, token("new", ana), None).await.expect("rotate");
    assert_eq!(b.count("SELECT count(*) FROM refresh_tokens WHERE successor_sealed IS NOT NULL").await, 0);
    let replay = tokens.rotate("old", ana, token("x", ana), grace(b"p", AT)).await.expect("replay");
    assert_eq!(replay, Rotation::Replayed { family: "fam".into() }, "nothing sealed, nothing to repeat");
}

async fn forgetting_clears_the_sealed_pairs_of_rotations_before_the_cutoff_only<B: Backend>() {
    let (_b, tokens, ana) = with_old_token::<B>().await;
    tokens.record(token("other", ana), "fam-2").await.expect("record");
    tokens.rotate("old", ana, token("new", ana), grace(b"early", AT)).await.expect("rotate");
    tokens.rotate("other", ana, token("other-new", ana), grace(b"late", AT + 20)).await.expect("rotate");

    assert_eq!(tokens.forget_sealed(AT + 10, 1).await.expect("forget"), 1);
    assert_eq!(tokens.forget_sealed(AT + 10, 1).await.expect("again"), 0);
    let replay = tokens.rotate("old", ana, token("x", ana), grace(b"p", AT + 1)).await.expect("replay");
    assert_eq!(replay, Rotation::Replayed { family: "fam".into() }, "a forgotten pair is never answered");
    let kept = tokens.rotate("other", ana, token("y", ana), grace(b"p", AT + 21)).await.expect("replay");
    assert_eq!(kept, Rotation::Repeated { sealed: b"late".to_vec() }, "a later pair is kept");
}

// -------------------------------------------------------------- revocation

async fn revoking_a_current_token_ends_its_family_and_no_other<B: Backend>() {
    let (_b, tokens, ana) = with_old_token::<B>().await;
    tokens.rotate("old", ana, token("new", ana), None).await.expect("rotate");
    tokens.record(token("elsewhere", ana), "fam-2").await.expect("another login");

    assert_eq!(tokens.revoke_token("new", ana).await.expect("revoke"), TokenRevocation::Revoked);
    assert!(!current(&tokens, "new").await);
    assert!(current(&tokens, "elsewhere").await, "another family stays");
    assert_eq!(tokens.revoke_token("new", ana).await.expect("again"), TokenRevocation::WasRevoked);
    assert_eq!(
        tokens.rotate("new", ana, token("x", ana), None).await.expect("rotate"),
        Rotation::Refused,
        "a revoked token is no replay"
    );
}

async fn revoking_a_rotated_token_ends_its_familys_current_token<B: Backend>() {
    let (_b, tokens, ana) = with_old_token::<B>().await;
    tokens.rotate("old", ana, token("new", ana), None).await.expect("rotate");
    assert_eq!(tokens.revoke_token("old", ana).await.expect("revoke"), TokenRevocation::WasRotated);
    assert!(!current(&tokens, "new").await, "the family's current token is revoked");
}

async fn revoking_an_unknown_token_or_another_users_changes_nothing<B: Backend>() {
    let (_b, tokens, ana) = with_old_token::<B>().await;
    assert_eq!(tokens.revoke_token("never-issued", ana).await.expect("revoke"), TokenRevocation::Unknown);
    assert_eq!(tokens.revoke_token("old", UserId(ana.0 + 1)).await.expect("revoke"), TokenRevocation::Unknown);
    assert!(current(&tokens, "old").await);
}

/// Users ana and bia; ana's family `a` (token `a` rotated into `b`), ana's
/// family `code:portal:x` (token `x`), bia's family `y` (token `y`).
async fn two_users_with_three_families<B: Backend>() -> (B, Arc<dyn RefreshTokenStore>, UserId) {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let bia = b.create_user("bia").await;
    let tokens = b.refresh_tokens();
    tokens.record(token("a", ana), "a").await.expect("record");
    assert_eq!(tokens.rotate("a", ana, token("b", ana), None).await.expect("a -> b"), Rotation::Rotated);
    tokens.record(token("x", ana), "code:portal:x").await.expect("ana's code grant");
    tokens.record(token("y", bia), "y").await.expect("bia's login");
    (b, tokens, ana)
}

async fn revoking_a_family_ends_its_current_token_and_no_other_familys<B: Backend>() {
    let (_b, tokens, ana) = two_users_with_three_families::<B>().await;

    assert_eq!(tokens.revoke_family("a").await.expect("revoke"), 1, "b, the family's only current token");
    assert!(!current(&tokens, "b").await);
    assert!(current(&tokens, "x").await, "another family of the same user stays");
    assert!(current(&tokens, "y").await);
    assert_eq!(tokens.revoke_family("a").await.expect("again"), 0);
    assert_eq!(tokens.revoke_family("never-issued").await.expect("unknown"), 0);
    assert_eq!(
        tokens.rotate("b", ana, token("c", ana), None).await.expect("rotate a revoked token"),
        Rotation::Refused,
        "a revoked token presented again is refused, but it is no replay: its family has nothing left to revoke"
    );
    assert!(!current(&tokens, "c").await, "nothing recorded");
}

async fn revoking_a_user_ends_every_family_of_that_user_only_and_is_no_replay_later<B: Backend>() {
    let (_b, tokens, ana) = two_users_with_three_families::<B>().await;

    assert_eq!(tokens.revoke_user(ana).await.expect("revoke"), 2, "b and x, ana's current tokens");
    for jti in ["b", "x"] {
        assert!(!current(&tokens, jti).await, "{jti}");
    }
    assert!(current(&tokens, "y").await, "another user's token stays");
    assert_eq!(tokens.rotate("x", ana, token("x2", ana), None).await.expect("rotate"), Rotation::Refused);
    // A genuinely rotated token presented again is still a replay.
    assert_eq!(
        tokens.rotate("a", ana, token("a2", ana), None).await.expect("rotate"),
        Rotation::Replayed { family: "a".into() }
    );
    assert_eq!(tokens.revoke_user(ana).await.expect("again"), 0);
}

// ------------------------------------------------------------------- purge

async fn purging_deletes_tokens_expired_before_the_cutoff_rotated_or_not_and_keeps_the_rest<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let tokens = b.refresh_tokens();
    let expiring = |jti: &str, expires_at: i64| NewRefreshToken { jti: jti.to_owned(), user_id: ana, expires_at };
    tokens.record(expiring("old-current", 1_000), "old-current").await.expect("record");
    tokens.record(expiring("old-rotated", 1_500), "old-rotated").await.expect("record");
    assert_eq!(
        tokens.rotate("old-rotated", ana, expiring("rotated-into", 1_999), None).await.expect("rotate"),
        Rotation::Rotated
    );
    tokens.record(expiring("at-cutoff", 2_000), "at-cutoff").await.expect("record");
    tokens.record(token("live", ana), "live").await.expect("record");

    // At most `limit` rows a call, the oldest first; calls again finish the job.
    assert_eq!(tokens.purge_expired(2_000, 2).await.expect("purge"), 2);
    assert!(current(&tokens, "rotated-into").await, "the youngest expired one waits for the next call");
    assert_eq!(b.count("SELECT count(*) FROM refresh_tokens").await, 3);
    assert_eq!(tokens.purge_expired(2_000, 2).await.expect("purge"), 1, "a short batch: the last one");
    assert_eq!(b.count("SELECT count(*) FROM refresh_tokens").await, 2);
    assert!(current(&tokens, "at-cutoff").await && current(&tokens, "live").await, "the rest stays current");
    assert_eq!(tokens.purge_expired(2_000, 2).await.expect("second purge"), 0, "nothing left to purge");
}

// ------------------------------------------------------------- concurrency

/// Rotates `old` from 16 tasks at once (task `i` into `new-<i>`, sealing
/// `pair-<i>` when `window`), and returns each task's outcome.
async fn sixteen_rotations(tokens: &Arc<dyn RefreshTokenStore>, ana: UserId, window: bool) -> Vec<Rotation> {
    let outcomes = crate::race::at_once(16, |i| {
        let tokens = Arc::clone(tokens);
        let sealed = format!("pair-{i}").into_bytes();
        let grace = if window { grace(&sealed, AT) } else { None };
        async move { tokens.rotate("old", ana, token(&format!("new-{i}"), ana), grace).await }
    })
    .await;
    outcomes.into_iter().map(|outcome| outcome.expect("rotate")).collect()
}

/// The one task of `outcomes` that rotated, once `new-<i>` of it alone is current.
async fn only_winner(tokens: &Arc<dyn RefreshTokenStore>, outcomes: &[Rotation]) -> usize {
    let winners: Vec<usize> = (0..outcomes.len()).filter(|i| outcomes[*i] == Rotation::Rotated).collect();
    assert_eq!(winners.len(), 1, "{outcomes:?}");
    let mut issued = Vec::new();
    for i in 0..outcomes.len() {
        if current(tokens, &format!("new-{i}")).await {
            issued.push(i);
        }
    }
    assert_eq!(issued, winners, "exactly the winner's token is current");
    winners[0]
}

async fn of_sixteen_concurrent_rotations_one_wins_the_rest_are_refused_and_a_replay_revokes_the_family<B: Backend>() {
    let (b, tokens, ana) = with_old_token::<B>().await;
    let outcomes = sixteen_rotations(&tokens, ana, false).await;
    let winner = only_winner(&tokens, &outcomes).await;
    for (i, outcome) in outcomes.iter().enumerate().filter(|(i, _)| *i != winner) {
        assert!(
            matches!(outcome, Rotation::Refused | Rotation::Replayed { .. }),
            "task {i}: {outcome:?} (a loser records nothing)"
        );
    }
    assert!(!current(&tokens, "old").await);
    assert_eq!(b.count("SELECT count(*) FROM refresh_tokens").await, 2, "the old token and one new token");

    // The old token comes back later: a replay, and the caller revokes its
    // family, the winner's token with it.
    let Rotation::Replayed { family } = tokens.rotate("old", ana, token("thief", ana), None).await.expect("replay")
    else {
        panic!("a replay after the race must be Replayed");
    };
    assert_eq!(family, "fam");
    assert_eq!(tokens.revoke_family(&family).await.expect("revoke"), 1);
    assert!(!current(&tokens, &format!("new-{winner}")).await, "the family is revoked");
    assert!(!current(&tokens, "thief").await);
}

async fn of_sixteen_concurrent_rotations_within_the_window_the_others_all_get_the_winners_pair<B: Backend>() {
    let (b, tokens, ana) = with_old_token::<B>().await;
    let outcomes = sixteen_rotations(&tokens, ana, true).await;
    let winner = only_winner(&tokens, &outcomes).await;
    let pair = format!("pair-{winner}").into_bytes();
    for (i, outcome) in outcomes.iter().enumerate().filter(|(i, _)| *i != winner) {
        assert_eq!(outcome, &Rotation::Repeated { sealed: pair.clone() }, "task {i} gets the winner's pair");
    }
    assert_eq!(b.count("SELECT count(*) FROM refresh_tokens").await, 2, "the old token and one new token");

    // Once the winner's token has been used, the old one is a replay.
    assert_eq!(
        tokens.rotate(&format!("new-{winner}"), ana, token("next", ana), grace(b"next", AT + 1)).await.expect("rotate"),
        Rotation::Rotated
    );
    let replay = tokens.rotate("old", ana, token("thief", ana), grace(b"t", AT + 2)).await.expect("replay");
    assert_eq!(replay, Rotation::Replayed { family: "fam".into() });
    assert_eq!(tokens.revoke_family("fam").await.expect("revoke"), 1);
    assert!(!current(&tokens, "next").await);
}

contract!(
    a_recorded_token_is_current_and_no_other_jti_is,
    a_login_is_recorded_with_its_token_or_neither_is,
    rotating_a_current_token_makes_the_new_one_current_and_the_old_one_not,
    rotating_an_already_rotated_token_is_a_replay_of_its_family_and_records_nothing,
    rotating_an_unknown_or_another_users_token_is_refused_and_changes_nothing,
    rotating_the_token_of_a_deactivated_user_is_refused_and_issues_nothing,
    a_rotated_token_joins_the_family_of_the_one_it_replaces,
    a_replay_within_the_window_gets_the_sealed_pair_and_records_nothing,
    a_replay_at_the_windows_edge_is_repeated_and_after_it_a_replay,
    a_replay_without_a_window_is_a_replay_even_right_after_the_rotation,
    a_replay_after_the_successor_was_used_is_a_replay_within_the_window_too,
    a_replay_after_the_family_was_revoked_is_not_repeated,
    a_rotation_without_a_window_keeps_nothing_to_repeat,
    forgetting_clears_the_sealed_pairs_of_rotations_before_the_cutoff_only,
    revoking_a_current_token_ends_its_family_and_no_other,
    revoking_a_rotated_token_ends_its_familys_current_token,
    revoking_an_unknown_token_or_another_users_changes_nothing,
    revoking_a_family_ends_its_current_token_and_no_other_familys,
    revoking_a_user_ends_every_family_of_that_user_only_and_is_no_replay_later,
    purging_deletes_tokens_expired_before_the_cutoff_rotated_or_not_and_keeps_the_rest,
    of_sixteen_concurrent_rotations_one_wins_the_rest_are_refused_and_a_replay_revokes_the_family,
    of_sixteen_concurrent_rotations_within_the_window_the_others_all_get_the_winners_pair,
);
