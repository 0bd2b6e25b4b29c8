//! `POST /api/perfil/dados/` over real HTTP: real PostgreSQL, wiremock
//! behind the three registries, a client registered in the database, and
//! OAuth2 access tokens signed with the test key (the authorization flow
//! that issues them is tested on its own).

use std::time::Duration;

use credencial_domain::oauth::ClientId;
use credencial_domain::profile::{AcademicDegree, Experience, ERRO_NAO_VALIDADO, ERRO_SEM_EXPERIENCIA};
use credencial_domain::{Claims, Degree, ScopeSet, TokenType, UserData, UserId, Username};
use credencial_ports::{NewUser, OAuthClient};
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::helpers::{client_token_codec, spawn_app_with, status_and_json, TestApp, SECRET};

pub(crate) const ALL: &str =
    "dados_publicos cpf email receita_federal cnes experiencia_profissional formacao_academica cursos_cdp";
pub(crate) const ANA_CPF: &str = "52998224725";
pub(crate) const BRUNO_CPF: &str = "12345678909";

pub(crate) async fn app() -> TestApp {
    app_with(|_| {}).await
}

/// [`app`] after `adjust` has changed the settings.
pub(crate) async fn app_with(adjust: impl FnOnce(&mut credencial::settings::Settings)) -> TestApp {
    spawn_app_with(|s| {
        // One wiremock server stands in for all three registries.
        let base = s.registries.upstream_base_url.clone().expect("wiremock").to_string();
        let base = base.trim_end_matches('/');
        s.registries.receita_base_url = Some(crate::helpers::base_url(format!("{base}/receita")));
        s.registries.cnes_base_url = Some(crate::helpers::base_url(format!("{base}/cnes")));
        s.registries.cdp_base_url = Some(crate::helpers::base_url(format!("{base}/cdp")));
        s.registries.receita_timeout_ms = 300;
        s.registries.cnes_timeout_ms = 300;
        s.registries.cdp_timeout_ms = 300;
        adjust(s);
    })
    .await
}

pub(crate) async fn register_client(app: &TestApp, id: &str, enabled: &str) {
    app.db
        .storage()
        .clients
        .create(
            OAuthClient {
                client_id: ClientId::parse(id).expect("id"),
                name: id.into(),
                secret_hash: None,
                redirect_uris: vec!["http://127.0.0.1:9/cb".into()],
                post_logout_redirect_uris: vec![],
                confidential: false,
                require_pkce: true,
                requires_second_factor: false,
                minimum_govbr_level: None,
                enabled_scopes: ScopeSet::parse_strict(enabled).expect("known scopes"),
                is_active: true,
                created_at: 0,
                backchannel_logout_uri: None,
            },
            &credencial_adapters_postgres::testing::setup_audit(),
        )
        .await
        .expect("client");
}

/// Creates `username` with `cpf` (`full`: validated, with an experience and
/// a degree) who has consented to every client registered so far, with
/// every scope (as if through the consent page), so that tokens signed for
/// them are answered; returns the id.
pub(crate) async fn person(app: &TestApp, username: &str, cpf: &str, full: bool) -> i64 {
    let id = app
        .db
        .storage()
        .users
        .create(NewUser {
            username: Username::parse(username).expect("username"),
            password_hash: "pbkdf2_sha256$1$s$h".into(),
            is_active: true,
            data: UserData { email: format!("{username}@example.gov.br"), ..UserData::default() },
            name: format!("{username} da Silva"),
            cpf: Some(credencial_domain::Cpf::parse(cpf).expect("a valid CPF")),
        })
        .await
        .expect("user");
    if full {
        let profiles = app.db.storage().profiles;
        profiles.set_profile(id, "https://example.gov.br/a.png", true).await.expect("profile");
        profiles
            .add_experience(
                id,
                Experience {
                    estabelecimento: "Hospital".into(),
                    profissao: "Enfermeira".into(),
                    data_inicio: Some("2019-02-01T08:00:00".into()),
                    data_fim: None,
                    municipio: "Natal".into(),
                    descricao: String::new(),
                },
            )
            .await
            .expect("experience");
        profiles
            .add_degree(
                id,
                AcademicDegree {
                    instituicao: "UFRN".into(),
                    curso: "Enfermagem".into(),
                    data_inicio: "2010-03-01".into(),
                    data_fim: Some("2014-12-19".into()),
                    municipio: "Natal".into(),
                    descricao: String::new(),
                    grau: Degree::Graduacao,
                },
            )
            .await
            .expect("degree");
    }
    consent_to_every_client(app, id.0).await;
    id.0
}

