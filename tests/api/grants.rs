//! Revocation and the access report over real HTTP (issue 12, items 5 and
//! 6): tokens from the real flow, the use cases the `/conta/` pages call
//! (`GrantService` on the PostgreSQL adapters) for what has no route yet,
//! and the database itself where a fault is needed.

use std::sync::Arc;
use std::time::Duration;

use credencial_application::GrantService;
use credencial_domain::account::AccessLogPage;
use credencial_domain::oauth::ClientId;
use credencial_domain::UserId;
use credencial_ports::SystemClock;
use reqwest::header::{RETRY_AFTER, WWW_AUTHENTICATE};
use serde_json::Value;

use crate::consent::{approved, exchange, redirected};
use crate::helpers::{spawn_app_with, status_and_json, Browser, TestApp};
use crate::oauth::{app, portal_request, PORTAL_SECRET};

/// The use cases of the authorized-applications and access-report pages.
fn grant_service(app: &TestApp, retention_days: u32) -> GrantService {
    GrantService::new(app.db.storage().grants, app.db.storage().access_log, Arc::new(SystemClock), retention_days)
}

fn portal() -> ClientId {
    ClientId::parse("portal").expect("id")
}

/// Ana approves `scope` for portal and the portal redeems the code; the
/// token response, and ana's browser (logged in).
async fn portal_tokens(app: &TestApp, scope: &str) -> (Value, Browser) {
    let mut browser = approved(app, scope).await;
    let q = redirected(&mut browser, &portal_request(scope, "t")).await;
    let (status, tokens) = exchange(app, &q["code"]).await;
    assert_eq!(status, 200, "{tokens}");
    (tokens, browser)
}

/// `POST /api/perfil/dados/` with `access`, narrowed by `scope`; the
/// response.
async fn read_profile(app: &TestApp, access: &str, scope: Option<&str>) -> reqwest::Response {
    let mut request = app.client.post(format!("{}/api/perfil/dados/", app.address)).bearer_auth(access);
    if let Some(scope) = scope {
        request = request.form(&[("scope", scope)]);
    }
    request.send().await.expect("sent")
}

fn access_of(tokens: &Value) -> &str {
    tokens["access_token"].as_str().expect("access token")
}

