//! The user-management API (compatible with the Sabiá API) over real HTTP:
//! every answer and refusal with its status, the per-address limit on wrong
//! tokens, the audit trail, the claim of a pre-registered account through
//! `/conta/cadastro/`, the CLI's token (its last line) and the panel's
//! token page.

use credencial::settings::Settings;
use credencial_application::ApiTokenService;
use credencial_domain::admin::{Actor, ApiPermissions};
use credencial_domain::oauth::ClientId;
use reqwest::header::{AUTHORIZATION, CACHE_CONTROL, RETRY_AFTER};
use secrecy::ExposeSecret;
use serde_json::{json, Value};

use crate::account::form_token;
use crate::admin::{add_staff, staff_browser};
use crate::helpers::{hidden_fields, spawn_app, spawn_app_with, status_and_json, with, Browser, TestApp};
use crate::profile::register_client;

const JOANA_CPF: &str = "52998224725";

/// The form of joana's pre-registration.
fn joana() -> Vec<(&'static str, &'static str)> {
    vec![
        ("cpf", "529.982.247-25"),
        ("email", "joana@example.org"),
        ("nome", "Joana Silva"),
        ("genero", "F"),
        ("data_de_nascimento", "1990-04-12"),
    ]
}

/// An API token for `client` (registered if needed) with `permissions`.
pub(crate) async fn api_token(app: &TestApp, client: &str, permissions: &str) -> String {
    let crate::database::Flag(exists) =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM oauth_clients WHERE client_id = $1)")
            .bind(client)
            .fetch_one(&app.db.pool)
            .await
            .expect("query");
    if !exists {
        register_client(app, client, "").await;
    }
    let service = ApiTokenService::new(app.db.storage().directory);
    let actor = Actor::Cli { os_user: "test".into() };
    let client = ClientId::parse(client).expect("client id");
    let permissions = ApiPermissions::parse(permissions).expect("permissions");
    service.issue(&actor, &client, permissions).await.expect("issued").expect("client").expose_secret().to_owned()
}

async fn get(app: &TestApp, path: &str, token: Option<&str>) -> reqwest::Response {
    let mut request = app.client.get(format!("{}{path}", app.address));
    if let Some(token) = token {
        request = request.header(AUTHORIZATION, format!("Token {token}"));
    }
    request.send().await.expect("sent")
}

async fn post(app: &TestApp, path: &str, token: &str, form: &[(&str, &str)]) -> reqwest::Response {
    app.client
        .post(format!("{}{path}", app.address))
        .header(AUTHORIZATION, format!("Token {token}"))
        .form(form)
        .send()
        .await
        .expect("sent")
}

/// The audit entries with `action`, oldest first: actor, target, changes.
async fn audited(app: &TestApp, action: &str) -> Vec<(String, String, Value)> {
    let rows: Vec<(String, String, String)> =
        sqlx::query_as("SELECT actor, target, CAST(changes AS TEXT) FROM audit_log WHERE action = $1 ORDER BY id")
            .bind(action)
            .fetch_all(&app.db.pool)
            .await
            .expect("audit");
    rows.into_iter().map(|(a, t, c)| (a, t, serde_json::from_str(&c).expect("changes are JSON"))).collect()
}

#[tokio::test]
async fn a_pre_registration_is_201_then_200_and_the_user_reads_by_cpf_or_email() {
    let app = spawn_app().await;
    let token = api_token(&app, "portal", "users:read,users:create").await;

    let r = post(&app, "/usuarios/", &token, &joana()).await;
    assert_eq!(r.headers()[CACHE_CONTROL], "no-store");
    let (status, created) = status_and_json(r).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(
        created,
        json!({
            "username": JOANA_CPF, "cpf": JOANA_CPF, "email": "joana@example.org", "nome": "Joana Silva",
            "genero": "F", "data_de_nascimento": "1990-04-12", "validado": false
        })
    );
    // The same CPF again (another e-mail even): 200 and the account as it is.
    let again = [("email", "outra@example.org"), ("cpf", JOANA_CPF)];
    let mut form = joana();
    form.retain(|(k, _)| !again.iter().any(|(a, _)| a == k));
    form.extend(again);
    let (status, existing) = status_and_json(post(&app, "/usuarios", &token, &form).await).await;
    assert_eq!((status, &existing), (200, &created));

    for path in ["/usuarios/52998224725/", "/usuarios/529.982.247-25", "/usuarios/Joana@Example.org/"] {
        let r = get(&app, path, Some(&token)).await;
        assert_eq!(r.headers()[CACHE_CONTROL], "no-store", "{path}");
        let (status, user) = status_and_json(r).await;
        assert_eq!((status, &user), (200, &created), "{path}");
    }
    for path in ["/usuarios/11144477735/", "/usuarios/ninguem@example.org", "/usuarios/12345/"] {
        let (status, body) = status_and_json(get(&app, path, Some(&token)).await).await;
        assert_eq!((status, &body), (404, &json!({"detail": "Not found.", "code": "not_found"})), "{path}");
    }
    let users: i64 = sqlx::query_scalar("SELECT count(*) FROM users").fetch_one(&app.db.pool).await.expect("count");
    assert_eq!(users, 1);
}

