//! The registry adapters (`HttpTaxAuthority`, `HttpCnesRegistry`,
//! `HttpCdpDirectory`) against `wiremock` on loopback: request shapes,
//! decoding into the contract's types, status mapping, time-outs, redirects.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use credencial_adapters_upstream::{
    http_client, ApiKey, BaseUrl, HttpCdpDirectory, HttpCnesRegistry, HttpTaxAuthority, RegistryEndpoint,
    DEFAULT_REGISTRY_TIMEOUT,
};
use credencial_domain::{CdpCourse, Cnes, CnesVinculo, Cpf, CursosCdp, ReceitaFederal};
use credencial_ports::{CdpDirectory, CnesRegistry, TaxAuthority, UpstreamError};
use serde_json::{json, Value};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "registry-api-key-123";
const ANA: &str = "52998224725";

fn ana() -> Cpf {
    Cpf::parse(ANA).expect("valid CPF")
}

fn endpoint(base: &str, timeout: Duration) -> RegistryEndpoint {
    RegistryEndpoint::new(http_client().expect("client"), BaseUrl::parse(base).expect("base URL"))
        .with_timeout(timeout)
        .with_api_key(ApiKey::new(KEY).expect("valid key"))
}

fn receita_body() -> Value {
    json!({
        "nome": "ANA BEATRIZ SOUZA",
        "dtNascimento": "1988-03-14",
        "sexo": "F",
        "mae": "MARIA DAS GRACAS SOUZA",
        "noMunicipio": "NATAL",
        "uf": "RN"
    })
}

fn cnes_body() -> Value {
    json!({"vinculos": [
        {"cnes": "2409208", "noFant": "HOSPITAL UNIVERSITARIO ONOFRE LOPES", "coMun": "240810", "noCBO": "ENFERMEIRO"},
        {"cnes": "2653982", "noFant": "UBS NOVA NATAL", "coMun": "240810", "noCBO": "ENFERMEIRO DA ESTRATEGIA DE SAUDE DA FAMILIA"}
    ]})
}

fn cdp_body() -> Value {
    json!({"total": 1, "data": [{
        "title": "Acolhimento na Atenção Básica",
        "descricao": "Curso autoinstrucional de 30 horas",
        "vinculo": "Cursista",
        "link": "https://cdp.example.gov.br/node/101",
        "status": "Concluído",
        "nid": 101,
        "created": "2021-05-10",
        "type": "curso"
    }]})
}

/// Which registry a test talks to.
#[derive(Debug, Clone, Copy)]
enum Registry {
    Receita,
    Cnes,
    Cdp,
}

const ALL: [Registry; 3] = [Registry::Receita, Registry::Cnes, Registry::Cdp];

impl Registry {
    fn path(self) -> String {
        match self {
            Registry::Receita => format!("/cpf/{ANA}"),
            Registry::Cnes => format!("/profissionais/{ANA}/vinculos"),
            Registry::Cdp => format!("/usuarios/{ANA}/cursos"),
        }
    }

    fn good_body(self) -> Value {
        match self {
            Registry::Receita => receita_body(),
            Registry::Cnes => cnes_body(),
            Registry::Cdp => cdp_body(),
        }
    }

    /// Calls the registry and re-serialises the decoded payload.
    async fn call(self, endpoint: RegistryEndpoint) -> Result<Value, UpstreamError> {
        let cpf = ana();
        let to_json = |v: Result<Value, serde_json::Error>| v.expect("serialise");
        match self {
            Registry::Receita => {
                HttpTaxAuthority::new(endpoint).lookup(&cpf).await.map(|v| to_json(serde_json::to_value(v)))
            }
            Registry::Cnes => {
                HttpCnesRegistry::new(endpoint).bonds(&cpf).await.map(|v| to_json(serde_json::to_value(v)))
            }
            Registry::Cdp => {
                HttpCdpDirectory::new(endpoint).courses(&cpf).await.map(|v| to_json(serde_json::to_value(v)))
            }
        }
    }
}

/// A registry answering every request with `response`.
async fn upstream(response: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET")).respond_with(response).mount(&server).await;
    server
}

async fn call(registry: Registry, server: &MockServer) -> Result<Value, UpstreamError> {
    registry.call(endpoint(&format!("{}/", server.uri()), Duration::from_secs(5))).await
}

