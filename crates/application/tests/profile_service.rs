//! The profile service against fakes of every port.

use std::sync::{Arc, Mutex};

use credencial_application::{ProfileService, Registries, ScopeCache, ScopeTtls, ServiceError};
use credencial_domain::oauth::userinfo::UserIdentity;
use credencial_domain::oauth::ClientId;
use credencial_domain::profile::{OwnProfile, ERRO_NAO_VALIDADO, ERRO_SEM_EXPERIENCIA};
use credencial_domain::{Claims, TokenError, TokenType};
use credencial_domain::{Cnes, CnesVinculo, CursosCdp, ReceitaFederal, ScopeSet, UserId};
use credencial_ports::account::AccessLogEntry;
use credencial_ports::{
    ClientRead, MockCdpDirectory, MockClock, MockCnesRegistry, MockOAuthClientRepository, MockProfileRepository,
    MockSnapshotStore, MockTaxAuthority, OAuthClient, RepositoryError, SystemClock, UpstreamError,
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
        govbr_reliability: None,
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
    service_with_clients(MockOAuthClientRepository::new(), profiles, tax, cnes, cdp)
}

fn service_with_clients(
    clients: MockOAuthClientRepository,
    profiles: MockProfileRepository,
    tax: MockTaxAuthority,
    cnes: MockCnesRegistry,
    cdp: MockCdpDirectory,
) -> ProfileService {
    ProfileService::new(
        Arc::new(clients),
        Arc::new(profiles),
        Registries { tax_authority: Arc::new(tax), cnes: Arc::new(cnes), cdp: Arc::new(cdp) },
        ScopeCache::new(Arc::new(empty_store()), Arc::new(SystemClock), ScopeTtls::default(), 100),
        Arc::new(fixed_clock()),
    )
}

/// A clock at [`NOW`].
fn fixed_clock() -> MockClock {
    let mut clock = MockClock::new();
    clock.expect_now().return_const(NOW);
    clock.expect_now_millis().return_const(NOW * 1000);
    clock
}

const NOW: i64 = 1_700_000_000;

/// Own data `p`, for the service's own reads and for clients' reads (the
/// grant exists, the log row is written).
fn profiles_returning(p: OwnProfile) -> MockProfileRepository {
    let mut profiles = MockProfileRepository::new();
    let own = p.clone();
    profiles.expect_own_profile().returning(move |_| Ok(Some(own.clone())));
    profiles.expect_read_for_client().returning(move |_| Ok(ClientRead::Answered(p.clone())));
    profiles
}

/// A client's read as the repository sees it: what it answers, and the
/// access-log entries it was handed.
fn client_reads(result: fn() -> Result<ClientRead, RepositoryError>) -> (MockProfileRepository, Entries) {
    let entries: Entries = Arc::default();
    let seen = Arc::clone(&entries);
    let mut profiles = MockProfileRepository::new();
    profiles.expect_read_for_client().returning(move |entry| {
        seen.lock().expect("lock").push(entry.clone());
        result()
    });
    (profiles, entries)
}

type Entries = Arc<Mutex<Vec<AccessLogEntry>>>;

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
    let out = svc.profile(ANA, ScopeSet::parse_strict("receita_federal").expect("known")).await.expect("profile");
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
    let out = svc.profile(ANA, ScopeSet::parse_strict("cursos_cdp").expect("known")).await.expect("still a profile");
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
    svc.on_authorized(ANA, ScopeSet::parse_strict("cnes").expect("known"))
        .await
        .expect("a CNES failure does not fail the authorization");
}

fn client_enabling(scopes: &'static str) -> MockOAuthClientRepository {
    let mut clients = MockOAuthClientRepository::new();
    clients.expect_find().returning(move |id| {
        Ok((id.as_str() == "host-app").then(|| OAuthClient {
            client_id: ClientId::parse("host-app").expect("id"),
            name: "Host".into(),
            secret_hash: None,
            redirect_uris: vec!["http://127.0.0.1:9/cb".into()],
            post_logout_redirect_uris: vec![],
            confidential: false,
            require_pkce: true,
            requires_second_factor: false,
            minimum_govbr_level: None,
            enabled_scopes: ScopeSet::parse_strict(scopes).expect("known"),
            is_active: true,
            created_at: 0,
            backchannel_logout_uri: None,
        }))
    });
    clients
}

