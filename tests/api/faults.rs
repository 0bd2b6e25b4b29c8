//! Faults on every upstream, over real HTTP: the raw fault server
//! (`fault_server.rs`) stands in for the three registries behind
//! `POST /api/perfil/dados/`, the user-data resource behind the consume
//! routes, and a provider's `/oauth/token/` and `/api/perfil/dados/` behind
//! the client component's `/auth/callback/`. Each fault — refused
//! connection, time-out, 500, malformed JSON, 11 MB with and without
//! `Content-Length`, a slow drip — must give the client a clear answer
//! within the route's time budget (a functional bound with a generous
//! margin, not a benchmark). One test per upstream and fault, so that they
//! run in parallel; each prints its measured time (`--nocapture`).

use std::future::Future;
use std::time::{Duration, Instant};

use credencial::settings::Settings;
use reqwest::header::CONTENT_TYPE;
use serde_json::{json, Value};
use url::Url;

use crate::fault_server::{Fault, FaultServer};
use crate::helpers::{spawn_app_with, status_and_json, Browser, TestApp};
use crate::oauth::{callback, consent_page, decide, portal_request, PORTAL_SECRET, PORTAL_URI};
use crate::profile::{cdp_json, cnes_json, person, receita_json, register_client, token, ALL, ANA_CPF};

/// Added to every time budget: start-up noise on a loaded machine, never
/// the minutes a drip or a silent upstream would take.
const MARGIN: Duration = Duration::from_millis(1500);
/// Registry time-outs of the profile tests (different, to show that the
/// budget is the largest, not the sum: the registries are read concurrently).
const RECEITA_TIMEOUT_MS: u64 = 300;
const CNES_TIMEOUT_MS: u64 = 400;
const CDP_TIMEOUT_MS: u64 = 500;
/// Time-out of a call to the user-data resource and to the provider.
const CALL_TIMEOUT_MS: u64 = 500;
/// A second validated user, who never has a snapshot.
const CARLA_CPF: &str = "11144477735";

/// Awaits `answer`, failing (rather than hanging) when it takes longer than
/// `budget` plus the margin; returns it and the time it took.
async fn within<T>(budget: Duration, answer: impl Future<Output = T>) -> (T, Duration) {
    let started = Instant::now();
    let bound = budget + MARGIN;
    let answer = tokio::time::timeout(bound, answer).await.unwrap_or_else(|_| panic!("no answer within {bound:?}"));
    (answer, started.elapsed())
}

/// Prints one row of the table in `docs/reliability.md`.
fn measured(upstream: &str, fault: &str, answer: &str, elapsed: Duration) {
    eprintln!("| {upstream} | {fault} | {answer} | {} ms |", elapsed.as_millis());
}

/// The name [`Fault::all`] gives `fault`.
fn name_of(fault: &Fault) -> &'static str {
    Fault::all().into_iter().find(|(_, f)| f == fault).map(|(name, _)| name).expect("a fault of the table")
}

/// Registry paths below the fault server, and their well-formed answers.
fn registries() -> [(&'static str, &'static str, Value); 3] {
    [
        ("receita_federal", "/receita", receita_json()),
        ("cnes", "/cnes", cnes_json()),
        ("cursos_cdp", "/cdp", cdp_json()),
    ]
}

// ------------------------------------------------------------------ profile

/// Puts the three registries below `base` (`/receita`, `/cnes`, `/cdp`)
/// with these time-outs in milliseconds, in that order.
fn registries_at(s: &mut Settings, base: &str, [receita, cnes, cdp]: [u64; 3]) {
    s.registries.receita_base_url = Some(crate::helpers::base_url(format!("{base}/receita")));
    s.registries.cnes_base_url = Some(crate::helpers::base_url(format!("{base}/cnes")));
    s.registries.cdp_base_url = Some(crate::helpers::base_url(format!("{base}/cdp")));
    (s.registries.receita_timeout_ms, s.registries.cnes_timeout_ms, s.registries.cdp_timeout_ms) = (receita, cnes, cdp);
}

