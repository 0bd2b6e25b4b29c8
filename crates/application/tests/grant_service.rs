//! Tests of `GrantService` (authorized applications, revocation, the
//! access report and its retention) over fakes of the ports.

use std::sync::Arc;

use credencial_application::{GrantService, ServiceError};
use credencial_domain::account::AccessLogPage;
use credencial_domain::oauth::ClientId;
use credencial_domain::{ScopeSet, UserId};
use credencial_ports::account::{AccessLogRow, GrantSummary, MockAccessLog, MockGrantRepository};
use credencial_ports::{MockClock, RepositoryError};
use mockall::predicate::eq;

const NOW: i64 = 1_700_000_000;
const ANA: UserId = UserId(7);
const DAY: i64 = 86_400;

fn clock() -> MockClock {
    let mut clock = MockClock::new();
    clock.expect_now().return_const(NOW);
    clock
}

fn service(grants: MockGrantRepository, log: MockAccessLog, retention_days: u32) -> GrantService {
    GrantService::new(Arc::new(grants), Arc::new(log), Arc::new(clock()), retention_days)
}

fn id(raw: &str) -> ClientId {
    ClientId::parse(raw).expect("client id")
}

fn scopes(text: &str) -> ScopeSet {
    ScopeSet::parse_strict(text).expect("known scopes")
}

#[tokio::test]
async fn authorized_applications_show_what_each_client_may_read_the_required_scopes_included() {
    let mut grants = MockGrantRepository::new();
    grants.expect_list().with(eq(ANA)).times(1).returning(|_| {
        Ok(vec![
            GrantSummary {
                client_id: id("portal"),
                client_name: "Portal do Servidor".into(),
                scopes: scopes("cnes"),
                first_granted_at: NOW - 10 * DAY,
                last_used_at: NOW - DAY,
            },
            GrantSummary {
                client_id: id("spa"),
                client_name: "SPA".into(),
                scopes: ScopeSet::empty(),
                first_granted_at: NOW - 20 * DAY,
                last_used_at: NOW - 2 * DAY,
            },
        ])
    });
    let apps = service(grants, MockAccessLog::new(), 1825).authorized_applications(ANA).await.expect("list");
    let shown: Vec<_> = apps.iter().map(|a| (a.client_name.as_str(), a.scopes.to_scope_string())).collect();
    assert_eq!(
        shown,
        [
            ("Portal do Servidor", "dados_publicos cpf email cnes".to_owned()),
            ("SPA", "dados_publicos cpf email".to_owned())
        ]
    );
    assert_eq!((apps[0].first_granted_at, apps[0].last_used_at), (NOW - 10 * DAY, NOW - DAY), "dates as stored");
}

#[tokio::test]
async fn revoking_goes_to_the_repository_for_that_person_and_client_and_says_whether_there_was_a_grant() {
    let mut grants = MockGrantRepository::new();
    grants
        .expect_revoke()
        .withf(|user, client| *user == ANA && client.as_str() == "portal")
        .times(1)
        .returning(|_, _| Ok(true));
    grants.expect_revoke().withf(|_, client| client.as_str() == "never").times(1).returning(|_, _| Ok(false));
    let svc = service(grants, MockAccessLog::new(), 1825);
    assert!(svc.revoke(ANA, &id("portal")).await.expect("revoke"));
    assert!(!svc.revoke(ANA, &id("never")).await.expect("nothing to revoke"));
}

#[tokio::test]
async fn a_revocation_that_fails_is_a_storage_error() {
    let mut grants = MockGrantRepository::new();
    grants.expect_revoke().returning(|_, _| Err(RepositoryError::Unexpected("down".into())));
    let result = service(grants, MockAccessLog::new(), 1825).revoke(ANA, &id("portal")).await;
    assert!(matches!(result, Err(ServiceError::Storage(_))), "{result:?}");
}

#[tokio::test]
async fn the_access_report_is_paged_fifty_at_a_time_with_the_total() {
    let mut log = MockAccessLog::new();
    log.expect_list().with(eq(ANA), eq(AccessLogPage::new(3))).times(1).returning(|_, _| {
        let row = AccessLogRow {
            client_id: id("portal"),
            client_name: "Portal do Servidor".into(),
            scopes: scopes("dados_publicos cpf email cnes"),
            at: NOW,
            request_id: "0f5e3c1a-0000-4000-8000-000000000000".into(),
        };
        Ok((vec![row], 101))
    });
    let report =
        service(MockGrantRepository::new(), log, 1825).access_report(ANA, AccessLogPage::new(3)).await.expect("report");
    assert_eq!((report.page.number(), report.pages, report.total, report.entries.len()), (3, 3, 101, 1));
    assert_eq!(report.entries[0].client_name, "Portal do Servidor");
}

#[tokio::test]
async fn an_empty_report_has_one_empty_page() {
    let mut log = MockAccessLog::new();
    log.expect_list().returning(|_, _| Ok((vec![], 0)));
    let report =
        service(MockGrantRepository::new(), log, 1825).access_report(ANA, AccessLogPage::FIRST).await.expect("ok");
    assert_eq!((report.pages, report.total), (1, 0));
    assert!(report.entries.is_empty());
}

#[tokio::test]
async fn one_purge_batch_deletes_entries_older_than_the_retention_up_to_the_limit() {
    for (days, before) in [(1825, NOW - 1825 * DAY), (1, NOW - DAY)] {
        let mut log = MockAccessLog::new();
        log.expect_purge_before().with(eq(before), eq(1_000)).times(1).returning(|_, _| Ok(42));
        assert_eq!(service(MockGrantRepository::new(), log, days).purge_access_log(1_000).await.expect("purge"), 42);
    }
}