#[tokio::test]
async fn a_bad_form_is_400_with_field_errors_and_writes_nothing() {
    let app = spawn_app().await;
    let token = api_token(&app, "portal", "users:create").await;
    let cases: [(&str, Option<&str>, &str); 5] = [
        ("cpf", Some("529.982.247-24"), "cpf"),
        ("cpf", Some("1234"), "cpf"),
        ("data_de_nascimento", Some("12/04/1990"), "data_de_nascimento"),
        ("data_de_nascimento", Some("1990-02-30"), "data_de_nascimento"),
        ("email", Some("joana@"), "email"),
    ];
    for (field, value, refused) in cases {
        let mut form = joana();
        form.retain(|(k, _)| *k != field);
        form.extend(value.map(|v| (field, v)));
        let (status, body) = status_and_json(post(&app, "/usuarios/", &token, &form).await).await;
        assert_eq!(status, 400, "{field}={value:?}: {body}");
        assert!(body[refused].as_array().is_some_and(|m| m.len() == 1), "{body}");
    }
    for missing in ["cpf", "email", "nome", "genero", "data_de_nascimento"] {
        let mut form = joana();
        form.retain(|(k, _)| *k != missing);
        let (status, body) = status_and_json(post(&app, "/usuarios/", &token, &form).await).await;
        assert_eq!((status, &body), (400, &json!({missing: ["This field is required."]})));
    }
    let (status, body) = status_and_json(post(&app, "/usuarios/", &token, &[]).await).await;
    assert_eq!(status, 400);
    assert_eq!(body.as_object().map(|o| o.len()), Some(5), "{body}");
    // A JSON body that is not an object, and a field that is not text.
    let r = app
        .client
        .post(format!("{}/usuarios/", app.address))
        .header(AUTHORIZATION, format!("Token {token}"))
        .json(&json!({"cpf": {"x": 1}, "email": "a@b.org", "nome": "A", "genero": "F", "data_de_nascimento": "1990-01-01"}))
        .send()
        .await
        .expect("sent");
    assert_eq!(r.status(), 400);
    // An e-mail of another account (another CPF).
    app.add_user("lia", "senha-da-lia-1", true).await;
    let mut form = joana();
    form.retain(|(k, _)| *k != "email");
    form.push(("email", "LIA@example.gov.br"));
    let (status, body) = status_and_json(post(&app, "/usuarios/", &token, &form).await).await;
    assert_eq!(status, 400, "{body}");
    assert!(body["email"].is_array(), "{body}");
    let users: i64 = sqlx::query_scalar("SELECT count(*) FROM users").fetch_one(&app.db.pool).await.expect("count");
    assert_eq!(users, 1, "only lia");
}

#[tokio::test]
async fn a_token_without_the_permission_is_403_and_the_refusal_is_audited() {
    let app = spawn_app().await;
    let reader = api_token(&app, "leitor", "users:read").await;
    let creator = api_token(&app, "cadastro", "users:create").await;
    let (status, body) = status_and_json(post(&app, "/usuarios/", &reader, &joana()).await).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["code"], "permission_denied");
    assert!(body["detail"].is_string());
    for path in ["/usuarios/52998224725/", "/usuarios/?cpfs=52998224725"] {
        let (status, _) = status_and_json(get(&app, path, Some(&creator)).await).await;
        assert_eq!(status, 403, "{path}");
    }
    let refused = audited(&app, "api.refused").await;
    let actors: Vec<&str> = refused.iter().map(|(a, _, _)| a.as_str()).collect();
    assert_eq!(actors, ["leitor", "cadastro", "cadastro"]);
    assert_eq!(refused[0].2, json!([["permission", "users:create"]]));
}

