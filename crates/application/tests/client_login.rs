//! The client component's login use case against fakes of its ports.

use std::sync::Arc;

use credencial_application::{
    CallbackResult, ClientLoginConfig, ClientLoginError, ClientLoginService, HostLogin, PendingLogin, ServiceError,
};
use credencial_domain::attr_map::{AttrMap, ClientScopes, LookupField, UserMapping};
use credencial_domain::client_login::{ValueSigner, DEFAULT_NEXT};
use credencial_domain::host_table::{ColumnName, HostValue, LoginWrites, TableName, WriteOn};
use credencial_domain::ScopeSet;
use credencial_ports::{
    AuthorizationStart, HostUserError, MockClock, MockHostUserRecords, MockHostUserStore, MockProviderClient,
    ProviderError, ProviderTokens, UpsertOutcome, UpstreamError,
};
use mockall::predicate::eq;
use serde_json::{json, Map, Value};

const STATE: &str = "state-from-the-cookie";
const VERIFIER: &str = "pkce-verifier";
const NOW: i64 = 1_800_000_000;

fn mapping() -> UserMapping {
    let map = AttrMap::from_json(
        r#"{"username": "cpf", "email": "email", "(first_name, last_name)": "name",
            "birth_date": "receita_federal.dtNascimento", "profile": "fulljson"}"#,
    )
    .expect("map");
    let scopes = ClientScopes::parse(["cpf email receita_federal"]).expect("scopes");
    UserMapping::new(map, LookupField::parse("username").expect("lookup"), scopes).expect("mapping")
}

fn ana_profile() -> Map<String, Value> {
    let profile = json!({
        "name": "Ana Beatriz Souza", "avatar": "", "cpf": "52998224725", "email": "ana@example.gov.br",
        "receita_federal": {"nome": "ANA", "dtNascimento": "1988-03-14", "sexo": "F", "mae": "MARIA",
                            "noMunicipio": "NATAL", "uf": "RN"}
    });
    profile.as_object().cloned().expect("object")
}

fn service(provider: MockProviderClient, store: MockHostUserStore, now: i64) -> ClientLoginService {
    service_with(provider, store, now, LoginWrites::default())
}

fn service_with(
    provider: MockProviderClient,
    store: MockHostUserStore,
    now: i64,
    writes: LoginWrites,
) -> ClientLoginService {
    let mut clock = MockClock::new();
    clock.expect_now().returning(move || now);
    ClientLoginService::new(
        Arc::new(provider),
        Arc::new(store),
        Arc::new(MockHostUserRecords::new()),
        Arc::new(clock),
        ClientLoginConfig {
            mapping: mapping(),
            table: TableName::parse("host_users").expect("table"),
            writes,
            session_secs: 3600,
            signer: ValueSigner::derive(b"test key material"),
        },
    )
}

/// A provider that accepts `code` and answers `profile`.
fn provider_answering(profile: Map<String, Value>) -> MockProviderClient {
    let mut provider = MockProviderClient::new();
    provider.expect_exchange_code().with(eq("the-code"), eq(VERIFIER)).times(1).returning(|_, _| {
        Ok(ProviderTokens {
            access_token: "access".into(),
            scope: ScopeSet::parse_strict("cpf").expect("scope"),
            session: None,
        })
    });
    provider.expect_fetch_profile().with(eq("access")).times(1).returning(move |_| Ok(profile.clone()));
    provider
}

fn client_error(result: Result<HostLogin, ServiceError>) -> ClientLoginError {
    match result {
        Err(ServiceError::ClientLogin(e)) => e,
        other => panic!("expected a client login error, got {other:?}"),
    }
}

async fn complete(service: &ClientLoginService, state: Option<&str>, result: CallbackResult) -> ClientLoginError {
    client_error(service.complete(STATE, VERIFIER, state, result).await)
}

#[test]
fn begin_asks_for_the_configured_scopes_and_keeps_next_on_this_site() {
    let mut provider = MockProviderClient::new();
    provider
        .expect_start()
        .with(eq(ScopeSet::parse_strict("dados_publicos cpf email receita_federal").expect("scopes")))
        .returning(|_| AuthorizationStart {
            url: "http://provider/oauth/authorize/?…".into(),
            state: STATE.into(),
            pkce_verifier: VERIFIER.into(),
        });
    let service = service(provider, MockHostUserStore::new(), NOW);
    let start = service.begin(Some("/painel/?aba=1"));
    assert_eq!((start.authorization.state.as_str(), start.next.as_str()), (STATE, "/painel/?aba=1"));
    for off_site in ["https://evil.example/", "//evil.example/x", "/\\evil.example"] {
        assert_eq!(service.begin(Some(off_site)).next, DEFAULT_NEXT, "{off_site}");
    }
    assert_eq!(service.begin(None).next, DEFAULT_NEXT);
}

