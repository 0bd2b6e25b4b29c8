//! The last active staff account: neither its staff flag nor its
//! activation can be taken away, and the check is atomic — of two
//! concurrent changes on different handles (two instances, or a CLI
//! command beside the service) that would each leave the other account as
//! the last one, exactly one is stored.

use std::sync::Arc;

use credencial_domain::admin::{Actor, AuditAction, AuditTarget, NewAuditEntry};
use credencial_domain::UserId;
use credencial_ports::{AccessChange, AccountAdminStore, UserRepository};
use credencial_storage_contract::{contract, Backend};

use crate::race::at_once;

contract!(
    the_last_active_staff_account_is_neither_demoted_nor_deactivated,
    of_two_concurrent_demotions_of_the_only_two_staff_accounts_exactly_one_wins,
    of_two_concurrent_deactivations_of_the_only_two_staff_accounts_exactly_one_wins,
    of_a_demotion_and_a_deactivation_at_once_exactly_one_wins,
);

/// Rounds of each race: a lost race shows in some rounds only.
const ROUNDS: usize = 8;

fn entry(action: AuditAction, target: &str) -> NewAuditEntry {
    NewAuditEntry::new(Actor::Cli { os_user: "root".into() }, action, AuditTarget::User(target.into()))
}

async fn staff<B: Backend>(b: &B, id: UserId, on: bool) -> AccessChange {
    b.users().set_staff(id, on, &entry(AuditAction::UserStaff, "x")).await.expect("set_staff")
}

async fn active<B: Backend>(b: &B, id: UserId, on: bool) -> AccessChange {
    let action = if on { AuditAction::UserReactivate } else { AuditAction::UserDeactivate };
    b.account_admin().set_active(id, on, &entry(action, "x")).await.expect("set_active")
}

async fn active_staff<B: Backend>(b: &B) -> i64 {
    b.count("SELECT count(*) FROM users WHERE is_active AND is_staff").await
}

async fn entries<B: Backend>(b: &B) -> i64 {
    b.count("SELECT count(*) FROM audit_log").await
}

async fn the_last_active_staff_account_is_neither_demoted_nor_deactivated<B: Backend>() {
    let b = B::fresh().await;
    let (ana, bruno, carla) = (b.create_user("ana").await, b.create_user("bruno").await, b.create_user("carla").await);
    assert_eq!(staff(&b, ana, true).await, AccessChange::Changed);
    let before = entries(&b).await;
    assert_eq!(staff(&b, ana, false).await, AccessChange::LastStaff);
    assert_eq!(active(&b, ana, false).await, AccessChange::LastStaff);
    assert_eq!((active_staff(&b).await, entries(&b).await), (1, before), "nothing stored, nothing audited");

    // Whoever is not active staff may lose what they have.
    assert_eq!(active(&b, bruno, false).await, AccessChange::Changed);
    assert_eq!(staff(&b, bruno, false).await, AccessChange::Changed);
    assert_eq!(staff(&b, carla, true).await, AccessChange::Changed);
    assert_eq!(active(&b, carla, false).await, AccessChange::Changed, "ana stays");
    assert_eq!(staff(&b, carla, false).await, AccessChange::Changed, "an inactive staff account is no staff");
    // An inactive staff account does not count: ana is still the last.
    assert_eq!(staff(&b, carla, true).await, AccessChange::Changed);
    assert_eq!(staff(&b, ana, false).await, AccessChange::LastStaff);

    // Once another account is active staff, ana may go; then that one is the last.
    assert_eq!(active(&b, carla, true).await, AccessChange::Changed);
    assert_eq!(staff(&b, ana, false).await, AccessChange::Changed);
    assert_eq!(active(&b, carla, false).await, AccessChange::LastStaff);
    assert_eq!(staff(&b, carla, false).await, AccessChange::LastStaff);
    assert_eq!(active_staff(&b).await, 1);
    // Granting is never refused; an unknown account is unknown.
    assert_eq!(staff(&b, ana, true).await, AccessChange::Changed);
    assert_eq!(staff(&b, UserId(carla.0 + 99), false).await, AccessChange::NotFound);
    assert_eq!(active(&b, UserId(carla.0 + 99), false).await, AccessChange::NotFound);
}

/// How each of the two racers takes access away.
#[derive(Clone, Copy)]
enum Take {
    Staff,
    Activation,
}

/// `ana` and `bruno` active staff, everyone else not; then `ana` (on this
/// handle) and `bruno` (on a second one) each take `how[i]` from the other
/// at once, [`ROUNDS`] times: exactly one wins each round and one active
/// staff account remains, with one audit entry per stored change.
async fn race<B: Backend>(how: [Take; 2]) {
    let b = B::fresh().await;
    let (ana, bruno) = (b.create_user("ana").await, b.create_user("bruno").await);
    let (second_users, second_admin) = b.second_handle().await;
    let handles: [(Arc<dyn UserRepository>, Arc<dyn AccountAdminStore>); 2] =
        [(b.users(), b.account_admin()), (second_users, second_admin)];
    for round in 0..ROUNDS {
        b.execute("UPDATE users SET is_active = TRUE, is_staff = TRUE").await;
        let before = entries(&b).await;
        let outcomes = at_once(2, |i| {
            let (users, admin) = handles[i].clone();
            let target = if i == 0 { bruno } else { ana };
            let how = how[i];
            async move {
                match how {
                    Take::Staff => users.set_staff(target, false, &entry(AuditAction::UserStaff, "x")).await,
                    Take::Activation => admin.set_active(target, false, &entry(AuditAction::UserDeactivate, "x")).await,
                }
                .expect("no storage error")
            }
        })
        .await;
        let won = outcomes.iter().filter(|o| **o == AccessChange::Changed).count();
        let refused = outcomes.iter().filter(|o| **o == AccessChange::LastStaff).count();
        assert_eq!((won, refused), (1, 1), "round {round}: {outcomes:?}");
        assert_eq!(active_staff(&b).await, 1, "round {round}: one active staff account remains");
        assert_eq!(entries(&b).await, before + 1, "round {round}: the winner's entry only");
    }
}

async fn of_two_concurrent_demotions_of_the_only_two_staff_accounts_exactly_one_wins<B: Backend>() {
    race::<B>([Take::Staff, Take::Staff]).await;
}

async fn of_two_concurrent_deactivations_of_the_only_two_staff_accounts_exactly_one_wins<B: Backend>() {
    race::<B>([Take::Activation, Take::Activation]).await;
}

async fn of_a_demotion_and_a_deactivation_at_once_exactly_one_wins<B: Backend>() {
    race::<B>([Take::Staff, Take::Activation]).await;
}