#[tokio::test]
async fn a_deactivated_applications_token_is_403_until_it_is_reactivated() {
    let app = spawn_app().await;
    let token = api_token(&app, "portal", "users:read").await;
    let path = "/usuarios/52998224725/";
    assert_eq!(get(&app, path, Some(&token)).await.status(), 404, "accepted: nobody has this CPF");
    let set_active =
        |active: bool| sqlx::query("UPDATE oauth_clients SET is_active = $1 WHERE client_id = 'portal'").bind(active);
    set_active(false).execute(&app.db.pool).await.expect("deactivated");
    let (status, body) = status_and_json(get(&app, path, Some(&token)).await).await;
    assert_eq!(status, 403, "{body}");
    assert!(body["detail"].is_string(), "{body}");
    set_active(true).execute(&app.db.pool).await.expect("reactivated");
    assert_eq!(get(&app, path, Some(&token)).await.status(), 404, "accepted again");
}

#[tokio::test]
async fn a_missing_or_wrong_token_is_403_and_the_address_is_limited_after_repeated_failures() {
    let app = spawn_app_with(|s: &mut Settings| s.login.login_throttle_address_failures = 3).await;
    let token = api_token(&app, "portal", "users:read").await;
    let last = if token.ends_with('A') { 'B' } else { 'A' };
    let wrong = format!("{}{last}", &token[..token.len() - 1]);
    let invalid = json!({"detail": "Invalid token.", "code": "authentication_failed"});
    let (status, body) = status_and_json(get(&app, "/usuarios/52998224725/", None).await).await;
    assert_eq!((status, &body), (403, &invalid));
    let (status, body) = status_and_json(get(&app, "/usuarios/52998224725/", Some(&wrong)).await).await;
    assert_eq!((status, &body), (403, &invalid));
    let r = app
        .client
        .get(format!("{}/usuarios/?cpfs=52998224725", app.address))
        .header(AUTHORIZATION, format!("Bearer {token}"))
        .send()
        .await
        .expect("sent");
    assert_eq!(r.status(), 403, "only the Token scheme");
    let failures: i32 = sqlx::query_scalar("SELECT failures FROM login_failures WHERE key = 'address:127.0.0.1'")
        .fetch_one(&app.db.pool)
        .await
        .expect("counted");
    assert_eq!(failures, 3);
    // Limited: even the right token is refused until the window ends.
    let r = get(&app, "/usuarios/52998224725/", Some(&token)).await;
    assert_eq!(r.status(), 429);
    assert!(r.headers().contains_key(RETRY_AFTER));
    let (_, body) = status_and_json(r).await;
    assert_eq!(body["code"], "throttled");
    assert!(audited(&app, "api.user_read").await.is_empty(), "nothing was read");
}

/// A CPF with valid check digits made from the 9 digits of `base`.
fn cpf_of(base: u32) -> String {
    let mut digits: Vec<u32> = format!("{base:09}").chars().map(|c| c.to_digit(10).expect("digit")).collect();
    for len in [9, 10] {
        let sum: u32 = digits.iter().zip((2..=len as u32 + 1).rev()).map(|(d, w)| d * w).sum();
        digits.push((sum * 10 % 11) % 10);
    }
    digits.iter().map(|d| char::from_digit(*d, 10).expect("digit")).collect()
}

