//! The person's experiences and degrees over real HTTP (`/conta/
//! experiencias/`, `/conta/formacoes/`): what is entered is what the next
//! `POST /api/perfil/dados/` answers; every refusal (an end before its
//! start, another person's id, a forged, cross-site or junk post) changes
//! nothing and is never a 5xx.

use serde_json::{json, Value};

use crate::account::{form_token, log_in_at_account, signed_in_browser};
use crate::helpers::{unescape_html, with, Browser, Page, TestApp};
use crate::profile::{answered_profile, app, consent_to_every_client, register_client};

const LIA_PASSWORD: &str = "senha-da-lia-1";
const SCOPES: &str = "dados_publicos experiencia_profissional formacao_academica";

/// An app with the profile client `host`, and lia signed in.
async fn lia() -> (TestApp, i64, Browser) {
    let app = app().await;
    register_client(&app, "host", SCOPES).await;
    let id = app.add_user("lia", LIA_PASSWORD, true).await;
    consent_to_every_client(&app, id).await;
    let browser = signed_in_browser(&app, "lia", LIA_PASSWORD).await;
    (app, id, browser)
}

/// `POST /api/perfil/dados/` for `user` through the client `host`.
async fn profile_of(app: &TestApp, user: i64) -> Value {
    answered_profile(app, user, SCOPES, "host").await
}

