//! Wrong settings stop the start with a message naming the setting.

use credencial::settings::Settings;
use credencial::startup::{Application, Mode};
use credencial_adapters_postgres::testing::TestDatabase;
use wiremock::MockServer;

use crate::helpers::test_settings;

async fn start_error(adjust: impl FnOnce(&mut Settings)) -> String {
    let db = TestDatabase::new().await;
    let upstream = MockServer::start().await;
    let mut settings = test_settings(&db, &upstream);
    adjust(&mut settings);
    match Application::build(&settings, Mode::Serve, db.pool.clone()).await {
        Ok(_) => panic!("the start should have been refused"),
        Err(e) => format!("{e:#}"),
    }
}

#[tokio::test]
async fn a_missing_signing_secret_stops_a_production_start() {
    let e = start_error(|s| s.jwt_secret = None).await;
    assert!(e.contains("SERVICE_JWT_SECRET"), "{e}");
}

#[tokio::test]
async fn a_short_secret_stops_the_start() {
    let e = start_error(|s| s.jwt_secret = Some("short".to_owned().into())).await;
    assert!(e.contains("SERVICE_JWT_SECRET") && e.contains("32 bytes"), "{e}");
}

#[tokio::test]
async fn an_unknown_algorithm_stops_the_start() {
    let e = start_error(|s| s.jwt_algorithm = "none".into()).await;
    assert!(e.contains("SERVICE_JWT_ALGORITHM"), "{e}");
}

#[tokio::test]
async fn rs256_without_key_files_stops_the_start() {
    let e = start_error(|s| s.jwt_algorithm = "RS256".into()).await;
    assert!(e.contains("SERVICE_JWT_PRIVATE_KEY_FILE"), "{e}");
}

#[tokio::test]
async fn mismatched_rsa_keys_stop_the_start() {
    let keys = concat!(env!("CARGO_MANIFEST_DIR"), "/crates/domain/tests/keys");
    let e = start_error(|s| {
        s.jwt_algorithm = "RS256".into();
        s.jwt_private_key_file = Some(format!("{keys}/rsa_private.pem").into());
        s.jwt_public_key_file = Some(format!("{keys}/rsa_other_public.pem").into());
    })
    .await;
    assert!(e.contains("does not match"), "{e}");
}

#[tokio::test]
async fn a_missing_or_bad_upstream_url_stops_a_production_start() {
    let e = start_error(|s| s.upstream_base_url = None).await;
    assert!(e.contains("SERVICE_UPSTREAM_BASE_URL"), "{e}");
    let e = start_error(|s| s.upstream_base_url = Some("ftp://x".into())).await;
    assert!(e.contains("SERVICE_UPSTREAM_BASE_URL"), "{e}");
}

#[test]
fn settings_validation_names_the_setting() {
    type Adjust = fn(&mut Settings);
    let cases: [(&str, Adjust); 4] = [
        ("SERVICE_UPSTREAM_ENDPOINTS", |s| s.upstream_endpoints = vec!["//evil/".into()]),
        ("SERVICE_ACCESS_TOKEN_LIFETIME_SECS", |s| s.access_token_lifetime_secs = 0),
        ("SERVICE_LOG_FORMAT", |s| s.log_format = "xml".into()),
        ("SERVICE_PASSWORD_ITERATIONS", |s| s.password_iterations = 0),
    ];
    for (name, adjust) in cases {
        let mut s = Settings::default();
        adjust(&mut s);
        let e = s.validate().expect_err("invalid").to_string();
        assert!(e.contains(name), "{e}");
    }
}