/// `POST /api/perfil/dados/` while every registry shows `fault`: a user
/// without snapshots gets an `erro` object per registry scope, a user whose
/// snapshots have expired gets them (stale), both with 200 and within the
/// budget: the registries are read concurrently, so the budget is the
/// largest registry time-out.
async fn profile_under(fault: Fault) {
    let faults = FaultServer::start().await;
    let base = faults.uri();
    let app = spawn_app_with(|s| {
        registries_at(s, &base, [RECEITA_TIMEOUT_MS, CNES_TIMEOUT_MS, CDP_TIMEOUT_MS]);
        // Every snapshot is expired as soon as it is written.
        (s.registries.receita_cache_secs, s.registries.cnes_cache_secs, s.registries.cdp_cache_secs) = (0, 0, 0);
    })
    .await;
    register_client(&app, "host", ALL).await;
    let ana = person(&app, "ana", ANA_CPF, true).await;
    let carla = person(&app, "carla", CARLA_CPF, true).await;
    let call = |user: i64| {
        let request =
            app.client.post(format!("{}/api/perfil/dados/", app.address)).bearer_auth(token(user, ALL, "host", 300));
        async move { status_and_json(request.send().await.expect("sent")).await }
    };

    for (_, prefix, answer) in registries() {
        faults.set(prefix, Fault::Answer(200, answer.to_string())).await;
    }
    let (status, fresh) = call(ana).await;
    assert_eq!(status, 200, "{fresh}");
    for (scope, _, answer) in registries() {
        assert_eq!(fresh[scope], answer, "ana's {scope} snapshot is written");
    }

    for (_, prefix, _) in registries() {
        faults.set(prefix, fault.clone()).await;
    }
    let budget = Duration::from_millis(RECEITA_TIMEOUT_MS.max(CNES_TIMEOUT_MS).max(CDP_TIMEOUT_MS));
    let ((status, body), elapsed) = within(budget, call(carla)).await;
    assert_eq!(status, 200, "{body}");
    for (scope, _, _) in registries() {
        let erro = body[scope]["erro"].as_str().unwrap_or_else(|| panic!("{scope} holds an erro object: {body}"));
        let expected = if fault.is_time_out() { "não respondeu a tempo" } else { "indisponível" };
        assert!(erro.contains(expected), "{scope}: {erro}");
    }
    measured("registries, no snapshot", name_of(&fault), "200, `erro` per scope", elapsed);

    let ((status, stale), elapsed) = within(budget, call(ana)).await;
    assert_eq!(status, 200, "{stale}");
    assert_eq!(stale, fresh, "the expired snapshots are served");
    measured("registries, expired snapshot", name_of(&fault), "200, stale data", elapsed);
    if fault != Fault::Refused {
        assert_eq!(faults.requests(&format!("/cnes/profissionais/{ANA_CPF}/vinculos")), 2, "the registry was asked");
    }
}

#[tokio::test]
async fn profile_serves_erro_or_stale_data_when_the_registries_refuse_connections() {
    profile_under(Fault::Refused).await;
}

#[tokio::test]
async fn profile_serves_erro_or_stale_data_when_the_registries_never_answer() {
    profile_under(Fault::Silent).await;
}

#[tokio::test]
async fn profile_serves_erro_or_stale_data_when_the_registries_answer_500() {
    profile_under(Fault::ServerError).await;
}

#[tokio::test]
async fn profile_serves_erro_or_stale_data_when_the_registries_send_malformed_json() {
    profile_under(Fault::Malformed).await;
}

#[tokio::test]
async fn profile_serves_erro_or_stale_data_when_the_registries_announce_11_mb() {
    profile_under(Fault::HugeWithLength).await;
}

#[tokio::test]
async fn profile_serves_erro_or_stale_data_when_the_registries_send_11_mb_chunked() {
    profile_under(Fault::HugeChunked).await;
}

#[tokio::test]
async fn profile_serves_erro_or_stale_data_when_the_registries_drip() {
    profile_under(Fault::Drip).await;
}

/// Several clients reading one user's profile while the registries never
/// answer: they share one call per registry (single flight) and all get
/// their answer within one time-out, not one time-out per waiting request.
#[tokio::test]
async fn concurrent_profile_reads_of_one_user_share_a_failing_call_and_its_budget() {
    const READERS: usize = 6;
    let faults = FaultServer::start().await;
    let base = faults.uri();
    let app = spawn_app_with(|s| {
        registries_at(s, &base, [CDP_TIMEOUT_MS; 3]);
    })
    .await;
    faults.set("/", Fault::Silent).await;
    register_client(&app, "host", ALL).await;
    let ana = person(&app, "ana", ANA_CPF, true).await;
    let bearer = token(ana, ALL, "host", 300);
    let reads = (0..READERS).map(|_| {
        let request = app.client.post(format!("{}/api/perfil/dados/", app.address)).bearer_auth(&bearer);
        async move { status_and_json(request.send().await.expect("sent")).await }
    });
    let budget = Duration::from_millis(CDP_TIMEOUT_MS);
    let (answers, elapsed) = within(budget, futures_util::future::join_all(reads)).await;
    for (status, body) in &answers {
        assert_eq!(*status, 200, "{body}");
        assert!(body["cnes"]["erro"].as_str().is_some_and(|e| e.contains("a tempo")), "{body}");
    }
    assert_eq!(faults.requests(&format!("/cnes/profissionais/{ANA_CPF}/vinculos")), 1, "one call for all readers");
    measured("registries, 6 readers of one user", "timeout", "200, `erro` per scope", elapsed);
}

