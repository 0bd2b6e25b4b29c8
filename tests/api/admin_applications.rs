//! The panel's applications pages (`/admin/aplicativos/`, issue 13 item 2)
//! and what their changes do to the protocol: `portal` and `spa` from the
//! OAuth2 tests, ana, and the staff user `chefe`.

use credencial_domain::federation::ReliabilityLevel;
use credencial_domain::oauth::ClientId;
use credencial_domain::DjangoPbkdf2;
use serde_json::Value;

use crate::account::{form_token, signed_in_browser};
use crate::admin::{add_staff, staff_browser};
use crate::consent::{exchange, redirected};
use crate::helpers::{hidden_fields, status_and_json, unescape_html, with, Browser, Page, TestApp};
use crate::oauth::{app, callback, consent_page, decide, portal_request, PORTAL_SECRET, PORTAL_URI};

const PORTAL_PAGE: &str = "/admin/aplicativos/portal/";

/// The app with portal, spa, ana and chefe; a browser signed in as chefe.
pub(crate) async fn panel() -> (TestApp, i64, Browser) {
    let (app, ana) = app().await;
    add_staff(&app).await;
    let browser = staff_browser(&app).await;
    (app, ana, browser)
}

/// Posts `fields` (and the session's form token) to `path` as chefe.
async fn staff_post(browser: &mut Browser, path: &str, fields: &[(&str, &str)]) -> Page {
    let page = browser.get(PORTAL_PAGE).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let mut form = vec![("csrf_token".to_owned(), form_token(&page)), ("confirmado".to_owned(), "sim".to_owned())];
    form.extend(fields.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    browser.post(path, &form).await
}

/// Ana approves `scope` for portal; her browser (consent remembered) and
/// the tokens of the first code.
async fn ana_tokens(app: &TestApp, scope: &str) -> (Browser, Value) {
    let mut browser = Browser::new(app);
    let consent = consent_page(&mut browser, &portal_request(scope, "s"), "ana", "ana-password").await;
    let location = decide(&mut browser, &consent, "approve").await;
    let code = callback(&location, PORTAL_URI).remove("code").expect("code");
    let (status, tokens) = exchange(app, &code).await;
    assert_eq!(status, 200, "{tokens}");
    (browser, tokens)
}

/// `POST /api/perfil/dados/` with `access`.
async fn profile(app: &TestApp, access: &Value) -> (u16, Value) {
    let r = app
        .client
        .post(format!("{}/api/perfil/dados/", app.address))
        .bearer_auth(access.as_str().expect("access token"))
        .send()
        .await
        .expect("sent");
    status_and_json(r).await
}

/// A refresh at `/oauth/token/` as portal with `secret`.
async fn refresh(app: &TestApp, secret: &str, refresh_token: &Value) -> (u16, Value) {
    let r = app
        .client
        .post(format!("{}/oauth/token/", app.address))
        .basic_auth("portal", Some(secret))
        .form(&[("grant_type", "refresh_token"), ("refresh_token", refresh_token.as_str().expect("refresh token"))])
        .send()
        .await
        .expect("sent");
    status_and_json(r).await
}

/// The secret shown on a secret page.
fn shown_secret(page: &Page) -> String {
    let (_, rest) = page.body.split_once("id=\"segredo\" value=\"").expect("the secret field");
    unescape_html(rest.split_once('"').expect("end").0)
}

async fn stored_client(app: &TestApp, id: &str) -> Option<(String, Vec<String>, Option<String>, bool, Vec<String>)> {
    let id = credencial_domain::oauth::ClientId::parse(id).expect("client id");
    app.db.storage().clients.find(&id).await.expect("query").map(|c| {
        let scopes = c.enabled_scopes.iter().map(|s| s.name().to_owned()).collect();
        (c.name, c.redirect_uris, c.secret_hash, c.is_active, scopes)
    })
}

async fn audit_count(app: &TestApp) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM audit_log").fetch_one(&app.db.pool).await.expect("count")
}

