//! [`AuditTrail`]: entries appended are listed newest first as recorded,
//! filtered by actor or target ignoring case, in pages read by key with a
//! count that stops at its bound; an
//! entry the trail refuses leaves nothing.

use credencial_domain::admin::{Actor, AuditAction, AuditFilter, AuditTarget, NewAuditEntry, COUNT_LIMIT};
use credencial_domain::oauth::ClientId;
use credencial_domain::UserId;
use credencial_ports::RepositoryError;
use credencial_storage_contract::{contract, Backend};

fn staff(username: &str) -> Actor {
    Actor::Staff { id: UserId(7), username: username.into() }
}

fn portal() -> ClientId {
    ClientId::parse("portal").expect("client id")
}

fn all() -> AuditFilter {
    AuditFilter::default()
}

async fn appended_entries_are_listed_newest_first_as_recorded<B: Backend>() {
    let b = B::fresh().await;
    let trail = b.audit();
    let first = NewAuditEntry::new(staff("Admin"), AuditAction::ClientDeactivate, AuditTarget::Client(portal()))
        .with("is_active", "false")
        .with("name", "Portal \"novo\" — ção");
    let mut second = NewAuditEntry::new(
        Actor::Cli { os_user: "root".into() },
        AuditAction::UserCreate,
        AuditTarget::User("ana".into()),
    );
    second.request_id = Some("req-42".into());
    let third = NewAuditEntry::new(Actor::Application(portal()), AuditAction::ClientUpdate, AuditTarget::None);
    for entry in [&first, &second, &third] {
        trail.append(entry).await.expect("append");
    }

    let (entries, total) = trail.list(&all(), None, 10).await.expect("list");
    assert_eq!(total, 3);
    let shown: Vec<(&str, &str, &str, &str, &str)> = entries
        .iter()
        .map(|e| {
            (e.actor_kind.as_str(), e.actor.as_str(), e.action.as_str(), e.target_kind.as_str(), e.target.as_str())
        })
        .collect();
    assert_eq!(
        shown,
        [
            ("application", "portal", "client.update", "none", ""),
            ("cli", "root", "user.create", "user", "ana"),
            ("staff", "Admin", "client.deactivate", "client", "portal"),
        ]
    );
    assert!(entries[0].id > entries[1].id && entries[1].id > entries[2].id, "ids increase with each entry");
    assert_eq!(entries[1].request_id.as_deref(), Some("req-42"));
    assert_eq!(entries[2].request_id, None);
    assert_eq!(entries[2].changes, first.changes, "the changed fields, in order");
    assert!(entries[0].changes.is_empty());
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs();
    let now = i64::try_from(now).expect("seconds");
    assert!(entries.iter().all(|e| (now - 60..=now + 1).contains(&e.at)), "recorded at the time of the append");
}

async fn the_trail_is_filtered_by_actor_or_target_ignoring_case<B: Backend>() {
    let b = B::fresh().await;
    let trail = b.audit();
    let entries = [
        NewAuditEntry::new(staff("Admin"), AuditAction::UserDeactivate, AuditTarget::User("Ana".into())),
        NewAuditEntry::new(staff("admin"), AuditAction::ClientUpdate, AuditTarget::Client(portal())),
        NewAuditEntry::new(staff("bruno"), AuditAction::UserReactivate, AuditTarget::User("ana".into())),
        NewAuditEntry::new(staff("administrador"), AuditAction::UserReactivate, AuditTarget::User("anabela".into())),
    ];
    for entry in &entries {
        trail.append(entry).await.expect("append");
    }
    let by = |actor: Option<&str>, target: Option<&str>| AuditFilter {
        actor: actor.map(str::to_owned),
        target: target.map(str::to_owned),
    };
    let listed = |filter: AuditFilter| {
        let trail = trail.clone();
        async move {
            let (entries, total) = trail.list(&filter, None, 10).await.expect("list");
            (entries.into_iter().map(|e| format!("{}>{}", e.actor, e.target)).collect::<Vec<_>>(), total)
        }
    };
    assert_eq!(listed(by(Some("ADMIN"), None)).await, (vec!["admin>portal".into(), "Admin>Ana".into()], 2));
    assert_eq!(listed(by(None, Some("ana"))).await, (vec!["bruno>ana".into(), "Admin>Ana".into()], 2), "whole names");
    assert_eq!(listed(by(Some("admin"), Some("ANA"))).await, (vec!["Admin>Ana".into()], 1));
    assert_eq!(listed(by(Some("%"), None)).await, (vec![], 0), "no pattern matching");
    assert_eq!(listed(all()).await.1, 4);
}

