//! "Esqueci minha senha" (issue 24) over real HTTP and a real SMTP server
//! on loopback: the request answers the same whoever it names, the mail
//! arrives with its link, the link sets a new password once (after the
//! second factor when there is one) and ends every session and refresh
//! token; used, expired, superseded and outdated links are refused; the
//! forms refuse what a browser of another site or a broken client sends;
//! mail waits in the outbox while the relay is down and goes when it is
//! back; staff see and retry the mail that failed.

use std::time::{Duration, Instant};

use base64::Engine;
use credencial_adapters_upstream::testing::{ReceivedMail, SmtpSink, SmtpSinkOptions};
use credencial_domain::second_factor::step_of;
use serde_json::json;

use crate::account::{form_token, signed_in_browser};
use crate::admin::{add_staff, staff_browser};
use crate::helpers::{hidden_fields, spawn_app_with, status_and_json, with, Browser, Page, TestApp};
use crate::second_factor::enrol;

const PASSWORD: &str = "senha-da-lia-1";
const NEW_PASSWORD: &str = "ipe-amarelo-no-cerrado";
const PATIENCE: Duration = Duration::from_secs(20);
const PUBLIC_URL: &str = "https://id.example.gov.br";

/// An app that sends mail to `sink`, with lia (e-mail `lia@example.gov.br`).
pub(crate) async fn app_mailing_to(
    sink: &SmtpSink,
    adjust: impl FnOnce(&mut credencial::settings::Settings),
) -> TestApp {
    let port = sink.address().port();
    let app = spawn_app_with(|s| {
        s.mail.smtp_url = Some(format!("smtp://127.0.0.1:{port}").into());
        s.mail.mail_from = Some("Credencial <nao-responda@id.example.gov.br>".into());
        s.mail.public_url = Some(crate::helpers::issuer_url(PUBLIC_URL));
        adjust(s);
    })
    .await;
    app.add_user("lia", PASSWORD, true).await;
    app
}

/// The text part of a received mail, its transfer encoding undone.
pub(crate) fn text_part(mail: &ReceivedMail) -> String {
    part(mail, "text/plain")
}

/// The part of `media_type` of a received mail, its transfer encoding undone.
pub(crate) fn part(mail: &ReceivedMail, media_type: &str) -> String {
    let data = mail.data.replace("\r\n", "\n");
    let part = data.split(&format!("Content-Type: {media_type}")).nth(1).expect("the part");
    let (headers, body) = part.split_once("\n\n").expect("part headers");
    let body = body.split("\n--").next().expect("part body");
    if headers.contains("Content-Transfer-Encoding: base64") {
        let joined: String = body.split_whitespace().collect();
        String::from_utf8(base64::engine::general_purpose::STANDARD.decode(joined).expect("base64")).expect("utf-8")
    } else if headers.contains("Content-Transfer-Encoding: quoted-printable") {
        quoted_printable(body)
    } else {
        body.to_owned()
    }
}