#[tokio::test]
async fn a_callback_with_another_or_no_state_is_refused_before_anything_is_sent() {
    // No expectations: any call to the provider or the store fails the test.
    let service = service(MockProviderClient::new(), MockHostUserStore::new(), NOW);
    for state in [Some("another-state"), Some(""), None, Some("state-from-the-cookie ")] {
        let e = complete(&service, state, CallbackResult::Code("the-code".into())).await;
        assert_eq!(e, ClientLoginError::StateMismatch, "{state:?}");
    }
    let e = client_error(service.complete("", VERIFIER, Some(""), CallbackResult::Code("c".into())).await);
    assert_eq!(e, ClientLoginError::StateMismatch, "an empty kept state never matches");
}

#[tokio::test]
async fn denied_consent_is_reported_as_denied_and_other_errors_as_refused() {
    let service = service(MockProviderClient::new(), MockHostUserStore::new(), NOW);
    let e = complete(&service, Some(STATE), CallbackResult::Error("access_denied".into())).await;
    assert_eq!(e, ClientLoginError::Denied);
    let e = complete(&service, Some(STATE), CallbackResult::Error("invalid_scope".into())).await;
    assert_eq!(e, ClientLoginError::Refused("invalid_scope".into()));
    let e = complete(&service, Some("forged"), CallbackResult::Error("access_denied".into())).await;
    assert_eq!(e, ClientLoginError::StateMismatch, "the state is checked first");
}

#[tokio::test]
async fn a_provider_that_is_down_or_refuses_is_reported_as_such() {
    let cases: [(ProviderError, ClientLoginError); 3] = [
        (ProviderError::Upstream(UpstreamError::Timeout), ClientLoginError::ProviderDown("upstream timed out".into())),
        (
            ProviderError::Upstream(UpstreamError::BadResponse("connection refused".into())),
            ClientLoginError::ProviderDown("bad upstream response: connection refused".into()),
        ),
        (ProviderError::Refused("invalid_grant".into()), ClientLoginError::Refused("invalid_grant".into())),
    ];
    for (failure, expected) in cases {
        let mut provider = MockProviderClient::new();
        provider.expect_exchange_code().times(1).returning(move |_, _| Err(failure.clone()));
        let service = service(provider, MockHostUserStore::new(), NOW);
        assert_eq!(complete(&service, Some(STATE), CallbackResult::Code("the-code".into())).await, expected);
    }
    let mut provider = MockProviderClient::new();
    provider.expect_exchange_code().returning(|_, _| {
        Ok(ProviderTokens {
            access_token: "access".into(),
            scope: ScopeSet::parse_strict("cpf").expect("scope"),
            session: None,
        })
    });
    provider.expect_fetch_profile().returning(|_| Err(ProviderError::Upstream(UpstreamError::Timeout)));
    let service = service(provider, MockHostUserStore::new(), NOW);
    let e = complete(&service, Some(STATE), CallbackResult::Code("the-code".into())).await;
    assert_eq!(e, ClientLoginError::ProviderDown("upstream timed out".into()));
}

#[tokio::test]
async fn a_login_maps_the_profile_and_upserts_the_host_user_by_its_lookup_value() {
    let mut store = MockHostUserStore::new();
    store
        .expect_write_login()
        .withf(|table, column, lookup, values, creates| {
            let get = |name: &str| values.iter().find(|w| w.column.as_str() == name).map(|w| w.value.clone());
            *creates
                && values.iter().all(|w| w.on == WriteOn::EveryLogin)
                && table.as_str() == "host_users"
                && column.as_str() == "username"
                && *lookup == HostValue::Text("52998224725".into())
                && get("first_name") == Some(HostValue::Text("Ana".into()))
                && get("last_name") == Some(HostValue::Text("Beatriz Souza".into()))
                && get("email") == Some(HostValue::Text("ana@example.gov.br".into()))
                && get("birth_date") == Some(HostValue::Date("1988-03-14".into()))
                && matches!(get("profile"), Some(HostValue::Json(_)))
        })
        .times(1)
        .returning(|_, _, _, _, _| Ok(UpsertOutcome { id: 42, created: true }));
    let service = service(provider_answering(ana_profile()), store, NOW);
    let login = service
        .complete(STATE, VERIFIER, Some(STATE), CallbackResult::Code("the-code".into()))
        .await
        .expect("logged in");
    assert_eq!((login.id, login.lookup_value.as_str()), (42, "52998224725"));
    assert!(!format!("{login:?}").contains("52998224725"), "Debug hides the lookup value");
}

