//! The access log: appends (also concurrent), pages with the client's name,
//! append-only, batched purge.

use credencial_domain::account::AccessLogPage;
use credencial_domain::oauth::ClientId;
use credencial_domain::UserId;
use credencial_ports::account::AccessLogEntry;
use credencial_storage_contract::{contract, Backend, Engine};

use super::support::{client, client_id, scopes, user, NOW};

contract!(
    entries_are_listed_newest_first_fifty_a_page_with_the_client_s_name_and_a_total,
    the_report_keeps_naming_a_client_deleted_since,
    entries_cannot_be_changed,
    a_purge_call_deletes_at_most_the_limit_oldest_first_and_only_older_entries,
    concurrent_appends_are_all_kept,
    an_entry_for_a_user_that_does_not_exist_is_an_error,
);

fn entry(user: UserId, client: &ClientId, at: i64, request_id: &str) -> AccessLogEntry {
    AccessLogEntry {
        user,
        client: client.clone(),
        scopes: scopes("dados_publicos cpf email receita_federal"),
        at,
        request_id: request_id.to_owned(),
    }
}

async fn entries_are_listed_newest_first_fifty_a_page_with_the_client_s_name_and_a_total<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let bruno = user(&b, "bruno", None).await;
    let host = client(&b, "demo-host", "Aplicação de demonstração").await;
    let log = b.access_log();
    for i in 0..120 {
        log.append(entry(ana, &host, NOW + i, &format!("req-{i}"))).await.expect("append");
    }
    log.append(entry(bruno, &host, NOW, "bruno")).await.expect("append");

    let (first, total) = log.list(ana, AccessLogPage::FIRST).await.expect("page 1");
    assert_eq!((first.len(), total), (50, 120));
    assert_eq!(first[0].request_id, "req-119", "newest first");
    assert_eq!(first[0].at, NOW + 119);
    assert_eq!(first[0].client_name, "Aplicação de demonstração");
    assert_eq!(first[0].client_id.as_str(), "demo-host");
    assert_eq!(first[0].scopes, scopes("dados_publicos cpf email receita_federal"));
    let (third, total) = log.list(ana, AccessLogPage::new(3)).await.expect("page 3");
    assert_eq!((third.len(), total), (20, 120));
    assert_eq!(third.last().map(|e| e.request_id.as_str()), Some("req-0"));
    let (past_the_end, total) = log.list(ana, AccessLogPage::new(4)).await.expect("page 4");
    assert_eq!((past_the_end.len(), total), (0, 120), "the total also past the end");
    let (none, total) = log.list(user(&b, "carla", None).await, AccessLogPage::FIRST).await.expect("empty");
    assert_eq!((none.len(), total), (0, 0));
}

async fn the_report_keeps_naming_a_client_deleted_since<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let gone = client(&b, "old-app", "App antigo").await;
    let log = b.access_log();
    log.append(entry(ana, &gone, NOW, "r1")).await.expect("append");
    b.execute("DELETE FROM oauth_clients WHERE client_id = 'old-app'").await;
    let (rows, total) = log.list(ana, AccessLogPage::FIRST).await.expect("list");
    assert_eq!(total, 1);
    assert_eq!((rows[0].client_id.as_str(), rows[0].client_name.as_str()), ("old-app", "old-app"));
}

async fn entries_cannot_be_changed<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let log = b.access_log();
    log.append(entry(ana, &client_id("any-client"), NOW, "r1")).await.expect("append");
    let refused = b.try_execute("UPDATE access_log SET client_id = 'someone-else'").await;
    assert!(refused.expect_err("append-only").contains("append-only"));
    let (rows, _) = log.list(ana, AccessLogPage::FIRST).await.expect("list");
    assert_eq!(rows[0].client_id.as_str(), "any-client");
}

async fn a_purge_call_deletes_at_most_the_limit_oldest_first_and_only_older_entries<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let host = client(&b, "demo-host", "Demo").await;
    let log = b.access_log();
    // 2,500 old entries in one statement, then 3 recent ones.
    b.execute(&match B::ENGINE {
        Engine::Postgres => format!(
            "INSERT INTO access_log (user_id, client_id, scopes, accessed_at, request_id) \
             SELECT {}, 'demo-host', '{{cpf}}', to_timestamp({NOW}) - make_interval(secs => i), 'old-' || i \
             FROM generate_series(1, 2500) AS i",
            ana.0
        ),
        Engine::Sqlite => format!(
            "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 2500) \
             INSERT INTO access_log (user_id, client_id, scopes, accessed_at, request_id) \
             SELECT {}, 'demo-host', '[\"cpf\"]', {NOW} - i, 'old-' || i FROM s",
            ana.0
        ),
    })
    .await;
    for i in 0..3 {
        log.append(entry(ana, &host, NOW + i, &format!("new-{i}"))).await.expect("append");
    }
    let kept = |id: &'static str| {
        let b = &b;
        async move { b.count(&format!("SELECT count(*) FROM access_log WHERE request_id = '{id}'")).await == 1 }
    };
    assert_eq!(log.purge_before(NOW, 1_000).await.expect("purge"), 1_000, "one batch");
    assert!(!kept("old-2500").await && !kept("old-1501").await, "the oldest went first");
    assert!(kept("old-1500").await && kept("old-1").await, "the younger ones wait for the next call");
    assert_eq!(log.purge_before(NOW, 1_000).await.expect("purge"), 1_000);
    assert_eq!(log.purge_before(NOW, 1_000).await.expect("purge"), 500, "a short batch: done");
    let (rows, total) = log.list(ana, AccessLogPage::FIRST).await.expect("list");
    assert_eq!(total, 3);
    assert!(rows.iter().all(|r| r.request_id.starts_with("new-")));
    assert_eq!(log.purge_before(NOW, 1_000).await.expect("purge again"), 0);
    for _ in 0..3 {
        assert_eq!(log.purge_before(NOW + 10, 1).await.expect("batches of one"), 1);
    }
    assert_eq!(log.purge_before(NOW + 10, 1).await.expect("nothing left"), 0);
}

async fn concurrent_appends_are_all_kept<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let host = client(&b, "demo-host", "Demo").await;
    let log = b.access_log();
    let tasks: Vec<_> = (0..40)
        .map(|i| {
            let (log, host) = (log.clone(), host.clone());
            tokio::spawn(async move { log.append(entry(ana, &host, NOW, &format!("r{i}"))).await.expect("append") })
        })
        .collect();
    for t in tasks {
        t.await.expect("join");
    }
    let (rows, total) = log.list(ana, AccessLogPage::FIRST).await.expect("list");
    assert_eq!((rows.len(), total), (40, 40));
}

async fn an_entry_for_a_user_that_does_not_exist_is_an_error<B: Backend>() {
    let b = B::fresh().await;
    let log = b.access_log();
    assert!(log.append(entry(UserId(424_242), &client_id("x"), NOW, "r")).await.is_err());
}