fn assert_bad_response(result: &Result<Value, UpstreamError>, what: &str) {
    assert!(matches!(result, Err(UpstreamError::BadResponse(_))), "{what}: expected BadResponse, got {result:?}");
}

// ------------------------------------------------------------------ success

#[tokio::test]
async fn the_tax_authority_record_is_decoded_exactly_from_a_get_with_the_cpf_in_the_path_and_the_key() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!("/receita/v1/cpf/{ANA}")))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .and(header("accept", "application/json"))
        .respond_with(ResponseTemplate::new(200).set_body_json(receita_body()))
        .expect(1)
        .mount(&server)
        .await;

    let record = HttpTaxAuthority::new(endpoint(&format!("{}/receita/v1", server.uri()), Duration::from_secs(5)))
        .lookup(&ana())
        .await
        .expect("record");
    assert_eq!(
        record,
        ReceitaFederal {
            nome: "ANA BEATRIZ SOUZA".into(),
            dt_nascimento: "1988-03-14".into(),
            sexo: "F".into(),
            mae: "MARIA DAS GRACAS SOUZA".into(),
            no_municipio: "NATAL".into(),
            uf: "RN".into(),
        }
    );

    let requests = server.received_requests().await.expect("recording is on");
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].url.query(), None);
    let auth: Vec<_> = requests[0].headers.get_all("authorization").iter().collect();
    assert_eq!(auth.len(), 1, "exactly one Authorization header");
}

#[tokio::test]
async fn cnes_bonds_are_decoded_exactly_from_a_get_with_the_cpf_in_the_path_and_the_key() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!("/cnes/profissionais/{ANA}/vinculos")))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(cnes_body()))
        .expect(1)
        .mount(&server)
        .await;

    let bonds = HttpCnesRegistry::new(endpoint(&format!("{}/cnes/", server.uri()), Duration::from_secs(5)))
        .bonds(&ana())
        .await
        .expect("bonds");
    assert_eq!(bonds.vinculos.len(), 2);
    assert_eq!(
        bonds.vinculos[0],
        CnesVinculo {
            cnes: "2409208".into(),
            no_fant: "HOSPITAL UNIVERSITARIO ONOFRE LOPES".into(),
            co_mun: "240810".into(),
            no_cbo: "ENFERMEIRO".into(),
        }
    );
    assert_eq!(serde_json::to_value(&bonds).expect("serialise"), cnes_body());
}

#[tokio::test]
async fn cdp_courses_are_decoded_exactly_from_a_get_with_the_cpf_in_the_path_and_the_key() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!("/usuarios/{ANA}/cursos")))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(cdp_body()))
        .expect(1)
        .mount(&server)
        .await;

    let courses =
        HttpCdpDirectory::new(endpoint(&server.uri(), Duration::from_secs(5))).courses(&ana()).await.expect("courses");
    assert_eq!(
        courses,
        CursosCdp {
            total: 1,
            data: vec![CdpCourse {
                title: "Acolhimento na Atenção Básica".into(),
                descricao: "Curso autoinstrucional de 30 horas".into(),
                vinculo: "Cursista".into(),
                link: "https://cdp.example.gov.br/node/101".into(),
                status: "Concluído".into(),
                nid: 101,
                created: "2021-05-10".into(),
                kind: "curso".into(),
            }],
        }
    );
}

#[tokio::test]
async fn empty_bond_and_course_lists_are_answers_not_errors() {
    let server = upstream(ResponseTemplate::new(200).set_body_json(json!({"vinculos": []}))).await;
    assert_eq!(call(Registry::Cnes, &server).await, Ok(json!({"vinculos": []})));
    let server = upstream(ResponseTemplate::new(200).set_body_json(json!({"total": 0, "data": []}))).await;
    assert_eq!(call(Registry::Cdp, &server).await, Ok(json!({"total": 0, "data": []})));
}

#[tokio::test]
async fn fields_outside_the_contract_are_dropped() {
    let mut body = receita_body();
    body["cpf"] = json!(ANA);
    body["situacaoCadastral"] = json!("REGULAR");
    let server = upstream(ResponseTemplate::new(200).set_body_json(body)).await;
    assert_eq!(call(Registry::Receita, &server).await, Ok(receita_body()));
}