#[tokio::test]
async fn the_list_and_an_applications_page_show_what_is_registered() {
    let (_app, _, mut browser) = panel().await;
    let list = browser.get("/admin/aplicativos/").await;
    assert_eq!(list.status, 200, "{}", list.body);
    assert_eq!(list.headers["cache-control"], "no-store");
    let body = unescape_html(&list.body);
    for text in [
        "Portal do Servidor",
        "<code>portal</code>",
        "Confidencial",
        "Painel <SPA>",
        "Pública",
        "Exigido",
        "dados_publicos cpf email cnes formacao_academica",
        "Ativa",
    ] {
        assert!(body.contains(text), "{text}: {body}");
    }
    assert!(!list.body.contains("<SPA>"), "names are escaped");
    assert!(body.contains("/20"), "a creation date: {body}");

    let page = browser.get(PORTAL_PAGE).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("href=\"/admin/aplicativos/portal/api/\""), "{}", page.body);
    assert!(page.body.contains("Acesso à API de usuários"));
    // Required scopes are checked and cannot be unchecked; enabled ones are checked.
    assert!(page.body.contains("name=\"escopo_cpf\" value=\"1\" checked disabled"), "{}", page.body);
    assert!(page.body.contains("name=\"escopo_cnes\" value=\"1\" checked>"), "{}", page.body);
    assert!(page.body.contains("name=\"escopo_receita_federal\" value=\"1\">"), "{}", page.body);
    assert!(!page.body.contains("pbkdf2"), "never the hash");
}

#[tokio::test]
async fn registering_an_application_shows_its_secret_once_and_stores_only_a_hash() {
    let (app, _, mut browser) = panel().await;
    let form = browser.get("/admin/aplicativos/novo/").await;
    assert_eq!(form.status, 200, "{}", form.body);
    let token = form_token(&form);
    let fields = |id: &str, uris: &str| {
        vec![
            ("csrf_token".to_owned(), token.clone()),
            ("client_id".to_owned(), id.to_owned()),
            ("nome".to_owned(), "Intranet".to_owned()),
            ("redirect_uris".to_owned(), uris.to_owned()),
            ("tipo".to_owned(), "confidencial".to_owned()),
            ("escopo_cnes".to_owned(), "1".to_owned()),
            ("escopo_cpf".to_owned(), "1".to_owned()),
        ]
    };
    let created = browser
        .post("/admin/aplicativos/novo/", &fields("intranet", "https://a.example/cb\r\nhttps://b.example/cb"))
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.headers["cache-control"], "no-store");
    assert_eq!(created.location, None, "the secret is never in a URL");
    let secret = shown_secret(&created);
    assert_eq!(secret.len(), 43);
    let (name, uris, hash, active, scopes) = stored_client(&app, "intranet").await.expect("stored");
    assert_eq!((name.as_str(), active, scopes), ("Intranet", true, vec!["cnes".to_owned()]));
    assert_eq!(uris, ["https://a.example/cb", "https://b.example/cb"]);
    let hash = hash.expect("hash");
    assert!(!hash.contains(&secret));
    assert!(DjangoPbkdf2::parse(&hash).expect("format").verify(&secret));
    let page = browser.get("/admin/aplicativos/intranet/").await;
    assert!(!page.body.contains(&secret), "shown once only");

    // A taken id and a bad redirect URI: field errors, nothing stored.
    let before = audit_count(&app).await;
    let taken = browser.post("/admin/aplicativos/novo/", &fields("intranet", "https://c.example/cb")).await;
    assert_eq!(taken.status, 409, "{}", taken.body);
    assert!(taken.body.contains("Já existe uma aplicação com este identificador"), "{}", taken.body);
    let bad = browser.post("/admin/aplicativos/novo/", &fields("outra", "http://evil.example/cb")).await;
    assert_eq!(bad.status, 422, "{}", bad.body);
    assert!(bad.body.contains("id=\"erro-redirect_uris\""), "{}", bad.body);
    assert!(unescape_html(&bad.body).contains("http://evil.example/cb"), "what was typed stays");
    let bad_id = browser.post("/admin/aplicativos/novo/", &fields("com espaço", "https://c.example/cb")).await;
    assert_eq!(bad_id.status, 422);
    assert!(bad_id.body.contains("id=\"erro-client_id\""), "{}", bad_id.body);
    assert!(stored_client(&app, "outra").await.is_none());
    assert_eq!(audit_count(&app).await, before, "nothing recorded either");

    // A public application has no secret: straight to its page.
    let mut public = fields("movel", "http://127.0.0.1:9000/cb");
    public.retain(|(k, _)| k != "tipo");
    public.push(("tipo".into(), "publica".into()));
    let answer = browser.post("/admin/aplicativos/novo/", &public).await;
    assert_eq!((answer.status, answer.location.as_deref()), (303, Some("/admin/aplicativos/movel/?aviso=criada")));
    let (_, _, hash, _, _) = stored_client(&app, "movel").await.expect("stored");
    assert_eq!(hash, None);
}

