//! Demo mode: seeded users and the sandbox of the user-data resource.

use crate::helpers::TestDatabase;
use credencial::demo;
use credencial::startup::{hasher, Application, Mode};
use serde_json::json;
use wiremock::MockServer;

use crate::helpers::{status_and_json, test_settings};

#[tokio::test]
async fn demo_users_log_in_and_read_their_data_from_the_sandbox() {
    let db = TestDatabase::new().await;
    let unused = MockServer::start().await;
    let mut settings = test_settings(&db, &unused);
    settings.registries.upstream_base_url = None;
    settings.tokens.jwt_secret = None;
    assert_eq!(demo::seed(&db.storage(), &hasher(&settings).expect("hasher")).await.expect("seed"), 3);
    assert_eq!(
        demo::seed(&db.storage(), &hasher(&settings).expect("hasher")).await.expect("seed again"),
        0,
        "seeding twice creates nothing"
    );
    let app = Application::build(&settings, Mode::Demo, db.storage()).await.expect("demo builds");
    let base = format!("http://127.0.0.1:{}", app.port());
    tokio::spawn(app.run_until_stopped());
    let client = reqwest::Client::new();

    for user in &demo::DEMO_USERS {
        let r = client
            .post(format!("{base}/api/token/pair/"))
            .json(&json!({"username": user.username, "password": user.password}))
            .send()
            .await
            .expect("sent");
        let (status, pair) = status_and_json(r).await;
        assert_eq!(status, 200, "{}", user.username);
        let access = pair["access"].as_str().expect("access");
        for route in ["/api/token/rh/eu/", "/api/token/user-info/"] {
            let r = client.get(format!("{base}{route}")).bearer_auth(access).send().await.expect("sent");
            let (status, data) = status_and_json(r).await;
            let expected = serde_json::to_value((user.data)()).expect("json");
            assert_eq!((status, data), (200, expected), "{} {route}", user.username);
        }
    }
    assert!(unused.received_requests().await.unwrap_or_default().is_empty());
}

#[tokio::test]
async fn the_demo_seeds_ana_with_a_full_profile_bruno_with_none_and_admin_as_staff() {
    use credencial_domain::UserId;

    let db = TestDatabase::new().await;
    let unused = MockServer::start().await;
    let settings = test_settings(&db, &unused);
    demo::seed(&db.storage(), &hasher(&settings).expect("hasher")).await.expect("seed");
    let users: Vec<(String, i64, crate::database::Flag)> =
        sqlx::query_as("SELECT username, id, is_staff FROM users ORDER BY username")
            .fetch_all(&db.pool)
            .await
            .expect("users");
    let staff: Vec<&str> = users.iter().filter(|u| u.2 .0).map(|u| u.0.as_str()).collect();
    assert_eq!(staff, ["admin"], "only admin is staff");
    let ids: Vec<(String, i64)> = users.into_iter().filter(|u| u.0 != "admin").map(|u| (u.0, u.1)).collect();
    let profiles = db.storage().profiles;
    let ana = profiles.own_profile(UserId(ids[0].1)).await.expect("read").expect("ana");
    assert_eq!(ids[0].0, "ana");
    assert!(ana.receita_validated);
    assert_eq!((ana.experiences.len(), ana.degrees.len()), (2, 2));
    assert_eq!(ana.cpf.as_deref(), Some("52998224725"));
    let bruno = profiles.own_profile(UserId(ids[1].1)).await.expect("read").expect("bruno");
    assert!(!bruno.receita_validated);
    assert!(bruno.experiences.is_empty() && bruno.degrees.is_empty());
}

