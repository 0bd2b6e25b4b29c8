//! Demo only: stand-ins for the three upstream registries (tax authority,
//! CNES, CDP) serving deterministic data for the demo users, with the
//! request shapes of `docs/upstreams.md`:
//!
//! | registry | sandbox route | base URL to configure |
//! |---|---|---|
//! | tax authority | `GET /_sandbox/registries/receita/cpf/{cpf}` | `{server}/_sandbox/registries/receita` |
//! | CNES | `GET /_sandbox/registries/cnes/profissionais/{cpf}/vinculos` | `{server}/_sandbox/registries/cnes` |
//! | CDP | `GET /_sandbox/registries/cdp/usuarios/{cpf}/cursos` | `{server}/_sandbox/registries/cdp` |
//!
//! `ana` ([`ANA_CPF`]) is known everywhere: a tax record, two CNES bonds and
//! two courses. `bruno` ([`BRUNO_CPF`]) has a tax record (born 1991-07-21,
//! mother Joana Pereira Lima: what he types to validate his account) but no
//! bonds and no courses. Every other CPF is unknown to the tax authority
//! (404 with a JSON body) and has no bonds and no courses (200 with empty
//! lists). A CPF with wrong check digits is a 400.
//! No API key is required; one that is sent is ignored.

use actix_web::{http::StatusCode, web, HttpResponse};
use credencial_domain::{CdpCourse, Cnes, CnesVinculo, Cpf, CursosCdp, ReceitaFederal};

use crate::error::ApiError;
use crate::routes::{self, resource};

/// Where the registry sandbox is mounted.
pub const SANDBOX_REGISTRIES_PREFIX: &str = "/_sandbox/registries";
/// The tax authority's base URL path in demo mode (append it to the server's origin).
pub const RECEITA_BASE_PATH: &str = "/_sandbox/registries/receita";
/// The CNES registry's base URL path in demo mode.
pub const CNES_BASE_PATH: &str = "/_sandbox/registries/cnes";
/// The CDP platform's base URL path in demo mode.
pub const CDP_BASE_PATH: &str = "/_sandbox/registries/cdp";

/// CPF of the demo user `ana` (validated with the tax authority).
pub const ANA_CPF: &str = "52998224725";
/// CPF of the demo user `bruno` (not validated, but known to the tax
/// authority; no bonds, no courses).
pub const BRUNO_CPF: &str = "12345678909";

/// `detail` of the tax authority's 404.
pub const RECEITA_NOT_FOUND: &str = "CPF não encontrado na base da Receita Federal.";

fn is_ana(cpf: &Cpf) -> bool {
    cpf.as_str() == ANA_CPF
}

/// The tax authority's record of `cpf` in the sandbox (`ana` and `bruno`).
pub fn tax_record(cpf: &Cpf) -> Option<ReceitaFederal> {
    let record = |nome: &str, nascimento: &str, sexo: &str, mae: &str, municipio: &str| ReceitaFederal {
        nome: nome.into(),
        dt_nascimento: nascimento.into(),
        sexo: sexo.into(),
        mae: mae.into(),
        no_municipio: municipio.into(),
        uf: "RN".into(),
    };
    match cpf.as_str() {
        ANA_CPF => Some(record("ANA BEATRIZ SOUZA", "1988-03-14", "F", "MARIA DAS GRACAS SOUZA", "NATAL")),
        BRUNO_CPF => Some(record("BRUNO CARVALHO LIMA", "1991-07-21", "M", "JOANA PEREIRA LIMA", "MOSSORO")),
        _ => None,
    }
}

/// The CNES bonds of `cpf` in the sandbox (`ana`: two; anyone else: none).
pub fn cnes_bonds(cpf: &Cpf) -> Cnes {
    if !is_ana(cpf) {
        return Cnes::default();
    }
    Cnes {
        vinculos: vec![
            CnesVinculo {
                cnes: "2409208".into(),
                no_fant: "HOSPITAL UNIVERSITARIO ONOFRE LOPES".into(),
                co_mun: "240810".into(),
                no_cbo: "ENFERMEIRO".into(),
            },
            CnesVinculo {
                cnes: "2474689".into(),
                no_fant: "UNIDADE BASICA DE SAUDE DE NOVA PARNAMIRIM".into(),
                co_mun: "240325".into(),
                no_cbo: "ENFERMEIRO DA ESTRATEGIA DE SAUDE DA FAMILIA".into(),
            },
        ],
    }
}