#[tokio::test]
async fn without_an_api_key_no_authorization_header_is_sent() {
    let server = upstream(ResponseTemplate::new(200).set_body_json(receita_body())).await;
    let endpoint =
        RegistryEndpoint::new(http_client().expect("client"), BaseUrl::parse(&server.uri()).expect("base URL"));
    HttpTaxAuthority::new(endpoint).lookup(&ana()).await.expect("record");
    let requests = server.received_requests().await.expect("recording is on");
    assert!(requests[0].headers.get("authorization").is_none());
}

#[tokio::test]
async fn each_registry_calls_its_own_path_below_its_base() {
    for registry in ALL {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path(format!("/prefix{}", registry.path())))
            .respond_with(ResponseTemplate::new(200).set_body_json(registry.good_body()))
            .expect(1)
            .mount(&server)
            .await;
        let got = registry.call(endpoint(&format!("{}/prefix/", server.uri()), Duration::from_secs(5))).await;
        assert_eq!(got, Ok(registry.good_body()), "{registry:?}");
    }
}

// ----------------------------------------------------------------- statuses

#[tokio::test]
async fn a_404_with_a_json_body_is_not_found() {
    for registry in ALL {
        let server = upstream(ResponseTemplate::new(404).set_body_json(json!({"detail": "CPF não encontrado"}))).await;
        assert_eq!(call(registry, &server).await, Err(UpstreamError::NotFound), "{registry:?}");
    }
}

#[tokio::test]
async fn a_404_without_a_json_body_is_a_bad_response_because_it_means_a_wrong_base_url() {
    for body in ["<html><body>Not Found</body></html>", ""] {
        let server = upstream(ResponseTemplate::new(404).set_body_raw(body, "text/html")).await;
        assert_bad_response(&call(Registry::Receita, &server).await, &format!("404 {body:?}"));
    }
}

#[tokio::test]
async fn a_refused_key_is_unauthorized_or_forbidden() {
    for registry in ALL {
        let server = upstream(ResponseTemplate::new(401).set_body_json(json!({"detail": "x"}))).await;
        assert_eq!(call(registry, &server).await, Err(UpstreamError::Unauthorized), "{registry:?}");
        let server = upstream(ResponseTemplate::new(403).set_body_json(json!({"detail": "x"}))).await;
        assert_eq!(call(registry, &server).await, Err(UpstreamError::Forbidden), "{registry:?}");
    }
}

#[tokio::test]
async fn server_errors_and_other_statuses_are_bad_responses() {
    for status in [500, 502, 503, 400, 429] {
        for registry in ALL {
            let server = upstream(ResponseTemplate::new(status).set_body_json(registry.good_body())).await;
            assert_bad_response(&call(registry, &server).await, &format!("{registry:?} status {status}"));
        }
    }
}

// -------------------------------------------------------------------- bodies

#[tokio::test]
async fn a_body_that_is_not_json_is_a_bad_response() {
    for (body, content_type) in [
        ("<!doctype html><html><body>Login</body></html>", "text/html"),
        ("", "application/json"),
        ("{\"nome\": ", "application/json"),
    ] {
        for registry in ALL {
            let server = upstream(ResponseTemplate::new(200).set_body_raw(body, content_type)).await;
            assert_bad_response(&call(registry, &server).await, &format!("{registry:?} {body:?}"));
        }
    }
}

#[tokio::test]
async fn json_of_the_wrong_shape_is_a_bad_response() {
    let mut missing = receita_body();
    missing.as_object_mut().expect("object").remove("mae");
    let mut bad_date = receita_body();
    bad_date["dtNascimento"] = json!("14/03/1988");
    let mut bad_created = cdp_body();
    bad_created["data"][0]["created"] = json!("2021-05-10T12:00:00");
    let cases = [
        (Registry::Receita, missing, "missing field"),
        (Registry::Receita, bad_date, "date not YYYY-MM-DD"),
        (Registry::Receita, json!([receita_body()]), "a list instead of an object"),
        (Registry::Cnes, json!([{"cnes": "1"}]), "a bare list"),
        (
            Registry::Cnes,
            json!({"vinculos": [{"cnes": 2409208, "noFant": "X", "coMun": "240810", "noCBO": "Y"}]}),
            "number for a string",
        ),
        (Registry::Cnes, json!({"vinculos": null}), "null list"),
        (Registry::Cdp, bad_created, "created not YYYY-MM-DD"),
        (Registry::Cdp, json!({"total": 1}), "missing data"),
        (Registry::Cdp, json!({"total": "um", "data": []}), "total not an integer"),
    ];
    for (registry, body, what) in cases {
        let server = upstream(ResponseTemplate::new(200).set_body_json(body)).await;
        assert_bad_response(&call(registry, &server).await, what);
    }
}