#[tokio::test]
async fn the_demo_registers_its_confidential_client_once_with_every_scope() {
    use credencial_domain::oauth::ClientId;
    use credencial_domain::{DjangoPbkdf2, ScopeSet};

    let db = TestDatabase::new().await;
    let unused = MockServer::start().await;
    let settings = test_settings(&db, &unused);
    let h = hasher(&settings).expect("hasher");
    let redirect = demo::demo_redirect_uri("0.0.0.0:8000");
    assert_eq!(redirect, "http://127.0.0.1:8000/auth/callback/");
    assert!(demo::seed_client(&db.storage(), &h, &redirect).await.expect("seed"));
    assert!(!demo::seed_client(&db.storage(), &h, &redirect).await.expect("again"), "only once");
    let client = db
        .storage()
        .clients
        .find(&ClientId::parse(demo::DEMO_CLIENT_ID).expect("id"))
        .await
        .expect("read")
        .expect("registered");
    assert!(client.confidential);
    assert_eq!(client.enabled_scopes, ScopeSet::all());
    assert_eq!(client.redirect_uris, [redirect]);
    let stored = DjangoPbkdf2::parse(client.secret_hash.as_deref().expect("hashed")).expect("django format");
    assert!(stored.verify(demo::DEMO_CLIENT_SECRET));
}

#[tokio::test]
async fn bruno_validates_himself_against_the_sandbox_adds_a_degree_and_his_record_gets_the_tax_columns() {
    use crate::account::{form_token, log_in_at_account};
    use crate::client_login::{host_row, log_in};
    use crate::helpers::{spawn_demo, with};

    let (mut browser, db) = spawn_demo(|_| {}).await;
    let bruno = demo::DEMO_USERS.iter().find(|u| u.username == "bruno").expect("bruno");
    let signed_in = log_in_at_account(&mut browser, "/conta/validacao/", bruno.username, bruno.password).await;
    assert_eq!((signed_in.status, signed_in.location.as_deref()), (303, Some("/conta/validacao/")));
    let page = browser.get("/conta/validacao/").await;
    assert!(page.body.contains("Você tem 5 tentativas"), "{}", page.body);
    // What the README tells him to type.
    let typed = [("data_nascimento", "1991-07-21"), ("nome_mae", "Joana Pereira Lima")];
    let done = browser.post("/conta/validacao/", &with(vec![("csrf_token".into(), form_token(&page))], &typed)).await;
    assert_eq!((done.status, done.location.as_deref()), (303, Some("/conta/validacao/")), "{}", done.body);
    assert!(browser.get("/conta/validacao/").await.body.contains("Seu cadastro está validado pela Receita Federal."));

    let degree = [
        ("instituicao", "Universidade Federal Rural do Semi-Árido"),
        ("curso", "Ciência e Tecnologia"),
        ("grau_formacao", "GRA"),
        ("data_inicio", "2023-03-01"),
        ("municipio", "Mossoró"),
    ];
    let token = form_token(&browser.get("/conta/formacoes/").await);
    let added = browser.post("/conta/formacoes/", &with(vec![("csrf_token".into(), token)], &degree)).await;
    assert_eq!(added.status, 303, "{}", added.body);

    // The host application of the demo now gets the tax authority's columns.
    let back = log_in(&mut browser, bruno.username, bruno.password, "/auth/me/").await;
    assert_eq!(back.status, 303, "{}", back.body);
    let row = host_row(&db, bruno.cpf.expect("a CPF")).await;
    assert_eq!(
        (row.birth_date.as_deref(), row.mother_name.as_deref(), row.city.as_deref(), row.state.as_deref()),
        (Some("1991-07-21"), Some("JOANA PEREIRA LIMA"), Some("MOSSORO"), Some("RN"))
    );
    let (profile,): (String,) = sqlx::query_as("SELECT CAST(profile AS TEXT) FROM host_users WHERE username = $1")
        .bind(bruno.cpf.expect("a CPF"))
        .fetch_one(&db.pool)
        .await
        .expect("row");
    let profile: serde_json::Value = serde_json::from_str(&profile).expect("the profile is JSON");
    assert_eq!(profile["formacao_academica"][0]["curso"], "Ciência e Tecnologia");
    assert_eq!(profile["formacao_academica"][0]["grau_formacao"], "Graduação");
    assert_eq!(profile["receita_federal"]["dtNascimento"], "1991-07-21");
}
