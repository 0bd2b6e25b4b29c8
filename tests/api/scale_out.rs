//! Two instances on one database behind a round-robin balancer
//! (`round_robin.rs`): the client opens a connection per request, so
//! consecutive requests alternate between the instances, and each test
//! checks from the balancer's record that both of them served. Whatever
//! one instance writes — an authorization code, a rotated refresh token, a
//! scope snapshot — the other must honour.

use serde_json::{json, Value};

use credencial::settings::Settings;

use crate::helpers::{spawn_app_with, status_and_json, Browser, TestApp};
use crate::oauth::{callback, consent_page, decide, portal_request, PORTAL_SECRET, PORTAL_URI};
use crate::profile::{mount_registries, person, register_client, token, ALL, ANA_CPF};
use crate::round_robin::{one_connection_per_request_client, RoundRobin};

/// A second instance on `first`'s database (and `first`'s wiremock behind
/// every upstream), after `adjust`.
async fn second_instance(first: &TestApp, adjust: impl FnOnce(&mut Settings)) -> TestApp {
    let db_url = first.db.url.clone();
    let upstream = first.upstream.uri();
    spawn_app_with(|s| {
        s.storage.database_url = db_url.into();
        s.registries.upstream_base_url = Some(crate::helpers::base_url(upstream));
        adjust(s);
    })
    .await
}

/// A balancer over both instances.
async fn balance(first: &TestApp, second: &TestApp) -> RoundRobin {
    let backend = |app: &TestApp| app.address.trim_start_matches("http://").to_owned();
    RoundRobin::start(vec![backend(first), backend(second)]).await
}

/// POSTs JSON through the balancer.
async fn post_json(client: &reqwest::Client, balancer: &RoundRobin, path: &str, body: &Value) -> (u16, Value) {
    status_and_json(client.post(format!("{}{path}", balancer.uri())).json(body).send().await.expect("sent")).await
}

#[tokio::test]
async fn an_authorization_code_issued_by_one_instance_is_redeemed_exactly_once_by_either() {
    // PostgreSQL's by nature, in both test binaries (tests/api/database.rs).
    crate::database::on_postgres(async {
        let (first, _ana) = crate::oauth::app().await;
        let second = second_instance(&first, |_| {}).await;
        let balancer = balance(&first, &second).await;
        let client = one_connection_per_request_client();

        // The browser part alternates: login form, login, consent, approval.
        let mut browser = Browser { base: balancer.uri().to_owned(), client: client.clone(), jar: Default::default() };
        let consent =
            consent_page(&mut browser, &portal_request("formacao_academica", "s1"), "ana", "ana-password").await;
        let location = decide(&mut browser, &consent, "approve").await;
        let code = callback(&location, PORTAL_URI).remove("code").expect("code");
        assert_eq!(balancer.served(), [0, 1, 0, 1], "the session made on one instance was honoured by the other");

        // Both instances try to redeem it at the same time.
        let redeem = || {
            let form = [("grant_type", "authorization_code"), ("code", code.as_str()), ("redirect_uri", PORTAL_URI)];
            let request = client
                .post(format!("{}/oauth/token/", balancer.uri()))
                .basic_auth("portal", Some(PORTAL_SECRET))
                .form(&form);
            async move { status_and_json(request.send().await.expect("sent")).await }
        };
        let (a, b) = tokio::join!(redeem(), redeem());
        let mut redeemed_by = balancer.served()[4..].to_vec();
        redeemed_by.sort_unstable();
        assert_eq!(redeemed_by, [0, 1], "each instance got one of the two redemptions");
        let (won, lost) = if a.0 == 200 { (a, b) } else { (b, a) };
        assert_eq!(won.0, 200, "{}", won.1);
        assert!(won.1["access_token"].is_string() && won.1["refresh_token"].is_string(), "{}", won.1);
        assert_eq!((lost.0, lost.1["error"].as_str()), (400, Some("invalid_grant")), "{}", lost.1);

        // And once more, later, on whichever instance: still refused.
        let (status, body) = redeem().await;
        assert_eq!((status, body["error"].as_str()), (400, Some("invalid_grant")));
    })
    .await
}

