//! Outbound settings end to end: `upstream_proxy` carries the consume
//! routes' calls to a non-loopback upstream through a forward proxy on
//! loopback (which records what it is sent), never a loopback upstream's.

use credencial_adapters_upstream::testing::RecordingProxy;
use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::helpers::{spawn_app_with, status_and_json, TestApp};

fn user_json() -> Value {
    json!({"identificacao": "1934207", "nome_usual": "Maria Silva", "email": "maria@example.gov.br",
           "campus": "Natal-Central", "tipo_usuario": "Servidor"})
}

async fn rh_eu(app: &TestApp) -> (u16, Value) {
    app.add_user("maria", "pw-maria-1", true).await;
    let (access, _) = app.login("maria", "pw-maria-1").await;
    let r =
        app.client.get(format!("{}/api/token/rh/eu/", app.address)).bearer_auth(&access).send().await.expect("sent");
    status_and_json(r).await
}

#[tokio::test]
async fn with_upstream_proxy_the_upstream_calls_go_through_the_proxy() {
    let proxy = RecordingProxy::answering(user_json().to_string()).await;
    let url = proxy.url.clone();
    let app = spawn_app_with(|s| {
        s.registries.upstream_base_url = Some(crate::helpers::base_url("http://suap.test"));
        s.registries.upstream_proxy = Some(url.into());
    })
    .await;
    assert_eq!(rh_eu(&app).await, (200, user_json()));
    assert_eq!(proxy.seen(), ["GET http://suap.test/api/rh/eu/ HTTP/1.1"]);
}

#[tokio::test]
async fn without_upstream_proxy_or_for_excluded_hosts_no_call_goes_through_it() {
    let proxy = RecordingProxy::answering(user_json().to_string()).await;
    for adjust in [
        // No proxy configured: the name resolves nowhere, so the call fails.
        Box::new(|s: &mut credencial::Settings| {
            s.registries.upstream_base_url = Some(crate::helpers::base_url("http://suap.test"))
        }) as Box<dyn FnOnce(&mut credencial::Settings)>,
        // Configured, but the host is excluded.
        Box::new({
            let url = proxy.url.clone();
            move |s: &mut credencial::Settings| {
                s.registries.upstream_base_url = Some(crate::helpers::base_url("http://suap.test"));
                s.registries.upstream_proxy = Some(url.into());
                s.registries.upstream_no_proxy = vec!["example.org".into(), "suap.test".into()];
            }
        }),
    ] {
        let app = spawn_app_with(adjust).await;
        let (status, _) = rh_eu(&app).await;
        assert_eq!(status, 502, "a direct call to a name only the proxy knows fails");
    }
    assert!(proxy.seen().is_empty(), "{:?}", proxy.seen());
}

#[tokio::test]
async fn a_loopback_upstream_is_called_directly_even_with_a_proxy() {
    let proxy = RecordingProxy::answering(user_json().to_string()).await;
    let url = proxy.url.clone();
    let app = spawn_app_with(|s| s.registries.upstream_proxy = Some(url.into())).await;
    Mock::given(method("GET"))
        .and(path("/api/rh/eu/"))
        .respond_with(ResponseTemplate::new(200).set_body_json(user_json()))
        .expect(1)
        .mount(&app.upstream)
        .await;
    assert_eq!(rh_eu(&app).await, (200, user_json()));
    assert!(proxy.seen().is_empty(), "{:?}", proxy.seen());
}