fn quoted_printable(body: &str) -> String {
    let joined = body.replace("=\n", "");
    let bytes = joined.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'=' && i + 2 < bytes.len() + 1 {
            if let Ok(b) = u8::from_str_radix(&joined[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).expect("utf-8")
}

/// The reset link a mail carries, as a path of the app.
fn link_path(mail: &ReceivedMail) -> String {
    let text = text_part(mail);
    let link = text
        .split_whitespace()
        .find(|w| w.starts_with(&format!("{PUBLIC_URL}/conta/recuperar/")) && w.len() > 50)
        .unwrap_or_else(|| panic!("a link in: {text}"));
    link.strip_prefix(PUBLIC_URL).expect("the configured public URL").to_owned()
}

/// The reset link of every mail that carries one, waiting until there are
/// at least `count`.
async fn reset_links(sink: &SmtpSink, count: usize) -> Vec<String> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let links: Vec<String> = sink
            .received()
            .iter()
            .filter(|m| text_part(m).split_whitespace().any(|w| w.contains("/conta/recuperar/") && w.len() > 50))
            .map(link_path)
            .collect();
        if links.len() >= count || Instant::now() >= deadline {
            assert!(links.len() >= count, "{} reset links, not {count}", links.len());
            return links;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until the outbox has no mail waiting (every notice delivered).
pub(crate) async fn settled(app: &TestApp) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let waiting: i64 = sqlx::query_scalar("SELECT count(*) FROM mail_outbox WHERE next_attempt_at IS NOT NULL")
            .fetch_one(&app.db.pool)
            .await
            .expect("outbox");
        if waiting == 0 {
            return;
        }
        assert!(Instant::now() < deadline, "the outbox never emptied");
    }
}

/// Asks for a link for `typed` from a fresh browser: the answer page.
pub(crate) async fn ask(app: &TestApp, typed: &str) -> Page {
    let mut browser = Browser::new(app);
    ask_in(&mut browser, typed).await
}

async fn ask_in(browser: &mut Browser, typed: &str) -> Page {
    let form = browser.get("/conta/recuperar/").await;
    assert_eq!(form.status, 200, "{}", form.body);
    browser.post("/conta/recuperar/", &with(hidden_fields(&form.body), &[("identificador", typed)])).await
}

/// Opens `path` (a link) and posts the new password (and `code`).
async fn set_password(browser: &mut Browser, path: &str, password: &str, code: &str) -> Page {
    let form = browser.get(path).await;
    if form.status != 200 {
        return form;
    }
    let fields = with(
        hidden_fields(&form.body),
        &[("password", password), ("password_confirmacao", password), ("codigo", code)],
    );
    browser.post(path, &fields).await
}

/// The mails received for `to`.
pub(crate) fn mails_to(sink: &SmtpSink, to: &str) -> Vec<ReceivedMail> {
    sink.received().into_iter().filter(|m| m.to == [format!("<{to}>")]).collect()
}

#[tokio::test]
async fn the_whole_reset_journey_sets_the_password_once_and_ends_every_session_and_token() {
    let sink = SmtpSink::start().await;
    let app = app_mailing_to(&sink, |_| {}).await;
    let mut old_browser = signed_in_browser(&app, "lia", PASSWORD).await;
    let (_, refresh) = app.login("lia", PASSWORD).await;

    // Every login form links to the recovery form.
    let mut browser = Browser::new(&app);
    let login = browser.get("/conta/entrar/").await;
    assert!(login.body.contains("href=\"/conta/recuperar/\">Esqueci minha senha</a>"), "{}", login.body);

    let answer = ask_in(&mut browser, "lia").await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.headers["cache-control"], "no-store");
    assert!(answer.body.contains("enviamos agora um link"), "{}", answer.body);
    let got = sink.wait_for(1, PATIENCE).await;
    assert_eq!(got.len(), 1, "one mail");
    let mail = &got[0];
    assert_eq!(mail.to, ["<lia@example.gov.br>"]);
    assert!(mail.data.contains("multipart/alternative"));
    let path = link_path(mail);
    let text = text_part(mail);
    assert!(text.contains("30 minutos") && text.contains("só pode ser usado uma vez"), "{text}");

    // The link's page names the account and asks no code (lia has no factor).
    let form = browser.get(&path).await;
    assert_eq!(form.status, 200, "{}", form.body);
    assert!(form.body.contains("<strong>lia</strong>"));
    assert!(!form.body.contains("name=\"codigo\""), "no factor, no code");
    assert_eq!(form.headers["referrer-policy"], "no-referrer", "the token in the path never leaves as a Referer");

    // A password the rules refuse changes nothing, and the link still works.
    let weak = set_password(&mut browser, &path, "lia", "").await;
    assert_eq!(weak.status, 422, "{}", weak.body);
    let mismatch = browser
        .post(&path, &with(hidden_fields(&form.body), &[("password", NEW_PASSWORD), ("password_confirmacao", "outra")]))
        .await;
    assert_eq!(mismatch.status, 422);
    assert!(mismatch.body.contains("A confirmação não confere"), "{}", mismatch.body);

    let done = set_password(&mut browser, &path, NEW_PASSWORD, "").await;
    assert_eq!(done.status, 200, "{}", done.body);
    assert!(done.body.contains("Senha redefinida"), "{}", done.body);

    // Once: the same link again is refused.
    let again = browser.get(&path).await;
    assert_eq!(again.status, 410, "{}", again.body);
    assert!(again.body.contains("Link inválido"));
    // The old password is over, the new one works; the old session and
    // refresh token are over too.
    let (status, _) =
        status_and_json(app.post_json("/api/token/pair/", &json!({"username": "lia", "password": PASSWORD})).await)
            .await;
    assert_eq!(status, 401);
    app.login("lia", NEW_PASSWORD).await;
    let (status, _) = status_and_json(app.post_json("/api/token/refresh/", &json!({"refresh": refresh})).await).await;
    assert_eq!(status, 401, "the refresh token of before the reset is revoked");
    let home = old_browser.get("/conta/").await;
    assert_eq!(home.status, 303, "the session of before the reset ended");
    // The activity shows it, and the address is told.
    let mut own = signed_in_browser(&app, "lia", NEW_PASSWORD).await;
    let security = own.get("/conta/seguranca/").await;
    assert!(security.body.contains("Senha redefinida pelo link enviado por e-mail"), "{}", security.body);
    let got = sink.wait_for(2, PATIENCE).await;
    assert_eq!(got.len(), 2, "the notice");
    let notice = text_part(&got[1]);
    assert!(notice.contains("foi redefinida") && notice.contains("sessões abertas foram encerradas"), "{notice}");
    assert!(notice.contains(&format!("{PUBLIC_URL}/conta/recuperar/")), "what to do if it was not them");
}

#[tokio::test]
async fn a_known_and_an_unknown_account_get_the_same_answer_and_only_a_real_one_gets_mail() {
    let sink = SmtpSink::start().await;
    let app = app_mailing_to(&sink, |_| {}).await;
    app.add_user("inativo", PASSWORD, false).await;
    let bia = app.add_user("bia", PASSWORD, true).await;
    sqlx::query("UPDATE users SET email = '' WHERE id = $1").bind(bia).execute(&app.db.pool).await.expect("no mail");
    // One browser, so that the form token (keyed by its cookie) is the same.
    let mut browser = Browser::new(&app);
    let mut answers = Vec::new();
    for typed in ["lia", "ninguem", "inativo", "bia", "ninguem@example.org", "529.982.247-25", "lia@example.gov.br"] {
        let page = ask_in(&mut browser, typed).await;
        let cache = page.headers["cache-control"].to_str().expect("ascii").to_owned();
        answers.push((typed, page.status, cache, page.body));
    }
    for (typed, status, cache, body) in &answers {
        assert_eq!((*status, cache.as_str()), (200, "no-store"), "{typed}");
        assert_eq!(body, &answers[0].3, "the same page for {typed}");
    }
    // The answers came before any lookup; the mails follow. Only lia (by
    // username; her e-mail a second time within the quiet time is not
    // sent again) gets one.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let got = sink.wait_for(1, PATIENCE).await;
    assert_eq!(got.len(), 1, "{:?}", got.iter().map(|m| &m.to).collect::<Vec<_>>());
    assert_eq!(got[0].to, ["<lia@example.gov.br>"]);
}

