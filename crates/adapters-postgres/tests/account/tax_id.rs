//! Tax-id validation state: the attempts window (also under a race), the
//! validated flag and the frozen CPF.

use std::sync::Arc;

use credencial_adapters_postgres::account::PgTaxIdValidationStore;
use credencial_adapters_postgres::testing::TestDatabase;
use credencial_adapters_postgres::PgProfileRepository;
use credencial_domain::account::{attempt_verdict, tax_id::window_start, AttemptVerdict, MAX_VALIDATION_ATTEMPTS};
use credencial_domain::{Cpf, UserId};
use credencial_ports::account::{CpfChange, TaxIdValidationStore};
use credencial_ports::{ProfileRepository, RepositoryError};

use crate::support::{user, NOW};

const HOUR: i64 = 3_600;
const ANA_CPF: &str = "52998224725";
const OTHER_CPF: &str = "11144477735";

fn cpf(raw: &str) -> Cpf {
    Cpf::parse(raw).expect("valid CPF")
}

#[tokio::test]
async fn five_attempts_are_recorded_in_a_day_then_none_until_the_oldest_leaves_the_window() {
    let db = TestDatabase::new().await;
    let ana = user(&db, "ana", Some(ANA_CPF)).await;
    let store = PgTaxIdValidationStore::new(db.pool.clone());
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
    assert_eq!(store.purge_attempts_before(window_start(next_day) + 1).await.expect("purge"), 1);
}

#[tokio::test]
async fn racing_attempts_never_exceed_the_limit() {
    let db = TestDatabase::new().await;
    let store = Arc::new(PgTaxIdValidationStore::new(db.pool.clone()));
    // Several accounts, twelve attempts each at once: a lost race shows up in
    // at least one of them.
    for round in 0..6 {
        let person = user(&db, &format!("person{round}"), None).await;
        let tasks: Vec<_> = (0..12)
            .map(|_| {
                let store = Arc::clone(&store);
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

#[tokio::test]
async fn attempts_are_counted_per_account() {
    let db = TestDatabase::new().await;
    let ana = user(&db, "ana", Some(ANA_CPF)).await;
    let bruno = user(&db, "bruno", None).await;
    let store = PgTaxIdValidationStore::new(db.pool.clone());
    for _ in 0..5 {
        store.record_attempt(ana, NOW, window_start(NOW), 5).await.expect("record");
    }
    assert!(store.record_attempt(bruno, NOW, window_start(NOW), 5).await.expect("bruno's first"));
    assert!(!store.record_attempt(UserId(424_242), NOW, window_start(NOW), 5).await.expect("no such user"));
}

#[tokio::test]
async fn validation_sets_the_flag_the_profile_reads_only_for_the_cpf_that_was_checked() {
    let db = TestDatabase::new().await;
    let ana = user(&db, "ana", Some(ANA_CPF)).await;
    let store = PgTaxIdValidationStore::new(db.pool.clone());
    assert!(!store.set_validated(ana, &cpf(OTHER_CPF)).await.expect("another CPF"), "the CPF changed meanwhile");
    let profiles = PgProfileRepository::new(db.pool.clone());
    assert!(!profiles.own_profile(ana).await.expect("read").expect("ana").receita_validated);
    assert!(store.set_validated(ana, &cpf(ANA_CPF)).await.expect("validate"));
    assert!(profiles.own_profile(ana).await.expect("read").expect("ana").receita_validated);
    assert!(!store.set_validated(UserId(424_242), &cpf(ANA_CPF)).await.expect("no such user"));
}

#[tokio::test]
async fn the_cpf_changes_until_the_account_is_validated_and_never_after() {
    let db = TestDatabase::new().await;
    let ana = user(&db, "ana", None).await;
    let bruno = user(&db, "bruno", Some(OTHER_CPF)).await;
    let store = PgTaxIdValidationStore::new(db.pool.clone());
    assert_eq!(store.change_cpf(ana, &cpf(ANA_CPF)).await.expect("set"), CpfChange::Changed);
    assert!(matches!(store.change_cpf(ana, &cpf(OTHER_CPF)).await, Err(RepositoryError::Conflict(_))), "bruno's");
    assert!(store.set_validated(ana, &cpf(ANA_CPF)).await.expect("validate"));

    assert_eq!(store.change_cpf(ana, &cpf("12345678909")).await.expect("refused"), CpfChange::Validated);
    assert_eq!(store.change_cpf(ana, &cpf(ANA_CPF)).await.expect("same"), CpfChange::Changed, "unchanged is fine");
    assert_eq!(store.change_cpf(UserId(424_242), &cpf(ANA_CPF)).await.expect("none"), CpfChange::NotFound);
    // Any other writer is refused by the database itself.
    let refused = sqlx::query("UPDATE users SET cpf = '12345678909' WHERE id = $1").bind(ana.0).execute(&db.pool).await;
    assert!(refused.expect_err("frozen").to_string().contains("validated account"));
    let refused = sqlx::query("UPDATE users SET cpf = NULL, receita_validated = FALSE WHERE id = $1")
        .bind(ana.0)
        .execute(&db.pool)
        .await;
    assert!(refused.is_err(), "not even while clearing the flag in the same statement");
    let (stored,): (Option<String>,) =
        sqlx::query_as("SELECT cpf FROM users WHERE id = $1").bind(ana.0).fetch_one(&db.pool).await.expect("row");
    assert_eq!(stored.as_deref(), Some(ANA_CPF));
    // Other accounts are not affected by the guard.
    assert_eq!(store.change_cpf(bruno, &cpf("12345678909")).await.expect("bruno"), CpfChange::Changed);
}
