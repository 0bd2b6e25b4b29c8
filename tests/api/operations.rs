//! Operations over HTTP: `/healthz` vs `/readyz` while the database comes
//! and goes, and the `X-Request-Id` of every response.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::helpers::{spawn_app, status_and_json, TestApp};

async fn get(app: &TestApp, path: &str) -> reqwest::Response {
    app.client.get(format!("{}{path}", app.address)).send().await.expect("request sent")
}

#[tokio::test]
async fn readyz_is_ready_on_a_live_app_with_or_without_the_slash() {
    let app = spawn_app().await;
    for path in ["/readyz", "/readyz/"] {
        let (status, body) = status_and_json(get(&app, path).await).await;
        assert_eq!((status, body), (200, json!({"status": "ready"})), "{path}");
    }
    let r = app.client.post(format!("{}/readyz", app.address)).send().await.expect("sent");
    let allow = r.headers().get("allow").map(|v| v.to_str().expect("ascii").to_owned());
    let (status, body) = status_and_json(r).await;
    assert_eq!((status, allow.as_deref(), body["code"].as_str()), (405, Some("GET, HEAD"), Some("method_not_allowed")));
}

#[tokio::test]
async fn readyz_turns_503_when_the_database_goes_away_while_healthz_stays_200() {
    // PostgreSQL's by nature, in both test binaries (tests/api/database.rs).
    crate::database::on_postgres(async {
        let app = spawn_app().await;
        assert_eq!(get(&app, "/readyz").await.status(), 200);

        // Every connection of the app is ended and the database is gone.
        app.db.drop_now().await;

        let start = Instant::now();
        let (status, body) = status_and_json(get(&app, "/readyz").await).await;
        assert_eq!((status, body), (503, json!({"status": "unavailable", "detail": "database unreachable"})));
        assert!(start.elapsed() < Duration::from_secs(5), "a probe must answer quickly, took {:?}", start.elapsed());
        // Still unavailable on the next probe, on another route alive.
        assert_eq!(get(&app, "/readyz/").await.status(), 503);
        let (status, body) = status_and_json(get(&app, "/healthz").await).await;
        assert_eq!((status, body), (200, json!({"status": "ok"})));
    })
    .await
}

fn request_id(r: &reqwest::Response) -> String {
    r.headers().get("x-request-id").expect("X-Request-Id").to_str().expect("ascii").to_owned()
}

fn assert_uuid_v4(id: &str) {
    let parsed = uuid::Uuid::parse_str(id).unwrap_or_else(|e| panic!("{id:?} is not a UUID: {e}"));
    assert_eq!(parsed.get_version_num(), 4, "{id}");
    assert_eq!(parsed.hyphenated().to_string(), id, "canonical form");
}

#[tokio::test]
async fn every_response_carries_its_own_server_made_request_id() {
    let app = spawn_app().await;
    let url = |path: &str| format!("{}{path}", app.address);
    let requests = [
        app.client.get(url("/healthz")),
        app.client.get(url("/readyz")),
        app.client.get(url("/no/such/route")),                      // 404
        app.client.put(url("/api/token/pair/")),                    // 405
        app.client.post(url("/api/token/pair/")).body("{not json"), // 400
        app.client.post(url("/api/token/verify/")).json(&json!({"token": "x"})), // 401
        app.client.get(url("/oauth/authorize/")),                   // HTML error page
    ];
    let mut seen = std::collections::HashSet::new();
    for request in requests {
        let r = request.header("x-request-id", "chosen-by-the-client").send().await.expect("sent");
        let id = request_id(&r);
        assert_uuid_v4(&id);
        assert!(seen.insert(id), "ids are not reused");
    }
}