#[tokio::test]
async fn a_deactivated_application_is_refused_everywhere_at_once_and_works_again_when_reactivated() {
    let (app, _, mut staff) = panel().await;
    let (mut ana, tokens) = ana_tokens(&app, "formacao_academica").await;
    // A second code, issued before the deactivation and not yet redeemed.
    let pending = redirected(&mut ana, &portal_request("formacao_academica", "again")).await;
    assert_eq!(profile(&app, &tokens["access_token"]).await.0, 200);

    let off = staff_post(&mut staff, "/admin/aplicativos/portal/ativacao/", &[("ativo", "0")]).await;
    assert_eq!((off.status, off.location.as_deref()), (303, Some("/admin/aplicativos/portal/?aviso=desativada")));
    let page = staff.get("/admin/aplicativos/portal/?aviso=desativada").await;
    assert!(page.body.contains("Desativada") && page.body.contains("Reativar aplicação"), "{}", page.body);

    let authorize = ana.get(&portal_request("formacao_academica", "off")).await;
    assert_eq!((authorize.status, authorize.location.as_deref()), (400, None), "{}", authorize.body);
    let (status, body) = exchange(&app, &pending["code"]).await;
    assert_eq!((status, body["error"].as_str()), (401, Some("invalid_client")), "{body}");
    let (status, body) = refresh(&app, PORTAL_SECRET, &tokens["refresh_token"]).await;
    assert_eq!((status, body["error"].as_str()), (401, Some("invalid_client")), "{body}");
    let (status, body) = profile(&app, &tokens["access_token"]).await;
    assert_eq!((status, body["code"].as_str()), (401, Some("token_not_valid")), "a token issued before: {body}");

    let on = staff_post(&mut staff, "/admin/aplicativos/portal/ativacao/", &[("ativo", "1")]).await;
    assert_eq!(on.status, 303, "{}", on.body);
    assert_eq!(profile(&app, &tokens["access_token"]).await.0, 200);
    let (status, body) = exchange(&app, &pending["code"]).await;
    assert_eq!(status, 200, "the pending code still works: {body}");
    let (status, body) = refresh(&app, PORTAL_SECRET, &body["refresh_token"]).await;
    assert_eq!(status, 200, "{body}");
    let again = redirected(&mut ana, &portal_request("formacao_academica", "on")).await;
    assert_eq!(again["state"], "on");
}

#[tokio::test]
async fn a_disabled_scope_is_gone_from_the_next_profile_read() {
    let (app, _, mut staff) = panel().await;
    let (_, tokens) = ana_tokens(&app, "formacao_academica").await;
    let (status, before) = profile(&app, &tokens["access_token"]).await;
    assert_eq!(status, 200, "{before}");
    assert!(before.get("formacao_academica").is_some(), "{before}");

    let saved = staff_post(&mut staff, "/admin/aplicativos/portal/escopos/", &[("escopo_cnes", "1")]).await;
    assert_eq!((saved.status, saved.location.as_deref()), (303, Some("/admin/aplicativos/portal/?aviso=escopos")));
    let (_, _, _, _, scopes) = stored_client(&app, "portal").await.expect("stored");
    assert_eq!(scopes, ["cnes"]);
    let (status, after) = profile(&app, &tokens["access_token"]).await;
    assert_eq!(status, 200, "{after}");
    assert!(after.get("formacao_academica").is_none(), "{after}");
    assert!(after.get("cpf").is_some(), "the required scopes stay");
}

#[tokio::test]
async fn a_rotated_secret_replaces_the_old_one_at_once() {
    let (app, _, mut staff) = panel().await;
    let (_, tokens) = ana_tokens(&app, "").await;
    let rotated = staff_post(&mut staff, "/admin/aplicativos/portal/segredo/", &[]).await;
    assert_eq!(rotated.status, 200, "{}", rotated.body);
    assert_eq!(rotated.headers["cache-control"], "no-store");
    let secret = shown_secret(&rotated);
    let (status, body) = refresh(&app, PORTAL_SECRET, &tokens["refresh_token"]).await;
    assert_eq!((status, body["error"].as_str()), (401, Some("invalid_client")), "the old secret: {body}");
    let (status, body) = refresh(&app, &secret, &tokens["refresh_token"]).await;
    assert_eq!(status, 200, "the new secret: {body}");
    // A public application has no secret to rotate.
    let spa = staff_post(&mut staff, "/admin/aplicativos/spa/segredo/", &[]).await;
    assert_eq!(spa.status, 400, "{}", spa.body);
}

