//! [`credencial_ports::SecondFactorStore`]: a TOTP is pending until
//! confirmed, each step passes once (of concurrent uses exactly one wins),
//! a recovery code is used once, a new set replaces the old.

use std::sync::Arc;

use credencial_ports::{Ceremony, NewPasskey};
use credencial_storage_contract::{contract, Backend};

contract!(
    a_totp_is_pending_until_confirmed_and_a_confirmed_one_is_not_replaced,
    each_step_passes_once_and_of_concurrent_uses_exactly_one_wins,
    recovery_codes_are_used_once_replaced_as_a_set_and_raced_fairly,
    removing_every_factor_removes_both_kinds_and_only_that_persons,
    passkeys_are_unique_per_credential_limited_per_account_and_removed_only_by_their_owner,
    a_ceremony_is_taken_once_before_it_expires_and_purged_after,
);

fn passkey(user: credencial_domain::UserId, credential: &[u8], name: &str) -> NewPasskey {
    NewPasskey {
        user,
        credential_id: credential.to_vec(),
        user_handle: vec![7; 16],
        name: name.to_owned(),
        data: format!("{{\"cred\":\"{name}\"}}"),
        now: 1_800_000_000,
    }
}

async fn passkeys_are_unique_per_credential_limited_per_account_and_removed_only_by_their_owner<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let bia = b.create_user("bia").await;
    let store = b.passkeys();
    let factors = b.second_factors();
    assert!(!factors.has_factor(ana).await.expect("has"), "no factor yet");
    assert!(store.add_passkey(&passkey(ana, b"cred-1", "Notebook"), 2).await.expect("add"));
    assert!(factors.has_factor(ana).await.expect("has"), "a passkey is a factor");
    assert!(
        !store.add_passkey(&passkey(bia, b"cred-1", "Stolen"), 2).await.expect("add"),
        "one credential, one account"
    );
    assert!(store.add_passkey(&passkey(ana, b"cred-2", "Celular"), 2).await.expect("add"));
    assert!(!store.add_passkey(&passkey(ana, b"cred-3", "Third"), 2).await.expect("add"), "the limit holds");
    let list = store.passkeys(ana, 10).await.expect("list");
    assert_eq!(list.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["Notebook", "Celular"], "oldest first");
    assert_eq!(store.passkeys(ana, 1).await.expect("list").len(), 1, "bounded");
    assert!(store.passkeys(bia, 10).await.expect("list").is_empty());

    let found = store.passkey_by_credential(b"cred-2").await.expect("find").expect("found");
    assert_eq!((found.user, found.user_handle.as_slice(), found.last_used_at), (ana, &[7u8; 16][..], None));
    assert_eq!(store.passkey_by_credential(b"nope").await.expect("find"), None);
    store.passkey_used(found.id, None, 1_800_000_100).await.expect("used");
    let used = store.passkey_by_credential(b"cred-2").await.expect("find").expect("found");
    assert_eq!((used.last_used_at, used.data.as_str()), (Some(1_800_000_100), found.data.as_str()), "data kept");
    store.passkey_used(found.id, Some("{\"counter\":2}".into()), 1_800_000_200).await.expect("used");
    assert_eq!(store.passkey_by_credential(b"cred-2").await.expect("find").expect("found").data, "{\"counter\":2}");

    assert!(!store.remove_passkey(bia, found.id).await.expect("remove"), "another person's id removes nothing");
    assert!(store.remove_passkey(ana, found.id).await.expect("remove"));
    assert!(!store.remove_passkey(ana, found.id).await.expect("remove"), "gone");
    assert!(factors.remove_all(ana).await.expect("reset"), "a reset removes the passkeys too");
    assert!(store.passkeys(ana, 10).await.expect("list").is_empty());
    assert!(!factors.has_factor(ana).await.expect("has"));
}

async fn a_ceremony_is_taken_once_before_it_expires_and_purged_after<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let store = b.passkeys();
    let ceremony = |hash: u8, expires_at| Ceremony {
        id_hash: [hash; 32],
        user: Some(ana),
        purpose: "register".into(),
        state: "{}".into(),
        expires_at,
    };
    store.put_ceremony(&ceremony(1, 1_000)).await.expect("put");
    store.put_ceremony(&Ceremony { user: None, ..ceremony(2, 1_000) }).await.expect("put");
    store.put_ceremony(&ceremony(3, 500)).await.expect("put");
    assert_eq!(store.take_ceremony(&[3; 32], 600).await.expect("take"), None, "expired");
    assert_eq!(store.take_ceremony(&[1; 32], 600).await.expect("take"), Some(ceremony(1, 1_000)));
    assert_eq!(store.take_ceremony(&[1; 32], 600).await.expect("take"), None, "taken once");
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let store = Arc::clone(&store);
            tokio::spawn(async move { store.take_ceremony(&[2; 32], 600).await.expect("take").is_some() })
        })
        .collect();
    let mut wins = 0;
    for task in tasks {
        wins += usize::from(task.await.expect("joined"));
    }
    assert_eq!(wins, 1, "of concurrent finishes exactly one gets the ceremony");
    assert_eq!(store.purge_ceremonies(600, 10).await.expect("purge"), 1, "the expired one");
    assert_eq!(store.purge_ceremonies(600, 10).await.expect("purge"), 0);
}

