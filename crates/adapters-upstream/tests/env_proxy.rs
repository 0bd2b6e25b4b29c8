//! Proxies come from our settings only: `HTTP_PROXY` and friends in the
//! environment are ignored. (A test binary of its own: it changes the
//! process environment.)

mod support;

use std::time::Duration;

use credencial_adapters_upstream::{http_client, BaseUrl, HttpTaxAuthority, RegistryEndpoint};
use credencial_domain::Cpf;
use credencial_ports::TaxAuthority;
use support::RecordingProxy;

#[tokio::test]
async fn proxy_environment_variables_are_ignored() {
    let proxy = RecordingProxy::start().await;
    for name in ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"] {
        std::env::set_var(name, &proxy.url);
    }
    std::env::remove_var("NO_PROXY");
    std::env::remove_var("no_proxy");
    let client = http_client().expect("client");
    let receita = HttpTaxAuthority::new(
        RegistryEndpoint::new(client, BaseUrl::parse("http://receita.test/").expect("base URL"))
            .with_timeout(Duration::from_secs(5)),
    );
    let result = receita.lookup(&Cpf::parse("52998224725").expect("CPF")).await;
    assert!(result.is_err(), "only the proxy knows receita.test: {result:?}");
    assert!(proxy.seen().is_empty(), "{:?}", proxy.seen());

    // The same environment is obeyed by a client that reads it: the test
    // would catch a proxy if we did.
    let reader = reqwest::Client::builder().build().expect("client");
    let r = reader.get("http://receita.test/cpf/1").send().await.expect("through the environment's proxy");
    assert_eq!(r.status(), 200);
    assert_eq!(proxy.seen(), ["GET http://receita.test/cpf/1 HTTP/1.1"]);
}
