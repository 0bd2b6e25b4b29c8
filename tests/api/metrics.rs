//! `GET /metrics` over real HTTP: what a user did shows in the series, read
//! with a Prometheus text-format parser; off by default in `serve`, on by
//! default in the demo, and on a listener of its own with `metrics_bind`.

use crate::helpers::TestDatabase;
use credencial::settings::Settings;
use credencial::startup::{Application, Mode};
use openmetrics_parser::prometheus::parse_prometheus;
use openmetrics_parser::{MetricsExposition, PrometheusType, PrometheusValue};
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::helpers::{spawn_app_with, spawn_demo, test_settings, TestApp};
use crate::profile::{answered_profile, mount_registries, person, register_client, ALL, ANA_CPF};

/// The app of the profile tests (wiremock behind the registries), with
/// metrics on the main port.
async fn app_with_metrics() -> TestApp {
    spawn_app_with(|s| {
        let base = s.registries.upstream_base_url.clone().expect("wiremock").to_string();
        let base = base.trim_end_matches('/');
        s.registries.receita_base_url = Some(crate::helpers::base_url(format!("{base}/receita")));
        s.registries.cnes_base_url = Some(crate::helpers::base_url(format!("{base}/cnes")));
        s.registries.cdp_base_url = Some(crate::helpers::base_url(format!("{base}/cdp")));
        s.server.metrics_enabled = Some(true);
    })
    .await
}

/// What a scrape holds: the families of the exposition, by name.
type Scrape = MetricsExposition<PrometheusType, PrometheusValue>;

/// `GET {base}/metrics`: a 200 in the text format, never cached; parsed
/// (a parse error fails the test).
async fn scrape(client: &reqwest::Client, base: &str) -> (Scrape, String) {
    let r = client.get(format!("{base}/metrics")).send().await.expect("sent");
    assert_eq!(r.status(), 200);
    let header = |name: &str| r.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    assert_eq!(header("content-type").as_deref(), Some("text/plain; version=0.0.4; charset=utf-8"));
    assert_eq!(header("cache-control").as_deref(), Some("no-store"));
    let text = r.text().await.expect("body");
    let scrape = parse_prometheus(&text).unwrap_or_else(|e| panic!("not the Prometheus text format ({e:?}):\n{text}"));
    (scrape, text)
}

/// The value of the one sample of `metric` whose labels are exactly
/// `labels`, and the family's type.
fn sample<'a>(scrape: &'a Scrape, metric: &str, labels: &[(&str, &str)]) -> (&'a PrometheusType, &'a PrometheusValue) {
    let family = scrape.families.get(metric).unwrap_or_else(|| panic!("no family {metric}"));
    let mut wanted: Vec<(String, String)> = labels.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    wanted.sort();
    let found: Vec<_> = family
        .iter_samples()
        .filter(|s| {
            let set = s.get_labelset().expect("labels");
            let mut have: Vec<(String, String)> = set.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            have.sort();
            have == wanted
        })
        .collect();
    match found.as_slice() {
        [one] => (&family.family_type, &one.value),
        other => panic!("{metric}{labels:?}: {} samples", other.len()),
    }
}

/// The value of the counter or gauge `metric{labels}`.
fn value(scrape: &Scrape, metric: &str, labels: &[(&str, &str)]) -> f64 {
    match sample(scrape, metric, labels) {
        (PrometheusType::Counter, PrometheusValue::Counter(c)) => c.value.as_f64(),
        (PrometheusType::Gauge, PrometheusValue::Gauge(g)) => g.as_f64(),
        other => panic!("{metric}{labels:?} is {other:?}"),
    }
}

/// How many observations the histogram `metric{labels}` holds: its count,
/// which its `+Inf` bucket must equal.
fn observations(scrape: &Scrape, metric: &str, labels: &[(&str, &str)]) -> f64 {
    match sample(scrape, metric, labels) {
        (PrometheusType::Histogram, PrometheusValue::Histogram(h)) => {
            let count = h.count.expect("a count") as f64;
            let inf = h.buckets.iter().find(|b| b.upper_bound.is_infinite()).expect("+Inf bucket");
            assert_eq!(inf.count.as_f64(), count, "{metric}{labels:?}");
            count
        }
        other => panic!("{metric}{labels:?} is {other:?}"),
    }
}

fn logins(scrape: &Scrape, form: &str, outcome: &str) -> f64 {
    value(scrape, "credencial_logins_total", &[("form", form), ("outcome", outcome)])
}

