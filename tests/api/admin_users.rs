//! Accounts in the administration panel (`/admin/usuarios/`): the search,
//! one account's page, and each action with its effect on the protocol
//! (login forms, token pair, consume routes, refresh, profile read) and its
//! line in the audit trail; the refusals every panel POST has.

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::account::{form_token, log_in_at_account, signed_in_browser};
use crate::admin::{add_staff, staff_browser};
use crate::helpers::{spawn_app, status_and_json, unescape_html, Browser, Page, TestApp};

const PASSWORD: &str = "senha-do-bruno-1";

/// `app` with the staff user `chefe` and `bruno` (CPF 111.444.777-35);
/// returns bruno's id.
pub(crate) async fn with_bruno(app: &TestApp) -> i64 {
    add_staff(app).await;
    let id = app.add_user("bruno", PASSWORD, true).await;
    sqlx::query("UPDATE users SET cpf = '11144477735' WHERE id = $1")
        .bind(id)
        .execute(&app.db.pool)
        .await
        .expect("cpf");
    id
}

/// Posts the action `acao` on account `id`'s page with the page's form token.
async fn act(browser: &mut Browser, id: i64, acao: &str) -> Page {
    let path = format!("/admin/usuarios/{id}/");
    let page = browser.get(&path).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let token = form_token(&page);
    let fields = [("csrf_token".into(), token), ("acao".into(), acao.into()), ("confirmado".into(), "sim".into())];
    browser.post(&path, &fields).await
}

/// Posts `acao` and expects the 303 back to the account's page with the
/// notice; returns the page.
async fn act_ok(browser: &mut Browser, id: i64, acao: &str) -> Page {
    let answer = act(browser, id, acao).await;
    assert_eq!(answer.status, 303, "{acao}: {}", answer.body);
    let location = answer.location.expect("Location");
    assert_eq!(location, format!("/admin/usuarios/{id}/?feito={acao}"));
    browser.get(&location).await
}

async fn pair(app: &TestApp, username: &str, password: &str) -> (u16, serde_json::Value) {
    status_and_json(app.post_json("/api/token/pair/", &json!({"username": username, "password": password})).await).await
}

async fn flag(app: &TestApp, column: &str, id: i64) -> bool {
    let crate::database::Flag(flag) = sqlx::query_scalar(&format!("SELECT {column} FROM users WHERE id = $1"))
        .bind(id)
        .fetch_one(&app.db.pool)
        .await
        .expect("flag");
    flag
}

#[tokio::test]
async fn the_search_finds_accounts_by_each_key_masks_cpfs_and_pages() {
    let app = spawn_app().await;
    with_bruno(&app).await;
    app.add_user("ana", "senha-da-ana-1", true).await;
    let mut browser = staff_browser(&app).await;
    for (typed, found) in [
        ("brU", "bruno"),
        ("full%20BRUNO", "bruno"),
        ("bruno%40example.gov.br", "bruno"),
        ("111.444.777-35", "bruno"),
        ("11144477735", "bruno"),
        ("ana", "ana"),
    ] {
        let page = browser.get(&format!("/admin/usuarios/?q={typed}")).await;
        assert_eq!(page.status, 200, "{typed}: {}", page.body);
        assert!(page.body.contains(&format!(">{found}</a>")), "{typed}: {}", page.body);
        let other = if found == "ana" { ">bruno</a>" } else { ">ana</a>" };
        assert!(!page.body.contains(other), "{typed}: {}", page.body);
        assert_eq!(page.headers["cache-control"], "no-store");
    }
    let bruno = browser.get("/admin/usuarios/?q=bruno").await;
    assert!(bruno.body.contains("111.***.***-35") && !bruno.body.contains("11144477735"), "{}", bruno.body);
    let none = browser.get("/admin/usuarios/?q=ninguem&depois=xyz").await;
    assert!(none.status == 200 && none.body.contains("Nenhuma conta encontrada"), "{}", none.body);

    for i in 0..21 {
        app.add_user(&format!("pessoa{i:02}"), "senha-qualquer-1", true).await;
    }
    let first = browser.get("/admin/usuarios/?q=pessoa").await;
    assert!(first.body.contains("<caption>21 contas</caption>"), "{}", first.body);
    // The place after pessoa19 (the term it was found by and its id).
    let next = first.body.split("href=\"/admin/usuarios/?q=pessoa&#38;depois=").nth(1).expect("a next page");
    let (next, rest) = next.split_once('"').expect("link");
    assert!(rest.starts_with(" rel=\"next\">Próxima página") && next.starts_with("pessoa19"), "{}", first.body);
    assert!(!first.body.contains("rel=\"first\""), "the first page: {}", first.body);
    assert!(first.body.contains(">pessoa19</a>") && !first.body.contains(">pessoa20</a>"), "20 a page");
    let second = browser.get(&format!("/admin/usuarios/?q=pessoa&depois={next}")).await;
    assert!(second.body.contains(">pessoa20</a>") && !second.body.contains(">pessoa19</a>"), "{}", second.body);
    assert!(second.body.contains("21 contas, continuação da lista"), "{}", second.body);
    assert!(second.body.contains("href=\"/admin/usuarios/?q=pessoa\" rel=\"first\""), "{}", second.body);
    assert!(!second.body.contains("rel=\"next\""), "the last page: {}", second.body);
    // Every account, by key too.
    let everyone = browser.get("/admin/usuarios/?depois=pessoa05").await;
    assert!(everyone.body.contains(">pessoa06</a>") && !everyone.body.contains(">pessoa05</a>"), "{}", everyone.body);
}