/// The consent click: the first authorization that includes `cnes` reads
/// CNES (its bonds become experiences) before redirecting. While CNES
/// never answers, the redirect still comes within the CNES time-out and
/// the code works; the supplementation waits for a later authorization.
#[tokio::test]
async fn consent_with_cnes_redirects_within_the_cnes_time_out_when_cnes_never_answers() {
    let faults = FaultServer::start().await;
    let base = faults.uri();
    let (app, ana) = crate::oauth::app_with(|s| {
        s.registries.cnes_base_url = Some(crate::helpers::base_url(format!("{base}/cnes")));
        s.registries.cnes_timeout_ms = CNES_TIMEOUT_MS;
    })
    .await;
    sqlx::query("UPDATE users SET cpf = $1 WHERE id = $2")
        .bind(ANA_CPF)
        .bind(ana)
        .execute(&app.db.pool)
        .await
        .expect("cpf");
    faults.set("/cnes", Fault::Silent).await;
    let mut browser = Browser::new(&app);
    let consent = consent_page(&mut browser, &portal_request("cnes", "s1"), "ana", "ana-password").await;
    let (location, elapsed) =
        within(Duration::from_millis(CNES_TIMEOUT_MS), decide(&mut browser, &consent, "approve")).await;
    assert_eq!(faults.requests(&format!("/cnes/profissionais/{ANA_CPF}/vinculos")), 1, "CNES was asked");
    let code = callback(&location, PORTAL_URI).remove("code").expect("code");
    let form = [("grant_type", "authorization_code"), ("code", code.as_str()), ("redirect_uri", PORTAL_URI)];
    let r = app
        .client
        .post(format!("{}/oauth/token/", app.address))
        .basic_auth("portal", Some(PORTAL_SECRET))
        .form(&form)
        .send()
        .await
        .expect("sent");
    assert_eq!(r.status(), 200);
    measured("CNES at the consent click", "timeout", "303 to the client, code works", elapsed);
}

// ------------------------------------------------------------------ consume

/// The app with the user-data resource on `faults` and a logged-in user;
/// returns the app and an access token.
async fn consume_app(faults: &FaultServer) -> (TestApp, String) {
    let base = faults.uri();
    let app = spawn_app_with(|s| {
        s.registries.upstream_base_url = Some(crate::helpers::base_url(base));
        s.registries.upstream_timeout_ms = CALL_TIMEOUT_MS;
    })
    .await;
    app.add_user("maria", "pw-maria-1", true).await;
    let (access, _) = app.login("maria", "pw-maria-1").await;
    (app, access)
}

/// `GET` and `POST` on both consume routes while the user-data resource
/// shows `fault`: 504 `gateway_timeout` when it does not finish in time,
/// else 502 `bad_gateway`, with an `error_id` and nothing of the upstream's
/// answer, within the call's time-out.
async fn consume_under(fault: Fault) {
    let faults = FaultServer::start().await;
    let (app, access) = consume_app(&faults).await;
    faults.set("/", fault.clone()).await;
    let (expected_status, expected_code) =
        if fault.is_time_out() { (504, "gateway_timeout") } else { (502, "bad_gateway") };
    for route in ["user-info", "rh/eu"] {
        let url = format!("{}/api/token/{route}/", app.address);
        for request in [
            app.client.get(&url).bearer_auth(&access),
            app.client.post(&url).json(&json!({"token": access, "endpoint": "/api/rh/eu/"})),
        ] {
            let timeout = Duration::from_millis(CALL_TIMEOUT_MS);
            let ((status, body), elapsed) =
                within(timeout, async { status_and_json(request.send().await.expect("sent")).await }).await;
            assert_eq!((status, body["code"].as_str()), (expected_status, Some(expected_code)), "{route}: {body}");
            assert!(body["error_id"].is_string() && body["detail"].is_string(), "{body}");
            // Nothing of the upstream's answer; the error id is random hex and
            // may itself hold "aaaa" (it once did), so it is left out here.
            let mut shown = body.clone();
            shown.as_object_mut().map(|o| o.remove("error_id"));
            assert!(!shown.to_string().contains("ANA") && !shown.to_string().contains("aaaa"), "{body}");
            measured(&format!("user-data resource (`{route}`)"), name_of(&fault), &status.to_string(), elapsed);
        }
    }
    if fault != Fault::Refused {
        assert_eq!(faults.requests("/api/rh/eu/"), 4, "every call reached the upstream");
    }
}

