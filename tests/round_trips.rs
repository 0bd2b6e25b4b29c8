//! How many database statements one profile request costs (issue 12's
//! target: at most 2 for a warm read — snapshots cached — including the
//! grant check and the access-log row, whatever the lengths of the lists).
//! Its own test binary, because
//! it installs a global tracing subscriber that counts sqlx's per-statement
//! events (target `sqlx::query`); with the pool's per-checkout ping turned
//! off, each statement is one round trip once the connection has prepared it.

#[path = "api/database.rs"]
#[allow(dead_code)]
mod database;
#[path = "api/helpers.rs"]
#[allow(dead_code)]
mod helpers;

use std::sync::atomic::{AtomicUsize, Ordering};

use credencial_domain::oauth::ClientId;
use credencial_domain::profile::{AcademicDegree, Experience};
use credencial_domain::{Degree, ScopeSet, UserId};
use credencial_ports::OAuthClient;
use serde_json::json;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::Layer;
use wiremock::matchers::path_regex;
use wiremock::{Mock, ResponseTemplate};

static STATEMENTS: AtomicUsize = AtomicUsize::new(0);

/// Counts sqlx's statement events.
struct CountStatements;

impl<S: tracing::Subscriber> Layer<S> for CountStatements {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        if event.metadata().target() == "sqlx::query" {
            STATEMENTS.fetch_add(1, Ordering::SeqCst);
        }
    }
}

const ALL: &str =
    "dados_publicos cpf email receita_federal cnes experiencia_profissional formacao_academica cursos_cdp";

async fn statements_per_request(list_len: usize) -> (f64, usize) {
    let app = helpers::spawn_app_with(|s| {
        let base = s.registries.upstream_base_url.clone().expect("wiremock").to_string();
        let base = base.trim_end_matches('/');
        s.registries.receita_base_url = Some(helpers::base_url(format!("{base}/receita")));
        s.registries.cnes_base_url = Some(helpers::base_url(format!("{base}/cnes")));
        s.registries.cdp_base_url = Some(helpers::base_url(format!("{base}/cdp")));
    })
    .await;
    Mock::given(path_regex("^/receita/"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"nome": "A", "dtNascimento": "1990-01-01",
            "sexo": "F", "mae": "M", "noMunicipio": "NATAL", "uf": "RN"})))
        .mount(&app.upstream)
        .await;
    Mock::given(path_regex("^/cnes/"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"vinculos": []})))
        .mount(&app.upstream)
        .await;
    Mock::given(path_regex("^/cdp/"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"total": 0, "data": []})))
        .mount(&app.upstream)
        .await;
    app.db
        .storage()
        .clients
        .create(
            OAuthClient {
                client_id: ClientId::parse("host").expect("id"),
                name: "host".into(),
                secret_hash: None,
                redirect_uris: vec!["http://127.0.0.1:9/cb".into()],
                post_logout_redirect_uris: vec![],
                confidential: false,
                require_pkce: true,
                requires_second_factor: false,
                minimum_govbr_level: None,
                enabled_scopes: ScopeSet::all(),
                is_active: true,
                created_at: 0,
                backchannel_logout_uri: None,
            },
            &credencial_adapters_postgres::testing::setup_audit(),
        )
        .await
        .expect("client");
    let id = app.add_user("ana", "pw-ana-123", true).await;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs() as i64;
    app.db
        .storage()
        .grants
        .widen(UserId(id), &ClientId::parse("host").expect("id"), ScopeSet::all(), now)
        .await
        .expect("consent");
    sqlx::query("UPDATE users SET cpf = '52998224725' WHERE id = $1")
        .bind(id)
        .execute(&app.db.pool)
        .await
        .expect("cpf");
    let profiles = app.db.storage().profiles;
    profiles.set_profile(UserId(id), "https://example.gov.br/a.png", true).await.expect("profile");
    for i in 0..list_len {
        let experience = Experience {
            estabelecimento: format!("E{i}"),
            profissao: "P".into(),
            data_inicio: Some("2019-02-01T08:00:00".into()),
            data_fim: None,
            municipio: "Natal".into(),
            descricao: String::new(),
        };
        profiles.add_experience(UserId(id), experience).await.expect("experience");
        let degree = AcademicDegree {
            instituicao: format!("I{i}"),
            curso: "C".into(),
            data_inicio: "2010-03-01".into(),
            data_fim: None,
            municipio: "Natal".into(),
            descricao: String::new(),
            grau: Degree::Mestrado,
        };
        profiles.add_degree(UserId(id), degree).await.expect("degree");
    }
    // An access token as the app issues them to applications (`oauth_access`,
    // `typ: at+jwt`, its provider key).
    let claims = credencial_domain::Claims {
        scope: Some(ALL.into()),
        client_id: Some("host".into()),
        aud: Some("host".into()),
        ..credencial_domain::Claims::new(credencial_domain::TokenType::ClientAccess, id, now, 300)
    };
    let token = helpers::client_token_codec().encode_claims(&claims).expect("sign");
    let call = || async {
        let r = app
            .client
            .post(format!("{}/api/perfil/dados/", app.address))
            .bearer_auth(&token)
            .send()
            .await
            .expect("sent");
        assert_eq!(r.status(), 200);
        let body: serde_json::Value = r.json().await.expect("json");
        assert_eq!(body["experiencia_profissional"].as_array().map(Vec::len), Some(list_len).filter(|n| *n > 0));
    };
    let before = STATEMENTS.load(Ordering::SeqCst);
    call().await;
    let cold = STATEMENTS.load(Ordering::SeqCst) - before;
    let runs = 20;
    let before = STATEMENTS.load(Ordering::SeqCst);
    for _ in 0..runs {
        call().await;
    }
    let warm = (STATEMENTS.load(Ordering::SeqCst) - before) as f64 / runs as f64;
    let (logged,): (i64,) = sqlx::query_as("SELECT count(*) FROM access_log WHERE user_id = $1 AND client_id = 'host'")
        .bind(id)
        .fetch_one(&app.db.pool)
        .await
        .expect("log rows");
    assert_eq!(logged, 1 + runs, "every answered read wrote its access-log row");
    (warm, cold)
}

#[tokio::test]
async fn a_warm_profile_request_costs_at_most_two_statements_with_the_grant_check_and_the_log_row() {
    let filter = tracing_subscriber::filter::Targets::new().with_target("sqlx::query", tracing::Level::DEBUG);
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(CountStatements.with_filter(filter)))
        .expect("one subscriber for this binary");
    let (warm_short, cold_short) = statements_per_request(1).await;
    let (warm_long, cold_long) = statements_per_request(60).await;
    println!("statements per profile request: warm {warm_short} / {warm_long} (lists of 1 / 60), cold {cold_short} / {cold_long}");
    assert!(warm_short <= 2.0 && warm_long <= 2.0, "warm: {warm_short}, {warm_long}");
    assert_eq!(warm_short, warm_long, "list length must not change the count");
    assert!(cold_short > 0, "the counter sees the statements");
}
