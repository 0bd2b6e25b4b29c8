//! The profile service against fakes of every port.

use std::sync::Arc;

use credencial_application::{ProfileService, Registries, ScopeCache, ScopeTtls, ServiceError};
use credencial_domain::profile::{OwnProfile, ERRO_NAO_VALIDADO, ERRO_SEM_EXPERIENCIA};
use credencial_domain::{Cnes, CnesVinculo, CursosCdp, ReceitaFederal, ScopeSet, UserId};
use credencial_ports::{
    MockCdpDirectory, MockCnesRegistry, MockProfileRepository, MockSnapshotStore, MockTaxAuthority, SystemClock,
    UpstreamError,
};
use serde_json::json;

const ANA: UserId = UserId(1);

fn own(validated: bool) -> OwnProfile {
    OwnProfile {
        name: "Ana Beatriz Souza".into(),
        avatar: "https://example.gov.br/ana.png".into(),
        cpf: Some("52998224725".into()),
        email: "ana@example.gov.br".into(),
        receita_validated: validated,
        experiences: vec![],
        degrees: vec![],
    }
}

fn receita() -> ReceitaFederal {
    ReceitaFederal {
        nome: "ANA BEATRIZ SOUZA".into(),
        dt_nascimento: "1988-03-14".into(),
        sexo: "F".into(),
        mae: "MARIA DAS GRACAS SOUZA".into(),
        no_municipio: "NATAL".into(),
        uf: "RN".into(),
    }
}

fn bonds() -> Cnes {
    Cnes {
        vinculos: vec![CnesVinculo {
            cnes: "2408570".into(),
            no_fant: "HOSPITAL UNIVERSITARIO".into(),
            co_mun: "240810".into(),
            no_cbo: "ENFERMEIRO".into(),
        }],
    }
}

fn empty_store() -> MockSnapshotStore {
    let mut store = MockSnapshotStore::new();
    store.expect_get_many().returning(|_, _| Ok(vec![]));
    store.expect_put().returning(|_, _| Ok(()));
    store
}

fn service(
    profiles: MockProfileRepository,
    tax: MockTaxAuthority,
    cnes: MockCnesRegistry,
    cdp: MockCdpDirectory,
) -> ProfileService {
    ProfileService::new(
        Arc::new(profiles),
        Registries {
            tax_authority: Arc::new(tax),
            cnes: Arc::new(cnes),
            cdp: Arc::new(cdp),
        },
        ScopeCache::new(Arc::new(empty_store()), Arc::new(SystemClock), ScopeTtls::default(), 100),
    )
}

fn profiles_returning(p: OwnProfile) -> MockProfileRepository {
    let mut profiles = MockProfileRepository::new();
    profiles.expect_own_profile().returning(move |_| Ok(Some(p.clone())));
    profiles
}

#[tokio::test]
async fn every_scope_of_a_validated_user_has_the_contract_shape() {
    let mut tax = MockTaxAuthority::new();
    tax.expect_lookup().times(1).returning(|cpf| {
        assert_eq!(cpf.as_str(), "52998224725");
        Ok(receita())
    });
    let mut cnes = MockCnesRegistry::new();
    cnes.expect_bonds().times(1).returning(|_| Ok(bonds()));
    let mut cdp = MockCdpDirectory::new();
    cdp.expect_courses().times(1).returning(|_| Ok(CursosCdp::from_courses(vec![])));
    let svc = service(profiles_returning(own(true)), tax, cnes, cdp);
    let out = svc.profile(ANA, ScopeSet::all()).await.expect("profile");
    assert_eq!(out["name"], "Ana Beatriz Souza");
    assert_eq!(out["cpf"], "52998224725");
    assert_eq!(
        out["receita_federal"],
        json!({"nome": "ANA BEATRIZ SOUZA", "dtNascimento": "1988-03-14", "sexo": "F",
               "mae": "MARIA DAS GRACAS SOUZA", "noMunicipio": "NATAL", "uf": "RN"})
    );
    assert_eq!(
        out["cnes"],
        json!({"vinculos": [{"cnes": "2408570", "noFant": "HOSPITAL UNIVERSITARIO", "coMun": "240810", "noCBO": "ENFERMEIRO"}]})
    );
    assert_eq!(out["cursos_cdp"], json!({"total": 0, "data": []}));
    assert_eq!(out["experiencia_profissional"], json!({"erro": ERRO_SEM_EXPERIENCIA}));
    assert_eq!(out["formacao_academica"], json!([]));
}