fn oauth_claims(scope: &str, client: &str) -> Claims {
    let mut c = Claims::new(TokenType::Access, ANA.0, 0, 300);
    c.scope = Some(scope.into());
    c.client_id = Some(client.into());
    c.aud = Some(client.into());
    c
}

#[tokio::test]
async fn a_granted_scope_no_longer_enabled_for_the_client_is_omitted() {
    let mut cdp = MockCdpDirectory::new();
    cdp.expect_courses().times(1).returning(|_| Ok(CursosCdp::from_courses(vec![])));
    let mut cnes = MockCnesRegistry::new();
    cnes.expect_bonds().times(0);
    let svc = service_with_clients(
        client_enabling("dados_publicos cpf email cursos_cdp"),
        profiles_returning(own(true)),
        MockTaxAuthority::new(),
        cnes,
        cdp,
    );
    let out = svc
        .answer(&oauth_claims("dados_publicos cpf email cnes cursos_cdp", "host-app"), None, "req-1")
        .await
        .expect("answer");
    assert!(out.contains_key("cursos_cdp"));
    assert!(!out.contains_key("cnes"), "granted but not enabled: omitted");
}

#[tokio::test]
async fn the_narrowing_scope_only_takes_away_and_required_scopes_stay() {
    let mut tax = MockTaxAuthority::new();
    tax.expect_lookup().times(0);
    let svc = service_with_clients(
        client_enabling("dados_publicos cpf email receita_federal formacao_academica"),
        profiles_returning(own(true)),
        tax,
        MockCnesRegistry::new(),
        MockCdpDirectory::new(),
    );
    let claims = oauth_claims("dados_publicos cpf email receita_federal formacao_academica", "host-app");
    let out = svc.answer(&claims, Some("formacao_academica cnes nonsense"), "req-1").await.expect("answer");
    let keys: Vec<_> = out.keys().cloned().collect();
    assert_eq!(keys, ["avatar", "cpf", "email", "formacao_academica", "name"], "cnes was never granted");
}

#[tokio::test]
async fn a_token_without_oauth2_claims_or_of_an_unknown_client_is_refused() {
    let svc = service_with_clients(
        client_enabling("cpf"),
        profiles_returning(own(true)),
        MockTaxAuthority::new(),
        MockCnesRegistry::new(),
        MockCdpDirectory::new(),
    );
    let plain = Claims::new(TokenType::Access, ANA.0, 0, 300);
    assert!(matches!(svc.answer(&plain, None, "req-1").await, Err(ServiceError::InvalidToken(TokenError::WrongType))));
    let gone = oauth_claims("cpf", "deleted-app");
    assert!(matches!(svc.answer(&gone, None, "req-1").await, Err(ServiceError::InvalidToken(TokenError::Invalid))));
    // A token that names a client but no audience (or another one) is no
    // client application's token.
    let mut no_audience = oauth_claims("cpf", "host-app");
    no_audience.aud = None;
    assert!(matches!(
        svc.answer(&no_audience, None, "req-1").await,
        Err(ServiceError::InvalidToken(TokenError::WrongType))
    ));
    let mut other_audience = oauth_claims("cpf", "host-app");
    other_audience.aud = Some("other-app".into());
    assert!(matches!(
        svc.answer(&other_audience, None, "req-1").await,
        Err(ServiceError::InvalidToken(TokenError::WrongType))
    ));
}

#[tokio::test]
async fn a_cpf_unknown_to_the_registries_gives_empty_lists_and_a_receita_erro() {
    let mut tax = MockTaxAuthority::new();
    tax.expect_lookup().returning(|_| Err(UpstreamError::NotFound));
    let mut cnes = MockCnesRegistry::new();
    cnes.expect_bonds().returning(|_| Err(UpstreamError::NotFound));
    let mut cdp = MockCdpDirectory::new();
    cdp.expect_courses().returning(|_| Err(UpstreamError::NotFound));
    let svc = service(profiles_returning(own(true)), tax, cnes, cdp);
    let out = svc.profile(ANA, ScopeSet::all()).await.expect("profile");
    assert_eq!(out["receita_federal"], json!({"erro": "CPF não encontrado na base da Receita Federal."}));
    assert_eq!(out["cnes"], json!({"vinculos": []}));
    assert_eq!(out["cursos_cdp"], json!({"total": 0, "data": []}));
}