#[tokio::test]
async fn a_deactivated_persons_access_token_is_refused_at_the_profile_read() {
    let (app, ana, _) = panel().await;
    let (_, tokens) = ana_tokens(&app, "").await;
    assert_eq!(profile(&app, &tokens["access_token"]).await.0, 200);
    sqlx::query("UPDATE users SET is_active = false WHERE id = $1").bind(ana).execute(&app.db.pool).await.expect("off");
    let (status, body) = profile(&app, &tokens["access_token"]).await;
    assert_eq!(status, 401, "{body}");
}

#[tokio::test]
async fn name_redirect_uris_and_pkce_are_edited_and_a_bad_field_changes_nothing() {
    let (app, _, mut staff) = panel().await;
    let uris = "https://portal.example.gov.br/callback\nhttps://portal.example.gov.br/outro";
    let saved =
        staff_post(&mut staff, "/admin/aplicativos/portal/dados/", &[("nome", "Portal novo"), ("redirect_uris", uris)])
            .await;
    assert_eq!((saved.status, saved.location.as_deref()), (303, Some("/admin/aplicativos/portal/?aviso=dados")));
    let (name, stored_uris, ..) = stored_client(&app, "portal").await.expect("stored");
    assert_eq!(name, "Portal novo");
    assert_eq!(stored_uris, ["https://portal.example.gov.br/callback", "https://portal.example.gov.br/outro"]);

    let before = stored_client(&app, "portal").await;
    let entries = audit_count(&app).await;
    for (fields, error_id) in [
        (
            vec![("nome", "Outro"), ("redirect_uris", "https://ok.example/cb\nhttps://x.example/#frag")],
            "erro-redirect_uris",
        ),
        (vec![("nome", "   "), ("redirect_uris", uris)], "erro-nome"),
        (vec![("redirect_uris", uris)], "erro-nome"),
        (vec![("nome", "Outro"), ("redirect_uris", "  ")], "erro-redirect_uris"),
    ] {
        let refused = staff_post(&mut staff, "/admin/aplicativos/portal/dados/", &fields).await;
        assert_eq!(refused.status, 422, "{fields:?}: {}", refused.body);
        assert!(refused.body.contains(&format!("id=\"{error_id}\"")), "{fields:?}: {}", refused.body);
        assert!(refused.body.contains("aria-invalid=\"true\""));
    }
    assert_eq!(stored_client(&app, "portal").await, before, "nothing changed");
    assert_eq!(audit_count(&app).await, entries, "nothing recorded");

    let pkce = staff_post(&mut staff, "/admin/aplicativos/portal/pkce/", &[("require_pkce", "1")]).await;
    assert_eq!(pkce.status, 303);
    let page = staff.get(PORTAL_PAGE).await;
    assert!(page.body.contains("<dt>PKCE</dt><dd>Exigido</dd>"), "{}", page.body);
}

#[tokio::test]
async fn the_audit_page_shows_each_action_and_never_a_secret() {
    let (app, _, mut staff) = panel().await;
    let base = "/admin/aplicativos/portal";
    staff_post(&mut staff, &format!("{base}/dados/"), &[("nome", "Portal 2"), ("redirect_uris", PORTAL_URI)]).await;
    staff_post(&mut staff, &format!("{base}/escopos/"), &[("escopo_cursos_cdp", "1")]).await;
    let rotated = staff_post(&mut staff, &format!("{base}/segredo/"), &[]).await;
    let secret = shown_secret(&rotated);
    staff_post(&mut staff, &format!("{base}/ativacao/"), &[("ativo", "0")]).await;
    staff_post(&mut staff, &format!("{base}/ativacao/"), &[("ativo", "1")]).await;
    let trail = staff.get("/admin/auditoria/?alvo=portal").await;
    assert_eq!(trail.status, 200);
    let body = unescape_html(&trail.body);
    for label in [
        "Aplicação alterada",
        "Escopos da aplicação alterados",
        "Segredo da aplicação trocado",
        "Aplicação desativada",
        "Aplicação reativada",
    ] {
        assert!(body.contains(label), "{label}: {body}");
    }
    assert!(body.contains("Nome: Portal 2") && body.contains("Escopos habilitados: cursos_cdp"), "{body}");
    assert!(body.contains("Segredo: [definido]") && body.contains("Ativa: não"), "{body}");
    assert!(body.contains("chefe"), "who");
    assert!(!body.contains(&secret), "never the secret");
    let request_ids: i64 = sqlx::query_scalar("SELECT count(*) FROM audit_log WHERE request_id IS NOT NULL")
        .fetch_one(&app.db.pool)
        .await
        .expect("count");
    assert_eq!(request_ids, 5, "each panel change carries its request id");
}