/// Stores `user`'s consent to every registered client, with every scope.
pub(crate) async fn consent_to_every_client(app: &TestApp, user: i64) {
    let grants = app.db.storage().grants;
    let clients: Vec<(String,)> =
        sqlx::query_as("SELECT client_id FROM oauth_clients").fetch_all(&app.db.pool).await.expect("clients");
    for (client,) in clients {
        let client = ClientId::parse(&client).expect("id");
        grants.widen(UserId(user), &client, ScopeSet::all(), now()).await.expect("grant");
    }
}

/// The time now, in Unix seconds.
pub(crate) fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs() as i64
}

/// `POST /api/perfil/dados/` for `user` through `client`'s fresh token with
/// `scope`; asserts a 200 and returns the answer.
pub(crate) async fn answered_profile(app: &TestApp, user: i64, scope: &str, client: &str) -> Value {
    let r = app
        .client
        .post(format!("{}/api/perfil/dados/", app.address))
        .bearer_auth(token(user, scope, client, 300))
        .send()
        .await
        .expect("sent");
    let (status, body) = crate::helpers::status_and_json(r).await;
    assert_eq!(status, 200, "{body}");
    body
}

pub(crate) fn token(user_id: i64, scope: &str, client: &str, exp_in: i64) -> String {
    token_with(user_id, scope, client, Some(client), exp_in)
}

/// An OAuth2 access token as the test app issues them to applications
/// (`oauth_access`, `typ: at+jwt`, signed with its client key) whose `aud`
/// is `aud`.
pub(crate) fn token_with(user_id: i64, scope: &str, client: &str, aud: Option<&str>, exp_in: i64) -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs() as i64;
    let claims = Claims {
        scope: Some(scope.into()),
        client_id: Some(client.into()),
        aud: aud.map(Into::into),
        ..Claims::new(TokenType::ClientAccess, user_id, now, exp_in)
    };
    client_token_codec().encode_claims(&claims).expect("sign")
}

pub(crate) fn receita_json() -> Value {
    json!({"nome": "ANA DA SILVA", "dtNascimento": "1988-03-14", "sexo": "F", "mae": "MARIA DA SILVA",
           "noMunicipio": "NATAL", "uf": "RN"})
}

pub(crate) fn cnes_json() -> Value {
    json!({"vinculos": [{"cnes": "2409208", "noFant": "HOSPITAL", "coMun": "240810", "noCBO": "ENFERMEIRO"}]})
}

pub(crate) fn cdp_json() -> Value {
    json!({"total": 1, "data": [{"title": "Curso", "descricao": "d", "vinculo": "aluno", "link": "https://cdp.example/c/1",
                                 "status": "concluido", "nid": 1, "created": "2024-05-02", "type": "curso"}]})
}

pub(crate) async fn mount_registries(app: &TestApp, cpf: &str, times: u64) {
    for (p, body) in [
        (format!("/receita/cpf/{cpf}"), receita_json()),
        (format!("/cnes/profissionais/{cpf}/vinculos"), cnes_json()),
        (format!("/cdp/usuarios/{cpf}/cursos"), cdp_json()),
    ] {
        Mock::given(method("GET"))
            .and(path(p))
            .respond_with(ResponseTemplate::new(200).set_body_json(body))
            .expect(times)
            .mount(&app.upstream)
            .await;
    }
}

