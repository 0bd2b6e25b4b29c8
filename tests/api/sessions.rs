//! Browser sessions kept on the server (issue 23), over real HTTP: the
//! attack of a copied session cookie, refused once the session ends by
//! logout, a password change or deactivation; only the id's hash is
//! stored; a login always issues a new id; the old JWT cookie of earlier
//! releases opens nothing.

use sha2::{Digest, Sha256};

use crate::account::{form_token, signed_in_browser};
use crate::helpers::{spawn_app, Browser, TestApp};

const PASSWORD: &str = "senha-da-lia-1";
const NEW_PASSWORD: &str = "um novo caminho de pedras";

/// A second browser holding a copy of `browser`'s cookies (a thief's).
fn copy_of(app: &TestApp, browser: &Browser) -> Browser {
    let mut thief = Browser::new(app);
    thief.jar = browser.jar.clone();
    thief
}

/// Whether `browser` is signed in: the overview answers 200, not the
/// redirect to the login form.
async fn opens_the_account(browser: &mut Browser) -> bool {
    let page = browser.get("/conta/").await;
    match page.status {
        200 => true,
        303 => {
            assert!(page.location.as_deref().is_some_and(|l| l.starts_with("/conta/entrar/")), "{page:?}");
            false
        }
        other => panic!("unexpected {other}: {}", page.body),
    }
}

#[tokio::test]
async fn a_copied_cookie_is_refused_everywhere_after_logout() {
    let app = spawn_app().await;
    app.add_user("lia", PASSWORD, true).await;
    let mut browser = signed_in_browser(&app, "lia", PASSWORD).await;
    let mut thief = copy_of(&app, &browser);
    assert!(opens_the_account(&mut thief).await, "the copy works while the session lives");

    let token = form_token(&browser.get("/conta/sair/").await);
    let out = browser.post("/conta/sair/", &[("csrf_token".into(), token.clone())]).await;
    assert_eq!((out.status, out.location.as_deref()), (303, Some("/conta/entrar/")), "{}", out.body);
    assert!(out.set_cookies.iter().any(|c| c.starts_with("credencial_session=;")), "{:?}", out.set_cookies);

    assert!(!opens_the_account(&mut thief).await, "the copy is refused on the account pages");
    let changed = thief
        .post(
            "/conta/",
            &[
                ("csrf_token".into(), token),
                ("nome".into(), "Ladrão".into()),
                ("email".into(), "x@example.gov.br".into()),
                ("avatar".into(), String::new()),
            ],
        )
        .await;
    assert_eq!(changed.status, 303, "nothing changes: {}", changed.body);
    let name: String = sqlx::query_scalar("SELECT name FROM users WHERE username = 'lia'")
        .fetch_one(&app.db.pool)
        .await
        .expect("name");
    assert_eq!(name, "Full lia");
    let admin = thief.get("/admin/").await;
    assert_eq!(admin.status, 303, "the panel too");
    let sessions: i64 = sqlx::query_scalar("SELECT count(*) FROM sessions").fetch_one(&app.db.pool).await.expect("n");
    assert_eq!(sessions, 0, "the record is gone");
}

#[tokio::test]
async fn a_copied_cookie_is_refused_after_a_password_change_and_after_deactivation() {
    let app = spawn_app().await;
    let id = app.add_user("lia", PASSWORD, true).await;
    let mut browser = signed_in_browser(&app, "lia", PASSWORD).await;
    let mut thief = copy_of(&app, &browser);
    let stolen = thief.jar["credencial_session"].clone();
    let token = form_token(&browser.get("/conta/senha/").await);
    let form = [
        ("csrf_token".to_owned(), token),
        ("password_atual".to_owned(), PASSWORD.to_owned()),
        ("password".to_owned(), NEW_PASSWORD.to_owned()),
        ("password_confirmacao".to_owned(), NEW_PASSWORD.to_owned()),
    ];
    let changed = browser.post("/conta/senha/", &form).await;
    assert_eq!(changed.status, 303, "{}", changed.body);
    assert!(!opens_the_account(&mut thief).await, "the stolen copy is over");
    assert!(opens_the_account(&mut browser).await, "the browser that changed it has a new session");
    assert_ne!(browser.jar["credencial_session"], stolen, "a new id");

    let mut other = signed_in_browser(&app, "lia", NEW_PASSWORD).await;
    sqlx::query("UPDATE users SET is_active = FALSE WHERE id = $1").bind(id).execute(&app.db.pool).await.expect("off");
    assert!(!opens_the_account(&mut other).await, "a deactivated account's session is refused at once");
}

