//! Refusals every JSON route shares: bad JSON, missing fields, size, method,
//! media type, unknown paths, and trailing slashes.

use serde_json::{json, Value};

use crate::helpers::{spawn_app, status_and_json};

const POST_ROUTES: [(&str, &str); 3] =
    [("/api/token/pair/", "username"), ("/api/token/refresh/", "refresh"), ("/api/token/verify/", "token")];

async fn post_raw(app: &crate::helpers::TestApp, path: &str, body: &'static str, ct: &str) -> (u16, Value) {
    let r = app
        .client
        .post(format!("{}{path}", app.address))
        .header("content-type", ct)
        .body(body)
        .send()
        .await
        .expect("sent");
    status_and_json(r).await
}

#[tokio::test]
async fn malformed_json_is_a_400_parse_error() {
    let app = spawn_app().await;
    for (route, _) in POST_ROUTES {
        for body in ["{bad", "", "{\"token\": \"x\"", "nul"] {
            let (status, json) = post_raw(&app, route, body, "application/json").await;
            assert_eq!(status, 400, "{route} {body:?}");
            assert_eq!(json["code"], "parse_error", "{route} {body:?}");
            assert!(json["detail"].as_str().expect("detail").starts_with("JSON parse error"));
        }
    }
}

#[tokio::test]
async fn missing_fields_are_named_in_drf_style() {
    let app = spawn_app().await;
    let (status, body) = status_and_json(app.post_json("/api/token/pair/", &json!({})).await).await;
    assert_eq!(status, 400);
    assert_eq!(body, json!({"username": ["This field is required."], "password": ["This field is required."]}));
    let (status, body) = status_and_json(app.post_json("/api/token/pair/", &json!({"username": "a"})).await).await;
    assert_eq!((status, body), (400, json!({"password": ["This field is required."]})));
    for (route, field) in &POST_ROUTES[1..] {
        let (status, body) = status_and_json(app.post_json(route, &json!({"other": 1})).await).await;
        assert_eq!(status, 400);
        assert_eq!(body, json!({ *field: ["This field is required."] }));
    }
    let (status, body) = status_and_json(app.post_json("/api/token/verify/", &json!({"token": ["x"]})).await).await;
    assert_eq!((status, body), (400, json!({"token": ["Not a valid string."]})));
    let (status, body) = status_and_json(app.post_json("/api/token/verify/", &json!({"token": ""})).await).await;
    assert_eq!((status, body), (400, json!({"token": ["This field may not be blank."]})));
    let (status, body) = status_and_json(app.post_json("/api/token/verify/", &json!([1, 2])).await).await;
    assert_eq!(status, 400);
    assert!(body["non_field_errors"].is_array());
}

#[tokio::test]
async fn bodies_over_64_kib_are_a_413_json() {
    let app = spawn_app().await;
    let big = json!({"token": "a".repeat(70 * 1024)});
    for (route, _) in POST_ROUTES {
        let (status, body) = status_and_json(app.post_json(route, &big).await).await;
        assert_eq!((status, body["code"].as_str()), (413, Some("payload_too_large")), "{route}");
    }
    // Chunked, without a Content-Length: the cap holds while reading.
    let chunks = futures_util::stream::iter((0..20).map(|_| Ok::<_, std::io::Error>(bytes_of(8 * 1024))));
    let r = app
        .client
        .post(format!("{}/api/token/verify/", app.address))
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(chunks))
        .send()
        .await
        .expect("sent");
    assert_eq!(r.status(), 413);
    let (status, _) =
        status_and_json(app.post_json("/api/token/verify/", &json!({"token": "a".repeat(60 * 1024)})).await).await;
    assert_eq!(status, 401, "just under the cap is read and judged");
}

fn bytes_of(n: usize) -> Vec<u8> {
    vec![b' '; n]
}

#[tokio::test]
async fn wrong_methods_get_a_405_json_with_allow() {
    let app = spawn_app().await;
    let cases = [
        ("GET", "/api/token/pair/", "POST"),
        ("PUT", "/api/token/refresh", "POST"),
        ("DELETE", "/api/token/verify/", "POST"),
        ("DELETE", "/api/token/user-info/", "GET, HEAD, POST"),
        ("PATCH", "/api/token/rh/eu", "GET, HEAD, POST"),
        ("POST", "/healthz", "GET, HEAD"),
    ];
    for (m, p, allow) in cases {
        let r =
            app.client.request(m.parse().expect("method"), format!("{}{p}", app.address)).send().await.expect("sent");
        assert_eq!(r.headers().get("allow").and_then(|v| v.to_str().ok()), Some(allow), "{m} {p}");
        let (status, body) = status_and_json(r).await;
        assert_eq!((status, body["code"].as_str()), (405, Some("method_not_allowed")), "{m} {p}");
    }
}

#[tokio::test]
async fn every_route_answers_with_and_without_its_trailing_slash_without_redirecting() {
    let app = spawn_app().await;
    app.add_user("maria", "pw-maria-1", true).await;
    for p in ["/api/token/pair/", "/api/token/pair"] {
        let r = app.post_json(p, &json!({"username": "maria", "password": "pw-maria-1"})).await;
        assert_eq!(r.status(), 200, "{p}");
    }
    let (access, refresh) = app.login("maria", "pw-maria-1").await;
    let r = app.post_json("/api/token/refresh", &json!({"refresh": refresh})).await;
    assert_eq!(r.status(), 200);
    for p in ["/api/token/verify/", "/api/token/verify"] {
        let r = app.post_json(p, &json!({"token": access})).await;
        assert_eq!(r.status(), 200, "{p}");
    }
    for p in ["/healthz", "/healthz/"] {
        let (status, body) =
            status_and_json(app.client.get(format!("{}{p}", app.address)).send().await.expect("sent")).await;
        assert_eq!((status, body), (200, json!({"status": "ok"})));
    }
}

#[tokio::test]
async fn non_json_content_types_are_a_415_and_unknown_paths_a_404_json() {
    let app = spawn_app().await;
    let (status, body) = post_raw(&app, "/api/token/verify/", "token=abc", "application/x-www-form-urlencoded").await;
    assert_eq!((status, body["code"].as_str()), (415, Some("unsupported_media_type")));
    let (status, body) =
        status_and_json(app.client.get(format!("{}/nope", app.address)).send().await.expect("sent")).await;
    assert_eq!((status, body["code"].as_str()), (404, Some("not_found")));
}