/// The CDP courses of `cpf` in the sandbox (`ana`: two; anyone else: none).
pub fn cdp_courses(cpf: &Cpf) -> CursosCdp {
    if !is_ana(cpf) {
        return CursosCdp::default();
    }
    CursosCdp::from_courses(vec![
        CdpCourse {
            title: "Acolhimento na Atenção Básica".into(),
            descricao: "Curso autoinstrucional sobre o acolhimento à demanda espontânea na Atenção Básica.".into(),
            vinculo: "Cursista".into(),
            link: "https://cdp.example.org/node/101".into(),
            status: "Concluído".into(),
            nid: 101,
            created: "2021-05-10".into(),
            kind: "curso".into(),
        },
        CdpCourse {
            title: "Cuidados de Enfermagem em Feridas Crônicas".into(),
            descricao: "Avaliação e tratamento de feridas crônicas na atenção primária.".into(),
            vinculo: "Cursista".into(),
            link: "https://cdp.example.org/node/245".into(),
            status: "Em andamento".into(),
            nid: 245,
            created: "2023-08-21".into(),
            kind: "curso".into(),
        },
    ])
}

/// The path's CPF, or a 400 naming it.
fn path_cpf(raw: &str) -> Result<Cpf, ApiError> {
    Cpf::parse(raw)
        .map_err(|e| ApiError::detail(StatusCode::BAD_REQUEST, &format!("CPF inválido: {e}."), "invalid_cpf"))
}

async fn receita(cpf: web::Path<String>) -> Result<HttpResponse, ApiError> {
    let cpf = path_cpf(&cpf)?;
    match tax_record(&cpf) {
        Some(record) => Ok(HttpResponse::Ok().json(record)),
        None => Err(ApiError::detail(StatusCode::NOT_FOUND, RECEITA_NOT_FOUND, "not_found")),
    }
}

async fn cnes(cpf: web::Path<String>) -> Result<HttpResponse, ApiError> {
    let cpf = path_cpf(&cpf)?;
    Ok(HttpResponse::Ok().json(cnes_bonds(&cpf)))
}

async fn cdp(cpf: web::Path<String>) -> Result<HttpResponse, ApiError> {
    let cpf = path_cpf(&cpf)?;
    Ok(HttpResponse::Ok().json(cdp_courses(&cpf)))
}

/// The registry sandbox's routes, under [`SANDBOX_REGISTRIES_PREFIX`].
pub fn scope() -> actix_web::Scope {
    web::scope(SANDBOX_REGISTRIES_PREFIX)
        .service(resource("/receita/cpf/{cpf}", "GET").route(routes::get().to(receita)))
        .service(resource("/cnes/profissionais/{cpf}/vinculos", "GET").route(routes::get().to(cnes)))
        .service(resource("/cdp/usuarios/{cpf}/cursos", "GET").route(routes::get().to(cdp)))
}

#[cfg(test)]
mod tests {
    use actix_web::{test, App};
    use serde_json::{json, Value};

    use super::*;

    async fn get(uri: &str) -> (StatusCode, Value) {
        let app = test::init_service(App::new().service(scope())).await;
        let response = test::call_service(&app, test::TestRequest::get().uri(uri).to_request()).await;
        let status = response.status();
        let body = test::read_body(response).await;
        let json = serde_json::from_slice(&body).unwrap_or(Value::Null);
        (status, json)
    }

    #[actix_web::test]
    async fn ana_has_a_tax_record_with_the_contract_fields() {
        let (status, body) = get(&format!("{RECEITA_BASE_PATH}/cpf/{ANA_CPF}")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            body,
            json!({
                "nome": "ANA BEATRIZ SOUZA",
                "dtNascimento": "1988-03-14",
                "sexo": "F",
                "mae": "MARIA DAS GRACAS SOUZA",
                "noMunicipio": "NATAL",
                "uf": "RN"
            })
        );
        let decoded: ReceitaFederal = serde_json::from_value(body).expect("the contract's shape");
        assert_eq!(Some(decoded), tax_record(&Cpf::parse(ANA_CPF).expect("valid")));
    }