#[tokio::test]
async fn an_account_is_found_by_cpf_and_by_email_and_using_one_link_kills_the_others() {
    let sink = SmtpSink::start().await;
    let app = app_mailing_to(&sink, |_| {}).await;
    sqlx::query("UPDATE users SET cpf = '52998224725' WHERE username = 'lia'")
        .execute(&app.db.pool)
        .await
        .expect("cpf");
    assert_eq!(ask(&app, "529.982.247-25").await.status, 200);
    let first = link_path(&sink.wait_for(1, PATIENCE).await[0]);
    // Past the quiet time (as if two minutes went by), by e-mail this time.
    sqlx::query("UPDATE mail_links SET issued_at = issued_at - 600").execute(&app.db.pool).await.expect("older");
    assert_eq!(ask(&app, "LIA@example.gov.br").await.status, 200);
    let got = sink.wait_for(2, PATIENCE).await;
    assert_eq!(got.len(), 2);
    let second = link_path(&got[1]);
    assert_ne!(first, second);
    let mut browser = Browser::new(&app);
    assert_eq!(browser.get(&first).await.status, 200, "a newer link kills no older one (nobody can kill hers)");
    assert_eq!(set_password(&mut browser, &second, NEW_PASSWORD, "").await.status, 200);
    let old = browser.get(&first).await;
    assert_eq!(old.status, 410, "superseded by the new password: {}", old.body);
    assert!(old.body.contains("A senha desta conta foi alterada"), "{}", old.body);
}

#[tokio::test]
async fn an_expired_link_and_one_issued_before_a_password_change_are_refused() {
    let sink = SmtpSink::start().await;
    let app = app_mailing_to(&sink, |_| {}).await;
    ask(&app, "lia").await;
    let path = link_path(&sink.wait_for(1, PATIENCE).await[0]);
    sqlx::query("UPDATE mail_links SET expires_at = expires_at - 3600").execute(&app.db.pool).await.expect("expire");
    let mut browser = Browser::new(&app);
    let expired = browser.get(&path).await;
    assert_eq!(expired.status, 410);
    assert!(expired.body.contains("Link expirado"), "{}", expired.body);
    let posted = browser.post(&path, &[("password".into(), NEW_PASSWORD.into())]).await;
    assert_eq!(posted.status, 410, "nor can it be posted");

    // A fresh link, then the password changed on the password page.
    sqlx::query("DELETE FROM mail_links").execute(&app.db.pool).await.expect("forget");
    ask(&app, "lia").await;
    let path = link_path(&sink.wait_for(2, PATIENCE).await[1]);
    let mut own = signed_in_browser(&app, "lia", PASSWORD).await;
    let page = own.get("/conta/senha/").await;
    let changed = own
        .post(
            "/conta/senha/",
            &with(
                vec![("csrf_token".into(), form_token(&page))],
                &[("password_atual", PASSWORD), ("password", NEW_PASSWORD), ("password_confirmacao", NEW_PASSWORD)],
            ),
        )
        .await;
    assert_eq!(changed.status, 303, "{}", changed.body);
    let outdated = browser.get(&path).await;
    assert_eq!(outdated.status, 410);
    assert!(outdated.body.contains("A senha desta conta foi alterada"), "{}", outdated.body);
}

#[tokio::test]
async fn a_reset_asks_for_the_second_factor_and_takes_a_recovery_code() {
    let sink = SmtpSink::start().await;
    let app = app_mailing_to(&sink, |_| {}).await;
    let mut own = signed_in_browser(&app, "lia", PASSWORD).await;
    let (secret, codes) = enrol(&mut own).await;

    ask(&app, "lia").await;
    let path = reset_links(&sink, 1).await.remove(0);
    let mut browser = Browser::new(&app);
    let form = browser.get(&path).await;
    assert!(form.body.contains("name=\"codigo\""), "the code is asked: {}", form.body);
    let missing = set_password(&mut browser, &path, NEW_PASSWORD, "").await;
    assert_eq!(missing.status, 422);
    assert!(missing.body.contains("Informe o código"), "{}", missing.body);
    let wrong = set_password(&mut browser, &path, NEW_PASSWORD, "000000").await;
    assert_eq!(wrong.status, 422);
    assert!(wrong.body.contains("Código inválido"), "{}", wrong.body);
    // The old password is still hers (pair answers that it is right and
    // asks her second factor, as for any account with one).
    let (status, body) =
        status_and_json(app.post_json("/api/token/pair/", &json!({"username": "lia", "password": PASSWORD})).await)
            .await;
    assert_eq!((status, body["code"].as_str()), (401, Some("second_factor_required")), "nothing changed yet");

    let done = set_password(&mut browser, &path, NEW_PASSWORD, &codes[0]).await;
    assert_eq!(done.status, 200, "a recovery code passes: {}", done.body);

    // And with the app's code, through a new link.
    sqlx::query("UPDATE mail_links SET issued_at = issued_at - 600").execute(&app.db.pool).await.expect("older");
    ask(&app, "lia").await;
    let path = reset_links(&sink, 2).await.remove(1);
    // The next step: the enrolment used the current one (a step passes once).
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("t").as_secs() as i64;
    let code = secret.code_at(step_of(now) + 1);
    let done = set_password(&mut browser, &path, "outra-senha-do-cerrado", &code).await;
    assert_eq!(done.status, 200, "{}", done.body);
    // The new password is hers: pair finds it right and asks her factor.
    let body = json!({"username": "lia", "password": "outra-senha-do-cerrado"});
    let (status, body) = status_and_json(app.post_json("/api/token/pair/", &body).await).await;
    assert_eq!((status, body["code"].as_str()), (401, Some("second_factor_required")), "{body}");
}