#[tokio::test]
async fn only_the_hash_of_a_new_id_is_stored_at_each_login_and_an_old_jwt_cookie_opens_nothing() {
    let app = spawn_app().await;
    let id = app.add_user("lia", PASSWORD, true).await;
    let first = signed_in_browser(&app, "lia", PASSWORD).await;
    let second = signed_in_browser(&app, "lia", PASSWORD).await;
    let (a, b) = (&first.jar["credencial_session"], &second.jar["credencial_session"]);
    assert_ne!(a, b, "every login issues a new id");
    assert_eq!(a.len(), 43, "an opaque id, not a JWT");
    let stored: Vec<(Vec<u8>, String, String)> =
        sqlx::query_as("SELECT token_hash, amr, device FROM sessions WHERE user_id = $1 ORDER BY id")
            .bind(id)
            .fetch_all(&app.db.pool)
            .await
            .expect("rows");
    let hashes: Vec<Vec<u8>> = stored.iter().map(|r| r.0.clone()).collect();
    assert_eq!(hashes, vec![Sha256::digest(a.as_bytes()).to_vec(), Sha256::digest(b.as_bytes()).to_vec()]);
    assert_eq!(stored[0].1, "pwd");

    let mut old = Browser::new(&app);
    let claims = credencial_domain::Claims::new(credencial_domain::TokenType::Session, id, 1_900_000_000, 600);
    let jwt = crate::helpers::client_token_codec().encode_claims(&claims).expect("signs");
    old.jar.insert("credencial_session".into(), jwt);
    let page = old.get("/conta/").await;
    assert_eq!(page.status, 303);
    assert!(page.set_cookies.iter().any(|c| c.starts_with("credencial_session=;")), "the old cookie is cleared");
}

/// The record ids of `username`'s sessions, oldest first.
async fn session_ids(app: &TestApp, username: &str) -> Vec<i64> {
    sqlx::query_scalar(
        "SELECT s.id FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.username = $1 ORDER BY s.id",
    )
    .bind(username)
    .fetch_all(&app.db.pool)
    .await
    .expect("ids")
}

#[tokio::test]
async fn the_sessions_page_lists_marks_and_ends_sessions_and_refuses_what_is_not_yours() {
    let app = spawn_app().await;
    app.add_user("lia", PASSWORD, true).await;
    app.add_user("bia", "senha-da-bia-1", true).await;
    let mut here = signed_in_browser(&app, "lia", PASSWORD).await;
    let mut laptop = signed_in_browser(&app, "lia", PASSWORD).await;
    let mut phone = signed_in_browser(&app, "lia", PASSWORD).await;
    let _bia = signed_in_browser(&app, "bia", "senha-da-bia-1").await;
    let lia_ids = session_ids(&app, "lia").await;
    let bia_id = session_ids(&app, "bia").await[0];

    let page = here.get("/conta/sessoes/").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(page.headers["cache-control"], "no-store");
    assert_eq!(page.body.matches("esta sessão").count(), 1, "{}", page.body);
    assert_eq!(page.body.matches("<h2 class=\"session\">").count(), 3, "lia's three sessions, not bia's");
    assert!(page.body.contains("com senha") && page.body.contains("rede 127.0.0.0/24"), "{}", page.body);
    let token = form_token(&page);
    let end = |id: &str| {
        vec![("csrf_token".to_owned(), token.clone()), ("acao".into(), "encerrar".into()), ("id".into(), id.into())]
    };

    let ended = here.post("/conta/sessoes/", &end(&lia_ids[1].to_string())).await;
    assert_eq!((ended.status, ended.location.as_deref()), (303, Some("/conta/sessoes/?encerrada=1")), "{}", ended.body);
    assert!(!opens_the_account(&mut laptop).await, "the laptop's session is over");
    assert!(opens_the_account(&mut phone).await);

    let foreign = here.post("/conta/sessoes/", &end(&bia_id.to_string())).await;
    assert_eq!(foreign.status, 404, "another person's session id ends nothing");
    assert_eq!(session_ids(&app, "bia").await, vec![bia_id]);
    for bad in ["abc", "-1", "", "99999999999999999999"] {
        assert_eq!(here.post("/conta/sessoes/", &end(bad)).await.status, 400, "{bad:?}");
    }
    let own = here.post("/conta/sessoes/", &end(&lia_ids[0].to_string())).await;
    assert_eq!(own.status, 400, "this session ends with Sair");
    let forged = vec![("csrf_token".to_owned(), "x".to_owned()), ("acao".into(), "encerrar_outras".into())];
    assert_eq!(here.post("/conta/sessoes/", &forged).await.status, 403);
    let cross = here
        .send(
            here.client
                .post(format!("{}/conta/sessoes/", here.base))
                .header("sec-fetch-site", "cross-site")
                .form(&[("csrf_token", token.as_str()), ("acao", "encerrar_outras")]),
        )
        .await;
    assert_eq!(cross.status, 403, "a cross-site post");
    assert!(opens_the_account(&mut phone).await, "nothing ended by the refused posts");

    let others = vec![("csrf_token".to_owned(), token.clone()), ("acao".into(), "encerrar_outras".into())];
    let all = here.post("/conta/sessoes/", &others).await;
    assert_eq!(all.location.as_deref(), Some("/conta/sessoes/?encerradas=1"));
    assert!(!opens_the_account(&mut phone).await, "every other session is over");
    assert!(opens_the_account(&mut here).await, "this one stays");
    let notice = here.get("/conta/sessoes/?encerradas=1").await;
    assert!(notice.body.contains("Sessões encerradas: 1."), "{}", notice.body);
    assert!(!notice.body.contains("Encerrar todas as outras"), "no other session left");

    let mut stranger = Browser::new(&app);
    let page = stranger.get("/conta/sessoes/").await;
    assert_eq!(page.location.as_deref(), Some("/conta/entrar/?next=%2Fconta%2Fsessoes%2F"));
}