#[tokio::test]
async fn an_unknown_or_malformed_account_is_the_404_page() {
    let app = spawn_app().await;
    let bruno = with_bruno(&app).await;
    let mut browser = staff_browser(&app).await;
    for path in [
        "/admin/usuarios/99999/",
        "/admin/usuarios/abc/",
        "/admin/usuarios/-1/",
        "/admin/usuarios/99999999999999999999/",
    ] {
        let page = browser.get(path).await;
        assert_eq!(page.status, 404, "{path}: {}", page.body);
        assert!(page.body.contains("Esta conta não existe."), "{}", page.body);
    }
    let token = form_token(&browser.get(&format!("/admin/usuarios/{bruno}/")).await);
    let post = browser
        .post("/admin/usuarios/99999/", &[("csrf_token".into(), token), ("acao".into(), "desativar".into())])
        .await;
    assert_eq!(post.status, 404, "{}", post.body);
}

#[tokio::test]
async fn the_account_page_shows_own_data_masked_validation_applications_and_last_logins() {
    let app = spawn_app().await;
    let bruno = with_bruno(&app).await;
    pair(&app, "bruno", PASSWORD).await;
    signed_in_browser(&app, "bruno", PASSWORD).await;
    let mut browser = staff_browser(&app).await;
    let page = browser.get(&format!("/admin/usuarios/{bruno}/")).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let body = unescape_html(&page.body);
    for expected in
        ["Full bruno", "bruno@example.gov.br", "111.***.***-35", "Não validado", "Nenhum aplicativo autorizado"]
    {
        assert!(body.contains(expected), "{expected}: {body}");
    }
    assert!(!body.contains("11144477735"), "the CPF is masked");
    assert!(
        body.contains("API de tokens (/api/token/pair/)") && body.contains("Minha conta (/conta/entrar/)"),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deactivation_ends_every_way_in_at_once_and_a_reactivation_restores_the_login() {
    let app = spawn_app().await;
    let bruno = with_bruno(&app).await;
    Mock::given(method("GET"))
        .and(path("/api/rh/eu/"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"nome_usual": "Bruno"})))
        .mount(&app.upstream)
        .await;
    let (access, refresh) = app.login("bruno", PASSWORD).await;
    let consume = |route: &'static str| {
        let request = app.client.get(format!("{}{route}", app.address)).bearer_auth(&access);
        async move { request.send().await.expect("sent").status().as_u16() }
    };
    for route in ["/api/token/rh/eu/", "/api/token/user-info/"] {
        assert_eq!(consume(route).await, 200, "{route} before");
    }
    let mut own_browser = signed_in_browser(&app, "bruno", PASSWORD).await;
    assert_eq!(own_browser.get("/conta/").await.status, 200);

    let mut staff = staff_browser(&app).await;
    let page = act_ok(&mut staff, bruno, "desativar").await;
    assert!(page.body.contains("Conta desativada.") && page.body.contains("Reativar a conta"), "{}", page.body);
    assert!(!flag(&app, "is_active", bruno).await);

    // The access token is still unexpired: refused anyway, at once.
    for route in ["/api/token/rh/eu/", "/api/token/user-info/"] {
        assert_eq!(consume(route).await, 401, "{route} after");
    }
    let (status, body) =
        status_and_json(app.post_json("/api/token/refresh/", &json!({"refresh": refresh})).await).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(pair(&app, "bruno", PASSWORD).await.0, 401);
    let login = log_in_at_account(&mut Browser::new(&app), "/conta/", "bruno", PASSWORD).await;
    assert_eq!(login.status, 200, "{}", login.body);
    assert!(unescape_html(&login.body).contains("Se a sua conta foi desativada, procure a equipe"), "{}", login.body);
    assert!(!login.set_cookies.iter().any(|c| c.starts_with("credencial_session=")));
    let ended = own_browser.get("/conta/").await;
    assert_eq!(ended.status, 303, "the open web session is over");

    act_ok(&mut staff, bruno, "reativar").await;
    assert_eq!(pair(&app, "bruno", PASSWORD).await.0, 200);
    let audit = staff.get("/admin/auditoria/?alvo=bruno").await;
    assert!(audit.body.contains("Conta desativada") && audit.body.contains("Conta reativada"), "{}", audit.body);
    assert!(audit.body.contains("chefe") && audit.body.contains("Ativa: não"), "{}", audit.body);
}