#[tokio::test]
async fn a_refused_answer_does_not_repeat_its_personal_data_in_the_error() {
    let mut body = receita_body();
    body["dtNascimento"] = json!("14/03/1988");
    let server = upstream(ResponseTemplate::new(200).set_body_json(body)).await;
    let Err(UpstreamError::BadResponse(why)) = call(Registry::Receita, &server).await else {
        panic!("expected BadResponse");
    };
    assert!(why.contains("does not match the contract"), "{why}");
    assert!(!why.contains("1988") && !why.contains("ANA"), "{why}");
}

#[tokio::test]
async fn a_body_larger_than_the_cap_is_a_bad_response() {
    let mut body = receita_body();
    body["padding"] = json!("x".repeat(4096));
    let server = upstream(ResponseTemplate::new(200).set_body_json(body)).await;
    let endpoint = endpoint(&server.uri(), Duration::from_secs(5)).with_max_body_bytes(1024);
    assert_bad_response(&Registry::Receita.call(endpoint).await, "4 KiB body with a 1 KiB cap");
}

// ----------------------------------------------------------------- time-outs

#[test]
fn the_default_time_out_is_three_seconds() {
    assert_eq!(DEFAULT_REGISTRY_TIMEOUT, Duration::from_secs(3));
}

#[tokio::test]
async fn a_slow_registry_times_out_without_waiting_for_it() {
    for registry in ALL {
        let server =
            upstream(ResponseTemplate::new(200).set_body_json(registry.good_body()).set_delay(Duration::from_secs(2)))
                .await;
        let started = Instant::now();
        let result = registry.call(endpoint(&server.uri(), Duration::from_millis(200))).await;
        let elapsed = started.elapsed();
        assert_eq!(result, Err(UpstreamError::Timeout), "{registry:?}");
        assert!(elapsed < Duration::from_millis(1500), "{registry:?} took {elapsed:?}");
    }
}

// ------------------------------------------------------------------ redirects

#[tokio::test]
async fn a_redirect_is_not_followed_and_the_key_never_reaches_the_other_host() {
    for status in [301, 302, 307, 308] {
        let elsewhere = upstream(ResponseTemplate::new(200).set_body_json(receita_body())).await;
        let server = upstream(
            ResponseTemplate::new(status).insert_header("Location", format!("{}/cpf/{ANA}", elsewhere.uri()).as_str()),
        )
        .await;
        assert_bad_response(&call(Registry::Receita, &server).await, &format!("redirect {status}"));
        assert_eq!(server.received_requests().await.expect("recording").len(), 1);
        let stolen = elsewhere.received_requests().await.expect("recording");
        assert!(stolen.is_empty(), "{status}: the other host got a request");
    }
}

// ---------------------------------------------------------------- transport

#[tokio::test]
async fn an_unreachable_registry_is_a_bad_response_whose_text_omits_the_cpf() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").port()
    };
    let result = Registry::Receita.call(endpoint(&format!("http://127.0.0.1:{port}/"), Duration::from_secs(5))).await;
    let Err(UpstreamError::BadResponse(why)) = result else {
        panic!("expected BadResponse, got {result:?}");
    };
    assert!(!why.contains(ANA), "{why}");
}

#[tokio::test]
async fn a_cpf_is_sent_as_its_eleven_digits_whatever_punctuation_it_was_parsed_from() {
    let server = upstream(ResponseTemplate::new(200).set_body_json(cnes_body())).await;
    let cpf = Cpf::parse("529.982.247-25").expect("valid CPF");
    let bonds: Cnes =
        HttpCnesRegistry::new(endpoint(&server.uri(), Duration::from_secs(5))).bonds(&cpf).await.expect("bonds");
    assert_eq!(bonds.vinculos.len(), 2);
    let requests = server.received_requests().await.expect("recording");
    assert_eq!(requests[0].url.path(), format!("/profissionais/{ANA}/vinculos"));
}