#[tokio::test]
async fn every_answer_is_logged_with_the_scopes_it_carries_the_time_and_the_request_id() {
    let (profiles, entries) = client_reads(|| Ok(ClientRead::Answered(own(true))));
    let svc = service_with_clients(
        client_enabling("dados_publicos cpf email receita_federal formacao_academica"),
        profiles,
        MockTaxAuthority::new(),
        MockCnesRegistry::new(),
        MockCdpDirectory::new(),
    );
    let claims = oauth_claims("cpf formacao_academica receita_federal cnes", "host-app");
    let out = svc.answer(&claims, Some("formacao_academica cnes"), "4f1c-req").await.expect("answer");
    let entries = entries.lock().expect("lock").clone();
    assert_eq!(entries.len(), 1, "one read, one entry");
    let entry = &entries[0];
    assert_eq!(
        (entry.user, entry.client.as_str(), entry.at, entry.request_id.as_str()),
        (ANA, "host-app", NOW, "4f1c-req")
    );
    // Exactly the scopes whose keys the answer carries: not the narrowed-away
    // receita_federal, not cnes (not enabled for the client).
    assert_eq!(entry.scopes.to_scope_string(), "dados_publicos cpf email formacao_academica");
    assert!(
        out.contains_key("formacao_academica") && !out.contains_key("receita_federal") && !out.contains_key("cnes")
    );
}

#[tokio::test]
async fn a_revoked_grant_is_a_revoked_token_and_nothing_is_answered() {
    let (profiles, entries) = client_reads(|| Ok(ClientRead::NotGranted));
    let mut tax = MockTaxAuthority::new();
    tax.expect_lookup().times(0);
    let svc = service_with_clients(
        client_enabling("cpf receita_federal"),
        profiles,
        tax,
        MockCnesRegistry::new(),
        MockCdpDirectory::new(),
    );
    let result = svc.answer(&oauth_claims("cpf receita_federal", "host-app"), None, "r").await;
    assert!(matches!(result, Err(ServiceError::InvalidToken(TokenError::Revoked))), "{result:?}");
    assert_eq!(entries.lock().expect("lock").len(), 1, "asked once, in the one statement");
}

#[tokio::test]
async fn a_user_gone_since_the_token_was_issued_is_unknown() {
    let (profiles, _) = client_reads(|| Ok(ClientRead::UnknownUser));
    let svc = service_with_clients(
        client_enabling("cpf"),
        profiles,
        MockTaxAuthority::new(),
        MockCnesRegistry::new(),
        MockCdpDirectory::new(),
    );
    let result = svc.answer(&oauth_claims("cpf", "host-app"), None, "r").await;
    assert!(matches!(result, Err(ServiceError::UnknownUser)), "{result:?}");
}

#[tokio::test]
async fn a_read_whose_log_row_cannot_be_written_is_a_storage_error_never_an_answer() {
    let (profiles, _) =
        client_reads(|| Err(RepositoryError::Unexpected("permission denied for table access_log".into())));
    let mut tax = MockTaxAuthority::new();
    tax.expect_lookup().times(0);
    let svc = service_with_clients(
        client_enabling("cpf receita_federal"),
        profiles,
        tax,
        MockCnesRegistry::new(),
        MockCdpDirectory::new(),
    );
    let result = svc.answer(&oauth_claims("cpf receita_federal", "host-app"), None, "r").await;
    assert!(matches!(result, Err(ServiceError::Storage(_))), "{result:?}");
}

// ------------------------------------------------------------- userinfo