#[tokio::test]
async fn the_pages_refuse_non_staff_foreign_posts_wrong_tokens_and_unknown_applications() {
    let (app, _, mut staff) = panel().await;
    let entries = audit_count(&app).await;
    app.add_user("lia", "senha-da-lia-1", true).await;
    let mut lia = signed_in_browser(&app, "lia", "senha-da-lia-1").await;
    for path in ["/admin/aplicativos/", "/admin/aplicativos/novo/", PORTAL_PAGE] {
        assert_eq!(lia.get(path).await.status, 403, "{path}");
    }
    let lia_token = form_token(&lia.get("/conta/").await);
    let off = vec![("csrf_token".to_owned(), lia_token), ("ativo".to_owned(), "0".to_owned())];
    assert_eq!(lia.post("/admin/aplicativos/portal/ativacao/", &off).await.status, 403);

    let page = staff.get(PORTAL_PAGE).await;
    let token = form_token(&page);
    let request = staff
        .client
        .post(format!("{}/admin/aplicativos/portal/ativacao/", app.address))
        .header("sec-fetch-site", "cross-site")
        .form(&[("csrf_token", token.as_str()), ("ativo", "0")]);
    assert_eq!(staff.send(request).await.status, 403, "a post from another site");
    let wrong = vec![("csrf_token".to_owned(), "not-the-token".to_owned()), ("ativo".to_owned(), "0".to_owned())];
    assert_eq!(staff.post("/admin/aplicativos/portal/ativacao/", &wrong).await.status, 403);
    let bad = staff_post(&mut staff, "/admin/aplicativos/portal/ativacao/", &[("ativo", "talvez")]).await;
    assert_eq!(bad.status, 400);

    let unknown = staff.get("/admin/aplicativos/nobody/").await;
    assert_eq!(unknown.status, 404, "{}", unknown.body);
    assert!(unknown.body.contains("Aplicação não encontrada"), "{}", unknown.body);
    assert_eq!(staff.get("/admin/aplicativos/com%20espaco/").await.status, 404);
    let posted = staff_post(&mut staff, "/admin/aplicativos/nobody/ativacao/", &[("ativo", "0")]).await;
    assert_eq!(posted.status, 404);
    let rotated = staff_post(&mut staff, "/admin/aplicativos/nobody/segredo/", &[]).await;
    assert_eq!(rotated.status, 404);

    let (.., active, _) = stored_client(&app, "portal").await.expect("stored");
    assert!(active, "nothing changed");
    assert_eq!(audit_count(&app).await, entries, "nothing recorded");
    // Without a session: the login form.
    let anonymous = Browser::new(&app).get("/admin/aplicativos/").await;
    assert_eq!(anonymous.status, 303);
}

#[tokio::test]
async fn a_database_failure_is_a_503_page_and_never_a_500() {
    // PostgreSQL's by nature, in both test binaries (tests/api/database.rs).
    crate::database::on_postgres(async {
        let (app, _, mut staff) = panel().await;
        let token = form_token(&staff.get(PORTAL_PAGE).await);
        app.db.drop_now().await;
        let off = vec![("csrf_token".to_owned(), token), ("ativo".to_owned(), "0".to_owned())];
        for answer in [
            staff.get("/admin/aplicativos/").await,
            staff.get(PORTAL_PAGE).await,
            staff.post("/admin/aplicativos/portal/ativacao/", &off).await,
        ] {
            assert_eq!(answer.status, 503, "{}", answer.body);
            assert!(answer.body.contains("Serviço indisponível"), "{}", answer.body);
        }
    })
    .await
}