#[tokio::test]
async fn a_list_by_cpfs_answers_the_users_found_one_hundred_a_page() {
    let app = spawn_app().await;
    let token = api_token(&app, "portal", "users:read").await;
    let cpfs: Vec<String> = (100_000_001..100_000_106).map(cpf_of).collect();
    for (i, cpf) in cpfs.iter().enumerate() {
        sqlx::query("INSERT INTO users (username, password, cpf, email, name) VALUES ($1, '!x', $2, $3, $4)")
            .bind(format!("u{i}"))
            .bind(cpf)
            .bind(format!("u{i}@example.org"))
            .bind(format!("Pessoa {i}"))
            .execute(&app.db.pool)
            .await
            .expect("user");
    }
    let mut asked = cpfs.clone();
    asked.push("11144477735".into()); // valid, nobody's
    asked.push("123".into()); // not a CPF
    let query = asked.join(",");
    let (status, first) = status_and_json(get(&app, &format!("/usuarios/?cpfs={query}"), Some(&token)).await).await;
    assert_eq!(status, 200);
    let first = first.as_array().expect("a list").clone();
    assert_eq!(first.len(), 100);
    assert_eq!(first[0]["cpf"], cpfs[0].as_str());
    assert_eq!(first[0]["username"], "u0");
    let (status, second) =
        status_and_json(get(&app, &format!("/usuarios?cpfs={query}&page=2"), Some(&token)).await).await;
    assert_eq!(status, 200);
    assert_eq!(second.as_array().map(Vec::len), Some(5));
    let (status, third) =
        status_and_json(get(&app, &format!("/usuarios/?cpfs={query}&page=3"), Some(&token)).await).await;
    assert_eq!((status, third), (200, json!([])));
    let (status, none) = status_and_json(get(&app, "/usuarios/?cpfs=11144477735", Some(&token)).await).await;
    assert_eq!((status, none), (200, json!([])));
    let (status, body) = status_and_json(get(&app, "/usuarios/", Some(&token)).await).await;
    assert_eq!((status, body), (400, json!({"cpfs": ["This field is required."]})));
    for page in ["0", "x", "-1"] {
        let (status, body) =
            status_and_json(get(&app, &format!("/usuarios/?cpfs=11144477735&page={page}"), Some(&token)).await).await;
        assert_eq!(status, 400, "{page}: {body}");
        assert!(body["page"].is_array());
    }
    let lists = audited(&app, "api.user_list").await;
    assert_eq!(lists.len(), 4);
    assert_eq!(lists[0].2, json!([["cpfs", "107"], ["pagina", "1"], ["encontrados", "100"]]));
}

#[tokio::test]
async fn every_call_is_audited_as_the_application_with_the_cpf_masked() {
    let app = spawn_app().await;
    let token = api_token(&app, "portal", "users:read,users:create").await;
    assert_eq!(post(&app, "/usuarios/", &token, &joana()).await.status(), 201);
    assert_eq!(post(&app, "/usuarios/", &token, &joana()).await.status(), 200);
    assert_eq!(get(&app, "/usuarios/52998224725/", Some(&token)).await.status(), 200);
    let rows: Vec<(String, String, String, String, String, Option<String>)> = sqlx::query_as(
        "SELECT actor_kind, actor, action, target, CAST(changes AS TEXT), request_id FROM audit_log \
         WHERE actor_kind = 'application' ORDER BY id",
    )
    .fetch_all(&app.db.pool)
    .await
    .expect("audit");
    let rows: Vec<(String, String, String, String, Value, Option<String>)> = rows
        .into_iter()
        .map(|(k, a, ac, t, c, r)| (k, a, ac, t, serde_json::from_str(&c).expect("changes are JSON"), r))
        .collect();
    let actions: Vec<&str> = rows.iter().map(|r| r.2.as_str()).collect();
    assert_eq!(actions, ["api.user_create", "api.user_existing", "api.user_read"]);
    for (kind, actor, _, target, changes, request_id) in &rows {
        assert_eq!((kind.as_str(), actor.as_str(), target.as_str()), ("application", "portal", JOANA_CPF));
        assert!(!changes.to_string().contains(JOANA_CPF), "{changes}");
        assert!(changes.to_string().contains("529.***.***-25"), "{changes}");
        assert!(request_id.is_some());
    }
    let issued = audited(&app, "client.api_token").await;
    assert_eq!(issued[0].2, json!([["api_permissions", "users:read,users:create"], ["api_token", "[definido]"]]));
    assert!(!issued[0].2.to_string().contains(&token[17..]));
}