#[tokio::test]
async fn an_unavailable_scope_skips_its_columns_and_the_user_is_still_written() {
    let mut profile = ana_profile();
    profile.insert("receita_federal".into(), json!({"erro": "Os dados do usuário não foram validados."}));
    let mut store = MockHostUserStore::new();
    store
        .expect_write_login()
        .withf(|_, _, _, values, _| {
            values.iter().all(|w| w.column.as_str() != "birth_date")
                && values.iter().any(|w| w.column.as_str() == "profile")
        })
        .times(1)
        .returning(|_, _, _, _, _| Ok(UpsertOutcome { id: 7, created: false }));
    let service = service(provider_answering(profile), store, NOW);
    let login = service.complete(STATE, VERIFIER, Some(STATE), CallbackResult::Code("the-code".into())).await;
    assert_eq!(login.expect("logged in").id, 7);
}

#[tokio::test]
async fn an_inactive_host_user_is_refused() {
    let mut store = MockHostUserStore::new();
    store.expect_write_login().times(1).returning(|_, _, _, _, _| Err(HostUserError::Inactive));
    let service = service(provider_answering(ana_profile()), store, NOW);
    let e = complete(&service, Some(STATE), CallbackResult::Code("the-code".into())).await;
    assert_eq!(e, ClientLoginError::Inactive);
}

#[tokio::test]
async fn a_profile_without_a_lookup_value_writes_nothing() {
    let mut profile = ana_profile();
    profile.insert("cpf".into(), json!(""));
    // No upsert expected.
    let service = service(provider_answering(profile), MockHostUserStore::new(), NOW);
    let e = complete(&service, Some(STATE), CallbackResult::Code("the-code".into())).await;
    assert_eq!(e, ClientLoginError::MissingLookup("username".into()));
}

#[tokio::test]
async fn a_storage_failure_is_a_storage_error_not_a_login_refusal() {
    let mut store = MockHostUserStore::new();
    store.expect_write_login().returning(|_, _, _, _, _| Err(HostUserError::Unexpected("pool timed out".into())));
    let service = service(provider_answering(ana_profile()), store, NOW);
    let result = service.complete(STATE, VERIFIER, Some(STATE), CallbackResult::Code("the-code".into())).await;
    assert!(matches!(result, Err(ServiceError::Storage(_))), "{result:?}");
}

#[tokio::test]
async fn cookie_values_open_until_they_expire_and_only_for_their_purpose() {
    let now = service(MockProviderClient::new(), MockHostUserStore::new(), NOW);
    let pending = PendingLogin { state: STATE.into(), pkce_verifier: VERIFIER.into(), next: "/x".into() };
    let sealed = now.seal_pending(&pending);
    assert_eq!(now.open_pending(&sealed.value), Some(pending.clone()));
    assert_eq!(now.open_session(&sealed.value).await.expect("read"), None, "a pending login is not a session");
    assert!(!format!("{pending:?}{sealed:?}").contains(VERIFIER));
    let login = HostLogin { id: 3, lookup_value: "52998224725".into(), sub: None, sid: None, at: NOW };
    let session = now.seal_session(&login);
    assert_eq!(session.max_age_secs, 3600);
    assert_eq!(now.open_session(&session.value).await.expect("read"), Some(login));
    let later = service(MockProviderClient::new(), MockHostUserStore::new(), NOW + 3600);
    assert_eq!(later.open_session(&session.value).await.expect("read"), None, "expired");
    assert_eq!(later.open_pending(&sealed.value), None, "expired after 10 minutes");
    assert_eq!(now.open_session("garbage").await.expect("read"), None);
}

#[tokio::test]
async fn the_options_say_what_a_login_writes_and_when() {
    let column = |name: &str| ColumnName::parse(name).expect("column");
    let writes = LoginWrites {
        create_users: false,
        update_fields_on_login: Some(vec![column("email")]),
        user_defaults: vec![(column("origin"), HostValue::Text("credencial".into()))],
        last_login_column: Some(column("last_login")),
        date_joined_column: None,
    };
    let mut store = MockHostUserStore::new();
    store
        .expect_write_login()
        .withf(|_, _, _, values, creates| {
            let on =
                |name: &str| values.iter().rev().find(|w| w.column.as_str() == name).map(|w| (w.on, w.value.clone()));
            !*creates
                && on("origin") == Some((WriteOn::Creation, HostValue::Text("credencial".into())))
                && on("email").map(|(on, _)| on) == Some(WriteOn::EveryLogin)
                && on("first_name").map(|(on, _)| on) == Some(WriteOn::Creation)
                && on("last_login") == Some((WriteOn::EveryLogin, HostValue::Timestamp(NOW)))
        })
        .times(1)
        .returning(|_, _, _, _, _| Err(HostUserError::NotRegistered));
    let service = service_with(provider_answering(ana_profile()), store, NOW, writes);
    let e = complete(&service, Some(STATE), CallbackResult::Code("the-code".into())).await;
    assert_eq!(e, ClientLoginError::NotRegistered, "only existing host users log in");
}