#[tokio::test]
async fn post_logout_redirect_uris_are_edited_with_the_details_and_a_bad_one_changes_nothing() {
    let (app, _, mut staff) = panel().await;
    let page = staff.get(PORTAL_PAGE).await;
    assert!(page.body.contains("<label for=\"post_logout_redirect_uris\">"), "{}", page.body);
    let fields = [
        ("nome", "Portal do Servidor"),
        ("redirect_uris", PORTAL_URI),
        ("post_logout_redirect_uris", "https://portal.example.gov.br/saiu\n\nhttp://127.0.0.1:9/fim"),
    ];
    let saved = staff_post(&mut staff, "/admin/aplicativos/portal/dados/", &fields).await;
    assert_eq!(saved.status, 303, "{}", saved.body);
    let registered = |app: &crate::helpers::TestApp| {
        let clients = app.db.storage().clients;
        async move {
            let id = credencial_domain::oauth::ClientId::parse("portal").expect("id");
            clients.find(&id).await.expect("find").expect("portal").post_logout_redirect_uris
        }
    };
    assert_eq!(registered(&app).await, ["https://portal.example.gov.br/saiu", "http://127.0.0.1:9/fim"]);
    let page = staff.get(PORTAL_PAGE).await;
    assert!(
        page.body.contains("https://portal.example.gov.br/saiu\nhttp://127.0.0.1:9/fim</textarea>"),
        "{}",
        page.body
    );

    let entries = audit_count(&app).await;
    let bad =
        [("nome", "Portal"), ("redirect_uris", PORTAL_URI), ("post_logout_redirect_uris", "http://evil.example/")];
    let refused = staff_post(&mut staff, "/admin/aplicativos/portal/dados/", &bad).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(refused.body.contains("id=\"erro-post_logout_redirect_uris\""), "{}", refused.body);
    assert!(refused.body.contains("http://evil.example/</textarea>"), "what was typed stays");
    assert_eq!(audit_count(&app).await, entries, "nothing recorded");
    assert_eq!(registered(&app).await.len(), 2, "nothing changed");

    // Emptying the field removes them all.
    let empty = [("nome", "Portal"), ("redirect_uris", PORTAL_URI), ("post_logout_redirect_uris", "")];
    assert_eq!(staff_post(&mut staff, "/admin/aplicativos/portal/dados/", &empty).await.status, 303);
    assert!(registered(&app).await.is_empty());
}