#[tokio::test]
async fn a_pre_registered_account_cannot_log_in_and_is_claimed_at_sign_up() {
    let app = spawn_app_with(|s: &mut Settings| s.login.signup_enabled = Some(true)).await;
    let token = api_token(&app, "portal", "users:create").await;
    let (status, _) = status_and_json(post(&app, "/usuarios/", &token, &joana()).await).await;
    assert_eq!(status, 201);
    let id: i64 = sqlx::query_scalar("SELECT id FROM users WHERE cpf = $1")
        .bind(JOANA_CPF)
        .fetch_one(&app.db.pool)
        .await
        .expect("pre-registered");
    // No password works: a wrong-credentials answer, never a 500.
    for password in ["", "!", "x"] {
        let r = app.post_json("/api/token/pair/", &json!({"username": JOANA_CPF, "password": password})).await;
        assert!([400, 401].contains(&r.status().as_u16()), "{password:?}: {}", r.status());
    }
    let password = "ipê amarelo no cerrado";
    let sign_up = |email: &'static str, username: &'static str| {
        vec![
            ("cpf", "529.982.247-25"),
            ("nome", "Joana Silva Santos"),
            ("email", email),
            ("username", username),
            ("password", password),
            ("password_confirmacao", password),
        ]
    };
    // The CPF with another e-mail is taken.
    let mut browser = Browser::new(&app);
    let form = browser.get("/conta/cadastro/").await;
    let refused = browser
        .post("/conta/cadastro/", &with(hidden_fields(&form.body), &sign_up("outra@example.org", "joana")))
        .await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(refused.body.contains("Já existe uma conta com este CPF"), "{}", refused.body);
    // The same CPF and e-mail (any case) claim the account.
    let mut browser = Browser::new(&app);
    let form = browser.get("/conta/cadastro/").await;
    let claimed = browser
        .post("/conta/cadastro/", &with(hidden_fields(&form.body), &sign_up("JOANA@example.org", "joana")))
        .await;
    assert_eq!(claimed.status, 303, "{}", claimed.body);
    let (users, claimed_id, username, name, genero): (i64, i64, String, String, String) =
        sqlx::query_as("SELECT (SELECT count(*) FROM users), id, username, name, genero FROM users WHERE cpf = $1")
            .bind(JOANA_CPF)
            .fetch_one(&app.db.pool)
            .await
            .expect("claimed");
    assert_eq!(
        (users, claimed_id, username.as_str(), name.as_str(), genero.as_str()),
        (1, id, "joana", "Joana Silva Santos", "F")
    );
    let r = app.post_json("/api/token/pair/", &json!({"username": "joana", "password": password})).await;
    assert_eq!(r.status(), 200);
    // Claimed once: a second sign-up with the same values is refused.
    let mut browser = Browser::new(&app);
    let form = browser.get("/conta/cadastro/").await;
    let again = browser
        .post("/conta/cadastro/", &with(hidden_fields(&form.body), &sign_up("joana@example.org", "joana2")))
        .await;
    assert_eq!(again.status, 422);
}

