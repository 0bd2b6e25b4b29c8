//! Tax-id validation state: the attempts window (also under a race), the
//! validated flag and the frozen CPF.

use credencial_domain::account::{attempt_verdict, tax_id::window_start, AttemptVerdict, MAX_VALIDATION_ATTEMPTS};
use credencial_domain::{Cpf, UserId};
use credencial_ports::account::CpfChange;
use credencial_ports::RepositoryError;
use credencial_storage_contract::{contract, Backend};

use super::support::{user, NOW};

contract!(
    five_attempts_are_recorded_in_a_day_then_none_until_the_oldest_leaves_the_window,
    racing_attempts_never_exceed_the_limit,
    attempts_are_counted_per_account,
    validation_sets_the_flag_the_profile_reads_only_for_the_cpf_that_was_checked,
    the_cpf_changes_until_the_account_is_validated_and_never_after,
);

const HOUR: i64 = 3_600;
const ANA_CPF: &str = "52998224725";
const OTHER_CPF: &str = "11144477735";

fn cpf(raw: &str) -> Cpf {
    Cpf::parse(raw).expect("valid CPF")
}

async fn five_attempts_are_recorded_in_a_day_then_none_until_the_oldest_leaves_the_window<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", Some(ANA_CPF)).await;
    let store = b.tax_id();
    for i in 0..5 {
        let at = NOW + i * HOUR;
        assert!(store.record_attempt(ana, at, window_start(at), MAX_VALIDATION_ATTEMPTS).await.expect("record"));
    }
    let sixth = NOW + 5 * HOUR;
    assert!(!store.record_attempt(ana, sixth, window_start(sixth), MAX_VALIDATION_ATTEMPTS).await.expect("refused"));
    let attempts = store.attempts_since(ana, window_start(sixth)).await.expect("read");
    assert_eq!(attempts, (0..5).map(|i| NOW + i * HOUR).collect::<Vec<_>>(), "the refused one is not recorded");
    assert_eq!(attempt_verdict(&attempts, sixth), AttemptVerdict::Limited { retry_after_secs: 19 * HOUR });

    // 24 h after the first attempt it no longer counts.
    let next_day = NOW + 24 * HOUR;
    assert!(store.record_attempt(ana, next_day, window_start(next_day), MAX_VALIDATION_ATTEMPTS).await.expect("again"));
    assert_eq!(store.attempts_since(ana, window_start(next_day)).await.expect("read").len(), 5);
    assert_eq!(store.purge_attempts_before(window_start(next_day) + 1, 1).await.expect("purge"), 1);
    assert_eq!(store.purge_attempts_before(window_start(next_day) + 1, 1).await.expect("again"), 0);
    assert_eq!(store.attempts_since(ana, 0).await.expect("read").len(), 5, "the purge kept the others");
}

async fn racing_attempts_never_exceed_the_limit<B: Backend>() {
    let b = B::fresh().await;
    let store = b.tax_id();
    // Several accounts, twelve attempts each at once: a lost race shows up in
    // at least one of them.
    for round in 0..6 {
        let person = user(&b, &format!("person{round}"), None).await;
        let tasks: Vec<_> = (0..12)
            .map(|_| {
                let store = store.clone();
                tokio::spawn(async move {
                    store.record_attempt(person, NOW, window_start(NOW), MAX_VALIDATION_ATTEMPTS).await.expect("record")
                })
            })
            .collect();
        let mut recorded = 0;
        for t in tasks {
            recorded += u32::from(t.await.expect("join"));
        }
        assert_eq!(recorded, MAX_VALIDATION_ATTEMPTS, "round {round}");
        assert_eq!(store.attempts_since(person, window_start(NOW)).await.expect("read").len(), 5, "round {round}");
    }
}

async fn attempts_are_counted_per_account<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", Some(ANA_CPF)).await;
    let bruno = user(&b, "bruno", None).await;
    let store = b.tax_id();
    for _ in 0..5 {
        store.record_attempt(ana, NOW, window_start(NOW), 5).await.expect("record");
    }
    assert!(!store.record_attempt(ana, NOW, window_start(NOW), 5).await.expect("ana's sixth"));
    assert!(store.record_attempt(bruno, NOW, window_start(NOW), 5).await.expect("bruno's first"));
    assert!(!store.record_attempt(UserId(424_242), NOW, window_start(NOW), 5).await.expect("no such user"));
}

async fn validation_sets_the_flag_the_profile_reads_only_for_the_cpf_that_was_checked<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", Some(ANA_CPF)).await;
    let store = b.tax_id();
    assert!(!store.set_validated(ana, &cpf(OTHER_CPF)).await.expect("another CPF"), "the CPF changed meanwhile");
    let profiles = b.profiles();
    assert!(!profiles.own_profile(ana).await.expect("read").expect("ana").receita_validated);
    assert!(store.set_validated(ana, &cpf(ANA_CPF)).await.expect("validate"));
    assert!(profiles.own_profile(ana).await.expect("read").expect("ana").receita_validated);
    assert!(!store.set_validated(UserId(424_242), &cpf(ANA_CPF)).await.expect("no such user"));
}

async fn the_cpf_changes_until_the_account_is_validated_and_never_after<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let bruno = user(&b, "bruno", Some(OTHER_CPF)).await;
    let store = b.tax_id();
    assert_eq!(store.change_cpf(ana, &cpf(ANA_CPF)).await.expect("set"), CpfChange::Changed);
    assert!(matches!(store.change_cpf(ana, &cpf(OTHER_CPF)).await, Err(RepositoryError::Conflict(_))), "bruno's");
    assert!(store.set_validated(ana, &cpf(ANA_CPF)).await.expect("validate"));

    assert_eq!(store.change_cpf(ana, &cpf("12345678909")).await.expect("refused"), CpfChange::Validated);
    assert_eq!(store.change_cpf(ana, &cpf(ANA_CPF)).await.expect("same"), CpfChange::Changed, "unchanged is fine");
    assert_eq!(store.change_cpf(UserId(424_242), &cpf(ANA_CPF)).await.expect("none"), CpfChange::NotFound);
    // Any other writer is refused by the database itself.
    let refused = b.try_execute(&format!("UPDATE users SET cpf = '12345678909' WHERE id = {}", ana.0)).await;
    assert!(refused.expect_err("frozen").contains("validated account"));
    let refused =
        b.try_execute(&format!("UPDATE users SET cpf = NULL, receita_validated = FALSE WHERE id = {}", ana.0)).await;
    assert!(refused.is_err(), "not even while clearing the flag in the same statement");
    let stored = b.users().find_summary_by_id(ana).await.expect("read").expect("ana");
    assert_eq!(stored.cpf.as_deref(), Some(ANA_CPF));
    // Other accounts are not affected by the guard.
    assert_eq!(store.change_cpf(bruno, &cpf("12345678909")).await.expect("bruno"), CpfChange::Changed);
}