fn requests(scrape: &Scrape, method: &str, route: &str, status: &str) -> f64 {
    value(scrape, "credencial_http_requests_total", &[("method", method), ("route", route), ("status", status)])
}

#[tokio::test]
async fn the_series_move_by_exactly_what_was_done_and_name_route_templates_only() {
    let app = app_with_metrics().await;
    app.add_user("maria", "pw-maria-1", true).await;
    register_client(&app, "host", ALL).await;
    let ana = person(&app, "ana", ANA_CPF, true).await;
    mount_registries(&app, ANA_CPF, 1).await;
    Mock::given(method("GET"))
        .and(path("/api/rh/eu/"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"nome_usual": "Maria"})))
        .expect(1)
        .mount(&app.upstream)
        .await;

    // Before anything: every known series is there, at zero.
    let (before, _) = scrape(&app.client, &app.address).await;
    assert_eq!(logins(&before, "pair", "succeeded"), 0.0);
    assert_eq!(value(&before, "credencial_tokens_issued_total", &[("kind", "access")]), 0.0);
    assert_eq!(value(&before, "credencial_refresh_replays_total", &[("outcome", "revoked")]), 0.0);

    // Two logins, one refused; a verify; a refresh, the same refresh again
    // at once (the grace window: the same pair), a refresh with the new
    // token, and the first one a third time (a replay: family revoked).
    let (access, refresh) = app.login("maria", "pw-maria-1").await;
    let wrong = app.post_json("/api/token/pair/", &json!({"username": "maria", "password": "nope"})).await;
    assert_eq!(wrong.status(), 401);
    assert_eq!(app.post_json("/api/token/verify/", &json!({"token": access})).await.status(), 200);
    let refreshed = |r: reqwest::Response| async move {
        assert_eq!(r.status(), 200);
        r.json::<serde_json::Value>().await.expect("JSON")["refresh"].as_str().expect("refresh").to_owned()
    };
    let next = refreshed(app.post_json("/api/token/refresh/", &json!({"refresh": refresh})).await).await;
    let again = refreshed(app.post_json("/api/token/refresh/", &json!({"refresh": refresh})).await).await;
    assert_eq!(again, next, "the same pair within the grace window");
    refreshed(app.post_json("/api/token/refresh/", &json!({"refresh": next})).await).await;
    assert_eq!(app.post_json("/api/token/refresh/", &json!({"refresh": refresh})).await.status(), 401);
    // A read of the user-data resource through the consume route.
    let r =
        app.client.get(format!("{}/api/token/rh/eu/", app.address)).bearer_auth(&access).send().await.expect("sent");
    assert_eq!(r.status(), 200);
    // Two profile reads: the registries are asked once, then the cache answers.
    answered_profile(&app, ana, ALL, "host").await;
    answered_profile(&app, ana, ALL, "host").await;
    // Paths with a CPF in them, one without a route, one with.
    let r = app.client.get(format!("{}/usuarios/{ANA_CPF}/", app.address)).send().await.expect("sent");
    assert_eq!(r.status(), 403);
    let r = app.client.get(format!("{}/nada/{ANA_CPF}/", app.address)).send().await.expect("sent");
    assert_eq!(r.status(), 404);

    let (after, text) = scrape(&app.client, &app.address).await;
    assert_eq!(logins(&after, "pair", "succeeded"), 1.0);
    assert_eq!(logins(&after, "pair", "failed"), 1.0);
    assert_eq!(logins(&after, "pair", "throttled"), 0.0);
    assert_eq!(logins(&after, "oauth", "succeeded"), 0.0);
    // pair and the two refreshes that rotated (the grace answer signs nothing).
    for kind in ["access", "refresh"] {
        assert_eq!(value(&after, "credencial_tokens_issued_total", &[("kind", kind)]), 3.0, "{kind}");
    }
    assert_eq!(value(&after, "credencial_tokens_issued_total", &[("kind", "oauth_access")]), 0.0);
    let replays = |outcome| value(&after, "credencial_refresh_replays_total", &[("outcome", outcome)]);
    assert_eq!((replays("grace"), replays("revoked")), (1.0, 1.0));

    assert_eq!(requests(&after, "POST", "/api/token/pair/", "200"), 1.0);
    assert_eq!(requests(&after, "POST", "/api/token/pair/", "401"), 1.0);
    assert_eq!(requests(&after, "POST", "/api/token/verify/", "200"), 1.0);
    assert_eq!(requests(&after, "POST", "/api/token/refresh/", "200"), 3.0);
    assert_eq!(requests(&after, "POST", "/api/token/refresh/", "401"), 1.0);
    assert_eq!(requests(&after, "GET", "/api/token/rh/eu/", "200"), 1.0);
    assert_eq!(requests(&after, "POST", "/api/perfil/dados/", "200"), 2.0);
    assert_eq!(requests(&after, "GET", "/usuarios/{cpf_ou_email}/", "403"), 1.0);
    assert_eq!(requests(&after, "GET", "unmatched", "404"), 1.0);
    // The scrape before is counted, this one not yet.
    assert_eq!(requests(&after, "GET", "/metrics/", "200"), 1.0);
    let pair_latency = [("method", "POST"), ("route", "/api/token/pair/")];
    assert_eq!(observations(&after, "credencial_http_request_duration_seconds", &pair_latency), 2.0);

    for upstream in ["receita_federal", "cnes", "cursos_cdp", "user_data"] {
        let labels = [("upstream", upstream), ("outcome", "ok")];
        assert_eq!(value(&after, "credencial_upstream_requests_total", &labels), 1.0, "{upstream}");
        let labels = [("upstream", upstream), ("outcome", "timeout")];
        assert_eq!(value(&after, "credencial_upstream_requests_total", &labels), 0.0, "{upstream}");
        let labels = [("upstream", upstream)];
        assert_eq!(observations(&after, "credencial_upstream_request_duration_seconds", &labels), 1.0, "{upstream}");
    }
    for scope in ["receita_federal", "cnes", "cursos_cdp"] {
        let cache =
            |result| value(&after, "credencial_scope_cache_lookups_total", &[("scope", scope), ("result", result)]);
        assert_eq!((cache("miss"), cache("hit"), cache("stale")), (1.0, 1.0, 0.0), "{scope}");
    }
    assert_eq!(value(&after, "credencial_hashing_queue_length", &[]), 0.0);
    // The pool of the test app opens at most 10 connections (SQLite: 10
    // readers and the writer).
    let max = match crate::database::engine() {
        crate::database::Engine::Postgres => 10.0,
        crate::database::Engine::Sqlite => 11.0,
    };
    assert_eq!(value(&after, "credencial_db_pool_connections_max", &[]), max);
    let in_use = value(&after, "credencial_db_pool_connections_in_use", &[]);
    assert!((0.0..=10.0).contains(&in_use), "{in_use}");

    // No path, id, CPF, username or token anywhere in a label.
    for secret in [ANA_CPF, "maria", access.as_str(), refresh.as_str(), "/nada"] {
        assert!(!text.contains(secret), "{secret} in:\n{text}");
    }
    for family in after.families.values() {
        for sample in family.iter_samples() {
            if let Some(route) = sample.get_labelset().expect("labels").get_label_value("route") {
                assert!(route == "unmatched" || route.ends_with('/'), "{route}");
            }
        }
    }
}