#[tokio::test]
async fn consume_routes_answer_502_when_the_user_data_resource_refuses_connections() {
    consume_under(Fault::Refused).await;
}

#[tokio::test]
async fn consume_routes_answer_504_when_the_user_data_resource_never_answers() {
    consume_under(Fault::Silent).await;
}

#[tokio::test]
async fn consume_routes_answer_502_when_the_user_data_resource_answers_500() {
    consume_under(Fault::ServerError).await;
}

#[tokio::test]
async fn consume_routes_answer_502_when_the_user_data_resource_sends_malformed_json() {
    consume_under(Fault::Malformed).await;
}

#[tokio::test]
async fn consume_routes_answer_502_when_the_user_data_resource_announces_11_mb() {
    consume_under(Fault::HugeWithLength).await;
}

#[tokio::test]
async fn consume_routes_answer_502_when_the_user_data_resource_sends_11_mb_chunked() {
    consume_under(Fault::HugeChunked).await;
}

#[tokio::test]
async fn consume_routes_answer_504_when_the_user_data_resource_drips() {
    consume_under(Fault::Drip).await;
}

// ------------------------------------------------------------------ client component

/// The app as a host application whose provider is `faults`.
async fn host_app(faults: &FaultServer) -> TestApp {
    let base = faults.uri();
    spawn_app_with(|s: &mut Settings| {
        s.client.provider_base_url = Some(crate::helpers::base_url(base));
        s.client.provider_client_id = Some("host-app".into());
        s.client.provider_client_secret = Some("host-app-secret".to_owned().into());
        s.client.provider_redirect_uri = Some("http://127.0.0.1:9/auth/callback/".into());
        s.client.provider_timeout_ms = CALL_TIMEOUT_MS;
    })
    .await
}

/// Starts a login and comes back to `/auth/callback/` with a code and the
/// right state; returns the page and how long the callback took, which
/// must be under `budget` (plus the margin).
async fn come_back(browser: &mut Browser, budget: Duration) -> (crate::helpers::Page, Duration) {
    let start = browser.get("/auth/login/").await;
    assert_eq!(start.status, 303, "{}", start.body);
    let authorize = Url::parse(&start.location.expect("Location")).expect("url");
    let state = authorize.query_pairs().find(|(k, _)| k == "state").map(|(_, v)| v.into_owned()).expect("state");
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("code", "a-code")
        .append_pair("state", &state)
        .finish();
    within(budget, browser.get(&format!("/auth/callback/?{query}"))).await
}

/// The HTML error page of a provider that failed, and no host session.
fn assert_provider_error_page(browser: &Browser, page: &crate::helpers::Page) {
    assert_eq!(page.status, 502, "{}", page.body);
    let content_type = page.headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    assert!(content_type.starts_with("text/html"), "{content_type}");
    assert!(page.body.contains("Provedor de identidade indisponível"), "{}", page.body);
    assert!(page.body.contains("Código do erro:"), "{}", page.body);
    assert!(!browser.jar.contains_key("credencial_host_session"), "no host session");
}

/// The client journey while the provider's token endpoint, then (with a
/// working token endpoint) its profile endpoint, shows `fault`: the 502
/// error page, nothing written, within the time-outs of the calls made.
async fn client_journey_under(fault: Fault) {
    let faults = FaultServer::start().await;
    let app = host_app(&faults).await;
    let mut browser = Browser::new(&app);
    let timeout = Duration::from_millis(CALL_TIMEOUT_MS);

    faults.set("/oauth/token/", fault.clone()).await;
    let (page, elapsed) = come_back(&mut browser, timeout).await;
    assert_provider_error_page(&browser, &page);
    measured("provider `/oauth/token/`", name_of(&fault), "502 page", elapsed);
    if fault == Fault::Refused {
        // Both calls go to the same origin: a closed port refuses both.
        assert_eq!(faults.requests("/api/perfil/dados/"), 0);
    } else {
        assert_eq!((faults.requests("/oauth/token/"), faults.requests("/api/perfil/dados/")), (1, 0));
        let tokens =
            json!({"access_token": "provider-access", "token_type": "Bearer", "scope": "dados_publicos cpf email"});
        faults.set("/oauth/token/", Fault::Answer(200, tokens.to_string())).await;
        faults.set("/api/perfil/dados/", fault.clone()).await;
        // The exchange works, then the profile call fails: two time-outs at most.
        let (page, elapsed) = come_back(&mut browser, 2 * timeout).await;
        assert_provider_error_page(&browser, &page);
        assert_eq!((faults.requests("/oauth/token/"), faults.requests("/api/perfil/dados/")), (2, 1));
        measured("provider `/api/perfil/dados/`", name_of(&fault), "502 page", elapsed);
    }
    let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM host_users").fetch_one(&app.db.pool).await.expect("count");
    assert_eq!(rows, 0, "nothing written");
}