fn credencial(db_url: &str, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_credencial"))
        .args(args)
        .env("DATABASE_URL", db_url)
        .env("USER", "operadora")
        .env("RUST_LOG", "warn")
        .output()
        .expect("binary runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_prints_a_new_api_token_as_its_last_line() {
    let app = spawn_app().await;
    register_client(&app, "demo-host", "").await;
    let url = app.db.url.clone();
    let out = credencial(
        &url,
        &["client", "update", "--client-id", "demo-host", "--rotate-api-token", "--api-permissions", "users:read"],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let token = stdout.lines().last().expect("a last line").trim().to_owned();
    assert!(stdout.contains("api_permissions: users:read"), "{stdout}");
    let (status, _) = status_and_json(get(&app, "/usuarios/11144477735/", Some(&token)).await).await;
    assert_eq!(status, 404, "the token is accepted");
    let (status, _) = status_and_json(post(&app, "/usuarios/", &token, &joana()).await).await;
    assert_eq!(status, 403, "users:create was not granted");
    let issued = audited(&app, "client.api_token").await;
    assert_eq!((issued[0].0.as_str(), issued[0].1.as_str()), ("operadora", "demo-host"));

    // A new token replaces the old one; permissions stay unless given.
    let out = credencial(&url, &["client", "update", "--client-id", "demo-host", "--rotate-api-token"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let newer = String::from_utf8_lossy(&out.stdout).lines().last().expect("line").trim().to_owned();
    assert_ne!(newer, token);
    assert_eq!(get(&app, "/usuarios/11144477735/", Some(&token)).await.status(), 403);
    assert_eq!(get(&app, "/usuarios/11144477735/", Some(&newer)).await.status(), 404);

    let bad = credencial(
        &url,
        &["client", "update", "--client-id", "demo-host", "--rotate-api-token", "--api-permissions", "users:write"],
    );
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("users:write"));
    let unknown = credencial(&url, &["client", "update", "--client-id", "nenhum", "--rotate-api-token"]);
    assert!(!unknown.status.success());
}

#[tokio::test]
async fn the_panel_issues_a_token_with_the_checked_permissions_and_shows_it_once() {
    let app = spawn_app().await;
    add_staff(&app).await;
    register_client(&app, "demo-host", "").await;
    let mut chefe = staff_browser(&app).await;
    let page = chefe.get("/admin/aplicativos/demo-host/api/").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("ainda não tem token"), "{}", page.body);
    let token = form_token(&page);
    // Issuing asks first, saying what the token may do.
    let asked = chefe
        .post(
            "/admin/aplicativos/demo-host/api/",
            &[("csrf_token".into(), token.clone()), ("users_read".into(), "1".into())],
        )
        .await;
    assert_eq!(asked.status, 200, "{}", asked.body);
    assert!(asked.body.contains("poderá consultar usuários pela API"), "{}", asked.body);
    assert!(!asked.body.contains("<code class=\"api-token\">"), "no token before the confirmation");
    let answer = chefe.post("/admin/aplicativos/demo-host/api/", &crate::helpers::hidden_fields(&asked.body)).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.headers["cache-control"], "no-store");
    let shown =
        answer.body.split("<code class=\"api-token\">").nth(1).and_then(|r| r.split('<').next()).expect("token shown");
    assert_eq!(get(&app, "/usuarios/11144477735/", Some(shown)).await.status(), 404);
    assert_eq!(post(&app, "/usuarios/", shown, &joana()).await.status(), 403);
    let again = chefe.get("/admin/aplicativos/demo-host/api/").await;
    assert!(!again.body.contains(shown), "shown once");
    assert!(again.body.contains("tem um token"), "{}", again.body);
    let issued = audited(&app, "client.api_token").await;
    assert_eq!((issued[0].0.as_str(), issued[0].1.as_str()), ("chefe", "demo-host"));
    assert_eq!(issued[0].2, json!([["api_permissions", "users:read"], ["api_token", "[definido]"]]));

    // Unknown application: 404 page; wrong token, cross-site: 403.
    assert_eq!(chefe.get("/admin/aplicativos/nenhum/api/").await.status, 404);
    let post_unknown = chefe.post("/admin/aplicativos/nenhum/api/", &[("csrf_token".into(), token.clone())]).await;
    assert_eq!(post_unknown.status, 404);
    let twice = [
        ("csrf_token".to_owned(), token.clone()),
        ("users_read".to_owned(), "1".to_owned()),
        ("users_read".to_owned(), "1".to_owned()),
    ];
    assert_eq!(chefe.post("/admin/aplicativos/demo-host/api/", &twice).await.status, 400);
    let forged = chefe.post("/admin/aplicativos/demo-host/api/", &[("csrf_token".into(), "forjado".into())]).await;
    assert_eq!(forged.status, 403);
    let request = chefe
        .client
        .post(format!("{}/admin/aplicativos/demo-host/api/", chefe.base))
        .header("sec-fetch-site", "cross-site")
        .form(&[("csrf_token", token.as_str())]);
    assert_eq!(chefe.send(request).await.status, 403);
    assert_eq!(audited(&app, "client.api_token").await.len(), 1, "no refused post issued a token");

    // Someone who is not staff.
    app.add_user("lia", "senha-da-lia-1", true).await;
    let mut lia = crate::account::signed_in_browser(&app, "lia", "senha-da-lia-1").await;
    assert_eq!(lia.get("/admin/aplicativos/demo-host/api/").await.status, 403);
    let lia_token = form_token(&lia.get("/conta/").await);
    let refused = lia.post("/admin/aplicativos/demo-host/api/", &[("csrf_token".into(), lia_token)]).await;
    assert_eq!(refused.status, 403);
}