    #[actix_web::test]
    async fn bruno_has_the_tax_record_he_validates_against() {
        let (status, body) = get(&format!("{RECEITA_BASE_PATH}/cpf/{BRUNO_CPF}")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            (body["dtNascimento"].as_str(), body["mae"].as_str()),
            (Some("1991-07-21"), Some("JOANA PEREIRA LIMA"))
        );
        let _: ReceitaFederal = serde_json::from_value(body).expect("the contract's shape");
    }

    #[actix_web::test]
    async fn other_cpfs_are_unknown_to_the_tax_authority_with_a_json_404() {
        for cpf in ["11144477735"] {
            let (status, body) = get(&format!("{RECEITA_BASE_PATH}/cpf/{cpf}")).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{cpf}");
            assert_eq!(body["detail"], RECEITA_NOT_FOUND, "{cpf}");
        }
    }

    #[actix_web::test]
    async fn ana_has_two_cnes_bonds_with_six_digit_municipality_codes() {
        let (status, body) = get(&format!("{CNES_BASE_PATH}/profissionais/{ANA_CPF}/vinculos")).await;
        assert_eq!(status, StatusCode::OK);
        let bonds: Cnes = serde_json::from_value(body.clone()).expect("the contract's shape");
        assert_eq!(bonds.vinculos.len(), 2);
        for bond in &bonds.vinculos {
            assert_eq!(bond.co_mun.len(), 6, "{bond:?}");
            assert_eq!(bond.cnes.len(), 7, "{bond:?}");
        }
        assert_eq!(
            body["vinculos"][0],
            json!({"cnes": "2409208", "noFant": "HOSPITAL UNIVERSITARIO ONOFRE LOPES", "coMun": "240810", "noCBO": "ENFERMEIRO"})
        );
    }

    #[actix_web::test]
    async fn ana_has_two_cdp_courses_and_total_counts_them() {
        let (status, body) = get(&format!("{CDP_BASE_PATH}/usuarios/{ANA_CPF}/cursos")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["total"], 2);
        let mut keys: Vec<_> = body["data"][0].as_object().expect("object").keys().cloned().collect();
        keys.sort();
        assert_eq!(keys, ["created", "descricao", "link", "nid", "status", "title", "type", "vinculo"]);
        let courses: CursosCdp = serde_json::from_value(body).expect("the contract's shape");
        assert_eq!(courses.data.len(), 2);
    }

    #[actix_web::test]
    async fn bruno_has_no_bonds_and_no_courses() {
        let (status, body) = get(&format!("{CNES_BASE_PATH}/profissionais/{BRUNO_CPF}/vinculos")).await;
        assert_eq!((status, body), (StatusCode::OK, json!({"vinculos": []})));
        let (status, body) = get(&format!("{CDP_BASE_PATH}/usuarios/{BRUNO_CPF}/cursos")).await;
        assert_eq!((status, body), (StatusCode::OK, json!({"total": 0, "data": []})));
    }

    #[actix_web::test]
    async fn the_answers_are_the_same_on_every_call_and_with_a_trailing_slash() {
        let uri = format!("{CDP_BASE_PATH}/usuarios/{ANA_CPF}/cursos");
        let first = get(&uri).await;
        assert_eq!(get(&uri).await, first);
        assert_eq!(get(&format!("{uri}/")).await, first);
    }

    #[actix_web::test]
    async fn a_cpf_with_wrong_check_digits_is_a_400() {
        for uri in [
            format!("{RECEITA_BASE_PATH}/cpf/52998224724"),
            format!("{CNES_BASE_PATH}/profissionais/abc/vinculos"),
            format!("{CDP_BASE_PATH}/usuarios/11111111111/cursos"),
        ] {
            let (status, body) = get(&uri).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{uri}");
            assert_eq!(body["code"], "invalid_cpf", "{uri}");
        }
    }

    #[actix_web::test]
    async fn another_method_is_a_json_405() {
        let app = test::init_service(App::new().service(scope())).await;
        let request = test::TestRequest::post().uri(&format!("{RECEITA_BASE_PATH}/cpf/{ANA_CPF}")).to_request();
        let response = test::call_service(&app, request).await;
        assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(response.headers().get("allow").and_then(|v| v.to_str().ok()), Some("GET, HEAD"));
    }
}