async fn profile(app: &TestApp, bearer: Option<&str>, body: Option<Value>) -> (u16, Value) {
    let mut req = app.client.post(format!("{}/api/perfil/dados/", app.address));
    if let Some(t) = bearer {
        req = req.bearer_auth(t);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    status_and_json(req.send().await.expect("sent")).await
}

#[tokio::test]
async fn every_scope_has_the_contract_keys_types_and_formats() {
    let app = app().await;
    register_client(&app, "host", ALL).await;
    let ana = person(&app, "ana", ANA_CPF, true).await;
    mount_registries(&app, ANA_CPF, 1).await;
    let (status, body) = profile(&app, Some(&token(ana, ALL, "host", 300)), None).await;
    assert_eq!(status, 200, "{body}");
    let keys: Vec<_> = body.as_object().expect("object").keys().cloned().collect();
    assert_eq!(
        keys,
        [
            "avatar",
            "cnes",
            "cpf",
            "cursos_cdp",
            "email",
            "experiencia_profissional",
            "formacao_academica",
            "name",
            "receita_federal"
        ]
    );
    assert_eq!(
        (body["name"].as_str(), body["avatar"].as_str()),
        (Some("ana da Silva"), Some("https://example.gov.br/a.png"))
    );
    assert_eq!((body["cpf"].as_str(), body["email"].as_str()), (Some(ANA_CPF), Some("ana@example.gov.br")));
    assert_eq!(body["receita_federal"], receita_json());
    assert_eq!(body["cnes"], cnes_json());
    assert_eq!(body["cursos_cdp"], cdp_json());
    assert_eq!(
        body["experiencia_profissional"],
        json!([{"estabelecimento": "Hospital", "profissao": "Enfermeira", "data_inicio": "2019-02-01T08:00:00",
                "data_fim": null, "municipio": "Natal", "descricao": ""}])
    );
    assert_eq!(
        body["formacao_academica"],
        json!([{"instituicao": "UFRN", "curso": "Enfermagem", "data_inicio": "2010-03-01", "data_fim": "2014-12-19",
                "municipio": "Natal", "descricao": "", "grau_formacao": "Graduação"}])
    );
    app.upstream.verify().await;
}

#[tokio::test]
async fn an_unvalidated_user_without_experience_gets_the_erro_objects() {
    let app = app().await;
    register_client(&app, "host", ALL).await;
    let bruno = person(&app, "bruno", BRUNO_CPF, false).await;
    let (status, body) = profile(
        &app,
        Some(&token(bruno, "receita_federal experiencia_profissional formacao_academica", "host", 300)),
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["receita_federal"], json!({"erro": ERRO_NAO_VALIDADO}));
    assert_eq!(body["experiencia_profissional"], json!({"erro": ERRO_SEM_EXPERIENCIA}));
    assert_eq!(body["formacao_academica"], json!([]));
    assert!(app.upstream.received_requests().await.unwrap_or_default().is_empty(), "the tax authority was not asked");
}

#[tokio::test]
async fn the_scope_field_narrows_as_json_and_as_form() {
    let app = app().await;
    register_client(&app, "host", ALL).await;
    let ana = person(&app, "ana", ANA_CPF, true).await;
    let t = token(ana, ALL, "host", 300);
    let (status, body) = profile(&app, Some(&t), Some(json!({"scope": "formacao_academica"}))).await;
    assert_eq!(status, 200);
    let keys: Vec<_> = body.as_object().expect("object").keys().cloned().collect();
    assert_eq!(keys, ["avatar", "cpf", "email", "formacao_academica", "name"]);

    let r = app
        .client
        .post(format!("{}/api/perfil/dados", app.address))
        .bearer_auth(&t)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("scope=experiencia_profissional+cpf")
        .send()
        .await
        .expect("sent");
    let (status, body) = status_and_json(r).await;
    assert_eq!(status, 200);
    let keys: Vec<_> = body.as_object().expect("object").keys().cloned().collect();
    assert_eq!(keys, ["avatar", "cpf", "email", "experiencia_profissional", "name"]);
}

#[tokio::test]
async fn a_scope_the_client_is_not_enabled_for_is_omitted_even_when_the_token_has_it() {
    let app = app().await;
    register_client(&app, "narrow-client", "dados_publicos cpf email formacao_academica").await;
    let ana = person(&app, "ana", ANA_CPF, true).await;
    let (status, body) = profile(&app, Some(&token(ana, ALL, "narrow-client", 300)), None).await;
    assert_eq!(status, 200);
    for absent in ["receita_federal", "cnes", "cursos_cdp", "experiencia_profissional"] {
        assert!(body.get(absent).is_none(), "{absent} must be omitted");
    }
    assert!(body["formacao_academica"].is_array());
    assert!(app.upstream.received_requests().await.unwrap_or_default().is_empty());
}

/// An OAuth2 access token of the form issued before the client types
/// (`access` with an audience, signed with the shared HS256 secret), issued
/// `age` seconds ago and living `lifetime` seconds.
fn shared_secret_token(user_id: i64, client: &str, age: i64, lifetime: i64) -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs() as i64;
    let claims = json!({"token_type": "access", "iat": now - age, "exp": now - age + lifetime, "jti": "legacy",
                        "user_id": user_id, "scope": ALL, "client_id": client, "aud": client});
    encode(&Header::new(Algorithm::HS256), &claims, &EncodingKey::from_secret(SECRET.as_bytes())).expect("sign")
}

