//! Wrong settings stop the start with a message naming the setting.

use crate::helpers::TestDatabase;
use credencial::settings::Settings;
use credencial::startup::{Application, Mode};
use wiremock::MockServer;

use crate::helpers::test_settings;

async fn start_error(adjust: impl FnOnce(&mut Settings)) -> String {
    let db = TestDatabase::new().await;
    let upstream = MockServer::start().await;
    let mut settings = test_settings(&db, &upstream);
    adjust(&mut settings);
    match Application::build(&settings, Mode::Serve, db.storage()).await {
        Ok(_) => panic!("the start should have been refused"),
        Err(e) => format!("{e:#}"),
    }
}

#[tokio::test]
async fn a_missing_signing_secret_stops_a_production_start() {
    let e = start_error(|s| s.tokens.jwt_secret = None).await;
    assert!(e.contains("SERVICE_JWT_SECRET"), "{e}");
}

#[tokio::test]
async fn a_short_secret_stops_the_start() {
    let e = start_error(|s| s.tokens.jwt_secret = Some("short".to_owned().into())).await;
    assert!(e.contains("SERVICE_JWT_SECRET") && e.contains("32 bytes"), "{e}");
}

#[test]
fn an_unknown_algorithm_stops_the_load() {
    let e = load_toml("jwt_algorithm = \"none\"\n").expect_err("refused").to_string();
    assert!(e.contains("SERVICE_JWT_ALGORITHM"), "{e}");
}

#[tokio::test]
async fn rs256_without_key_files_stops_the_start() {
    let e = start_error(|s| s.tokens.jwt_algorithm = credencial_domain::JwtAlgorithm::RS256).await;
    assert!(e.contains("SERVICE_JWT_PRIVATE_KEY_FILE"), "{e}");
}

#[tokio::test]
async fn mismatched_rsa_keys_stop_the_start() {
    let keys = concat!(env!("CARGO_MANIFEST_DIR"), "/crates/domain/tests/keys");
    let e = start_error(|s| {
        s.tokens.jwt_algorithm = credencial_domain::JwtAlgorithm::RS256;
        s.tokens.jwt_private_key_file = Some(format!("{keys}/rsa_private.pem").into());
        s.tokens.jwt_public_key_file = Some(format!("{keys}/rsa_other_public.pem").into());
    })
    .await;
    assert!(e.contains("does not match"), "{e}");
}

#[tokio::test]
async fn a_bad_id_token_or_previous_key_stops_the_start_naming_its_setting() {
    let keys = concat!(env!("CARGO_MANIFEST_DIR"), "/crates/domain/tests/keys");
    let e = start_error(|s| s.tokens.oidc_signing_key_file = Some(format!("{keys}/rsa_public.pem").into())).await;
    assert!(
        e.contains("SERVICE_OIDC_SIGNING_KEY_FILE") && e.contains("private"),
        "a public key is no signing key: {e}"
    );
    let e = start_error(|s| {
        s.tokens.oidc_signing_algorithm = credencial_domain::JwtAlgorithm::ES256;
        s.tokens.oidc_signing_key_file = Some(format!("{keys}/rsa_private.pem").into());
    })
    .await;
    assert!(e.contains("SERVICE_OIDC_SIGNING_KEY_FILE"), "an RSA key is no ES256 key: {e}");
    let e = start_error(|s| s.tokens.oidc_signing_algorithm = credencial_domain::JwtAlgorithm::HS256).await;
    assert!(e.contains("SERVICE_OIDC_SIGNING_ALGORITHM"), "{e}");
    let e = start_error(|s| s.tokens.jwt_previous_public_key_files = vec![format!("{keys}/ec_public.pem")]).await;
    assert!(e.contains("SERVICE_JWT_PREVIOUS_PUBLIC_KEY_FILES"), "HS256 has no previous keys: {e}");
    let e = start_error(|s| {
        s.tokens.jwt_algorithm = credencial_domain::JwtAlgorithm::RS256;
        s.tokens.jwt_private_key_file = Some(format!("{keys}/rsa_private.pem").into());
        s.tokens.jwt_public_key_file = Some(format!("{keys}/rsa_public.pem").into());
        s.tokens.jwt_previous_public_key_files = vec![format!("{keys}/no-such-key.pem")];
    })
    .await;
    assert!(e.contains("SERVICE_JWT_PREVIOUS_PUBLIC_KEY_FILES") && e.contains("no-such-key.pem"), "{e}");
}