#[tokio::test]
async fn a_locked_out_login_counts_as_throttled() {
    let app = spawn_app_with(|s| {
        s.server.metrics_enabled = Some(true);
        s.login.login_throttle_username_failures = 1;
    })
    .await;
    app.add_user("maria", "pw-maria-1", true).await;
    for expected in [401, 429] {
        let r = app.post_json("/api/token/pair/", &json!({"username": "maria", "password": "nope"})).await;
        assert_eq!(r.status(), expected);
    }
    let (after, _) = scrape(&app.client, &app.address).await;
    assert_eq!((logins(&after, "pair", "failed"), logins(&after, "pair", "throttled")), (1.0, 1.0));
    assert_eq!(requests(&after, "POST", "/api/token/pair/", "429"), 1.0);
}

#[tokio::test]
async fn serve_has_no_metrics_unless_asked() {
    let app = spawn_app_with(|_| {}).await;
    let r = app.client.get(format!("{}/metrics", app.address)).send().await.expect("sent");
    assert_eq!(r.status(), 404);
    let app = spawn_app_with(|s| s.server.metrics_enabled = Some(false)).await;
    let r = app.client.get(format!("{}/metrics/", app.address)).send().await.expect("sent");
    assert_eq!(r.status(), 404);
}

#[tokio::test]
async fn the_demo_serves_metrics_unless_turned_off() {
    let (browser, _db) = spawn_demo(|_| {}).await;
    let (scraped, _) = scrape(&browser.client, &browser.base).await;
    assert_eq!(logins(&scraped, "oauth", "failed"), 0.0);
    let (browser, _db) = spawn_demo(|s| s.server.metrics_enabled = Some(false)).await;
    let r = browser.client.get(format!("{}/metrics", browser.base)).send().await.expect("sent");
    assert_eq!(r.status(), 404);
}