/// The password on the page that shows a temporary one.
fn shown_password(page: &Page) -> String {
    let start = page.body.find("<p class=\"secret\"><code>").expect("the password is shown") + 24;
    let end = start + page.body[start..].find("</code>").expect("end");
    page.body[start..end].to_owned()
}

#[tokio::test]
async fn a_temporary_password_is_shown_once_and_must_be_changed_at_the_next_login() {
    let app = spawn_app().await;
    let bruno = with_bruno(&app).await;
    crate::oauth::register_clients(&app).await;
    let (_, refresh) = app.login("bruno", PASSWORD).await;
    let mut staff = staff_browser(&app).await;
    let shown = act(&mut staff, bruno, "senha-temporaria").await;
    assert_eq!(shown.status, 200, "{}", shown.body);
    assert_eq!(shown.headers["cache-control"], "no-store");
    let temporary = shown_password(&shown);
    assert_eq!(temporary.len(), 19, "{temporary}");
    let again = staff.get(&format!("/admin/usuarios/{bruno}/")).await;
    assert!(!again.body.contains(&temporary), "shown once only");
    assert!(again.body.contains("Temporária: deve ser trocada"), "{}", again.body);

    assert_eq!(pair(&app, "bruno", PASSWORD).await.0, 401, "the old password is over");
    let (status, _) = status_and_json(app.post_json("/api/token/refresh/", &json!({"refresh": refresh})).await).await;
    assert_eq!(status, 401, "refresh tokens are revoked");
    let (status, body) = pair(&app, "bruno", &temporary).await;
    assert_eq!((status, body["code"].as_str()), (401, Some("password_change_required")), "{body}");
    assert!(body["detail"].as_str().is_some_and(|d| d.contains("/conta/senha/")), "{body}");

    let mut browser = Browser::new(&app);
    let login = log_in_at_account(&mut browser, "/conta/", "bruno", &temporary).await;
    assert_eq!((login.status, login.location.as_deref()), (303, Some("/conta/senha/?trocar=1")), "{}", login.body);
    for path in ["/conta/", "/conta/aplicativos/", "/admin/", &crate::oauth::portal_request("cpf", "s")] {
        let page = browser.get(path).await;
        assert_eq!((page.status, page.location.as_deref()), (303, Some("/conta/senha/?trocar=1")), "{path}");
    }
    let silent = browser.get(&format!("{}&prompt=none", crate::oauth::portal_request("cpf", "s"))).await;
    assert_eq!(silent.status, 302, "prompt=none answers the client: {}", silent.body);
    assert!(silent.location.as_deref().is_some_and(|l| l.contains("error=login_required")), "{:?}", silent.location);
    let form = browser.get("/conta/senha/?trocar=1").await;
    assert_eq!(form.status, 200, "{}", form.body);
    assert!(unescape_html(&form.body).contains("é temporária"), "{}", form.body);
    let fields = vec![
        ("csrf_token".to_owned(), form_token(&form)),
        ("password_atual".to_owned(), temporary.clone()),
        ("password".to_owned(), "minha-senha-nova-1".to_owned()),
        ("password_confirmacao".to_owned(), "minha-senha-nova-1".to_owned()),
    ];
    let changed = browser.post("/conta/senha/", &fields).await;
    assert_eq!(changed.status, 303, "{}", changed.body);
    assert_eq!(browser.get("/conta/").await.status, 200, "free again");
    assert!(!flag(&app, "must_change_password", bruno).await);
    assert_eq!(pair(&app, "bruno", "minha-senha-nova-1").await.0, 200);

    // At the authorization endpoint's login step too.
    let mut second = Browser::new(&app);
    let shown = act(&mut staff, bruno, "senha-temporaria").await;
    let temporary = shown_password(&shown);
    let login = second.get(&crate::oauth::portal_request("cpf", "s")).await;
    let fields = crate::helpers::with(
        crate::helpers::hidden_fields(&login.body),
        &[("username", "bruno"), ("password", temporary.as_str())],
    );
    let answer = second.post("/oauth/authorize/", &fields).await;
    assert_eq!((answer.status, answer.location.as_deref()), (303, Some("/conta/senha/?trocar=1")), "{}", answer.body);

    let audit = staff.get("/admin/auditoria/?alvo=bruno").await;
    assert!(audit.body.contains("Senha temporária definida"), "{}", audit.body);
    assert!(audit.body.contains("Senha: [definido]") && !audit.body.contains(&temporary), "{}", audit.body);
}