#[tokio::test]
async fn a_missing_or_bad_upstream_url_stops_a_production_start() {
    let e = start_error(|s| s.registries.upstream_base_url = None).await;
    assert!(e.contains("SERVICE_UPSTREAM_BASE_URL"), "{e}");
    let e = load_toml("upstream_base_url = \"ftp://x\"\n").expect_err("refused").to_string();
    assert!(e.contains("SERVICE_UPSTREAM_BASE_URL"), "{e}");
}

#[test]
fn settings_validation_names_the_setting() {
    type Adjust = fn(&mut Settings);
    let cases: [(&str, Adjust); 8] = [
        ("SERVICE_UPSTREAM_ENDPOINTS", |s| s.registries.upstream_endpoints = vec!["//evil/".into()]),
        ("SERVICE_ACCESS_LOG_RETENTION_DAYS", |s| s.storage.access_log_retention_days = 0),
        ("SERVICE_ACCESS_LOG_RETENTION_DAYS", |s| s.storage.access_log_retention_days = 36_501),
        ("SERVICE_ACCESS_TOKEN_LIFETIME_SECS", |s| s.tokens.access_token_lifetime_secs = 0),
        ("SERVICE_PASSWORD_ITERATIONS", |s| s.login.password_iterations = 0),
        ("SERVICE_JWT_LEEWAY_SECS", |s| s.tokens.jwt_leeway_secs = -1),
        ("SERVICE_JWT_LEEWAY_SECS", |s| s.tokens.jwt_leeway_secs = 3601),
        ("SERVICE_JWT_LEEWAY_SECS", |s| s.tokens.jwt_leeway_secs = i64::MAX),
    ];
    for (name, adjust) in cases {
        let mut s = Settings::default();
        adjust(&mut s);
        let e = s.validate().expect_err("invalid").to_string();
        assert!(e.contains(name), "{e}");
    }
    assert_eq!(Settings::default().storage.access_log_retention_days, 1825, "5 years");
    // Values with a meaning are refused by the loader, naming the setting.
    for (toml, name) in [
        ("log_format = \"xml\"", "SERVICE_LOG_FORMAT"),
        ("issuer_url = \"http://example.gov.br\"", "SERVICE_ISSUER_URL"),
        ("public_url = \"https://id.example.gov.br/?x=1\"", "SERVICE_PUBLIC_URL"),
        ("receita_base_url = \"ftp://receita\"", "SERVICE_RECEITA_BASE_URL"),
        ("provider_public_url = \"not a url\"", "SERVICE_PROVIDER_PUBLIC_URL"),
        ("user_table = \"People\"", "SERVICE_USER_TABLE"),
        ("govbr_validated_level = \"platina\"", "SERVICE_GOVBR_VALIDATED_LEVEL"),
        ("oidc_signing_algorithm = \"RS512\"", "SERVICE_OIDC_SIGNING_ALGORITHM"),
    ] {
        let e = load_toml(&format!("{toml}\n")).expect_err(toml).to_string();
        assert!(e.starts_with(&format!("setting {name}")), "{toml}: {e}");
    }
}

#[test]
fn the_client_mapping_defaults_are_valid() {
    let s = Settings::default();
    assert_eq!(s.client.user_lookup_field, "username");
    assert_eq!(s.client.scopes, ["dados_publicos", "cpf", "email"]);
    let mapping = s.client.user_mapping().expect("the defaults are valid");
    let columns: Vec<String> = mapping.map().columns().into_iter().map(|c| c.column.to_string()).collect();
    assert_eq!(columns, ["username", "email", "first_name", "last_name"]);
    assert_eq!(mapping.scopes().to_scope_string(), "dados_publicos cpf email");
}