/// A client's userinfo read as the repository sees it: what it answers,
/// and the access-log entries it was handed.
fn identity_reads(
    result: fn() -> Result<ClientRead<UserIdentity>, RepositoryError>,
) -> (MockProfileRepository, Entries) {
    let entries: Entries = Arc::default();
    let seen = Arc::clone(&entries);
    let mut profiles = MockProfileRepository::new();
    profiles.expect_identity_for_client().returning(move |entry| {
        seen.lock().expect("lock").push(entry.clone());
        result()
    });
    profiles.expect_read_for_client().times(0);
    (profiles, entries)
}

fn ana_identity() -> Result<ClientRead<UserIdentity>, RepositoryError> {
    Ok(ClientRead::Answered(UserIdentity {
        username: "ana".into(),
        name: "Ana Beatriz Souza".into(),
        avatar: String::new(),
        cpf: Some("52998224725".into()),
        email: "ana@example.gov.br".into(),
        email_verified: false,
        govbr_reliability: None,
    }))
}

fn userinfo_service(profiles: MockProfileRepository) -> ProfileService {
    service_with_clients(
        client_enabling("cnes"),
        profiles,
        MockTaxAuthority::new(),
        MockCnesRegistry::new(),
        MockCdpDirectory::new(),
    )
}

#[tokio::test]
async fn userinfo_answers_the_claims_of_the_granted_scopes_and_logs_what_it_read() {
    let (profiles, entries) = identity_reads(ana_identity);
    let svc = userinfo_service(profiles);
    let claims = oauth_claims("openid dados_publicos email cnes", "host-app");
    let out = svc.userinfo(&claims, "req-7").await.expect("answer");
    assert_eq!(
        serde_json::Value::Object(out),
        json!({
            "sub": "1",
            "name": "Ana Beatriz Souza",
            "preferred_username": "ana",
            "email": "ana@example.gov.br",
            "email_verified": false
        }),
        "no cpf claim: cpf was not in the token; no picture: none on file"
    );
    let entries = entries.lock().expect("lock");
    assert_eq!(entries.len(), 1);
    let entry = &entries[0];
    assert_eq!((entry.user, entry.client.as_str(), entry.at), (ANA, "host-app", NOW));
    assert_eq!(entry.request_id, "req-7");
    assert_eq!(entry.scopes, ScopeSet::parse_strict("dados_publicos email").expect("known"), "what it read");
}

#[tokio::test]
async fn userinfo_refuses_a_token_without_openid_and_reads_nothing() {
    let (profiles, entries) = identity_reads(ana_identity);
    let svc = userinfo_service(profiles);
    let claims = oauth_claims("dados_publicos cpf email", "host-app");
    assert!(matches!(svc.userinfo(&claims, "r").await, Err(ServiceError::Forbidden(_))));
    let first_party = Claims::new(TokenType::Access, ANA.0, 0, 300);
    assert!(matches!(svc.userinfo(&first_party, "r").await, Err(ServiceError::InvalidToken(TokenError::WrongType))));
    let unknown_client = oauth_claims("openid", "deleted-app");
    assert!(matches!(svc.userinfo(&unknown_client, "r").await, Err(ServiceError::InvalidToken(TokenError::Invalid))));
    assert!(entries.lock().expect("lock").is_empty());
}

#[tokio::test]
async fn userinfo_of_a_revoked_grant_a_gone_user_or_an_unwritable_log_answers_nothing() {
    let claims = oauth_claims("openid dados_publicos cpf email", "host-app");
    let (revoked, _) = identity_reads(|| Ok(ClientRead::NotGranted));
    let revoked = userinfo_service(revoked).userinfo(&claims, "r").await;
    assert!(matches!(revoked, Err(ServiceError::InvalidToken(TokenError::Revoked))));
    let (gone, _) = identity_reads(|| Ok(ClientRead::UnknownUser));
    assert!(matches!(userinfo_service(gone).userinfo(&claims, "r").await, Err(ServiceError::UnknownUser)));
    let (unlogged, _) = identity_reads(|| Err(RepositoryError::Unexpected("log".into())));
    assert!(matches!(userinfo_service(unlogged).userinfo(&claims, "r").await, Err(ServiceError::Storage(_))));
}
