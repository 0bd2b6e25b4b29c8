//! Two-step login with an authenticator app (issue 23), over real HTTP:
//! enrolment at `/conta/seguranca/` (the password asked again, the secret
//! shown as text, a confirming code, ten recovery codes shown once), then
//! a login that waits for the code, each step accepted once, recovery codes
//! used once, wrong codes throttled in a budget of their own, and the
//! login at the authorization endpoint going through the same step.

use credencial_domain::second_factor::{step_of, TotpSecret};

use crate::account::{form_token, log_in_at_account, signed_in_browser};
use crate::helpers::{hidden_fields, spawn_app, unescape_html, with, Browser, Page, TestApp};

pub(crate) const PASSWORD: &str = "senha-da-lia-1";

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs() as i64
}

fn between<'a>(body: &'a str, start: &str, end: &str) -> Vec<&'a str> {
    body.split(start).skip(1).filter_map(|rest| rest.split(end).next()).collect()
}

/// Posts `acao` (and `extra`) to the security page with its form token.
async fn act(browser: &mut Browser, acao: &str, extra: &[(&str, &str)]) -> Page {
    let token = form_token(&browser.get("/conta/seguranca/").await);
    let mut fields = vec![("csrf_token".to_owned(), token), ("acao".to_owned(), acao.to_owned())];
    fields.extend(extra.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    browser.post("/conta/seguranca/", &fields).await
}

/// Enrols lia's app; returns the secret and the recovery codes shown.
pub(crate) async fn enrol(browser: &mut Browser) -> (TotpSecret, Vec<String>) {
    let started = act(browser, "iniciar", &[("senha", PASSWORD)]).await;
    assert_eq!(started.status, 200, "{}", started.body);
    assert!(started.body.contains("<svg role=\"img\""), "the QR code, rendered here: {}", started.body);
    let text = between(&started.body, "<code class=\"secret\">", "</code>")[0].to_owned();
    let secret = TotpSecret::from_base32(&unescape_html(&text)).expect("the page's secret");
    let wrong = act(browser, "confirmar", &[("codigo", "000000")]).await;
    assert_eq!(wrong.status, 422, "a wrong confirming code");
    let code = secret.code_at(step_of(now()));
    let confirmed = act(browser, "confirmar", &[("codigo", &code)]).await;
    assert_eq!(confirmed.status, 200, "{}", confirmed.body);
    assert!(confirmed.body.contains("Aplicativo autenticador ativado"), "{}", confirmed.body);
    assert_eq!(confirmed.headers["cache-control"], "no-store");
    let codes: Vec<String> = between(&confirmed.body, "<li><code>", "</code>").into_iter().map(str::to_owned).collect();
    assert_eq!(codes.len(), 10, "{}", confirmed.body);
    (secret, codes)
}

/// Logs lia in with the password: the answer (303 to the code's page).
async fn password_step(app: &TestApp) -> (Browser, Page) {
    let mut browser = Browser::new(app);
    let answer = log_in_at_account(&mut browser, "/conta/", "lia", PASSWORD).await;
    (browser, answer)
}

/// Posts `code` at the second step.
async fn second_step(browser: &mut Browser, code: &str) -> Page {
    let page = browser.get("/conta/entrar/verificar/?next=%2Fconta%2F").await;
    assert_eq!(page.status, 200, "{}", page.body);
    browser.post("/conta/entrar/verificar/", &with(hidden_fields(&page.body), &[("codigo", code)])).await
}

#[tokio::test]
async fn an_enrolled_account_logs_in_with_its_code_once_per_step_and_with_each_recovery_code_once() {
    let app = spawn_app().await;
    let id = app.add_user("lia", PASSWORD, true).await;
    let mut browser = signed_in_browser(&app, "lia", PASSWORD).await;
    let wrong_password = act(&mut browser, "iniciar", &[("senha", "not it")]).await;
    assert_eq!(wrong_password.status, 422, "the password is asked again");
    let (secret, codes) = enrol(&mut browser).await;
    let sealed: Vec<u8> = sqlx::query_scalar("SELECT secret_sealed FROM user_totp WHERE user_id = $1")
        .bind(id)
        .fetch_one(&app.db.pool)
        .await
        .expect("stored");
    assert!(!sealed.windows(20).any(|w| w == secret.bytes()), "sealed at rest, not in the clear");
    let again = browser.get("/conta/seguranca/").await;
    assert!(!again.body.contains(&codes[0]), "the codes are shown once");
    assert!(again.body.contains("Códigos de recuperação não usados:&nbsp;10"), "{}", again.body);

    // The password alone no longer opens the account.
    let (mut phone, answer) = password_step(&app).await;
    assert_eq!(answer.location.as_deref(), Some("/conta/entrar/verificar/?next=%2Fconta%2F"), "{}", answer.body);
    let waiting = phone.get("/conta/").await;
    assert_eq!(
        waiting.location.as_deref(),
        Some("/conta/entrar/verificar/?next=%2Fconta%2F"),
        "no page before the code"
    );
    let wrong = second_step(&mut phone, "123456").await;
    assert!(wrong.body.contains("Código inválido ou já usado"), "{}", wrong.body);
    // The step used to confirm is used: the next one (within the drift) passes.
    let step = step_of(now());
    let replayed = second_step(&mut phone, &secret.code_at(step - 1)).await;
    assert!(replayed.body.contains("Código inválido ou já usado"), "an older step than the last used");
    let next = secret.code_at(step + 1);
    let passed = second_step(&mut phone, &next).await;
    assert_eq!((passed.status, passed.location.as_deref()), (303, Some("/conta/")), "{}", passed.body);
    assert_eq!(phone.get("/conta/").await.status, 200);
    let amr: String = sqlx::query_scalar("SELECT amr FROM sessions WHERE user_id = $1 ORDER BY id DESC LIMIT 1")
        .bind(id)
        .fetch_one(&app.db.pool)
        .await
        .expect("amr");
    assert_eq!(amr, "pwd otp");

    // The same code again, in another browser: refused (each step once).
    let (mut tablet, _) = password_step(&app).await;
    let replay = second_step(&mut tablet, &next).await;
    assert!(replay.body.contains("Código inválido ou já usado"), "a replayed code");
    // A recovery code passes once.
    let recovered = second_step(&mut tablet, &codes[3].to_uppercase()).await;
    assert_eq!(recovered.status, 303, "{}", recovered.body);
    let (mut other, _) = password_step(&app).await;
    let reused = second_step(&mut other, &codes[3]).await;
    assert!(reused.body.contains("Código inválido ou já usado"), "a recovery code is used up");
    let left = browser.get("/conta/seguranca/").await;
    assert!(left.body.contains("Códigos de recuperação não usados:&nbsp;9"), "{}", left.body);
}

#[tokio::test]
async fn wrong_codes_have_their_own_budget_that_a_right_password_never_resets() {
    let app = spawn_app().await;
    app.add_user("lia", PASSWORD, true).await;
    let mut browser = signed_in_browser(&app, "lia", PASSWORD).await;
    let (secret, _) = enrol(&mut browser).await;
    let (mut thief, _) = password_step(&app).await;
    // The wrong confirming code at the enrolment was the first of five.
    for _ in 0..4 {
        let wrong = second_step(&mut thief, "000000").await;
        assert_eq!(wrong.status, 200, "{}", wrong.body);
    }
    let limited = second_step(&mut thief, "000000").await;
    assert_eq!(limited.status, 429, "the sixth wrong code is throttled");
    assert!(limited.headers.contains_key("retry-after"));
    // Someone holding the password logs in again (a new browser, a right
    // password): the codes' budget is not reset…
    let (mut again, answer) = password_step(&app).await;
    assert_eq!(answer.status, 303, "fumbling codes never locks the password step: {}", answer.body);
    let still = second_step(&mut again, "000000").await;
    assert_eq!(still.status, 429, "a right password buys no new guesses: {}", still.body);
    let right = second_step(&mut again, &secret.code_at(step_of(now()) + 1)).await;
    assert_eq!(right.status, 429, "while locked, not even the right code is tried");
    // …and lia is told, in her activity (and by mail, when mail is on).
    let security = browser.get("/conta/seguranca/").await;
    assert!(security.body.contains("Códigos errados demais"), "{}", security.body);
    // Nothing opened for the waiting sessions: the panel and the sessions page.
    assert_eq!(thief.get("/conta/sessoes/").await.status, 303);
    assert_eq!(thief.get("/admin/").await.status, 303);
}

#[tokio::test]
async fn turning_the_app_off_asks_the_password_and_offers_to_end_the_other_sessions() {
    let app = spawn_app().await;
    let id = app.add_user("lia", PASSWORD, true).await;
    let mut browser = signed_in_browser(&app, "lia", PASSWORD).await;
    let _laptop = signed_in_browser(&app, "lia", PASSWORD).await;
    let (_, codes) = enrol(&mut browser).await;
    let refused = act(&mut browser, "desativar", &[("senha", "wrong")]).await;
    assert_eq!(refused.status, 422);
    let fresh = act(&mut browser, "novos-codigos", &[("senha", PASSWORD)]).await;
    let new_codes: Vec<&str> = between(&fresh.body, "<li><code>", "</code>");
    assert_eq!(new_codes.len(), 10);
    assert!(!new_codes.contains(&codes[0].as_str()), "a new set");
    let off = act(&mut browser, "desativar", &[("senha", PASSWORD)]).await;
    assert_eq!(off.status, 200, "{}", off.body);
    assert!(off.body.contains("Encerrar as sessões abertas em outros navegadores"), "{}", off.body);
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM recovery_codes WHERE user_id = $1")
        .bind(id)
        .fetch_one(&app.db.pool)
        .await
        .expect("count");
    assert_eq!(left, 0, "the codes died with the app");
    let ended = act(&mut browser, "encerrar-outras", &[]).await;
    assert_eq!(ended.location.as_deref(), Some("/conta/seguranca/?encerradas=1"));
    let (_, answer) = password_step(&app).await;
    assert_eq!(answer.location.as_deref(), Some("/conta/"), "the password alone again");
}

#[tokio::test]
async fn a_login_at_the_authorization_endpoint_asks_the_code_and_goes_back_to_the_request() {
    let (app, _) = crate::oauth::app().await;
    let mut browser = Browser::new(&app);
    // ana enrols (her password in the oauth tests' fixture).
    let mut own = signed_in_browser(&app, "ana", "ana-password").await;
    let token = form_token(&own.get("/conta/seguranca/").await);
    let started = own
        .post(
            "/conta/seguranca/",
            &[
                ("csrf_token".into(), token.clone()),
                ("acao".into(), "iniciar".into()),
                ("senha".into(), "ana-password".into()),
            ],
        )
        .await;
    let text = unescape_html(between(&started.body, "<code class=\"secret\">", "</code>")[0]);
    let secret = TotpSecret::from_base32(&text).expect("secret");
    let confirm = [
        ("csrf_token".to_owned(), token),
        ("acao".to_owned(), "confirmar".to_owned()),
        ("codigo".to_owned(), secret.code_at(step_of(now()))),
    ];
    assert_eq!(own.post("/conta/seguranca/", &confirm).await.status, 200);

    let request = crate::oauth::portal_request("", "s1");
    let login = browser.get(&request).await;
    let fields = with(hidden_fields(&login.body), &[("username", "ana"), ("password", "ana-password")]);
    let logged_in = browser.post("/oauth/authorize/", &fields).await;
    assert_eq!(logged_in.status, 303, "{}", logged_in.body);
    let to_code = logged_in.location.expect("to the code");
    assert!(to_code.starts_with("/conta/entrar/verificar/?next=%2Foauth%2Fauthorize%2F%3F"), "{to_code}");
    // Until the code, the authorization request goes to the code's page;
    // `prompt=none` hears login_required.
    let waiting = browser.get(&request).await;
    assert!(waiting.location.as_deref().is_some_and(|l| l.starts_with("/conta/entrar/verificar/")), "{waiting:?}");
    let silent = browser.get(&format!("{request}&prompt=none")).await;
    assert!(silent.location.as_deref().is_some_and(|l| l.contains("error=login_required")), "{silent:?}");

    let page = browser.get(&to_code).await;
    let code = secret.code_at(step_of(now()) + 1);
    let passed = browser.post("/conta/entrar/verificar/", &with(hidden_fields(&page.body), &[("codigo", &code)])).await;
    assert_eq!(passed.status, 303, "{}", passed.body);
    let back = passed.location.expect("back");
    assert!(back.starts_with("/oauth/authorize/?"), "back to the request: {back}");
    let consent = browser.get(&back).await;
    assert!(consent.body.contains("Autorizar acesso"), "{}", consent.body);
}

/// Enrols ana's app from her own browser `own` (password `ana-password`);
/// returns the secret.
async fn enrol_ana(own: &mut Browser, next: Option<&str>) -> (TotpSecret, Page) {
    let mut fields = vec![("senha", "ana-password")];
    if let Some(next) = next {
        fields.push(("next", next));
    }
    let started = act(own, "iniciar", &fields).await;
    let text = unescape_html(between(&started.body, "<code class=\"secret\">", "</code>")[0]);
    let secret = TotpSecret::from_base32(&text).expect("secret");
    let code = secret.code_at(step_of(now()));
    let mut confirm = vec![("codigo", code.as_str())];
    if let Some(next) = next {
        confirm.push(("next", next));
    }
    let confirmed = act(own, "confirmar", &confirm).await;
    assert_eq!(confirmed.status, 200, "{}", confirmed.body);
    (secret, confirmed)
}

#[tokio::test]
async fn an_application_that_requires_a_second_factor_takes_a_password_only_person_to_enrol_and_then_asks_the_code() {
    let (app, _) = crate::oauth::app().await;
    sqlx::query("UPDATE oauth_clients SET requires_second_factor = TRUE WHERE client_id = 'portal'")
        .execute(&app.db.pool)
        .await
        .expect("require");
    let mut browser = Browser::new(&app);
    let request = crate::oauth::portal_request("", "s2");
    let login = browser.get(&request).await;
    let fields = with(hidden_fields(&login.body), &[("username", "ana"), ("password", "ana-password")]);
    let back = browser.post("/oauth/authorize/", &fields).await.location.expect("back");
    // No factor yet: to the security page, which says why.
    let to_enrol = browser.get(&back).await;
    let location = to_enrol.location.expect("to enrol");
    assert!(location.starts_with("/conta/seguranca/?exigido=O+aplicativo+Portal"), "{location}");
    let page = browser.get(&location).await;
    assert!(page.body.contains("exige a verificação em duas etapas"), "{}", page.body);
    // Without a page to show, the client hears login_required.
    let silent = browser.get(&format!("{request}&prompt=none")).await;
    assert!(silent.location.as_deref().is_some_and(|l| l.contains("error=login_required")), "{silent:?}");

    let next = unescape_html(between(&page.body, "name=\"next\" value=\"", "\"")[0]);
    let (secret, enrolled) = enrol_ana(&mut browser, Some(&next)).await;
    assert!(enrolled.body.contains("Continuar para o aplicativo"), "{}", enrolled.body);
    // Back at the request, the password-only session steps up with a code.
    let step_up = browser.get(&next).await;
    let to_code = step_up.location.expect("to the code");
    assert!(to_code.starts_with("/conta/entrar/verificar/?next="), "{to_code}");
    let form = browser.get(&to_code).await;
    let code = secret.code_at(step_of(now()) + 1);
    let passed = browser.post("/conta/entrar/verificar/", &with(hidden_fields(&form.body), &[("codigo", &code)])).await;
    let consent = browser.get(&passed.location.expect("back")).await;
    assert!(consent.body.contains("Autorizar acesso"), "{}", consent.body);
}

#[tokio::test]
async fn acr_values_asks_the_second_factor_and_discovery_lists_the_values() {
    let (app, _) = crate::oidc::oidc_app(|_| {}).await;
    let discovery: serde_json::Value = app
        .client
        .get(format!("{}/.well-known/openid-configuration", app.address))
        .send()
        .await
        .expect("sent")
        .json()
        .await
        .expect("json");
    assert_eq!(
        discovery["acr_values_supported"],
        serde_json::json!([
            "urn:credencial:acr:senha",
            "urn:credencial:acr:dois-fatores",
            "urn:credencial:acr:govbr:bronze",
            "urn:credencial:acr:govbr:prata",
            "urn:credencial:acr:govbr:ouro"
        ])
    );
    let mut own = signed_in_browser(&app, "ana", "ana-password").await;
    let (secret, _) = enrol_ana(&mut own, None).await;
    let mut browser = Browser::new(&app);
    let plain = crate::oauth::portal_request("", "s3");
    // A first login passes the factor already (ana has one): consent.
    let login = browser.get(&plain).await;
    let fields = with(hidden_fields(&login.body), &[("username", "ana"), ("password", "ana-password")]);
    let to_code = browser.post("/oauth/authorize/", &fields).await.location.expect("to the code");
    let form = browser.get(&to_code).await;
    let code = secret.code_at(step_of(now()) + 1);
    let passed = browser.post("/conta/entrar/verificar/", &with(hidden_fields(&form.body), &[("codigo", &code)])).await;
    let consent = browser.get(&passed.location.expect("back")).await;
    assert!(consent.body.contains("Autorizar acesso"));
    // With two factors passed, acr_values naming them goes straight on.
    let strict = format!("{plain}&acr_values=urn%3Acredencial%3Aacr%3Adois-fatores");
    let page = browser.get(&strict).await;
    assert!(page.body.contains("Autorizar acesso"), "already met: {}", page.body);
}

#[tokio::test]
async fn staff_set_an_applications_second_factor_requirement_from_the_panel_and_the_trail_says_so() {
    let (app, _) = crate::oauth::app().await;
    crate::admin::add_staff(&app).await;
    let mut staff = crate::admin::staff_browser(&app).await;
    let page = staff.get("/admin/aplicativos/portal/").await;
    assert!(page.body.contains("<dt>Segundo fator</dt><dd>Não exigido</dd>"), "{}", page.body);
    let token = form_token(&page);
    let saved = staff
        .post(
            "/admin/aplicativos/portal/segundo-fator/",
            &[("csrf_token".into(), token), ("requires_second_factor".into(), "1".into())],
        )
        .await;
    assert_eq!(saved.status, 303, "{}", saved.body);
    let after = staff.get(&saved.location.expect("back")).await;
    assert!(after.body.contains("<dt>Segundo fator</dt><dd>Exigido</dd>"), "{}", after.body);
    let required: i64 =
        sqlx::query_scalar("SELECT count(*) FROM oauth_clients WHERE client_id = 'portal' AND requires_second_factor")
            .fetch_one(&app.db.pool)
            .await
            .expect("flag");
    assert_eq!(required, 1);
    let audit = staff.get("/admin/auditoria/?alvo=portal").await;
    assert!(audit.body.contains("Verificação em duas etapas exigida: sim"), "{}", audit.body);
}

#[tokio::test]
async fn id_tokens_say_how_the_person_logged_in_and_keep_it_through_refreshes() {
    let (app, _) = crate::oidc::oidc_app(|_| {}).await;
    let keys = crate::oidc::published_keys(&app).await;
    let alg = jsonwebtoken::Algorithm::RS256;
    // The password alone.
    let (_, tokens) = crate::oidc::signed_in(&app, "openid").await;
    let claims = crate::oidc::verified_id_token(tokens["id_token"].as_str().expect("id_token"), &keys, alg);
    assert_eq!(
        (claims["amr"].clone(), claims["acr"].clone()),
        (serde_json::json!(["pwd"]), serde_json::json!("urn:credencial:acr:senha"))
    );

    // With the app: the password, the code, and the login passes both.
    let mut own = signed_in_browser(&app, "ana", "ana-password").await;
    let (secret, _) = enrol_ana(&mut own, None).await;
    let mut browser = Browser::new(&app);
    let request = crate::oidc::portal_oidc_request("openid", &[]);
    let login = browser.get(&request).await;
    let fields = with(hidden_fields(&login.body), &[("username", "ana"), ("password", "ana-password")]);
    let to_code = browser.post("/oauth/authorize/", &fields).await.location.expect("to the code");
    let form = browser.get(&to_code).await;
    let code = secret.code_at(step_of(now()) + 1);
    let passed = browser.post("/conta/entrar/verificar/", &with(hidden_fields(&form.body), &[("codigo", &code)])).await;
    let back = browser.get(&passed.location.expect("back")).await;
    let location = match back.status {
        302 => back.location.expect("to the client"),
        _ => crate::oauth::decide(&mut browser, &back, "approve").await,
    };
    let code = crate::oauth::callback(&location, crate::oauth::PORTAL_URI)["code"].clone();
    let tokens = crate::oidc::exchange(&app, &code).await;
    let claims = crate::oidc::verified_id_token(tokens["id_token"].as_str().expect("id_token"), &keys, alg);
    assert_eq!(claims["amr"], serde_json::json!(["pwd", "otp", "mfa"]));
    assert_eq!(claims["acr"], "urn:credencial:acr:dois-fatores");

    // Introspection reports the class; a refresh's ID token keeps both.
    let access = tokens["access_token"].as_str().expect("access");
    let r = app
        .client
        .post(format!("{}/oauth/introspect/", app.address))
        .basic_auth("portal", Some(crate::oauth::PORTAL_SECRET))
        .form(&[("token", access)])
        .send()
        .await
        .expect("sent");
    let introspected: serde_json::Value = r.json().await.expect("json");
    assert_eq!(introspected["acr"], "urn:credencial:acr:dois-fatores", "{introspected}");
    let form = [("grant_type", "refresh_token"), ("refresh_token", tokens["refresh_token"].as_str().expect("refresh"))];
    let r = crate::oauth::token_request(&app, Some(("portal", crate::oauth::PORTAL_SECRET)), &form).await;
    let refreshed: serde_json::Value = r.json().await.expect("json");
    let claims = crate::oidc::verified_id_token(refreshed["id_token"].as_str().expect("id_token"), &keys, alg);
    assert_eq!(
        (claims["amr"].clone(), claims["acr"].clone()),
        (serde_json::json!(["pwd", "otp", "mfa"]), serde_json::json!("urn:credencial:acr:dois-fatores"))
    );
}

#[tokio::test]
async fn staff_must_pass_a_second_factor_before_the_panel_and_can_reset_a_persons() {
    let app = crate::helpers::spawn_app_with(|s| s.login.staff_second_factor = Some(true)).await;
    crate::admin::add_staff(&app).await;
    let lia = app.add_user("lia", PASSWORD, true).await;
    // The first administrator bootstraps: taken to enrol before any page.
    let mut staff = signed_in_browser(&app, "chefe", "senha-do-chefe-1").await;
    let first = staff.get("/admin/").await;
    let to_enrol = first.location.expect("to enrol");
    assert!(to_enrol.starts_with("/conta/seguranca/?exigido=A+%C3%A1rea+de+administra%C3%A7%C3%A3o"), "{to_enrol}");
    let token = form_token(&staff.get(&to_enrol).await);
    let start = [("csrf_token", token.as_str()), ("acao", "iniciar"), ("senha", "senha-do-chefe-1")];
    let started = staff.post("/conta/seguranca/", &start.map(|(k, v)| (k.to_owned(), v.to_owned()))).await;
    let secret =
        TotpSecret::from_base32(&unescape_html(between(&started.body, "<code class=\"secret\">", "</code>")[0]))
            .expect("secret");
    let code = secret.code_at(step_of(now()));
    let confirm = [("csrf_token", token.as_str()), ("acao", "confirmar"), ("codigo", code.as_str())];
    assert_eq!(staff.post("/conta/seguranca/", &confirm.map(|(k, v)| (k.to_owned(), v.to_owned()))).await.status, 200);
    // Still the password-only session: the panel asks the code (step-up).
    let again = staff.get("/admin/usuarios/").await;
    let to_code = again.location.expect("to the code");
    assert_eq!(to_code, "/conta/entrar/verificar/?next=%2Fadmin%2Fusuarios%2F");
    let form = staff.get(&to_code).await;
    let code = secret.code_at(step_of(now()) + 1);
    let passed = staff.post("/conta/entrar/verificar/", &with(hidden_fields(&form.body), &[("codigo", &code)])).await;
    assert_eq!(passed.location.as_deref(), Some("/admin/usuarios/"));
    assert_eq!(staff.get("/admin/usuarios/").await.status, 200, "two factors: the panel opens");

    // lia enrols; staff see it and reset it (a lost phone).
    let mut own = signed_in_browser(&app, "lia", PASSWORD).await;
    enrol(&mut own).await;
    let page = staff.get(&format!("/admin/usuarios/{lia}/")).await;
    assert!(page.body.contains("Ativada (aplicativo autenticador ou chave de acesso)"), "{}", page.body);
    let token = form_token(&page);
    let reset = staff
        .post(
            &format!("/admin/usuarios/{lia}/"),
            &[
                ("csrf_token".into(), token),
                ("acao".into(), "remover-segundo-fator".into()),
                ("confirmado".into(), "sim".into()),
            ],
        )
        .await;
    assert_eq!(reset.status, 303, "{}", reset.body);
    let after = staff.get(&reset.location.expect("back")).await;
    assert!(after.body.contains("Não ativada"), "{}", after.body);
    assert_eq!(own.get("/conta/").await.status, 303, "lia's sessions ended");
    let (_, answer) = password_step(&app).await;
    assert_eq!(answer.location.as_deref(), Some("/conta/"), "the password alone again");
    let audit = staff.get("/admin/auditoria/?alvo=lia").await;
    assert!(audit.body.contains("Segundo fator removido"), "{}", audit.body);
}