#[test]
fn a_wrong_client_mapping_stops_the_start_naming_the_setting_and_the_key() {
    type Adjust = fn(&mut Settings);
    let cases: [(&[&str], Adjust); 9] = [
        (&["SERVICE_USER_ATTR_MAP", "not a JSON object"], |s| s.client.user_attr_map = "username=cpf".into()),
        (&["SERVICE_USER_ATTR_MAP", "\"(first_name)\"", "two columns"], |s| {
            s.client.user_attr_map = r#"{"username": "cpf", "(first_name)": "name"}"#.into()
        }),
        (&["SERVICE_USER_ATTR_MAP", "\"User\"", "identifier"], |s| {
            s.client.user_attr_map = r#"{"User": "cpf"}"#.into()
        }),
        (&["SERVICE_USER_ATTR_MAP", "\"bonds\"", "cnes", "returns a list"], |s| {
            s.client.scopes = vec!["cnes".into()];
            s.client.user_attr_map = r#"{"username": "cpf", "bonds": "cnes.vinculos"}"#.into();
        }),
        (&["SERVICE_USER_ATTR_MAP", "\"birth\"", "SERVICE_SCOPES", "receita_federal"], |s| {
            s.client.user_attr_map = r#"{"username": "cpf", "birth": "receita_federal.dtNascimento"}"#.into()
        }),
        (&["SERVICE_USER_ATTR_MAP", "\"email\"", "already written"], |s| {
            s.client.user_attr_map = r#"{"username": "cpf", "email": "email", "(email, x)": "name"}"#.into()
        }),
        (&["SERVICE_SCOPES", "\"openid\""], |s| s.client.scopes = vec!["cpf".into(), "openid".into()]),
        (&["SERVICE_USER_LOOKUP_FIELD", "\"cpf\""], |s| s.client.user_lookup_field = "cpf".into()),
        (&["SERVICE_USER_LOOKUP_FIELD", "\"profile\"", "not a plain text value"], |s| {
            s.client.user_attr_map = r#"{"username": "cpf", "profile": "fulljson"}"#.into();
            s.client.user_lookup_field = "profile".into();
        }),
    ];
    for (fragments, adjust) in cases {
        let mut s = Settings::default();
        adjust(&mut s);
        let e = s.validate().expect_err("invalid").to_string();
        assert!(e.starts_with(&format!("setting {}", fragments[0])), "{e}");
        for fragment in fragments {
            assert!(e.contains(fragment), "{fragment} missing from: {e}");
        }
    }
}

/// `text` as a table name setting.
fn table_name(text: &str) -> credencial_domain::host_table::TableName {
    credencial_domain::host_table::TableName::parse(text).expect("a table name")
}

/// Loads `toml` from a file of its own (the environment still applies).
fn load_toml(toml: &str) -> Result<Settings, credencial::settings::SettingsError> {
    let path = std::env::temp_dir().join(format!("credencial-settings-{}.toml", uuid::Uuid::new_v4()));
    std::fs::write(&path, toml).expect("write the settings file");
    let loaded = Settings::load(Some(&path));
    let _ = std::fs::remove_file(&path);
    loaded
}

#[test]
fn the_attribute_map_may_be_a_toml_table_or_json_text() {
    let table = load_toml(
        r#"
scopes = ["cpf", "email", "receita_federal", "cnes"]
user_lookup_field = "cpf"

[user_attr_map]
cpf = "cpf"
"(first_name, last_name)" = "name"
birth_date = "receita_federal.dtNascimento"
bonds = "cnes"
profile = "fulljson"
"#,
    )
    .expect("a valid table");
    let text = load_toml(
        r#"
scopes = "cpf,email,receita_federal,cnes"
user_lookup_field = "cpf"
user_attr_map = '{"cpf": "cpf", "(first_name, last_name)": "name", "birth_date": "receita_federal.dtNascimento", "bonds": "cnes", "profile": "fulljson"}'
"#,
    )
    .expect("valid JSON text");
    for s in [table, text] {
        let mapping = s.client.user_mapping().expect("valid");
        let mut columns: Vec<String> = mapping.map().columns().into_iter().map(|c| c.column.to_string()).collect();
        columns.sort();
        assert_eq!(columns, ["birth_date", "bonds", "cpf", "first_name", "last_name", "profile"]);
        assert_eq!(mapping.lookup().column().as_str(), "cpf");
        assert_eq!(mapping.scopes().to_scope_string(), "dados_publicos cpf email receita_federal cnes");
    }
}