#[tokio::test]
async fn clearing_a_validation_answers_receita_federal_as_for_an_account_never_validated() {
    let app = crate::profile::app().await;
    add_staff(&app).await;
    crate::profile::register_client(&app, "portal", crate::profile::ALL).await;
    let ana = crate::profile::person(&app, "ana", crate::profile::ANA_CPF, true).await;
    let before = crate::profile::answered_profile(&app, ana, "receita_federal", "portal").await;
    let not_validated = json!({"erro": "Os dados do usuário não foram validados na Receita Federal."});
    assert_ne!(before["receita_federal"], not_validated, "validated: read from the registry");
    let mut staff = staff_browser(&app).await;
    let page = act_ok(&mut staff, ana, "remover-validacao").await;
    assert!(
        page.body.contains("A validação do CPF foi removida.") && page.body.contains("Não validado"),
        "{}",
        page.body
    );
    let after = crate::profile::answered_profile(&app, ana, "receita_federal", "portal").await;
    assert_eq!(after["receita_federal"], not_validated, "{after}");
    let audit = staff.get("/admin/auditoria/?alvo=ana").await;
    assert!(audit.body.contains("Validação do CPF removida"), "{}", audit.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lifting_a_throttle_lets_the_account_log_in_again_at_once() {
    let app = spawn_app().await;
    let bruno = with_bruno(&app).await;
    for _ in 0..5 {
        assert_eq!(pair(&app, "bruno", "not-the-password").await.0, 401);
    }
    assert_eq!(pair(&app, "bruno", PASSWORD).await.0, 429, "limited");
    let mut staff = staff_browser(&app).await;
    let page = act_ok(&mut staff, bruno, "liberar-login").await;
    assert!(page.body.contains("O bloqueio de login desta conta foi removido."), "{}", page.body);
    assert_eq!(pair(&app, "bruno", PASSWORD).await.0, 200);
    let audit = staff.get("/admin/auditoria/?alvo=bruno").await;
    assert!(audit.body.contains("Bloqueio de login removido"), "{}", audit.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_staff_flag_goes_on_and_off_from_the_panel_but_never_off_for_oneself() {
    let app = spawn_app().await;
    let bruno = with_bruno(&app).await;
    let chefe: i64 = sqlx::query_scalar("SELECT id FROM users WHERE username = 'chefe'")
        .fetch_one(&app.db.pool)
        .await
        .expect("chefe");
    let mut staff = staff_browser(&app).await;
    let mut own = signed_in_browser(&app, "bruno", PASSWORD).await;
    assert_eq!(own.get("/admin/").await.status, 403);
    act_ok(&mut staff, bruno, "equipe-sim").await;
    assert_eq!(own.get("/admin/").await.status, 200);
    act_ok(&mut staff, bruno, "equipe-nao").await;
    assert_eq!(own.get("/admin/").await.status, 403);
    for acao in ["equipe-nao", "desativar"] {
        let refused = act(&mut staff, chefe, acao).await;
        assert_eq!(refused.status, 409, "{acao}: {}", refused.body);
    }
    assert!(flag(&app, "is_staff", chefe).await && flag(&app, "is_active", chefe).await);
    let audit = staff.get("/admin/auditoria/?alvo=bruno").await;
    assert!(audit.body.contains("Equipe: sim") && audit.body.contains("Equipe: não"), "{}", audit.body);
}

#[tokio::test]
async fn non_staff_cross_site_forged_and_bad_forms_are_refused_and_change_nothing() {
    let app = spawn_app().await;
    let bruno = with_bruno(&app).await;
    app.add_user("lia", "senha-da-lia-1", true).await;
    let mut lia = signed_in_browser(&app, "lia", "senha-da-lia-1").await;
    let detail = format!("/admin/usuarios/{bruno}/");
    for path in ["/admin/usuarios/", "/admin/usuarios/?q=bruno", detail.as_str()] {
        assert_eq!(lia.get(path).await.status, 403, "{path}");
    }
    let lia_token = form_token(&lia.get("/conta/").await);
    let post = lia.post(&detail, &[("csrf_token".into(), lia_token), ("acao".into(), "desativar".into())]).await;
    assert_eq!(post.status, 403, "not staff: {}", post.body);

    let mut staff = staff_browser(&app).await;
    let token = form_token(&staff.get(&detail).await);
    let form = |acao: &str| vec![("csrf_token".to_owned(), token.clone()), ("acao".to_owned(), acao.to_owned())];
    let cross = staff
        .send(
            app.client
                .post(format!("{}{detail}", app.address))
                .header("sec-fetch-site", "cross-site")
                .form(&form("desativar")),
        )
        .await;
    assert_eq!(cross.status, 403, "{}", cross.body);
    let wrong =
        staff.post(&detail, &[("csrf_token".into(), "x".repeat(43)), ("acao".into(), "desativar".into())]).await;
    assert_eq!(wrong.status, 403, "{}", wrong.body);
    let unknown = staff.post(&detail, &form("apagar")).await;
    assert_eq!(unknown.status, 400, "{}", unknown.body);
    let missing = staff.post(&detail, &[("csrf_token".into(), token.clone())]).await;
    assert_eq!(missing.status, 400, "{}", missing.body);
    let mut twice = form("desativar");
    twice.push(("acao".to_owned(), "reativar".to_owned()));
    let twice = staff.post(&detail, &twice).await;
    assert_eq!(twice.status, 400, "{}", twice.body);
    assert!(flag(&app, "is_active", bruno).await, "nothing changed");
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM audit_log").fetch_one(&app.db.pool).await.expect("n");
    assert_eq!(count, 0, "nothing recorded");
}

// ------------------------------------------------------------------- CLI

mod cli {
    use crate::cli::{credencial, stderr, stdout};
    use crate::helpers::spawn_app;

    use super::{flag, pair, with_bruno, PASSWORD};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_cli_does_what_the_panel_does_through_the_same_use_cases_as_the_os_user() {
        let app = spawn_app().await;
        let bruno = with_bruno(&app).await;
        let url = app.db.url.clone();
        let run = |args: &[&str]| {
            let out = credencial(&url, args, "");
            assert!(out.status.success(), "{args:?}: {}", stderr(&out));
            stdout(&out)
        };
        let found = run(&["user", "search", "111.444.777-35"]);
        assert!(
            found.contains("bruno") && found.contains("111.***.***-35") && !found.contains("11144477735"),
            "{found}"
        );
        assert!(found.contains("1 users; no more pages"), "{found}");
        let shown = run(&["user", "show", "--username", "bruno"]);
        assert!(shown.contains("111.***.***-35") && shown.contains("tax-id validated:     no"), "{shown}");

        run(&["user", "set-staff", "--username", "bruno", "true"]);
        assert!(flag(&app, "is_staff", bruno).await);
        run(&["user", "set-staff", "--username", "bruno", "false"]);
        assert!(!flag(&app, "is_staff", bruno).await);

        sqlx::query("UPDATE users SET receita_validated = TRUE WHERE id = $1")
            .bind(bruno)
            .execute(&app.db.pool)
            .await
            .expect("validated");
        run(&["user", "clear-validation", "--username", "bruno"]);
        assert!(!flag(&app, "receita_validated", bruno).await);

        for _ in 0..5 {
            pair(&app, "bruno", "not-the-password").await;
        }
        assert_eq!(pair(&app, "bruno", PASSWORD).await.0, 429);
        assert!(run(&["user", "lift-throttle", "--username", "bruno"]).contains("may log in again"));
        assert_eq!(pair(&app, "bruno", PASSWORD).await.0, 200);

        let set = run(&["user", "temporary-password", "--username", "bruno"]);
        let temporary = set.lines().last().expect("the password is the last line").trim().to_owned();
        assert_eq!(temporary.len(), 19, "{set}");
        assert_eq!(pair(&app, "bruno", &temporary).await.0, 401, "must be changed first");
        assert!(flag(&app, "must_change_password", bruno).await);

        let rows: Vec<(String, String)> =
            sqlx::query_as("SELECT actor_kind, action FROM audit_log WHERE target = 'bruno' ORDER BY id")
                .fetch_all(&app.db.pool)
                .await
                .expect("trail");
        let actions: Vec<&str> = rows.iter().map(|(_, a)| a.as_str()).collect();
        assert_eq!(
            actions,
            ["user.staff", "user.staff", "user.clear_validation", "user.lift_throttle", "user.temporary_password"]
        );
        assert!(rows.iter().all(|(kind, _)| kind == "cli"), "{rows:?}");
        let changes: Vec<String> = sqlx::query_scalar("SELECT CAST(changes AS TEXT) FROM audit_log")
            .fetch_all(&app.db.pool)
            .await
            .expect("changes");
        let changes = changes.join(" ");
        assert!(!changes.contains(&temporary), "never a password: {changes}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_cli_refuses_an_unknown_user_a_bad_cpf_and_creates_staff() {
        let app = spawn_app().await;
        let url = app.db.url.clone();
        for args in [
            &["user", "show", "--username", "nobody"][..],
            &["user", "set-staff", "--username", "nobody", "true"][..],
            &["user", "temporary-password", "--username", "nobody"][..],
        ] {
            let out = credencial(&url, args, "");
            assert!(!out.status.success() && stderr(&out).contains("no such user"), "{args:?}: {}", stderr(&out));
        }
        let bad =
            credencial(&url, &["user", "create", "--username", "rui", "--cpf", "111.444.777-36"], "boa-senha-123\n");
        assert!(!bad.status.success() && stderr(&bad).contains("check digits"), "{}", stderr(&bad));
        let ok = credencial(&url, &["user", "create", "--username", "rui", "--staff"], "boa-senha-123\n");
        assert!(ok.status.success(), "{}", stderr(&ok));
        let crate::database::Flag(staff) = sqlx::query_scalar("SELECT is_staff FROM users WHERE username = 'rui'")
            .fetch_one(&app.db.pool)
            .await
            .expect("rui");
        assert!(staff);
        let entry: (String, String) = sqlx::query_as("SELECT action, actor_kind FROM audit_log WHERE target = 'rui'")
            .fetch_one(&app.db.pool)
            .await
            .expect("entry");
        assert_eq!(entry, ("user.create".to_owned(), "cli".to_owned()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn staff_end_every_session_of_an_account_from_the_panel_and_the_trail_says_so() {
    let app = spawn_app().await;
    let bruno = with_bruno(&app).await;
    let mut laptop = crate::account::signed_in_browser(&app, "bruno", PASSWORD).await;
    let mut staff = staff_browser(&app).await;
    assert_eq!(laptop.get("/conta/").await.status, 200);
    let page = act_ok(&mut staff, bruno, "encerrar-sessoes").await;
    assert!(page.body.contains("Todas as sessões desta conta foram encerradas"), "{}", page.body);
    assert_eq!(laptop.get("/conta/").await.status, 303, "bruno's browser must log in again");
    assert_eq!(staff.get("/admin/").await.status, 200, "the staff member's own session is untouched");
    let audit = staff.get("/admin/auditoria/?alvo=bruno").await;
    assert!(audit.body.contains("Sessões encerradas"), "{}", audit.body);
}