#[tokio::test]
async fn an_unvalidated_user_gets_the_erro_object_and_the_tax_authority_is_not_asked() {
    let mut tax = MockTaxAuthority::new();
    tax.expect_lookup().times(0);
    let svc = service(profiles_returning(own(false)), tax, MockCnesRegistry::new(), MockCdpDirectory::new());
    let out = svc
        .profile(ANA, ScopeSet::parse_strict("receita_federal").expect("known"))
        .await
        .expect("profile");
    assert_eq!(out["receita_federal"], json!({"erro": ERRO_NAO_VALIDADO}));
}

#[tokio::test]
async fn scopes_not_asked_for_are_neither_fetched_nor_answered() {
    let mut tax = MockTaxAuthority::new();
    tax.expect_lookup().times(0);
    let mut cnes = MockCnesRegistry::new();
    cnes.expect_bonds().times(0);
    let svc = service(profiles_returning(own(true)), tax, cnes, MockCdpDirectory::new());
    let out = svc.profile(ANA, ScopeSet::empty()).await.expect("profile");
    let keys: Vec<_> = out.keys().cloned().collect();
    assert_eq!(keys, ["avatar", "cpf", "email", "name"]);
}

#[tokio::test]
async fn an_upstream_failure_without_cache_is_an_erro_object_not_an_error() {
    let mut cdp = MockCdpDirectory::new();
    cdp.expect_courses().returning(|_| Err(UpstreamError::Timeout));
    let svc = service(profiles_returning(own(true)), MockTaxAuthority::new(), MockCnesRegistry::new(), cdp);
    let out = svc
        .profile(ANA, ScopeSet::parse_strict("cursos_cdp").expect("known"))
        .await
        .expect("still a profile");
    assert!(out["cursos_cdp"]["erro"].as_str().is_some_and(|t| !t.is_empty()), "{}", out["cursos_cdp"]);
}

#[tokio::test]
async fn a_user_that_is_gone_is_unknown() {
    let mut profiles = MockProfileRepository::new();
    profiles.expect_own_profile().returning(|_| Ok(None));
    let svc = service(profiles, MockTaxAuthority::new(), MockCnesRegistry::new(), MockCdpDirectory::new());
    assert!(matches!(svc.profile(ANA, ScopeSet::all()).await, Err(ServiceError::UnknownUser)));
}

#[tokio::test]
async fn authorizing_cnes_supplements_experiences_from_the_bonds() {
    let mut profiles = profiles_returning(own(true));
    profiles
        .expect_supplement_from_cnes()
        .times(1)
        .withf(|user, exps| {
            *user == ANA
                && exps.len() == 1
                && exps[0].estabelecimento == "HOSPITAL UNIVERSITARIO"
                && exps[0].profissao == "ENFERMEIRO"
                && exps[0].municipio == "240810"
        })
        .returning(|_, _| Ok(true));
    let mut cnes = MockCnesRegistry::new();
    cnes.expect_bonds().times(1).returning(|_| Ok(bonds()));
    let svc = service(profiles, MockTaxAuthority::new(), cnes, MockCdpDirectory::new());
    svc.on_authorized(ANA, ScopeSet::parse_strict("cnes").expect("known")).await.expect("ok");
}

#[tokio::test]
async fn authorizing_without_cnes_or_with_cnes_down_supplements_nothing() {
    let mut profiles = profiles_returning(own(true));
    profiles.expect_supplement_from_cnes().times(0);
    let mut cnes = MockCnesRegistry::new();
    cnes.expect_bonds().times(1).returning(|_| Err(UpstreamError::BadResponse("500".into())));
    let svc = service(profiles, MockTaxAuthority::new(), cnes, MockCdpDirectory::new());
    svc.on_authorized(ANA, ScopeSet::parse_strict("cpf email").expect("known")).await.expect("ok");
    svc.on_authorized(ANA, ScopeSet::parse_strict("cnes").expect("known")).await.expect("a CNES failure does not fail the authorization");
}