#[tokio::test]
async fn an_application_token_minted_with_the_shared_secret_is_refused_even_for_a_consenting_person() {
    // Every API that reads first-party tokens holds the HS256 secret; with
    // a provider key pair, no access token it signs is an application's.
    let app = app().await;
    register_client(&app, "host", ALL).await;
    let ana = person(&app, "ana", ANA_CPF, true).await;
    consent_to_every_client(&app, ana).await;
    let (status, body) = profile(&app, Some(&token(ana, ALL, "host", 300)), None).await;
    assert_eq!(status, 200, "the provider's own token is served: {body}");
    for (what, token) in [
        ("old form, issued before the start", shared_secret_token(ana, "host", 60, 300)),
        ("old form, issued now", shared_secret_token(ana, "host", -1, 300)),
    ] {
        let (status, body) = profile(&app, Some(&token), None).await;
        assert_eq!(status, 401, "{what}: {body}");
        assert_eq!(body["code"], "token_not_valid", "{what}");
    }
}

#[tokio::test]
async fn bad_credentials_are_401_and_other_methods_405() {
    let app = app().await;
    register_client(&app, "host", ALL).await;
    let ana = person(&app, "ana", ANA_CPF, true).await;
    let pair_style = {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs() as i64;
        encode(
            &Header::new(Algorithm::HS256),
            &json!({"token_type": "access", "iat": now, "exp": now + 60, "jti": "p", "user_id": ana}),
            &EncodingKey::from_secret(SECRET.as_bytes()),
        )
        .expect("sign")
    };
    let cases = [
        ("no token", None),
        ("garbage", Some("abc".to_owned())),
        ("expired", Some(token(ana, ALL, "host", -10))),
        ("no OAuth2 claims", Some(pair_style)),
        ("unknown client", Some(token(ana, ALL, "deleted", 300))),
        ("client but no audience", Some(token_with(ana, ALL, "host", None, 300))),
        ("audience of another client", Some(token_with(ana, ALL, "host", Some("other"), 300))),
    ];
    for (what, t) in cases {
        let (status, body) = profile(&app, t.as_deref(), None).await;
        assert_eq!(status, 401, "{what}: {body}");
        assert!(body["code"].is_string(), "{what}");
    }
    let r = app
        .client
        .get(format!("{}/api/perfil/dados/", app.address))
        .bearer_auth(token(ana, ALL, "host", 300))
        .send()
        .await
        .expect("sent");
    assert_eq!(r.headers().get("allow").and_then(|v| v.to_str().ok()), Some("POST"));
    assert_eq!(r.status(), 405);
    let (status, _) = {
        let r = app
            .client
            .post(format!("{}/api/perfil/dados/", app.address))
            .bearer_auth(token(ana, ALL, "host", 300))
            .header("content-type", "application/json")
            .body("{nope")
            .send()
            .await
            .expect("sent");
        status_and_json(r).await
    };
    assert_eq!(status, 400);
}