fn fields(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

/// Posts `pairs` to `path` with the token of the page at `form_path`.
async fn post_form(browser: &mut Browser, form_path: &str, path: &str, pairs: &[(&str, &str)]) -> Page {
    let page = browser.get(form_path).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let token = form_token(&page);
    browser.post(path, &with(fields(&[("csrf_token", &token)]), pairs)).await
}

/// The first entry id linked from a list page.
fn first_id(page: &Page, list: &str) -> i64 {
    let link = format!("<a href=\"{list}");
    page.body
        .match_indices(&link)
        .filter_map(|(at, _)| page.body[at + link.len()..].split('/').next()?.parse().ok())
        .next()
        .unwrap_or_else(|| panic!("no entry link in {}", page.body))
}

const EXPERIENCE: [(&str, &str); 6] = [
    ("estabelecimento", "Hospital Universitário Onofre Lopes"),
    ("profissao", "Enfermeira"),
    ("data_inicio", "2019-02-01"),
    ("data_fim", ""),
    ("municipio", "Natal"),
    ("descricao", "Plantões na UTI"),
];

#[tokio::test]
async fn experiences_are_added_edited_and_deleted_and_the_next_profile_read_answers_them() {
    let (app, lia, mut browser) = lia().await;
    let list = browser.get("/conta/experiencias/").await;
    assert_eq!(list.status, 200, "{}", list.body);
    assert_eq!(list.headers["cache-control"], "no-store");
    assert!(list.body.contains("Nenhuma experiência profissional cadastrada."), "{}", list.body);
    for name in ["estabelecimento", "profissao", "data_inicio", "data_fim", "municipio", "descricao"] {
        assert!(list.body.contains(&format!("name=\"{name}\"")), "{name} missing: {}", list.body);
    }
    assert_eq!(
        profile_of(&app, lia).await["experiencia_profissional"]["erro"],
        json!("O usuário não possui experiência profissional cadastrada.")
    );

    let added = post_form(&mut browser, "/conta/experiencias/", "/conta/experiencias/", &EXPERIENCE).await;
    assert_eq!((added.status, added.location.as_deref()), (303, Some("/conta/experiencias/?ok=adicionada")));
    let list = browser.get("/conta/experiencias/?ok=adicionada").await;
    assert!(list.body.contains("role=\"status\">Experiência adicionada.</p>"), "{}", list.body);
    assert!(unescape_html(&list.body).contains("Enfermeira — Hospital Universitário Onofre Lopes"), "{}", list.body);
    assert!(list.body.contains("Desde 01/02/2019 · Natal"), "{}", list.body);
    assert_eq!(
        profile_of(&app, lia).await["experiencia_profissional"],
        json!([{"estabelecimento": "Hospital Universitário Onofre Lopes", "profissao": "Enfermeira",
                "data_inicio": "2019-02-01T00:00:00", "data_fim": null, "municipio": "Natal",
                "descricao": "Plantões na UTI"}]),
        "what was entered is what the profile answers at once"
    );

    let id = first_id(&list, "/conta/experiencias/");
    let edit_path = format!("/conta/experiencias/{id}/");
    let edit = browser.get(&edit_path).await;
    assert_eq!(edit.status, 200, "{}", edit.body);
    assert!(edit.body.contains("value=\"2019-02-01\""), "the form is filled: {}", edit.body);
    let changed = [("profissao", "Enfermeira intensivista"), ("data_fim", "2023-06-30"), ("descricao", "")];
    let typed: Vec<(&str, &str)> =
        EXPERIENCE.iter().map(|&(k, v)| changed.iter().find(|(c, _)| *c == k).copied().unwrap_or((k, v))).collect();
    let saved = post_form(&mut browser, &edit_path, &edit_path, &typed).await;
    assert_eq!((saved.status, saved.location.as_deref()), (303, Some("/conta/experiencias/?ok=salva")));
    let answered = profile_of(&app, lia).await;
    assert_eq!(answered["experiencia_profissional"][0]["profissao"], "Enfermeira intensivista");
    assert_eq!(answered["experiencia_profissional"][0]["data_fim"], "2023-06-30T00:00:00");

    let delete_path = format!("/conta/experiencias/{id}/excluir/");
    let confirm = browser.get(&delete_path).await;
    assert_eq!(confirm.status, 200, "{}", confirm.body);
    assert!(confirm.body.contains("Excluir experiência"), "{}", confirm.body);
    let deleted = post_form(&mut browser, &delete_path, &delete_path, &[]).await;
    assert_eq!((deleted.status, deleted.location.as_deref()), (303, Some("/conta/experiencias/?ok=excluida")));
    assert!(profile_of(&app, lia).await["experiencia_profissional"]["erro"].is_string());
    assert_eq!(browser.get(&edit_path).await.status, 404, "gone");
}

#[tokio::test]
async fn degrees_are_chosen_by_description_stored_by_code_and_answered_by_description() {
    let (app, lia, mut browser) = lia().await;
    let list = browser.get("/conta/formacoes/").await;
    assert_eq!(list.status, 200, "{}", list.body);
    assert_eq!(list.body.matches("<option value=\"").count(), 11, "an empty choice and the contract's ten");
    assert!(list.body.contains("<option value=\"MEP\">Mestrado Profissional</option>"), "{}", list.body);
    let degree = [
        ("instituicao", "UFRN"),
        ("curso", "Saúde da Família"),
        ("grau_formacao", "MEP"),
        ("data_inicio", "2020-03-02"),
        ("data_fim", ""),
        ("municipio", "Natal"),
        ("descricao", ""),
    ];
    let added = post_form(&mut browser, "/conta/formacoes/", "/conta/formacoes/", &degree).await;
    assert_eq!((added.status, added.location.as_deref()), (303, Some("/conta/formacoes/?ok=adicionada")));
    let (code,): (String,) = sqlx::query_as("SELECT CAST(grau AS TEXT) FROM degrees WHERE user_id = $1")
        .bind(lia)
        .fetch_one(&app.db.pool)
        .await
        .expect("row");
    assert_eq!(code, "MEP", "stored by code");
    assert_eq!(
        profile_of(&app, lia).await["formacao_academica"],
        json!([{"instituicao": "UFRN", "curso": "Saúde da Família", "data_inicio": "2020-03-02", "data_fim": null,
                "municipio": "Natal", "descricao": "", "grau_formacao": "Mestrado Profissional"}])
    );
    let list = browser.get("/conta/formacoes/").await;
    let id = first_id(&list, "/conta/formacoes/");
    let edit = browser.get(&format!("/conta/formacoes/{id}/")).await;
    assert!(edit.body.contains("<option value=\"MEP\" selected>Mestrado Profissional</option>"), "{}", edit.body);
    let path = format!("/conta/formacoes/{id}/");
    let typed: Vec<_> = degree.iter().map(|&(k, v)| if k == "grau_formacao" { (k, "DTR") } else { (k, v) }).collect();
    let saved = post_form(&mut browser, &path, &path, &typed).await;
    assert_eq!(saved.status, 303, "{}", saved.body);
    assert_eq!(profile_of(&app, lia).await["formacao_academica"][0]["grau_formacao"], "Doutorado");
    // A description or a made-up code is refused.
    let typed: Vec<_> =
        degree.iter().map(|&(k, v)| if k == "grau_formacao" { (k, "Doutorado") } else { (k, v) }).collect();
    let refused = post_form(&mut browser, "/conta/formacoes/", "/conta/formacoes/", &typed).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(refused.body.contains("Escolha um grau de formação da lista."), "{}", refused.body);
}

#[tokio::test]
async fn an_end_before_its_start_is_refused_with_a_clear_message_and_the_form_keeps_what_was_typed() {
    let (app, lia, mut browser) = lia().await;
    let typed: Vec<_> =
        EXPERIENCE.iter().map(|&(k, v)| if k == "data_fim" { (k, "2019-01-31") } else { (k, v) }).collect();
    let refused = post_form(&mut browser, "/conta/experiencias/", "/conta/experiencias/", &typed).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert_eq!(refused.headers["cache-control"], "no-store");
    let body = unescape_html(&refused.body);
    assert!(body.contains("role=\"alert\">Não foi possível salvar: confira os campos indicados abaixo."), "{body}");
    assert!(body.contains("A data de término não pode ser anterior à data de início."), "{body}");
    for (_, value) in EXPERIENCE.iter().filter(|(k, _)| *k != "data_fim" && *k != "descricao") {
        assert!(body.contains(&format!("value=\"{value}\"")), "{value} kept: {body}");
    }
    assert!(body.contains(">Plantões na UTI</textarea>"), "{body}");
    assert!(
        body.contains("value=\"2019-01-31\" aria-describedby=\"dica-data_fim erro-data_fim\" aria-invalid=\"true\"")
    );
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM experiences WHERE user_id = $1")
        .bind(lia)
        .fetch_one(&app.db.pool)
        .await
        .expect("count");
    assert_eq!(stored, 0, "nothing stored");

    // The same on the edit form.
    let added = post_form(&mut browser, "/conta/experiencias/", "/conta/experiencias/", &EXPERIENCE).await;
    assert_eq!(added.status, 303);
    let id = first_id(&browser.get("/conta/experiencias/").await, "/conta/experiencias/");
    let path = format!("/conta/experiencias/{id}/");
    let refused = post_form(&mut browser, &path, &path, &typed).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(refused.body.contains("value=\"2019-01-31\""), "{}", refused.body);
    assert_eq!(profile_of(&app, lia).await["experiencia_profissional"][0]["data_fim"], Value::Null, "unchanged");
}

#[tokio::test]
async fn another_person_s_entry_or_an_id_that_is_not_one_is_a_404_page_for_every_method() {
    let (app, _lia, mut lia_browser) = lia().await;
    let added = post_form(&mut lia_browser, "/conta/experiencias/", "/conta/experiencias/", &EXPERIENCE).await;
    assert_eq!(added.status, 303);
    let lias = first_id(&lia_browser.get("/conta/experiencias/").await, "/conta/experiencias/");
    app.add_user("ivo", "senha-do-ivo-1", true).await;
    let mut ivo = signed_in_browser(&app, "ivo", "senha-do-ivo-1").await;
    let token = form_token(&ivo.get("/conta/experiencias/").await);
    let posted = |extra: &[(&str, &str)]| with(fields(&[("csrf_token", &token)]), extra);

    let ids = [
        lias.to_string(),
        "abc".into(),
        "-1".into(),
        "+1".into(),
        "1.0".into(),
        "0x10".into(),
        "99999999999999999999".into(),
        "%20".into(),
    ];
    for id in &ids {
        for list in ["/conta/experiencias/", "/conta/formacoes/"] {
            let edit = format!("{list}{id}/");
            let delete = format!("{list}{id}/excluir/");
            for page in [ivo.get(&edit).await, ivo.get(&delete).await] {
                assert_eq!(page.status, 404, "GET {list}{id}: {}", page.body);
                assert!(page.body.contains("Registro não encontrado"), "{}", page.body);
                assert!(page.headers["content-type"].to_str().expect("ascii").starts_with("text/html"));
            }
            for form in [posted(&EXPERIENCE), posted(&[("estabelecimento", "")])] {
                assert_eq!(ivo.post(&edit, &form).await.status, 404, "POST {edit}");
            }
            assert_eq!(ivo.post(&delete, &posted(&[])).await.status, 404, "POST {delete}");
        }
    }
    // Lia's entry is untouched; under the other kind's path it is not found
    // for her either.
    let hers = lia_browser.get(&format!("/conta/experiencias/{lias}/")).await;
    assert_eq!(hers.status, 200);
    assert!(hers.body.contains("value=\"Enfermeira\""), "{}", hers.body);
    let token = form_token(&hers);
    let other_kind =
        lia_browser.post(&format!("/conta/formacoes/{lias}/excluir/"), &fields(&[("csrf_token", &token)])).await;
    assert_eq!(other_kind.status, 404);
    assert_eq!(lia_browser.get(&format!("/conta/experiencias/{lias}/")).await.status, 200, "still there");
}

#[tokio::test]
async fn forged_cross_site_junk_and_signed_out_posts_are_refused_and_change_nothing() {
    let (app, lia, mut browser) = lia().await;
    let page = browser.get("/conta/experiencias/").await;
    let token = form_token(&page);
    let good = with(fields(&[("csrf_token", &token)]), &EXPERIENCE);
    let url = format!("{}/conta/experiencias/", app.address);

    let forged = browser.post("/conta/experiencias/", &with(fields(&[("csrf_token", "forjado")]), &EXPERIENCE)).await;
    assert_eq!(forged.status, 403, "{}", forged.body);
    let missing = browser.post("/conta/experiencias/", &fields(&EXPERIENCE)).await;
    assert_eq!(missing.status, 403, "{}", missing.body);
    // Another session's token.
    let mut other = Browser::new(&app);
    assert_eq!(log_in_at_account(&mut other, "/conta/", "lia", LIA_PASSWORD).await.status, 303);
    let others = form_token(&other.get("/conta/experiencias/").await);
    let wrong_session =
        browser.post("/conta/experiencias/", &with(fields(&[("csrf_token", &others)]), &EXPERIENCE)).await;
    assert_eq!(wrong_session.status, 403);
    for site in ["cross-site", "same-site"] {
        let cross = browser.send(app.client.post(&url).header("sec-fetch-site", site).form(&good)).await;
        assert_eq!(cross.status, 403, "{site}: {}", cross.body);
    }
    let json = browser.send(app.client.post(&url).header("content-type", "application/json").body("{}")).await;
    assert_eq!(json.status, 400, "{}", json.body);
    let broken = browser
        .send(app.client.post(&url).header("content-type", "application/x-www-form-urlencoded").body("%%%=&&="))
        .await;
    assert!(broken.status == 400 || broken.status == 403, "{}: {}", broken.status, broken.body);
    let repeated = browser.post("/conta/experiencias/", &with(good.clone(), &[("profissao", "Outra")])).await;
    assert_eq!(repeated.status, 400, "{}", repeated.body);
    let huge = "x".repeat(70 * 1024);
    let too_large = browser.post("/conta/experiencias/", &with(good.clone(), &[("extra", &huge)])).await;
    assert_eq!(too_large.status, 413, "{}", too_large.body);
    let control = with(
        fields(&[("csrf_token", &token)]),
        &[
            ("estabelecimento", "Hospital\u{7}"),
            ("profissao", "Enfermeira"),
            ("data_inicio", "2019-13-01"),
            ("municipio", "Natal"),
        ],
    );
    let refused = browser.post("/conta/experiencias/", &control).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(refused.body.contains("Remova os caracteres de controle.") && refused.body.contains("AAAA-MM-DD"));
    let mut signed_out = Browser::new(&app);
    let answer = signed_out.post("/conta/experiencias/", &good).await;
    assert_eq!(
        (answer.status, answer.location.as_deref()),
        (303, Some("/conta/entrar/?next=%2Fconta%2Fexperiencias%2F"))
    );
    let answer = signed_out.get("/conta/formacoes/3/").await;
    assert_eq!(answer.location.as_deref(), Some("/conta/entrar/?next=%2Fconta%2Fformacoes%2F3%2F"));

    let stored: i64 =
        sqlx::query_scalar("SELECT count(*) FROM experiences").fetch_one(&app.db.pool).await.expect("count");
    assert_eq!(stored, 0, "nothing stored by any refused post");
    // The good form still works.
    assert_eq!(browser.post("/conta/experiencias/", &good).await.status, 303);
    assert_eq!(profile_of(&app, lia).await["experiencia_profissional"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn an_experience_taken_from_cnes_can_be_completed_or_deleted_by_the_person() {
    use credencial_domain::profile::Experience;
    use credencial_domain::UserId;

    let (app, lia, mut browser) = lia().await;
    let bond = |name: &str| Experience {
        estabelecimento: name.into(),
        profissao: "ENFERMEIRO".into(),
        data_inicio: None,
        data_fim: None,
        municipio: "240810".into(),
        descricao: String::new(),
    };
    app.db
        .storage()
        .profiles
        .supplement_from_cnes(UserId(lia), vec![bond("UBS CENTRO"), bond("HOSPITAL X")])
        .await
        .expect("supplemented");
    let list = browser.get("/conta/experiencias/").await;
    assert_eq!(list.body.matches("Importada do CNES.").count(), 2, "{}", list.body);
    assert!(list.body.contains("Período não informado"), "{}", list.body);
    let id = first_id(&list, "/conta/experiencias/");
    let path = format!("/conta/experiencias/{id}/");
    let edit = browser.get(&path).await;
    assert!(edit.body.contains("Importada do CNES."), "{}", edit.body);
    let incomplete = post_form(
        &mut browser,
        &path,
        &path,
        &[("estabelecimento", "UBS Centro"), ("profissao", "Enfermeiro"), ("municipio", "Natal")],
    )
    .await;
    assert_eq!(incomplete.status, 422, "a start date is required: {}", incomplete.body);
    let completed = post_form(
        &mut browser,
        &path,
        &path,
        &[
            ("estabelecimento", "UBS Centro"),
            ("profissao", "Enfermeiro"),
            ("data_inicio", "2018-04-02"),
            ("municipio", "Natal"),
        ],
    )
    .await;
    assert_eq!(completed.status, 303, "{}", completed.body);
    let list = browser.get("/conta/experiencias/").await;
    assert_eq!(list.body.matches("Importada do CNES.").count(), 1, "now the person's own: {}", list.body);
    let other = list.body.match_indices("/excluir/").count();
    assert_eq!(other, 2);
    let answered = profile_of(&app, lia).await;
    assert_eq!(answered["experiencia_profissional"][0]["data_inicio"], "2018-04-02T00:00:00");
}