#[tokio::test]
async fn a_revoked_client_is_refused_at_the_profile_at_once_and_its_refresh_token_too() {
    let (app, ana) = app().await;
    let (tokens, mut browser) = portal_tokens(&app, "cnes").await;
    assert_eq!(read_profile(&app, access_of(&tokens), None).await.status(), 200);
    let apps = grant_service(&app, 1825).authorized_applications(UserId(ana)).await.expect("list");
    assert_eq!(apps.len(), 1);
    assert_eq!(
        (apps[0].client_name.as_str(), apps[0].scopes.to_scope_string().as_str()),
        ("Portal do Servidor", "dados_publicos cpf email cnes")
    );
    assert!(apps[0].first_granted_at <= apps[0].last_used_at);

    assert!(grant_service(&app, 1825).revoke(UserId(ana), &portal()).await.expect("revoke"));
    assert!(grant_service(&app, 1825).authorized_applications(UserId(ana)).await.expect("list").is_empty());

    // The access token has minutes to live; it is refused now, like a bad one.
    let r = read_profile(&app, access_of(&tokens), None).await;
    let challenge = r.headers().get(WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let (status, body) = status_and_json(r).await;
    assert_eq!((status, body["code"].as_str()), (401, Some("token_not_valid")), "{body}");
    assert_eq!(challenge.as_deref(), Some(r#"Bearer realm="api", error="invalid_token""#));
    assert!(body.get("cpf").is_none(), "{body}");

    // The refresh token died with the grant.
    let r = app
        .client
        .post(format!("{}/oauth/token/", app.address))
        .basic_auth("portal", Some(PORTAL_SECRET))
        .form(&[("grant_type", "refresh_token"), ("refresh_token", tokens["refresh_token"].as_str().expect("refresh"))])
        .send()
        .await
        .expect("sent");
    let (status, body) = status_and_json(r).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_grant")), "{body}");

    // The next authorization asks for consent again.
    let page = browser.get(&portal_request("cnes", "after")).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("Autorizar acesso"), "{}", page.body);
    // Revoking twice: nothing left to revoke.
    assert!(!grant_service(&app, 1825).revoke(UserId(ana), &portal()).await.expect("revoke"));
}

#[tokio::test]
async fn a_code_issued_before_the_revocation_buys_nothing_after_it() {
    let (app, ana) = app().await;
    let mut browser = approved(&app, "cnes").await;
    let q = redirected(&mut browser, &portal_request("cnes", "race")).await;
    assert!(grant_service(&app, 1825).revoke(UserId(ana), &portal()).await.expect("revoke"));
    let (status, body) = exchange(&app, &q["code"]).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_grant")), "{body}");
    let live: (i64,) =
        sqlx::query_as("SELECT count(*) FROM refresh_tokens WHERE user_id = $1 AND rotated_at IS NULL AND NOT revoked")
            .bind(ana)
            .fetch_one(&app.db.pool)
            .await
            .expect("count");
    assert_eq!(live.0, 0, "no live refresh token is left behind");
}

#[tokio::test]
async fn every_answered_read_is_logged_with_the_answered_scopes_and_the_request_id() {
    let (app, ana) = app().await;
    let (tokens, _) = portal_tokens(&app, "cnes formacao_academica").await;
    let first = read_profile(&app, access_of(&tokens), Some("formacao_academica")).await;
    assert_eq!(first.status(), 200);
    let first_id = first.headers()["x-request-id"].to_str().expect("ascii").to_owned();
    let second = read_profile(&app, access_of(&tokens), None).await;
    assert_eq!(second.status(), 200);
    let second_id = second.headers()["x-request-id"].to_str().expect("ascii").to_owned();
    // Refused reads are not logged.
    assert_eq!(read_profile(&app, "not-a-token", None).await.status(), 401);

    let report = grant_service(&app, 1825).access_report(UserId(ana), AccessLogPage::FIRST).await.expect("report");
    assert_eq!((report.total, report.pages), (2, 1));
    let shown: Vec<_> = report
        .entries
        .iter()
        .map(|e| (e.client_name.as_str(), e.scopes.to_scope_string(), e.request_id.as_str()))
        .collect();
    assert_eq!(
        shown,
        [
            ("Portal do Servidor", "dados_publicos cpf email cnes formacao_academica".to_owned(), second_id.as_str()),
            ("Portal do Servidor", "dados_publicos cpf email formacao_academica".to_owned(), first_id.as_str()),
        ],
        "newest first, each with the scopes its answer carried"
    );
    let now = credencial_ports::Clock::now(&SystemClock);
    assert!(report.entries.iter().all(|e| (now - 60..=now).contains(&e.at)), "{:?}", report.entries);
}

#[tokio::test]
async fn a_read_that_cannot_be_logged_is_a_503_and_answers_nothing() {
    let (app, _) = app().await;
    let (tokens, _) = portal_tokens(&app, "cnes").await;
    assert_eq!(read_profile(&app, access_of(&tokens), None).await.status(), 200);
    sqlx::query("DROP TABLE access_log").execute(&app.db.pool).await.expect("drop");
    let r = read_profile(&app, access_of(&tokens), None).await;
    assert_eq!(r.headers().get(RETRY_AFTER).and_then(|v| v.to_str().ok()), Some("5"));
    let (status, body) = status_and_json(r).await;
    assert_eq!((status, body["code"].as_str()), (503, Some("service_unavailable")), "{body}");
    for key in ["cpf", "email", "name", "cnes"] {
        assert!(body.get(key).is_none(), "{key} answered unlogged: {body}");
    }
}

#[tokio::test]
async fn the_purge_deletes_only_entries_older_than_the_retention() {
    let (app, ana) = app().await;
    let (tokens, _) = portal_tokens(&app, "").await;
    assert_eq!(read_profile(&app, access_of(&tokens), None).await.status(), 200, "one entry of now");
    for days in [400, 31, 29, 2] {
        app.db
            .storage()
            .access_log
            .append(credencial_ports::account::AccessLogEntry {
                user: credencial_domain::UserId(ana),
                client: credencial_domain::oauth::ClientId::parse("portal").expect("client id"),
                scopes: credencial_domain::ScopeSet::parse_strict("cpf").expect("scope"),
                at: crate::profile::now() - i64::from(days) * 86_400,
                request_id: format!("{days}-days-ago"),
            })
            .await
            .expect("entry");
    }
    // A second instance keeps 30 days; its first purge pass runs as it
    // starts (no start-up delay), one row a batch.
    let db_url = app.db.url.clone();
    let _second = spawn_app_with(|s| {
        s.storage.database_url = db_url.into();
        s.storage.access_log_retention_days = 30;
        s.storage.purge_start_delay_secs = 0;
        s.storage.purge_batch_rows = 1;
    })
    .await;
    let ids = || async {
        let rows: Vec<(String,)> = sqlx::query_as("SELECT request_id FROM access_log ORDER BY accessed_at")
            .fetch_all(&app.db.pool)
            .await
            .expect("rows");
        rows.into_iter().map(|(id,)| id).collect::<Vec<_>>()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while ids().await.len() > 3 {
        assert!(std::time::Instant::now() < deadline, "not purged: {:?}", ids().await);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let left = ids().await;
    assert_eq!(&left[..2], ["29-days-ago", "2-days-ago"], "{left:?}");
    assert_eq!(left.len(), 3, "and the read of now: {left:?}");
    // Through the use case, with the default retention, nothing more goes.
    assert_eq!(grant_service(&app, 1825).purge_access_log(100).await.expect("purge"), 0);
    assert_eq!(grant_service(&app, 1).purge_access_log(100).await.expect("purge"), 2, "the 29- and 2-day-old ones");
    assert_eq!(ids().await.len(), 1, "the read of now stays");
}