#[tokio::test]
async fn the_forms_refuse_another_site_an_expired_token_a_broken_form_and_too_many_requests() {
    let sink = SmtpSink::start().await;
    let app = app_mailing_to(&sink, |s| s.login.login_throttle_address_failures = 3).await;
    let mut browser = Browser::new(&app);
    let form = browser.get("/conta/recuperar/").await;
    let fields = with(hidden_fields(&form.body), &[("identificador", "lia")]);

    let cross = browser.client.post(format!("{}/conta/recuperar/", app.address)).header("sec-fetch-site", "cross-site");
    let cross = browser.send(cross.form(&fields)).await;
    assert_eq!(cross.status, 403, "{}", cross.body);
    let forged = browser
        .post("/conta/recuperar/", &[("csrf_token".into(), "x".into()), ("identificador".into(), "lia".into())])
        .await;
    assert_eq!(forged.status, 400, "{}", forged.body);
    let twice = browser.post("/conta/recuperar/", &with(fields.clone(), &[("identificador", "outra")])).await;
    assert_eq!(twice.status, 400, "a field sent twice: {}", twice.body);
    let empty = browser.post("/conta/recuperar/", &with(hidden_fields(&form.body), &[("identificador", " ")])).await;
    assert_eq!(empty.status, 422);
    assert!(empty.body.contains("Digite o CPF"), "{}", empty.body);
    assert!(sink.received().is_empty(), "nothing was sent for refused forms");

    // Three requests from one address, then 429 whatever is typed.
    for typed in ["a", "b", "c"] {
        assert_eq!(
            browser
                .post("/conta/recuperar/", &with(hidden_fields(&form.body), &[("identificador", typed)]))
                .await
                .status,
            200
        );
    }
    let limited = browser.post("/conta/recuperar/", &fields).await;
    assert_eq!(limited.status, 429, "{}", limited.body);
    assert!(limited.headers.contains_key("retry-after"));

    // The link's form: another site and a broken form are refused too.
    let link = browser.get("/conta/recuperar/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/").await;
    assert_eq!(link.status, 410, "a link never issued");
    let nonsense = browser.get("/conta/recuperar/%00%2F/").await;
    assert!(nonsense.status == 410 || nonsense.status == 404, "{}", nonsense.status);
}

#[tokio::test]
async fn mail_waits_in_the_outbox_while_the_relay_is_down_and_goes_when_it_is_back() {
    let sink = SmtpSink::start().await;
    let address = sink.address();
    let app = app_mailing_to(&sink, |_| {}).await;
    sink.stop();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(ask(&app, "lia").await.status, 200);
    // The sender tries, fails and keeps the mail.
    let deadline = Instant::now() + PATIENCE;
    loop {
        let tried: i64 = sqlx::query_scalar("SELECT count(*) FROM mail_outbox WHERE last_error <> ''")
            .fetch_one(&app.db.pool)
            .await
            .expect("outbox");
        if tried >= 1 {
            break;
        }
        assert!(Instant::now() < deadline, "the sender never tried");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (sent, error): (Option<i64>, String) =
        sqlx::query_as("SELECT sent_at, last_error FROM mail_outbox").fetch_one(&app.db.pool).await.expect("row");
    assert!(sent.is_none() && !error.is_empty(), "waiting, with the relay's failure: {error}");
    // The relay comes back on the same port.
    let back = Instant::now();
    let sink = SmtpSink::start_with(SmtpSinkOptions::default(), &address.to_string()).await;
    let got = sink.wait_for(1, Duration::from_secs(90)).await;
    assert_eq!(got.len(), 1, "delivered once the relay is back");
    println!("mail delivered {:?} after the relay came back", back.elapsed());
    // (The relay's `250` comes before the sender records the delivery.)
    let deadline = Instant::now() + PATIENCE;
    loop {
        let sent: Option<i64> =
            sqlx::query_scalar("SELECT sent_at FROM mail_outbox").fetch_one(&app.db.pool).await.expect("row");
        if sent.is_some() {
            break;
        }
        assert!(Instant::now() < deadline, "the delivery was never recorded");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(sink.received().len(), 1, "sent once");
}

#[tokio::test]
async fn staff_see_the_mail_that_failed_and_put_it_back_audited() {
    // A relay that refuses the recipient: the mail keeps failing.
    let refusing = SmtpSink::start_with(SmtpSinkOptions { tls: None, refuse_recipients: true }, "127.0.0.1:0").await;
    let address = refusing.address();
    let app = app_mailing_to(&refusing, |_| {}).await;
    add_staff(&app).await;
    ask(&app, "lia").await;
    let deadline = Instant::now() + PATIENCE;
    loop {
        let refused: i64 = sqlx::query_scalar("SELECT count(*) FROM mail_outbox WHERE attempts >= 1")
            .fetch_one(&app.db.pool)
            .await
            .expect("outbox");
        if refused == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "never refused");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // As if the relay had refused it every time since.
    sqlx::query("UPDATE mail_outbox SET next_attempt_at = NULL, failed_at = created_at, attempts = 8")
        .execute(&app.db.pool)
        .await
        .expect("failed");
    refusing.stop();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let sink = SmtpSink::start_with(SmtpSinkOptions::default(), &address.to_string()).await;
    let id: i64 = sqlx::query_scalar("SELECT id FROM mail_outbox").fetch_one(&app.db.pool).await.expect("id");

    let mut lia = signed_in_browser(&app, "lia", PASSWORD).await;
    assert_eq!(lia.get("/admin/emails/").await.status, 403, "not staff");
    let mut staff = staff_browser(&app).await;
    let page = staff.get("/admin/emails/").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("lia@example.gov.br") && page.body.contains("mailbox unavailable"), "{}", page.body);
    assert!(page.body.contains("Link para redefinir a senha"));
    let token = form_token(&page);
    let cross = staff
        .client
        .post(format!("{}/admin/emails/{id}/tentar/", app.address))
        .header("sec-fetch-site", "cross-site")
        .form(&[("csrf_token", token.as_str())]);
    assert_eq!(staff.send(cross).await.status, 403);
    let unknown =
        staff.post(&format!("/admin/emails/{}/tentar/", id + 100), &[("csrf_token".into(), token.clone())]).await;
    assert_eq!(unknown.status, 404);
    let retried = staff.post(&format!("/admin/emails/{id}/tentar/"), &[("csrf_token".into(), token)]).await;
    assert_eq!(retried.status, 303, "{}", retried.body);
    let got = reset_links(&sink, 1).await;
    assert_eq!(got.len(), 1, "sent again, with its link");
    let audit = staff.get("/admin/auditoria/").await;
    assert!(audit.body.contains("E-mail com falha posto de novo na fila"), "{}", audit.body);
    assert_eq!(mails_to(&sink, "lia@example.gov.br").len(), 1);
}

#[tokio::test]
async fn without_smtp_url_serve_offers_no_recovery() {
    let app = spawn_app_with(|_| {}).await;
    let mut browser = Browser::new(&app);
    let login = browser.get("/conta/entrar/").await;
    assert!(!login.body.contains("Esqueci minha senha"), "no link without mail");
    assert_eq!(browser.get("/conta/recuperar/").await.status, 404);
    let admin_page_path = "/admin/emails/";
    add_staff(&app).await;
    let mut staff = staff_browser(&app).await;
    let page = staff.get(admin_page_path).await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("não está configurado"), "{}", page.body);
}