async fn a_totp_is_pending_until_confirmed_and_a_confirmed_one_is_not_replaced<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let store = b.second_factors();
    assert_eq!(store.totp(ana).await.expect("read"), None);
    assert!(store.begin_totp(ana, b"first").await.expect("begin"));
    assert!(store.begin_totp(ana, b"second").await.expect("begin again"), "a pending one is replaced");
    let pending = store.totp(ana).await.expect("read").expect("pending");
    assert_eq!((pending.sealed_secret.as_slice(), pending.confirmed, pending.last_step), (&b"second"[..], false, None));
    assert!(!store.use_totp_step(ana, 5).await.expect("use"), "a pending secret is no factor");
    assert!(store.confirm_totp(ana, 100, 1_800_000_000).await.expect("confirm"));
    assert!(!store.confirm_totp(ana, 101, 1_800_000_000).await.expect("confirm"), "once");
    let confirmed = store.totp(ana).await.expect("read").expect("confirmed");
    assert_eq!((confirmed.confirmed, confirmed.last_step), (true, Some(100)));
    assert!(!store.begin_totp(ana, b"third").await.expect("begin"), "a confirmed secret stays");
    assert_eq!(store.totp(ana).await.expect("read").expect("kept").sealed_secret, b"second");
    assert!(store.remove_totp(ana).await.expect("remove"));
    assert_eq!(store.totp(ana).await.expect("read"), None);
    assert!(!store.remove_totp(ana).await.expect("remove"));
}

async fn each_step_passes_once_and_of_concurrent_uses_exactly_one_wins<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let store = b.second_factors();
    store.begin_totp(ana, b"s").await.expect("begin");
    store.confirm_totp(ana, 100, 1).await.expect("confirm");
    assert!(!store.use_totp_step(ana, 100).await.expect("use"), "the confirming step is used");
    assert!(!store.use_totp_step(ana, 99).await.expect("use"), "an earlier step");
    assert!(store.use_totp_step(ana, 101).await.expect("use"));
    assert!(!store.use_totp_step(ana, 101).await.expect("use"), "replayed");

    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let store = Arc::clone(&store);
            tokio::spawn(async move { store.use_totp_step(ana, 102).await.expect("use") })
        })
        .collect();
    let mut wins = 0;
    for task in tasks {
        wins += usize::from(task.await.expect("joined"));
    }
    assert_eq!(wins, 1, "two submissions of one code: exactly one wins");
}

async fn recovery_codes_are_used_once_replaced_as_a_set_and_raced_fairly<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let bia = b.create_user("bia").await;
    let store = b.second_factors();
    let first: Vec<[u8; 32]> = (0..10u8).map(|i| [i; 32]).collect();
    store.replace_recovery_codes(ana, &first).await.expect("set");
    store.replace_recovery_codes(bia, &[[1; 32]]).await.expect("set");
    assert_eq!(store.recovery_codes_left(ana).await.expect("count"), 10);
    assert!(store.use_recovery_code(ana, &[3; 32]).await.expect("use"));
    assert!(!store.use_recovery_code(ana, &[3; 32]).await.expect("use"), "single use");
    assert!(!store.use_recovery_code(ana, &[42; 32]).await.expect("use"), "not a code");
    assert_eq!(store.recovery_codes_left(ana).await.expect("count"), 9);

    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let store = Arc::clone(&store);
            tokio::spawn(async move { store.use_recovery_code(ana, &[4; 32]).await.expect("use") })
        })
        .collect();
    let mut wins = 0;
    for task in tasks {
        wins += usize::from(task.await.expect("joined"));
    }
    assert_eq!(wins, 1, "of concurrent uses of one code exactly one wins");

    let second: Vec<[u8; 32]> = (20..30u8).map(|i| [i; 32]).collect();
    store.replace_recovery_codes(ana, &second).await.expect("regenerate");
    assert_eq!(store.recovery_codes_left(ana).await.expect("count"), 10);
    assert!(!store.use_recovery_code(ana, &[5; 32]).await.expect("use"), "the old set died");
    assert!(store.use_recovery_code(ana, &[25; 32]).await.expect("use"));
    assert!(store.use_recovery_code(bia, &[1; 32]).await.expect("use"), "bia's untouched");
}

async fn removing_every_factor_removes_both_kinds_and_only_that_persons<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let bia = b.create_user("bia").await;
    let store = b.second_factors();
    for user in [ana, bia] {
        store.begin_totp(user, b"s").await.expect("begin");
        store.confirm_totp(user, 1, 1).await.expect("confirm");
        store.replace_recovery_codes(user, &[[9; 32]]).await.expect("codes");
    }
    assert!(store.remove_all(ana).await.expect("reset"));
    assert_eq!(store.totp(ana).await.expect("read"), None);
    assert_eq!(store.recovery_codes_left(ana).await.expect("count"), 0);
    assert!(!store.remove_all(ana).await.expect("reset"), "nothing left");
    assert!(store.totp(bia).await.expect("read").is_some());
    assert_eq!(store.recovery_codes_left(bia).await.expect("count"), 1);
}
