//! [`credencial_ports::AppPasswordStore`]: made under a per-account limit
//! (held under concurrency), listed by account, found and touched by
//! (account, hash) in one statement, revoked only by their owner, and
//! gone with their account.

use std::sync::Arc;

use credencial_domain::UserId;
use credencial_ports::NewAppPassword;
use credencial_storage_contract::{contract, Backend};

contract!(
    made_listed_found_by_account_and_hash_and_touched,
    revoked_only_by_their_owner,
    the_limit_per_account_holds_under_concurrency,
    gone_with_their_account,
);

fn new(user: UserId, name: &str, hash: u8, now: i64) -> NewAppPassword {
    NewAppPassword { user, name: name.to_owned(), hash: [hash; 32], now }
}

async fn made_listed_found_by_account_and_hash_and_touched<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let bia = b.create_user("bia").await;
    let store = b.app_passwords();
    assert!(store.app_passwords(ana, 10).await.expect("list").is_empty());
    let first = store.create_app_password(&new(ana, "Cliente SUAP", 1, 1_800_000_000), 10).await.expect("create");
    let first = first.expect("stored");
    let second = store.create_app_password(&new(ana, "Script", 2, 1_800_000_050), 10).await.expect("create");
    let second = second.expect("stored");
    assert_ne!(first, second);
    store.create_app_password(&new(bia, "Dela", 3, 1_800_000_060), 10).await.expect("create").expect("stored");

    let list = store.app_passwords(ana, 10).await.expect("list");
    assert_eq!(
        list.iter().map(|p| (p.id, p.name.as_str(), p.created_at, p.last_used_at)).collect::<Vec<_>>(),
        [(first, "Cliente SUAP", 1_800_000_000, None), (second, "Script", 1_800_000_050, None)],
        "oldest first, never used"
    );
    assert_eq!(store.app_passwords(ana, 1).await.expect("list").len(), 1, "bounded");

    assert_eq!(store.use_app_password(ana, &[2; 32], 1_800_000_100).await.expect("use"), Some(second));
    assert_eq!(store.use_app_password(ana, &[3; 32], 1_800_000_100).await.expect("use"), None, "not hers");
    assert_eq!(store.use_app_password(bia, &[1; 32], 1_800_000_100).await.expect("use"), None, "not hers either");
    assert_eq!(store.use_app_password(ana, &[9; 32], 1_800_000_100).await.expect("use"), None, "unknown");
    assert_eq!(store.use_app_password(ana, &[2; 32], 1_800_000_200).await.expect("use"), Some(second), "reusable");
    let list = store.app_passwords(ana, 10).await.expect("list");
    assert_eq!(
        list.iter().map(|p| p.last_used_at).collect::<Vec<_>>(),
        [None, Some(1_800_000_200)],
        "the last use is recorded on the one found"
    );
    assert!(store.app_password_exists(ana, first).await.expect("exists"));
    assert!(!store.app_password_exists(bia, first).await.expect("exists"), "another person's id");
}

async fn revoked_only_by_their_owner<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let bia = b.create_user("bia").await;
    let store = b.app_passwords();
    let id = store.create_app_password(&new(ana, "Cliente SUAP", 1, 1_800_000_000), 10).await.expect("create");
    let id = id.expect("stored");
    let kept = store.create_app_password(&new(ana, "Outro", 2, 1_800_000_000), 10).await.expect("create");
    let kept = kept.expect("stored");
    assert_eq!(store.revoke_app_password(bia, id).await.expect("revoke"), None, "another person's id");
    assert!(store.app_password_exists(ana, id).await.expect("exists"));
    assert_eq!(store.revoke_app_password(ana, id).await.expect("revoke").as_deref(), Some("Cliente SUAP"));
    assert_eq!(store.revoke_app_password(ana, id).await.expect("revoke"), None, "once");
    assert!(!store.app_password_exists(ana, id).await.expect("exists"));
    assert_eq!(store.use_app_password(ana, &[1; 32], 1_800_000_100).await.expect("use"), None, "a revoked one");
    let left: Vec<i64> = store.app_passwords(ana, 10).await.expect("list").iter().map(|p| p.id).collect();
    assert_eq!(left, [kept], "only that one");
}

async fn the_limit_per_account_holds_under_concurrency<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let bia = b.create_user("bia").await;
    let store = b.app_passwords();
    store.create_app_password(&new(ana, "Primeira", 200, 1_800_000_000), 3).await.expect("create").expect("stored");
    let tasks: Vec<_> = (0..12u8)
        .map(|i| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                store.create_app_password(&new(ana, &format!("N{i}"), i, 1_800_000_000), 3).await.expect("create")
            })
        })
        .collect();
    let mut stored = 0;
    for task in tasks {
        stored += usize::from(task.await.expect("joined").is_some());
    }
    assert_eq!(stored, 2, "of concurrent creations only as many as the limit leaves are stored");
    assert_eq!(store.app_passwords(ana, 100).await.expect("list").len(), 3);
    assert_eq!(store.create_app_password(&new(ana, "Mais", 99, 1_800_000_000), 3).await.expect("create"), None);
    assert!(
        store.create_app_password(&new(bia, "Dela", 99, 1_800_000_000), 3).await.expect("create").is_some(),
        "the limit is per account"
    );
}

async fn gone_with_their_account<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let bia = b.create_user("bia").await;
    let store = b.app_passwords();
    store.create_app_password(&new(ana, "Cliente SUAP", 1, 1_800_000_000), 10).await.expect("create");
    store.create_app_password(&new(bia, "Dela", 2, 1_800_000_000), 10).await.expect("create");
    b.execute(&format!("DELETE FROM users WHERE id = {}", ana.0)).await;
    assert_eq!(b.count(&format!("SELECT count(*) FROM application_passwords WHERE user_id = {}", ana.0)).await, 0);
    assert_eq!(b.count("SELECT count(*) FROM application_passwords").await, 1, "another account's are kept");
}