/// An app in `serve` mode with `metrics_bind` on a free port; its main and
/// metrics addresses.
async fn app_with_metrics_bind(db: &TestDatabase, upstream: &MockServer) -> (String, String) {
    let mut settings = test_settings(db, upstream);
    settings.server.metrics_bind = Some("127.0.0.1:0".into());
    let app = Application::build(&settings, Mode::Serve, db.storage()).await.expect("app builds");
    let main = format!("http://127.0.0.1:{}", app.port());
    let metrics = format!("http://127.0.0.1:{}", app.metrics_port().expect("a metrics listener"));
    tokio::spawn(app.run_until_stopped());
    (main, metrics)
}

#[tokio::test]
async fn metrics_bind_serves_them_on_their_own_listener_only() {
    let db = TestDatabase::new().await;
    let upstream = MockServer::start().await;
    let (main, metrics) = app_with_metrics_bind(&db, &upstream).await;
    let client = reqwest::Client::new();
    let r = client.post(format!("{main}/api/token/verify/")).json(&json!({"token": "x"})).send().await.expect("sent");
    assert_eq!(r.status(), 401);
    assert_eq!(client.get(format!("{main}/metrics")).send().await.expect("sent").status(), 404);
    let (scraped, _) = scrape(&client, &metrics).await;
    // The main port's requests are counted (its 404 for /metrics too) …
    assert_eq!(requests(&scraped, "POST", "/api/token/verify/", "401"), 1.0);
    assert_eq!(requests(&scraped, "GET", "unmatched", "404"), 1.0);
    // … the metrics listener serves nothing else.
    assert_eq!(client.get(format!("{metrics}/healthz")).send().await.expect("sent").status(), 404);
    assert_eq!(client.get(format!("{metrics}/api/token/verify/")).send().await.expect("sent").status(), 404);
}

#[test]
fn where_metrics_are_served_follows_the_two_settings_and_the_mode() {
    let with = |enabled: Option<bool>, bind: Option<&str>| {
        let mut s = Settings::default();
        s.server.metrics_enabled = enabled;
        s.server.metrics_bind = bind.map(str::to_owned);
        s
    };
    let on_main = Some(None);
    let on_own = Some(Some("127.0.0.1:9100"));
    for (settings, serve, demo) in [
        (with(None, None), None, on_main),
        (with(Some(true), None), on_main, on_main),
        (with(Some(false), None), None, None),
        (with(None, Some("127.0.0.1:9100")), on_own, on_own),
        (with(Some(true), Some("127.0.0.1:9100")), on_own, on_own),
        (with(None, Some("  ")), None, on_main),
    ] {
        assert_eq!(settings.server.metrics_endpoint(Mode::Serve), serve, "{:?}", settings.server.metrics_bind);
        assert_eq!(settings.server.metrics_endpoint(Mode::Demo), demo, "{:?}", settings.server.metrics_bind);
    }
}

#[test]
fn metrics_settings_that_cannot_work_are_refused_naming_the_setting() {
    type Adjust = fn(&mut Settings);
    let cases: [(&str, Adjust); 3] = [
        ("must be an address and port", |s| s.server.metrics_bind = Some("metrics.internal".into())),
        ("SERVICE_METRICS_ENABLED is false", |s| {
            s.server.metrics_bind = Some("127.0.0.1:9100".into());
            s.server.metrics_enabled = Some(false);
        }),
        ("is the main address", |s| s.server.metrics_bind = Some(s.server.bind.clone())),
    ];
    for (problem, adjust) in cases {
        let mut s = Settings::default();
        adjust(&mut s);
        let e = s.validate().expect_err("refused").to_string();
        assert!(e.contains("SERVICE_METRICS_BIND") && e.contains(problem), "{e}");
    }
    let mut fine = Settings::default();
    fine.server.metrics_bind = Some("127.0.0.1:9100".into());
    fine.validate().expect("a metrics address of its own");
}

#[tokio::test]
async fn a_taken_metrics_address_stops_the_start_naming_the_setting() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let db = TestDatabase::new().await;
    let upstream = MockServer::start().await;
    let address = taken.local_addr().expect("address").to_string();
    let mut settings = test_settings(&db, &upstream);
    settings.server.metrics_bind = Some(address.clone());
    match Application::build(&settings, Mode::Serve, db.storage()).await {
        Ok(_) => panic!("the start should have been refused"),
        Err(e) => {
            let e = format!("{e:#}");
            assert!(e.contains("SERVICE_METRICS_BIND") && e.contains(&address), "{e}");
        }
    }
}