#[tokio::test]
async fn a_minimum_govbr_level_is_chosen_shown_audited_and_asked_at_the_next_authorization() {
    let (app, _, mut staff) = panel().await;
    let level_of = |app: &TestApp| {
        let clients = app.db.storage().clients;
        async move {
            let id = ClientId::parse("portal").expect("id");
            clients.find(&id).await.expect("find").expect("portal").minimum_govbr_level
        }
    };
    let page = staff.get(PORTAL_PAGE).await;
    assert!(page.body.contains("<dt>Nível mínimo da conta gov.br</dt><dd>Nenhum</dd>"), "{}", page.body);
    assert!(page.body.contains(r#"<option value="nenhum" selected>Nenhum</option>"#), "{}", page.body);
    for option in [r#"<option value="bronze">Bronze</option>"#, r#"<option value="ouro">Ouro</option>"#] {
        assert!(page.body.contains(option), "{option}: {}", page.body);
    }
    assert!(page.body.contains("Este serviço não oferece a entrada com gov.br"), "the test app has no gov.br");

    let path = "/admin/aplicativos/portal/nivel-govbr/";
    let saved = staff_post(&mut staff, path, &[("minimum_govbr_level", "prata")]).await;
    assert_eq!((saved.status, saved.location.as_deref()), (303, Some("/admin/aplicativos/portal/?aviso=nivel-govbr")));
    let after = staff.get(saved.location.as_deref().expect("back")).await;
    assert!(after.body.contains("Nível mínimo da conta gov.br salvo"), "{}", after.body);
    assert!(after.body.contains("<dt>Nível mínimo da conta gov.br</dt><dd>Prata</dd>"), "{}", after.body);
    assert!(after.body.contains(r#"<option value="prata" selected>Prata</option>"#), "{}", after.body);
    assert_eq!(level_of(&app).await, Some(ReliabilityLevel::Prata));

    // A value the form does not send changes nothing.
    let entries = audit_count(&app).await;
    let refusals = [
        &[("minimum_govbr_level", "platina")][..],
        &[("minimum_govbr_level", "Prata")],
        &[("minimum_govbr_level", "")],
        &[],
    ];
    for fields in refusals {
        let refused = staff_post(&mut staff, path, fields).await;
        assert_eq!(refused.status, 400, "{fields:?}: {}", refused.body);
    }
    assert_eq!(level_of(&app).await, Some(ReliabilityLevel::Prata), "nothing changed");
    assert_eq!(audit_count(&app).await, entries, "nothing recorded");

    // ana's password login is no gov.br login at prata, and this service
    // offers none: a page that says so instead of a consent.
    let mut ana = Browser::new(&app);
    let login = ana.get(&portal_request("", "n1")).await;
    let fields = with(hidden_fields(&login.body), &[("username", "ana"), ("password", "ana-password")]);
    let back = ana.post("/oauth/authorize/", &fields).await.location.expect("back to the request");
    let refused = ana.get(&back).await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert!(refused.body.contains("nível prata") && refused.body.contains("não oferece a entrada com gov.br"));

    let none = staff_post(&mut staff, path, &[("minimum_govbr_level", "nenhum")]).await;
    assert_eq!(none.status, 303, "{}", none.body);
    assert_eq!(level_of(&app).await, None);
    let consent = ana.get(&back).await;
    assert!(consent.body.contains("Autorizar acesso"), "{}", consent.body);
    let trail = unescape_html(&staff.get("/admin/auditoria/?alvo=portal").await.body);
    assert!(
        trail.contains("Nível mínimo da conta gov.br: prata") && trail.contains("Nível mínimo da conta gov.br: nenhum"),
        "{trail}"
    );
}

#[tokio::test]
async fn the_back_channel_logout_uri_is_edited_with_the_details_audited_and_a_bad_one_changes_nothing() {
    let (app, _, mut staff) = panel().await;
    let page = staff.get(PORTAL_PAGE).await;
    assert!(page.body.contains("<label for=\"backchannel_logout_uri\">"), "{}", page.body);
    let listening = |app: &TestApp| {
        let clients = app.db.storage().clients;
        async move {
            let id = credencial_domain::oauth::ClientId::parse("portal").expect("id");
            clients.find(&id).await.expect("find").expect("portal").backchannel_logout_uri
        }
    };
    let with = |uri: &'static str| [("nome", "Portal"), ("redirect_uris", PORTAL_URI), ("backchannel_logout_uri", uri)];
    let saved =
        staff_post(&mut staff, "/admin/aplicativos/portal/dados/", &with("https://portal.example.gov.br/bcl")).await;
    assert_eq!(saved.status, 303, "{}", saved.body);
    assert_eq!(listening(&app).await.as_deref(), Some("https://portal.example.gov.br/bcl"));
    let page = staff.get(PORTAL_PAGE).await;
    assert!(page.body.contains("value=\"https://portal.example.gov.br/bcl\""), "{}", page.body);
    let audit = staff.get("/admin/auditoria/").await;
    assert!(audit.body.contains("https://portal.example.gov.br/bcl"), "{}", audit.body);

    let entries = audit_count(&app).await;
    for bad in ["http://portal.example.gov.br/bcl", "https://portal.example.gov.br/bcl#fim", "bcl"] {
        let refused = staff_post(&mut staff, "/admin/aplicativos/portal/dados/", &with(bad)).await;
        assert_eq!(refused.status, 422, "{bad}: {}", refused.body);
        assert!(refused.body.contains("id=\"erro-backchannel_logout_uri\""), "{}", refused.body);
    }
    assert_eq!(audit_count(&app).await, entries, "nothing recorded");
    assert_eq!(listening(&app).await.as_deref(), Some("https://portal.example.gov.br/bcl"), "nothing changed");

    // A form without the field leaves it; an empty field removes it.
    let without = [("nome", "Portal"), ("redirect_uris", PORTAL_URI)];
    assert_eq!(staff_post(&mut staff, "/admin/aplicativos/portal/dados/", &without).await.status, 303);
    assert!(listening(&app).await.is_some());
    assert_eq!(staff_post(&mut staff, "/admin/aplicativos/portal/dados/", &with("")).await.status, 303);
    assert_eq!(listening(&app).await, None);
}
