//! The consume routes `user-info` and `rh/eu` against a wiremock upstream.

use std::time::Duration;

use serde_json::{json, Value};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::helpers::{spawn_app, status_and_json, TestApp};

const ROUTES: [&str; 2] = ["/api/token/user-info/", "/api/token/rh/eu/"];

fn user_json() -> Value {
    json!({
        "identificacao": "1934207",
        "nome_usual": "Maria Silva",
        "email": "maria@example.gov.br",
        "campus": "Natal-Central",
        "tipo_usuario": "Servidor",
        "vinculo": {"setor": "DIGTI"}
    })
}

async fn app_with_user() -> (TestApp, String, String) {
    let app = spawn_app().await;
    app.add_user("maria", "pw-maria-1", true).await;
    let (access, refresh) = app.login("maria", "pw-maria-1").await;
    (app, access, refresh)
}

async fn upstream_requests(app: &TestApp) -> usize {
    app.upstream.received_requests().await.map_or(0, |r| r.len())
}

#[tokio::test]
async fn get_forwards_the_bearer_token_and_returns_the_upstream_json_as_is() {
    let (app, access, _) = app_with_user().await;
    Mock::given(method("GET"))
        .and(path("/api/rh/eu/"))
        .and(header("authorization", format!("Bearer {access}").as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(user_json()))
        .expect(4)
        .mount(&app.upstream)
        .await;
    for route in ROUTES {
        for p in [route.to_owned(), route.trim_end_matches('/').to_owned()] {
            let r = app.client.get(format!("{}{p}", app.address)).bearer_auth(&access).send().await.expect("sent");
            let (status, body) = status_and_json(r).await;
            assert_eq!((status, body), (200, user_json()), "{p}");
        }
    }
}

#[tokio::test]
async fn post_takes_the_token_from_the_body_and_an_allowed_endpoint() {
    let (app, access, _) = app_with_user().await;
    Mock::given(method("GET"))
        .and(path("/api/rh/eu/"))
        .and(header("authorization", format!("Bearer {access}").as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(user_json()))
        .expect(2)
        .mount(&app.upstream)
        .await;
    for route in ROUTES {
        let body = json!({"token": access, "endpoint": "/api/rh/eu/"});
        let (status, got) = status_and_json(app.post_json(route, &body).await).await;
        assert_eq!((status, got), (200, user_json()));
    }
}

#[tokio::test]
async fn post_without_a_body_uses_the_header_token() {
    let (app, access, _) = app_with_user().await;
    Mock::given(path("/api/rh/eu/"))
        .respond_with(ResponseTemplate::new(200).set_body_json(user_json()))
        .expect(1)
        .mount(&app.upstream)
        .await;
    let r = app
        .client
        .post(format!("{}/api/token/user-info", app.address))
        .bearer_auth(&access)
        .send()
        .await
        .expect("sent");
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn bad_tokens_are_refused_locally_and_nothing_goes_upstream() {
    let (app, access, refresh) = app_with_user().await;
    let cases: Vec<(&str, Option<String>)> = vec![
        ("no token", None),
        ("refresh token", Some(refresh)),
        ("tampered", Some(format!("{}x", &access[..access.len() - 1]))),
        ("garbage", Some("not-a-jwt".into())),
    ];
    for route in ROUTES {
        for (what, token) in &cases {
            let mut req = app.client.get(format!("{}{route}", app.address));
            if let Some(t) = token {
                req = req.bearer_auth(t);
            }
            let (status, body) = status_and_json(req.send().await.expect("sent")).await;
            assert_eq!(status, 401, "{what}");
            let code = body["code"].as_str().expect("code");
            assert!(code == "token_not_valid" || code == "not_authenticated", "{what}: {body}");
        }
    }
    let r = app
        .client
        .get(format!("{}/api/token/rh/eu/", app.address))
        .header("authorization", "Bearer a b")
        .send()
        .await
        .expect("sent");
    assert_eq!(r.status(), 401);
    assert_eq!(upstream_requests(&app).await, 0, "nothing was sent upstream");
}

#[tokio::test]
async fn endpoint_tricks_are_refused_with_400_and_nothing_goes_upstream() {
    let (app, access, _) = app_with_user().await;
    for endpoint in [
        "http://evil.example/",
        "//evil.example/x",
        "/api/rh/eu/../../admin",
        "/%2e%2e/x",
        "\\\\evil",
        "/admin/",
        "/api/rh/eu/?next=http://evil.example",
        "",
    ] {
        for route in ROUTES {
            let (status, body) =
                status_and_json(app.post_json(route, &json!({"token": access, "endpoint": endpoint})).await).await;
            assert_eq!(status, 400, "{endpoint:?}");
            assert!(body["endpoint"].is_array(), "{endpoint:?}: {body}");
        }
    }
    let (status, _) = status_and_json(app.post_json(ROUTES[0], &json!({"token": access, "endpoint": 42})).await).await;
    assert_eq!(status, 400);
    assert_eq!(upstream_requests(&app).await, 0, "nothing was sent upstream");
}

#[tokio::test]
async fn upstream_refusals_and_failures_map_to_401_403_502_and_504() {
    let (app, access, _) = app_with_user().await;
    let cases = [
        (ResponseTemplate::new(401).set_body_json(json!({"detail": "no"})), 401, "upstream_unauthorized"),
        (ResponseTemplate::new(403), 403, "upstream_forbidden"),
        (ResponseTemplate::new(500), 502, "bad_gateway"),
        (ResponseTemplate::new(404), 502, "bad_gateway"),
        (ResponseTemplate::new(200).set_body_string("<html>login</html>"), 502, "bad_gateway"),
        (ResponseTemplate::new(200).set_body_string("{\"truncated\": "), 502, "bad_gateway"),
        (ResponseTemplate::new(302).insert_header("location", "http://evil.example/"), 502, "bad_gateway"),
        (
            ResponseTemplate::new(200).set_body_json(user_json()).set_delay(Duration::from_secs(3)),
            504,
            "gateway_timeout",
        ),
    ];
    for (template, want_status, want_code) in cases {
        app.upstream.reset().await;
        Mock::given(path("/api/rh/eu/")).respond_with(template).mount(&app.upstream).await;
        let r = app
            .client
            .get(format!("{}/api/token/rh/eu/", app.address))
            .bearer_auth(&access)
            .send()
            .await
            .expect("sent");
        let (status, body) = status_and_json(r).await;
        assert_eq!((status, body["code"].as_str()), (want_status, Some(want_code)), "{body}");
    }
}

#[tokio::test]
async fn an_unreachable_upstream_is_a_502() {
    let dead = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = dead.local_addr().expect("addr").port();
    drop(dead);
    let app = crate::helpers::spawn_app_with(|s| {
        s.registries.upstream_base_url = Some(crate::helpers::base_url(format!("http://127.0.0.1:{port}")))
    })
    .await;
    app.add_user("maria", "pw-maria-1", true).await;
    let (access, _) = app.login("maria", "pw-maria-1").await;
    let r =
        app.client.get(format!("{}/api/token/rh/eu/", app.address)).bearer_auth(&access).send().await.expect("sent");
    assert_eq!(r.status(), 502);
}