#[tokio::test]
async fn cached_scopes_make_no_second_upstream_call_on_this_or_another_instance() {
    let app = app().await;
    register_client(&app, "host", ALL).await;
    let ana = person(&app, "ana", ANA_CPF, true).await;
    mount_registries(&app, ANA_CPF, 1).await;
    let t = token(ana, ALL, "host", 300);
    let (first_status, first) = profile(&app, Some(&t), None).await;
    let (_, second) = profile(&app, Some(&t), None).await;
    assert_eq!((first_status, &first), (200, &second));

    let db_url = app.db.url.clone();
    let upstream = app.upstream.uri();
    let other = spawn_app_with(|s| {
        s.storage.database_url = db_url.into();
        s.registries.receita_base_url = Some(crate::helpers::base_url(format!("{upstream}/receita")));
        s.registries.cnes_base_url = Some(crate::helpers::base_url(format!("{upstream}/cnes")));
        s.registries.cdp_base_url = Some(crate::helpers::base_url(format!("{upstream}/cdp")));
    })
    .await;
    let (_, third) = profile(&other, Some(&t), None).await;
    assert_eq!(third, first, "the other instance serves the stored snapshots");
    app.upstream.verify().await; // one call per registry, in all
}

#[tokio::test]
async fn a_failing_registry_serves_stale_data_or_an_erro_object_never_an_error() {
    let app = app().await;
    register_client(&app, "host", ALL).await;
    let ana = person(&app, "ana", ANA_CPF, true).await;
    // A stale CNES snapshot exists; nothing for the tax authority and CDP.
    let stale = credencial_ports::Snapshot {
        scope: credencial_domain::Scope::Cnes,
        payload: cnes_json(),
        fetched_at: now() - 30 * 86_400,
        expires_at: now() - 23 * 86_400,
    };
    app.db.storage().snapshots.put(credencial_domain::UserId(ana), stale).await.expect("stale snapshot");
    Mock::given(path(format!("/receita/cpf/{ANA_CPF}")))
        .respond_with(ResponseTemplate::new(200).set_body_json(receita_json()).set_delay(Duration::from_secs(2)))
        .mount(&app.upstream)
        .await;
    Mock::given(path(format!("/cnes/profissionais/{ANA_CPF}/vinculos")))
        .respond_with(ResponseTemplate::new(500))
        .mount(&app.upstream)
        .await;
    Mock::given(path(format!("/cdp/usuarios/{ANA_CPF}/cursos")))
        .respond_with(ResponseTemplate::new(200).set_body_string("<html>"))
        .mount(&app.upstream)
        .await;
    let started = std::time::Instant::now();
    let (status, body) = profile(&app, Some(&token(ana, ALL, "host", 300)), None).await;
    assert_eq!(status, 200);
    assert!(started.elapsed() < Duration::from_millis(1500), "the slow registry is cut at its time-out");
    assert_eq!(body["cnes"], cnes_json(), "stale data served");
    assert!(body["receita_federal"]["erro"].is_string(), "{}", body["receita_federal"]);
    assert!(body["cursos_cdp"]["erro"].is_string(), "{}", body["cursos_cdp"]);
}