#[test]
fn a_wrong_attribute_map_in_the_file_stops_the_load() {
    let e = load_toml("scopes = [\"cpf\"]\n[user_attr_map]\nusername = \"cpf\"\nbonds = \"cursos_cdp.data\"\n")
        .expect_err("dot notation on a list scope");
    let e = e.to_string();
    assert!(e.starts_with("setting SERVICE_USER_ATTR_MAP") && e.contains("\"bonds\""), "{e}");
}

/// The start-up error of a production start with the client component
/// enabled (a provider configured) and `adjust` applied.
async fn client_start_error(adjust: impl FnOnce(&mut Settings)) -> String {
    start_error(|s| {
        s.client.provider_base_url = Some(crate::helpers::base_url("http://127.0.0.1:9"));
        s.client.provider_client_id = Some("host".into());
        s.client.provider_client_secret = Some("host-secret".to_owned().into());
        s.client.provider_redirect_uri = Some("http://127.0.0.1:8000/auth/callback/".into());
        adjust(s);
    })
    .await
}

#[tokio::test]
async fn a_mapped_column_the_host_table_lacks_stops_the_start() {
    let e = client_start_error(|s| s.client.user_attr_map = r#"{"username": "cpf", "nickname": "email"}"#.into()).await;
    assert!(e.starts_with("setting SERVICE_USER_ATTR_MAP"), "{e}");
    assert!(e.contains("\"nickname\" does not exist in table \"host_users\""), "{e}");
}

#[tokio::test]
async fn a_mapped_column_of_the_wrong_type_stops_the_start() {
    let e = client_start_error(|s| s.client.user_attr_map = r#"{"username": "cpf", "city": "fulljson"}"#.into()).await;
    assert!(e.starts_with("setting SERVICE_USER_ATTR_MAP"), "{e}");
    assert!(e.contains("column \"city\"") && e.contains("jsonb"), "{e}");
}

#[tokio::test]
async fn a_lookup_column_without_a_unique_constraint_stops_the_start() {
    let e = client_start_error(|s| s.client.user_lookup_field = "email".into()).await;
    assert!(e.starts_with("setting SERVICE_USER_LOOKUP_FIELD"), "{e}");
    assert!(e.contains("lookup column \"email\"") && e.contains("unique"), "{e}");
}

#[tokio::test]
async fn a_host_table_that_does_not_exist_stops_the_start() {
    let e = client_start_error(|s| s.client.user_table = table_name("people")).await;
    assert!(e.starts_with("setting SERVICE_USER_TABLE") && e.contains("\"people\""), "{e}");
}

#[tokio::test]
async fn without_a_provider_the_host_table_is_not_checked() {
    let db = TestDatabase::new().await;
    let upstream = MockServer::start().await;
    let mut settings = test_settings(&db, &upstream);
    settings.client.user_table = table_name("people");
    assert!(Application::build(&settings, Mode::Serve, db.storage()).await.is_ok());
}

#[test]
fn a_syntax_error_in_the_file_names_the_place_but_never_quotes_the_line() {
    let e = load_toml("jwt_secret = unquoted-secret-value-0123456789abcdef\n").expect_err("not TOML").to_string();
    assert!(e.contains("line 1"), "{e}");
    assert!(!e.contains("unquoted-secret-value"), "the secret was quoted: {e}");
    let e = load_toml("upstream_proxy = \"http://user:pa55@proxy.example:3128\n").expect_err("not TOML").to_string();
    assert!(!e.contains("pa55"), "the proxy password was quoted: {e}");
}

#[tokio::test]
async fn staff_second_factor_without_a_key_and_a_bad_key_file_stop_the_start_naming_the_setting() {
    let message = start_error(|s| {
        s.login.second_factor_key_file = None;
        s.login.staff_second_factor = Some(true);
    })
    .await;
    let lower = message.to_lowercase();
    assert!(lower.contains("staff_second_factor") && lower.contains("second_factor_key_file"), "{message}");
    let bad = std::env::temp_dir().join(format!("credencial-bad-key-{}", std::process::id()));
    std::fs::write(&bad, "not base64 of 32 bytes").expect("write");
    let message = start_error(|s| s.login.second_factor_key_file = Some(bad.clone())).await;
    let _ = std::fs::remove_file(&bad);
    assert!(message.to_lowercase().contains("second_factor_key_file") && message.contains("32 bytes"), "{message}");
}

#[test]
fn providers_are_a_list_of_tables_or_json_text_with_each_profile_s_defaults() {
    let table = load_toml(
        r#"
govbr_validated_level = "ouro"

[[providers]]
id = "govbr"
profile = "govbr"
issuer = "https://sso.staging.acesso.gov.br/"
client_id = "id.example.gov.br"
client_secret = "segredo"

[[providers]]
id = "universidade"
name = "Universidade"
profile = "oidc"
issuer = "https://sso.universidade.br/realms/main"
client_id = "credencial"
client_secret = "outro"
link_by = "email"
algorithms = ["RS256", "ES256"]
satisfies_second_factor = "always"
"#,
    )
    .expect("valid providers");
    let text = load_toml(
        r#"providers = '[{"id": "govbr", "profile": "govbr", "issuer": "https://sso.staging.acesso.gov.br/", "client_id": "id.example.gov.br", "client_secret": "segredo"}]'"#,
    )
    .expect("valid JSON text");
    let client = reqwest::Client::new();
    let built = table.federation.identity_providers(&client).expect("built");
    assert_eq!(built.len(), 2);
    assert_eq!((built[0].id.as_str(), built[0].name.as_str()), ("govbr", "gov.br"), "gov.br's default name");
    assert_eq!(built[0].link_key, credencial_domain::federation::linking::LinkKey::Cpf);
    assert_eq!(built[1].link_key, credencial_domain::federation::linking::LinkKey::VerifiedEmail);
    use credencial_domain::assurance::UpstreamTrust;
    assert_eq!((built[0].trust, built[1].trust), (UpstreamTrust::WhenUpstreamMfa, UpstreamTrust::Always));
    assert_eq!(table.federation.govbr_validated_level, credencial_domain::federation::ReliabilityLevel::Ouro);
    assert_eq!(text.federation.providers.len(), 1);
    assert_eq!(text.federation.govbr_validated_level, credencial_domain::federation::ReliabilityLevel::Prata);
    let scopes = table.federation.providers[0].scopes.clone();
    assert_eq!(scopes, None, "unset: the profile's list is asked ({:?})", credencial::settings::GOVBR_SCOPES);
}

#[test]
fn a_wrong_provider_stops_the_load_naming_the_entry_and_the_field() {
    let provider = |fields: &str| {
        format!(
            "[[providers]]\nid = \"govbr\"\nprofile = \"govbr\"\nissuer = \"https://sso.acesso.gov.br/\"\n\
             client_id = \"c\"\nclient_secret = \"s\"\n{fields}\n"
        )
    };
    let cases = [
        (provider("").replace("id = \"govbr\"", "id = \"Gov BR\""), "providers[0].id"),
        (provider("").replace("profile = \"govbr\"", "profile = \"saml\""), "providers[0].profile"),
        (provider("").replace("https://sso", "http://sso"), "providers[0]. issuer must be an https:// URL"),
        (provider("link_by = \"email\""), "providers[0].link_by"),
        (provider("satisfies_second_factor = \"sometimes\""), "providers[0].satisfies_second_factor"),
        (provider("scopes = [\"email\"]"), "scopes must include openid"),
        (provider("algorithms = [\"HS256\"]"), "algorithms must be among RS256, PS256 and ES256"),
        (format!("{}{}", provider(""), provider("")), "providers[1].id govbr is repeated"),
        (
            format!("{}{}", provider(""), provider("").replace("id = \"govbr\"", "id = \"outro\"")),
            "at most one provider may have the govbr profile",
        ),
        (provider("").replace("profile = \"govbr\"", "profile = \"oidc\""), "providers[0].name is not set"),
        (provider("segredo = \"x\""), "SERVICE_PROVIDERS"),
        (format!("govbr_validated_level = \"platina\"\n{}", provider("")), "SERVICE_GOVBR_VALIDATED_LEVEL"),
    ];
    for (toml, expected) in cases {
        let e = load_toml(&toml).err().unwrap_or_else(|| panic!("refused: {toml}")).to_string();
        assert!(e.contains(expected), "{expected:?} in {e:?} for {toml}");
        assert!(!e.contains("\"s\"") && !e.contains("= s"), "no secret in the message: {e}");
    }
}
