//! The shared client's trust and proxy settings against real servers on
//! loopback: an HTTPS registry whose certificate a test CA signed, and a
//! forward proxy that records what it is sent.

mod support;

use std::time::Duration;

use credencial_adapters_upstream::{
    http_client_with, BaseUrl, HttpTaxAuthority, OutboundConfig, OutboundError, ProxyConfig, RegistryEndpoint,
};
use credencial_domain::Cpf;
use credencial_ports::TaxAuthority;
use support::{RecordingProxy, TlsUpstream};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const ANA: &str = "52998224725";

fn ana() -> Cpf {
    Cpf::parse(ANA).expect("valid CPF")
}

/// The tax-authority adapter at `base` through a client built from `config`.
fn receita(config: &OutboundConfig, base: &str) -> HttpTaxAuthority {
    let client = http_client_with(config).expect("client");
    HttpTaxAuthority::new(
        RegistryEndpoint::new(client, BaseUrl::parse(base).expect("base URL")).with_timeout(Duration::from_secs(5)),
    )
}

fn proxied(proxy: &RecordingProxy, no_proxy: &str) -> OutboundConfig {
    OutboundConfig { ca_file: None, proxy: Some(ProxyConfig::parse(&proxy.url, no_proxy).expect("proxy URL")) }
}

#[tokio::test]
async fn an_upstream_signed_by_a_private_ca_is_refused_without_the_ca_file_and_accepted_with_it() {
    let upstream = TlsUpstream::start().await;
    let refused = receita(&OutboundConfig::default(), &upstream.url).lookup(&ana()).await;
    assert!(refused.is_err(), "the test CA is in no trust store: {refused:?}");
    assert!(upstream.seen().is_empty(), "no request crossed a refused handshake");

    let with_ca = OutboundConfig { ca_file: Some(upstream.ca_file.clone()), proxy: None };
    let record = receita(&with_ca, &upstream.url).lookup(&ana()).await.expect("trusted through the CA file");
    assert_eq!(record.nome, "ANA BEATRIZ SOUZA");
    assert_eq!(upstream.seen(), [format!("GET /cpf/{ANA} HTTP/1.1")]);
    // The name in the certificate counts too, not only the address.
    let by_name = format!("https://localhost:{}", upstream.address.port());
    receita(&with_ca, &by_name).lookup(&ana()).await.expect("localhost is in the certificate");
}

#[tokio::test]
async fn a_bad_ca_file_is_refused_naming_the_file() {
    let dir = std::env::temp_dir();
    let missing = dir.join(format!("credencial-no-such-ca-{}.pem", std::process::id()));
    let empty = dir.join(format!("credencial-empty-ca-{}.pem", std::process::id()));
    std::fs::write(&empty, "not a certificate\n").expect("write");
    for (file, reason) in [(&missing, "cannot read it"), (&empty, "holds no PEM certificate")] {
        let config = OutboundConfig { ca_file: Some(file.clone()), proxy: None };
        let e = http_client_with(&config).expect_err("refused");
        assert!(matches!(e, OutboundError::CaFile { .. }), "{e:?}");
        let e = e.to_string();
        assert!(e.contains(&file.display().to_string()) && e.contains(reason), "{e}");
    }
    let _ = std::fs::remove_file(&empty);
}

#[tokio::test]
async fn a_configured_proxy_sees_the_registry_calls_and_answers_them() {
    let proxy = RecordingProxy::start().await;
    let record = receita(&proxied(&proxy, ""), "http://receita.test/").lookup(&ana()).await.expect("via the proxy");
    assert_eq!(record.uf, "RN");
    assert_eq!(proxy.seen(), [format!("GET http://receita.test/cpf/{ANA} HTTP/1.1")]);
}

#[tokio::test]
async fn without_a_proxy_setting_no_call_goes_through_the_proxy() {
    let proxy = RecordingProxy::start().await;
    // receita.test resolves nowhere but at the proxy: the direct call fails.
    let direct = receita(&OutboundConfig::default(), "http://receita.test/").lookup(&ana()).await;
    assert!(direct.is_err(), "{direct:?}");
    assert!(proxy.seen().is_empty(), "{:?}", proxy.seen());
}

#[tokio::test]
async fn loopback_upstreams_are_never_proxied() {
    let proxy = RecordingProxy::start().await;
    let registry = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!("/cpf/{ANA}")))
        .respond_with(ResponseTemplate::new(200).set_body_raw(support::RECEITA_BODY, "application/json"))
        .mount(&registry)
        .await;
    let port = registry.address().port();
    let config = proxied(&proxy, "");
    for base in [format!("http://127.0.0.1:{port}"), format!("http://localhost:{port}")] {
        receita(&config, &base).lookup(&ana()).await.unwrap_or_else(|e| panic!("{base}: {e:?}"));
    }
    assert_eq!(registry.received_requests().await.expect("recorded").len(), 2);
    // IPv6 loopback too.
    let v6 = std::net::TcpListener::bind("[::1]:0").expect("IPv6 loopback");
    let v6_port = v6.local_addr().expect("address").port();
    let registry_v6 = MockServer::builder().listener(v6).start().await;
    Mock::given(method("GET"))
        .and(path(format!("/cpf/{ANA}")))
        .respond_with(ResponseTemplate::new(200).set_body_raw(support::RECEITA_BODY, "application/json"))
        .mount(&registry_v6)
        .await;
    let base = format!("http://[::1]:{v6_port}");
    receita(&config, &base).lookup(&ana()).await.unwrap_or_else(|e| panic!("{base}: {e:?}"));
    assert_eq!(registry_v6.received_requests().await.expect("recorded").len(), 1);
    assert!(proxy.seen().is_empty(), "{:?}", proxy.seen());
}

#[tokio::test]
async fn hosts_in_no_proxy_are_called_directly_and_the_others_through_the_proxy() {
    let proxy = RecordingProxy::start().await;
    let config = proxied(&proxy, " intranet.test , 10.0.0.0/8");
    // Excluded (the domain and its subdomains): a direct call, which fails
    // because only the proxy knows these names.
    for base in ["http://intranet.test/", "http://cnes.intranet.test/"] {
        assert!(receita(&config, base).lookup(&ana()).await.is_err(), "{base}");
    }
    receita(&config, "http://receita.test/").lookup(&ana()).await.expect("through the proxy");
    assert_eq!(proxy.seen(), [format!("GET http://receita.test/cpf/{ANA} HTTP/1.1")]);
}

#[test]
fn proxy_urls_are_checked() {
    assert!(ProxyConfig::parse("http://proxy.example:3128", "").is_ok());
    assert!(ProxyConfig::parse("https://user:pw@proxy.example:3128/", "").is_ok());
    for bad in ["proxy.example:3128", "socks5://proxy.example:1080", "http://proxy.example:3128/path", "http://"] {
        assert!(ProxyConfig::parse(bad, "").is_err(), "{bad}");
    }
    let config = ProxyConfig::parse("http://user:s3cret@proxy.example:3128", "a.test,,b.test ").expect("valid");
    assert_eq!(config.no_proxy, ["a.test", "b.test"]);
    assert!(!format!("{config:?}").contains("s3cret"), "the password is never printed");
}