async fn pages_are_read_by_key_and_the_filter_holds_on_every_page<B: Backend>() {
    let b = B::fresh().await;
    let trail = b.audit();
    for i in 0..5 {
        for actor in ["admin", "bruno"] {
            let entry =
                NewAuditEntry::new(staff(actor), AuditAction::UserReactivate, AuditTarget::User(format!("u{i}")));
            trail.append(&entry).await.expect("append");
        }
    }
    let admin = AuditFilter { actor: Some("admin".into()), target: None };
    let page = |before: Option<i64>| {
        let (trail, admin) = (trail.clone(), admin.clone());
        async move {
            let (entries, counted) = trail.list(&admin, before, 2).await.expect("list");
            let last = entries.last().map(|e| e.id);
            (entries.into_iter().map(|e| format!("{}>{}", e.actor, e.target)).collect::<Vec<_>>(), counted, last)
        }
    };
    let (first, counted, last) = page(None).await;
    assert_eq!((first, counted), (vec!["admin>u4".to_owned(), "admin>u3".to_owned()], 5));
    let (second, counted, last) = page(last).await;
    assert_eq!((second, counted), (vec!["admin>u2".to_owned(), "admin>u1".to_owned()], 5), "older than the last shown");
    let (third, _, last) = page(last).await;
    assert_eq!(third, vec!["admin>u0".to_owned()]);
    assert_eq!(page(last).await.0, Vec::<String>::new(), "past the oldest: empty");
    assert_eq!(page(Some(i64::MAX)).await.0.len(), 2, "any id is a place in the trail");
}

async fn the_count_stops_past_its_bound<B: Backend>() {
    let b = B::fresh().await;
    let over = COUNT_LIMIT + 5;
    b.execute(&format!(
        "INSERT INTO audit_log (actor_kind, actor, action, target_kind, target) \
         SELECT 'cli', 'root', 'user.create', 'none', '' FROM ({}) AS n",
        numbers(over)
    ))
    .await;
    let (entries, counted) = b.audit().list(&all(), None, 3).await.expect("list");
    assert_eq!(entries.len(), 3);
    assert_eq!(counted, COUNT_LIMIT + 1, "counted up to the bound, not to the end");
    assert_eq!(b.count("SELECT count(*) FROM audit_log").await, i64::try_from(over).expect("count"));
}

/// A subquery of `n` rows (1 to `n`) that both engines run.
fn numbers(n: u64) -> String {
    format!("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {n}) SELECT i FROM n")
}

async fn an_entry_the_trail_refuses_is_an_error_and_leaves_nothing<B: Backend>() {
    let b = B::fresh().await;
    let trail = b.audit();
    let refused =
        NewAuditEntry::new(Actor::Cli { os_user: "x".repeat(201) }, AuditAction::UserCreate, AuditTarget::None);
    let e = trail.append(&refused).await.expect_err("an actor name over 200 characters");
    assert!(matches!(e, RepositoryError::Unexpected(_)), "{e:?}");
    assert_eq!(trail.list(&all(), None, 10).await.expect("list").1, 0);
}

contract!(
    appended_entries_are_listed_newest_first_as_recorded,
    the_trail_is_filtered_by_actor_or_target_ignoring_case,
    pages_are_read_by_key_and_the_filter_holds_on_every_page,
    the_count_stops_past_its_bound,
    an_entry_the_trail_refuses_is_an_error_and_leaves_nothing,
);