/// The subjects of the mails received so far, in order.
fn subjects(sink: &SmtpSink) -> Vec<String> {
    sink.received()
        .iter()
        .map(|m| {
            let data = m.data.replace("\r\n ", " ");
            let raw = data.lines().find_map(|l| l.strip_prefix("Subject: ")).unwrap_or("").to_owned();
            decode_subject(&raw)
        })
        .collect()
}

/// An RFC 2047 subject (`=?utf-8?b?…?=` words) as text.
fn decode_subject(raw: &str) -> String {
    raw.split_whitespace()
        .map(|word| match word.strip_prefix("=?utf-8?b?").and_then(|w| w.strip_suffix("?=")) {
            Some(b64) => {
                String::from_utf8(base64::engine::general_purpose::STANDARD.decode(b64).expect("b64")).expect("utf-8")
            }
            None => word.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("")
}

#[tokio::test]
async fn changes_and_logins_from_a_new_device_are_told_by_mail() {
    let sink = SmtpSink::start().await;
    let app = app_mailing_to(&sink, |_| {}).await;
    // The account's first login is no news.
    let mut own = signed_in_browser(&app, "lia", PASSWORD).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(sink.received().is_empty(), "{:?}", subjects(&sink));

    // The same browser again: no mail; another device: a mail.
    let mut again = Browser::new(&app);
    crate::account::log_in_at_account(&mut again, "/conta/", "lia", PASSWORD).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(sink.received().is_empty(), "a known device: {:?}", subjects(&sink));
    let mut phone = Browser::new(&app);
    let form = phone.get("/conta/entrar/").await;
    let request = phone
        .client
        .post(format!("{}/conta/entrar/", app.address))
        .header("user-agent", "Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 Chrome/130.0 Mobile Safari/537.36")
        .form(&with(hidden_fields(&form.body), &[("username", "lia"), ("password", PASSWORD)]));
    phone.send(request).await;
    let got = sink.wait_for(1, PATIENCE).await;
    let last = subjects(&sink).pop().expect("a subject");
    // (The subject's encoded words come back without their spaces.)
    assert!(last.contains("dispositivonovo"), "{:?}", subjects(&sink));
    assert!(text_part(&got[0]).contains("Android"), "says which device");

    // A factor turned on: told.
    enrol(&mut own).await;
    settled(&app).await;
    let got = sink.received();
    let notice = got.iter().map(text_part).find(|t| t.contains("Aplicativo autenticador ativado"));
    let notice = notice.unwrap_or_else(|| panic!("{:?}", subjects(&sink)));
    assert!(notice.contains("Não foi você?") && notice.contains(&format!("{PUBLIC_URL}/conta/recuperar/")));
    let told = got.len();

    // A new address, once confirmed: the old one is told, with the undo link.
    let page = own.get("/conta/").await;
    let fields = with(
        vec![("csrf_token".into(), form_token(&page))],
        &[("nome", "Lia Nova"), ("email", "lia.nova@example.gov.br"), ("avatar", "")],
    );
    let saved = own.post("/conta/", &fields).await;
    assert_eq!(saved.status, 303, "{}", saved.body);
    let link = link_in(&mail_to(&sink, "lia.nova@example.gov.br").await, "/conta/email/confirmar/");
    assert_eq!(confirm_at(&mut Browser::new(&app), &link).await.status, 200);
    let to_old = mail_where(&sink, |m| text_part(m).contains("foi trocado para lia.nova@example.gov.br")).await;
    assert_eq!(to_old.to, ["<lia@example.gov.br>"], "the old address is told");
    assert!(text_part(&to_old).contains("/conta/email/desfazer/"), "with the undo link");
    assert!(told < sink.received().len());

    // Deactivated by staff: told at the new address.
    let lia: i64 =
        sqlx::query_scalar("SELECT id FROM users WHERE username = 'lia'").fetch_one(&app.db.pool).await.expect("id");
    add_staff(&app).await;
    let mut staff = staff_browser(&app).await;
    let user_page = staff.get(&format!("/admin/usuarios/{lia}/")).await;
    let token = form_token(&user_page);
    let off = staff
        .post(
            &format!("/admin/usuarios/{lia}/"),
            &[("csrf_token".into(), token), ("acao".into(), "desativar".into()), ("confirmado".into(), "sim".into())],
        )
        .await;
    assert!(off.status == 303 || off.status == 200, "{}: {}", off.status, off.body);
    let last = mail_where(&sink, |m| text_part(m).contains("Conta desativada")).await;
    assert_eq!(last.to, ["<lia.nova@example.gov.br>"], "told at the new address");
}

/// The first mail `matches` accepts, waiting for it.
async fn mail_where(sink: &SmtpSink, matches: impl Fn(&ReceivedMail) -> bool) -> ReceivedMail {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(found) = sink.received().into_iter().find(|m| matches(m)) {
            return found;
        }
        assert!(Instant::now() < deadline, "no such mail among {:?}", subjects(sink));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The confirmation link of every mail that carries one, as paths.
fn confirmation_links(sink: &SmtpSink) -> Vec<String> {
    sink.received()
        .iter()
        .filter_map(|m| {
            let text = text_part(m);
            let word = text.split_whitespace().find(|w| w.contains("/conta/email/confirmar/"))?.to_owned();
            Some(word.strip_prefix(PUBLIC_URL).expect("the public URL").to_owned())
        })
        .collect()
}

/// The first mail to `address`, waiting for it.
async fn mail_to(sink: &SmtpSink, address: &str) -> ReceivedMail {
    let to = format!("<{address}>");
    mail_where(sink, |m| m.to == [to.as_str()]).await
}

/// The path of the link under `path` that `mail` carries.
fn link_in(mail: &ReceivedMail, path: &str) -> String {
    let text = text_part(mail);
    let word = text.split_whitespace().find(|w| w.contains(path)).unwrap_or_else(|| panic!("no {path} in {text}"));
    word.strip_prefix(PUBLIC_URL).expect("the public URL").to_owned()
}

/// The account's address, as stored.
async fn address(app: &TestApp, username: &str) -> String {
    sqlx::query_scalar("SELECT email FROM users WHERE username = $1")
        .bind(username)
        .fetch_one(&app.db.pool)
        .await
        .expect("read")
}

async fn verified(app: &TestApp, username: &str) -> bool {
    let verified: i64 =
        sqlx::query_scalar("SELECT CASE WHEN email_verified THEN 1 ELSE 0 END FROM users WHERE username = $1")
            .bind(username)
            .fetch_one(&app.db.pool)
            .await
            .expect("read");
    verified == 1
}

/// Posts the button of the confirmation (or undo) page at `path`.
async fn confirm_at(browser: &mut Browser, path: &str) -> Page {
    let page = browser.get(path).await;
    assert_eq!(page.status, 200, "{}", page.body);
    browser.post(path, &hidden_fields(&page.body)).await
}

#[tokio::test]
async fn a_new_or_changed_address_is_confirmed_through_its_link_and_only_then() {
    let sink = SmtpSink::start().await;
    let app = app_mailing_to(&sink, |s| s.login.signup_enabled = Some(true)).await;
    // lia (made by the test) starts unconfirmed; she asks for a link.
    let mut own = signed_in_browser(&app, "lia", PASSWORD).await;
    let home = own.get("/conta/").await;
    assert!(
        home.body.contains("(não confirmado)") && home.body.contains("Reenviar link de confirmação"),
        "{}",
        home.body
    );
    let token = vec![("csrf_token".to_owned(), form_token(&home))];
    let resent = own.post("/conta/email/reenviar/", &token).await;
    assert_eq!(resent.status, 303, "{}", resent.body);
    assert_eq!(resent.location.as_deref(), Some("/conta/?confirmacao=enviada"));
    let again = own.post("/conta/email/reenviar/", &token).await;
    assert_eq!(again.location.as_deref(), Some("/conta/?confirmacao=aguarde"), "not twice in a minute");
    let cross = own
        .client
        .post(format!("{}/conta/email/reenviar/", app.address))
        .header("sec-fetch-site", "cross-site")
        .form(&token);
    assert_eq!(own.send(cross).await.status, 403);
    let got = sink.wait_for(1, PATIENCE).await;
    assert_eq!(got[0].to, ["<lia@example.gov.br>"]);
    let link = confirmation_links(&sink).remove(0);

    // Opening the link changes nothing (a mail scanner follows links); the button does.
    let mut other = Browser::new(&app);
    assert_eq!(other.get(&link).await.status, 200);
    assert!(!verified(&app, "lia").await);
    let forged = other.post(&link, &[("csrf_token".into(), "x".into())]).await;
    assert_eq!(forged.status, 400);
    let done = confirm_at(&mut other, &link).await;
    assert_eq!(done.status, 200, "{}", done.body);
    assert!(done.body.contains("E-mail confirmado"));
    assert!(verified(&app, "lia").await);
    assert_eq!(confirm_at(&mut other, &link).await.status, 410, "once");
    let home = own.get("/conta/").await;
    assert!(home.body.contains("(confirmado)") && !home.body.contains("Reenviar link"), "{}", home.body);

    // A new address: the account keeps its confirmed one until the link to the new one is used.
    let page = own.get("/conta/").await;
    let fields = with(
        vec![("csrf_token".into(), form_token(&page))],
        &[("nome", "Lia"), ("email", "lia.nova@example.gov.br"), ("avatar", "")],
    );
    assert_eq!(own.post("/conta/", &fields).await.status, 303);
    assert!(verified(&app, "lia").await, "the address did not change yet");
    let new_link = link_in(&mail_to(&sink, "lia.nova@example.gov.br").await, "/conta/email/confirmar/");
    assert_eq!(confirm_at(&mut other, &new_link).await.status, 200);
    assert!(verified(&app, "lia").await);
    assert_eq!(address(&app, "lia").await, "lia.nova@example.gov.br");

    // A sign-up gets its link at once.
    let mut newcomer = Browser::new(&app);
    let form = newcomer.get("/conta/cadastro/").await;
    let fields = with(
        hidden_fields(&form.body),
        &[
            ("cpf", "529.982.247-25"),
            ("nome", "Nina Souza"),
            ("email", "nina@example.org"),
            ("username", "nina"),
            ("password", NEW_PASSWORD),
            ("password_confirmacao", NEW_PASSWORD),
        ],
    );
    let created = newcomer.post("/conta/cadastro/", &fields).await;
    assert_eq!(created.status, 303, "{}", created.body);
    let deadline = Instant::now() + PATIENCE;
    while !sink.received().iter().any(|m| m.to == ["<nina@example.org>"]) {
        assert!(Instant::now() < deadline, "no link for the new account");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!verified(&app, "nina").await, "unconfirmed until the link");
}

/// Posts the details form of `browser`'s overview with `email`.
async fn change_address(browser: &mut Browser, email: &str) -> Page {
    let page = browser.get("/conta/").await;
    let fields =
        with(vec![("csrf_token".into(), form_token(&page))], &[("nome", "Lia"), ("email", email), ("avatar", "")]);
    browser.post("/conta/", &fields).await
}

#[tokio::test]
async fn a_change_of_address_waits_for_its_link_and_the_old_address_can_undo_it() {
    let sink = SmtpSink::start().await;
    let app = app_mailing_to(&sink, |_| {}).await;
    let bia = app.add_user("bia", PASSWORD, true).await;
    let bia_address: String = sqlx::query_scalar("SELECT email FROM users WHERE id = $1")
        .bind(bia)
        .fetch_one(&app.db.pool)
        .await
        .expect("read");
    let mut own = signed_in_browser(&app, "lia", PASSWORD).await;

    // Another account's address (in another case): refused on the form, no mail.
    let taken = change_address(&mut own, &bia_address.to_uppercase()).await;
    assert_eq!(taken.status, 422, "{}", taken.body);
    assert!(taken.body.contains("E-mail"), "{}", taken.body);

    // A request: the address stays, the overview says what waits, the link goes to the new address.
    let asked = change_address(&mut own, "lia.errado@example.gov.br").await;
    assert_eq!(asked.location.as_deref(), Some("/conta/?confirmacao=troca"), "{}", asked.body);
    assert_eq!(address(&app, "lia").await, "lia@example.gov.br", "nothing changes before the link");
    let home = own.get("/conta/?confirmacao=troca").await;
    assert!(home.body.contains("Troca de e-mail pendente") && home.body.contains("lia.errado@example.gov.br"));
    assert!(home.body.contains("só muda quando você abrir o link"), "{}", home.body);
    let typo = link_in(&mail_to(&sink, "lia.errado@example.gov.br").await, "/conta/email/confirmar/");
    let again = change_address(&mut own, "lia.nova@example.gov.br").await;
    assert_eq!(again.location.as_deref(), Some("/conta/?confirmacao=troca-aguarde"), "not twice in a minute");
    // A minute later, the right address: the first link is superseded.
    sqlx::query("UPDATE mail_links SET issued_at = issued_at - 120").execute(&app.db.pool).await.expect("older");
    let asked = change_address(&mut own, "lia.nova@example.gov.br").await;
    assert_eq!(asked.location.as_deref(), Some("/conta/?confirmacao=troca"));
    let link = link_in(&mail_to(&sink, "lia.nova@example.gov.br").await, "/conta/email/confirmar/");
    let mut stranger = Browser::new(&app);
    let superseded = confirm_at(&mut stranger, &typo).await;
    assert_eq!(superseded.status, 410, "{}", superseded.body);
    assert!(superseded.body.contains("substituído por um pedido mais novo"));
    assert_eq!(address(&app, "lia").await, "lia@example.gov.br");

    // Cancelled: the link dies. Asked again a minute later, and confirmed.
    let token = vec![("csrf_token".to_owned(), form_token(&own.get("/conta/").await))];
    let cancel_cross =
        own.client.post(format!("{}/conta/email/cancelar/", app.address)).header("sec-fetch-site", "cross-site");
    assert_eq!(own.send(cancel_cross.form(&token)).await.status, 403, "not from another site");
    let cancelled = own.post("/conta/email/cancelar/", &token).await;
    assert_eq!(cancelled.location.as_deref(), Some("/conta/?confirmacao=troca-cancelada"));
    assert!(!own.get("/conta/").await.body.contains("Troca de e-mail pendente"));
    assert_eq!(confirm_at(&mut stranger, &link).await.status, 410, "a cancelled change's link is dead");
    sqlx::query("UPDATE mail_links SET issued_at = issued_at - 120").execute(&app.db.pool).await.expect("older");
    let before = sink.received().len();
    change_address(&mut own, "lia.nova@example.gov.br").await;
    let deadline = Instant::now() + PATIENCE;
    while sink.received().len() == before {
        assert!(Instant::now() < deadline, "no second link");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let link = link_in(sink.received().last().expect("the mail"), "/conta/email/confirmar/");
    // An expired link is refused.
    sqlx::query("UPDATE mail_links SET expires_at = expires_at - 86400 WHERE purpose = 'email_change'")
        .execute(&app.db.pool)
        .await
        .expect("expired");
    assert_eq!(confirm_at(&mut stranger, &link).await.status, 410, "expired");
    sqlx::query("UPDATE mail_links SET expires_at = expires_at + 86400 WHERE purpose = 'email_change'")
        .execute(&app.db.pool)
        .await
        .expect("live again");
    let forged = stranger.post(&link, &[("csrf_token".into(), "x".into())]).await;
    assert_eq!(forged.status, 400, "a post without the page's token");
    let done = confirm_at(&mut stranger, &link).await;
    assert_eq!(done.status, 200, "{}", done.body);
    assert!(done.body.contains("E-mail alterado"));
    assert_eq!(address(&app, "lia").await, "lia.nova@example.gov.br");
    assert!(verified(&app, "lia").await, "confirmed by its link");
    assert_eq!(confirm_at(&mut stranger, &link).await.status, 410, "once");
    let security = own.get("/conta/seguranca/").await;
    assert_eq!(security.status, 200, "a change ends no session");
    assert!(security.body.contains("E-mail da conta alterado"), "{}", security.body);

    // The old address got the undo link. Whoever changed the address changes it again:
    // the first undo link still works, and puts the first address back.
    let undo_mail = mail_where(&sink, |m| text_part(m).contains("/conta/email/desfazer/")).await;
    assert_eq!(undo_mail.to, ["<lia@example.gov.br>"]);
    let undo = link_in(&undo_mail, "/conta/email/desfazer/");
    sqlx::query("UPDATE mail_links SET issued_at = issued_at - 120").execute(&app.db.pool).await.expect("older");
    change_address(&mut own, "lia.terceira@example.gov.br").await;
    let third = link_in(&mail_to(&sink, "lia.terceira@example.gov.br").await, "/conta/email/confirmar/");
    assert_eq!(confirm_at(&mut stranger, &third).await.status, 200);
    assert_eq!(address(&app, "lia").await, "lia.terceira@example.gov.br");

    let mut owner = Browser::new(&app);
    let form = owner.get(&undo).await;
    assert_eq!(form.status, 200);
    assert!(form.body.contains("Desfazer a troca"));
    assert_eq!(address(&app, "lia").await, "lia.terceira@example.gov.br", "opening the link changes nothing");
    assert_eq!(owner.post(&undo, &[("csrf_token".into(), "x".into())]).await.status, 400);
    let undone = owner.post(&undo, &hidden_fields(&form.body)).await;
    assert_eq!(undone.status, 200, "{}", undone.body);
    assert!(undone.body.contains("Troca de e-mail desfeita") && undone.body.contains("/conta/recuperar/"));
    assert_eq!(address(&app, "lia").await, "lia@example.gov.br");
    assert!(verified(&app, "lia").await, "the link was opened from it");
    let ended = own.get("/conta/").await;
    assert_eq!(ended.status, 303, "every session ended: {}", ended.body);
    assert_eq!(confirm_at(&mut owner, &undo).await.status, 410, "once");
    // The second change's undo link (to the address in between) died with the undo.
    let second_undo =
        mail_where(&sink, |m| m.to == ["<lia.nova@example.gov.br>"] && text_part(m).contains("/conta/email/desfazer/"))
            .await;
    let second_undo = link_in(&second_undo, "/conta/email/desfazer/");
    assert_eq!(confirm_at(&mut owner, &second_undo).await.status, 410);
    // The restored address is told.
    let told = mail_where(&sink, |m| text_part(m).contains("Troca de e-mail desfeita")).await;
    assert_eq!(told.to, ["<lia@example.gov.br>"]);
    let mut back = signed_in_browser(&app, "lia", PASSWORD).await;
    let security = back.get("/conta/seguranca/").await;
    assert!(security.body.contains("Troca de e-mail desfeita"), "{}", security.body);
}

#[tokio::test]
async fn staff_see_whether_an_address_is_confirmed_and_resend_the_link_audited() {
    let sink = SmtpSink::start().await;
    let app = app_mailing_to(&sink, |_| {}).await;
    add_staff(&app).await;
    let lia: i64 =
        sqlx::query_scalar("SELECT id FROM users WHERE username = 'lia'").fetch_one(&app.db.pool).await.expect("id");
    let mut staff = staff_browser(&app).await;
    let page = staff.get(&format!("/admin/usuarios/{lia}/")).await;
    assert!(page.body.contains("lia@example.gov.br <span class=\"null\">(não confirmado)</span>"), "{}", page.body);
    let token = form_token(&page);
    let sent = staff
        .post(
            &format!("/admin/usuarios/{lia}/"),
            &[("csrf_token".into(), token), ("acao".into(), "reenviar-confirmacao".into())],
        )
        .await;
    assert_eq!(sent.status, 303, "{}", sent.body);
    let mail = mail_where(&sink, |m| text_part(m).contains("/conta/email/confirmar/")).await;
    assert_eq!(mail.to, ["<lia@example.gov.br>"]);
    let audit = staff.get("/admin/auditoria/").await;
    assert!(audit.body.contains("Link de confirmação do e-mail reenviado"), "{}", audit.body);
    let link = confirmation_links(&sink).remove(0);
    assert_eq!(confirm_at(&mut Browser::new(&app), &link).await.status, 200);
    let page = staff.get(&format!("/admin/usuarios/{lia}/")).await;
    assert!(page.body.contains("lia@example.gov.br (confirmado)"), "{}", page.body);
    assert!(!page.body.contains("reenviar-confirmacao"), "no button once confirmed");
}

#[tokio::test]
async fn a_sign_up_named_like_a_link_gets_no_link_into_the_confirmation_mail_it_sends_to_someone_else() {
    // Anyone can sign up with a victim's address: the service then mails
    // the victim, from its own address, whatever name the attacker typed.
    let sink = SmtpSink::start().await;
    let app = app_mailing_to(&sink, |s| s.login.signup_enabled = Some(true)).await;
    let mut attacker = Browser::new(&app);
    let form = attacker.get("/conta/cadastro/").await;
    assert_eq!(form.status, 200, "{}", form.body);
    let fields = with(
        hidden_fields(&form.body),
        &[
            ("cpf", "111.444.777-35"),
            ("nome", "https://evil.example/login"),
            ("email", "vitima@example.gov.br"),
            ("username", "vitima"),
            ("password", NEW_PASSWORD),
            ("password_confirmacao", NEW_PASSWORD),
        ],
    );
    let created = attacker.post("/conta/cadastro/", &fields).await;
    assert_eq!(created.status, 303, "{}", created.body);
    let mail = mail_to(&sink, "vitima@example.gov.br").await;
    let (text, html) = (text_part(&mail), part(&mail, "text/html"));
    assert!(text.contains("/conta/email/confirmar/"), "the confirmation mail: {text}");
    for body in [&text, &html] {
        assert!(!body.contains("evil.example"), "the name is not written: {body}");
    }
    assert!(text.starts_with("Olá,\n"), "a neutral greeting: {text}");
}