#[tokio::test]
async fn a_rotated_refresh_token_is_refused_by_both_instances() {
    // PostgreSQL's by nature, in both test binaries (tests/api/database.rs).
    crate::database::on_postgres(async {
        let first = spawn_app_with(|_| {}).await;
        first.add_user("maria", "pw-maria-1", true).await;
        let second = second_instance(&first, |_| {}).await;
        let balancer = balance(&first, &second).await;
        let client = one_connection_per_request_client();

        let (status, pair) =
            post_json(&client, &balancer, "/api/token/pair/", &json!({"username": "maria", "password": "pw-maria-1"}))
                .await;
        assert_eq!(status, 200, "{pair}");
        let old = json!({"refresh": pair["refresh"]});
        let (status, rotated) = post_json(&client, &balancer, "/api/token/refresh/", &old).await;
        assert_eq!(status, 200, "{rotated}");
        let (status, newest) =
            post_json(&client, &balancer, "/api/token/refresh/", &json!({"refresh": rotated["refresh"]})).await;
        assert_eq!(status, 200, "the new refresh token works on the other instance: {newest}");
        let blacklisted = json!({"detail": "Token is blacklisted", "code": "token_not_valid"});
        for _ in 0..2 {
            let (status, body) = post_json(&client, &balancer, "/api/token/refresh/", &old).await;
            assert_eq!((status, &body), (401, &blacklisted));
        }
        // The replay revoked the family: its newest token is refused as well.
        let (status, body) =
            post_json(&client, &balancer, "/api/token/refresh/", &json!({"refresh": newest["refresh"]})).await;
        assert_eq!((status, &body), (401, &blacklisted));
        assert_eq!(
            balancer.served(),
            [0, 1, 0, 1, 0, 1],
            "login on 0, rotations on 1 and 0, the replay refused by 1 and 0, the revoked newest by 1"
        );
    })
    .await
}

#[tokio::test]
async fn a_scope_snapshot_fetched_by_one_instance_is_served_by_the_other_without_an_upstream_call() {
    // PostgreSQL's by nature, in both test binaries (tests/api/database.rs).
    crate::database::on_postgres(async {
        let registries = |s: &mut Settings| {
            let base = s.registries.upstream_base_url.clone().expect("wiremock").to_string();
            let base = base.trim_end_matches('/');
            s.registries.receita_base_url = Some(crate::helpers::base_url(format!("{base}/receita")));
            s.registries.cnes_base_url = Some(crate::helpers::base_url(format!("{base}/cnes")));
            s.registries.cdp_base_url = Some(crate::helpers::base_url(format!("{base}/cdp")));
        };
        let first = spawn_app_with(registries).await;
        let second = second_instance(&first, registries).await;
        register_client(&first, "host", ALL).await;
        let ana = person(&first, "ana", ANA_CPF, true).await;
        // One call per registry, for both instances together.
        mount_registries(&first, ANA_CPF, 1).await;
        let balancer = balance(&first, &second).await;
        let client = one_connection_per_request_client();

        let bearer = token(ana, ALL, "host", 300);
        let profile = || {
            let request = client.post(format!("{}/api/perfil/dados/", balancer.uri())).bearer_auth(&bearer);
            async move { status_and_json(request.send().await.expect("sent")).await }
        };
        let (status, fetched) = profile().await;
        assert_eq!(status, 200, "{fetched}");
        assert!(fetched["cnes"]["vinculos"].is_array(), "{fetched}");
        let (status, cached) = profile().await;
        assert_eq!((status, &cached), (200, &fetched));
        assert_eq!(balancer.served(), [0, 1], "fetched by one instance, served by the other");
        first.upstream.verify().await;
    })
    .await
}