#[tokio::test]
async fn client_journey_shows_its_error_page_when_the_provider_refuses_connections() {
    client_journey_under(Fault::Refused).await;
}

#[tokio::test]
async fn client_journey_shows_its_error_page_when_the_provider_never_answers() {
    client_journey_under(Fault::Silent).await;
}

#[tokio::test]
async fn client_journey_shows_its_error_page_when_the_provider_answers_500() {
    client_journey_under(Fault::ServerError).await;
}

#[tokio::test]
async fn client_journey_shows_its_error_page_when_the_provider_sends_malformed_json() {
    client_journey_under(Fault::Malformed).await;
}

#[tokio::test]
async fn client_journey_shows_its_error_page_when_the_provider_announces_11_mb() {
    client_journey_under(Fault::HugeWithLength).await;
}

#[tokio::test]
async fn client_journey_shows_its_error_page_when_the_provider_sends_11_mb_chunked() {
    client_journey_under(Fault::HugeChunked).await;
}

#[tokio::test]
async fn client_journey_shows_its_error_page_when_the_provider_drips() {
    client_journey_under(Fault::Drip).await;
}

// ------------------------------------------------------------------ the rest keeps serving

/// While requests to every upstream hang on a drip, the routes that need
/// no upstream answer at once; the held requests end on their time-outs.
#[tokio::test]
async fn other_routes_keep_serving_while_upstream_calls_hang() {
    const HOLD_MS: u64 = 3_000;
    const CONSUMERS: usize = 12;
    let faults = FaultServer::start().await;
    let base = faults.uri();
    let app = spawn_app_with(|s| {
        registries_at(s, &base, [HOLD_MS; 3]);
        s.registries.upstream_base_url = Some(crate::helpers::base_url(base.clone()));
        s.registries.upstream_timeout_ms = HOLD_MS;
    })
    .await;
    faults.set("/", Fault::Drip).await;
    register_client(&app, "host", ALL).await;
    let ana = person(&app, "ana", ANA_CPF, true).await;
    app.add_user("maria", "pw-maria-1", true).await;
    let (access, _) = app.login("maria", "pw-maria-1").await;

    let held_consumes: Vec<_> = (0..CONSUMERS)
        .map(|_| {
            tokio::spawn(app.client.get(format!("{}/api/token/user-info/", app.address)).bearer_auth(&access).send())
        })
        .collect();
    let held_profile = tokio::spawn(
        app.client.post(format!("{}/api/perfil/dados/", app.address)).bearer_auth(token(ana, ALL, "host", 300)).send(),
    );
    // Every consume call and the three registry calls are dripping.
    faults.wait_for_open_connections(CONSUMERS + 3, Duration::from_millis(HOLD_MS)).await;

    let mut slowest = Duration::ZERO;
    for _ in 0..3 {
        let started = Instant::now();
        let r = app.client.get(format!("{}/healthz", app.address)).send().await.expect("sent");
        assert_eq!(r.status(), 200);
        let (status, body) =
            status_and_json(app.post_json("/api/token/verify/", &json!({"token": access})).await).await;
        assert_eq!((status, &body), (200, &json!({})));
        let (status, _) = status_and_json(
            app.post_json("/api/token/pair/", &json!({"username": "maria", "password": "pw-maria-1"})).await,
        )
        .await;
        assert_eq!(status, 200);
        assert!(started.elapsed() < Duration::from_secs(1), "answered after {:?}", started.elapsed());
        slowest = slowest.max(started.elapsed());
    }
    measured("none (`/healthz`, verify, pair)", "15 upstream calls dripping", "200 each", slowest);
    assert_eq!(faults.open_connections(), CONSUMERS + 3, "the checks ran while the upstream calls were held");

    let hold = Duration::from_millis(HOLD_MS);
    for held in held_consumes {
        let ((status, body), _) =
            within(hold, async { status_and_json(held.await.expect("task").expect("sent")).await }).await;
        assert_eq!((status, body["code"].as_str()), (504, Some("gateway_timeout")));
    }
    let ((status, body), _) =
        within(hold, async { status_and_json(held_profile.await.expect("task").expect("sent")).await }).await;
    assert_eq!(status, 200);
    assert!(body["cnes"]["erro"].is_string(), "{body}");
}
