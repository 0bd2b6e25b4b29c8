use credencial_domain::account::{Entry, EntryId};

use super::*;

fn stored(kind: EntryKind) -> OwnEntry {
    OwnEntry {
        id: EntryId(42),
        kind,
        place: "<b>UFRN</b>".into(),
        subject: "Enfermagem".into(),
        grau: (kind == EntryKind::Degree).then_some(Degree::MestradoProfissional),
        data_inicio: Some("2020-03-02".into()),
        data_fim: None,
        municipio: "Natal".into(),
        descricao: String::new(),
        from_cnes: false,
    }
}

#[test]
fn the_list_shows_each_entry_escaped_with_its_period_and_links_and_marks_its_section() {
    let entries = [stored(EntryKind::Degree)];
    let form = form_view(&DEGREES, DEGREES.path.into(), "tok", &EntryForm::default(), None, "Adicionar");
    let page = entries_page(&DEGREES, &entries, DEGREES.notice("salva"), form, false).render().expect("renders");
    assert!(page.contains("<h2>Enfermagem (Mestrado Profissional) — &#60;b&#62;UFRN&#60;/b&#62;</h2>"), "{page}");
    assert!(page.contains("Desde 02/03/2020 · Natal"), "{page}");
    assert!(page.contains("<a href=\"/conta/formacoes/42/\">Editar<span class=\"visually-hidden\">"), "{page}");
    assert!(page.contains("<a href=\"/conta/formacoes/42/excluir/\">Excluir"), "{page}");
    assert!(page.contains("<p class=\"notice\" role=\"status\">Formação salva.</p>"), "{page}");
    assert!(page.contains("<a href=\"/conta/formacoes/\" aria-current=\"page\">"), "{page}");
    assert!(!page.contains("role=\"alert\""), "no refusal: {page}");
    assert_eq!(DEGREES.notice("<script>"), None, "only known notices");
}

#[test]
fn the_degree_select_offers_the_ten_codes_by_description_and_keeps_the_choice() {
    let typed = EntryForm { grau_formacao: "MEP", ..EntryForm::default() };
    let form = form_view(&DEGREES, DEGREES.path.into(), "tok", &typed, None, "Adicionar");
    let page = entries_page(&DEGREES, &[], None, form, false).render().expect("renders");
    assert!(page.contains("<select id=\"grau_formacao\" name=\"grau_formacao\" required>"), "{page}");
    assert_eq!(page.matches("<option value=\"").count(), 11, "an empty choice and the ten codes");
    assert!(page.contains("<option value=\"MEP\" selected>Mestrado Profissional</option>"), "{page}");
    assert!(page.contains("<option value=\"ERM\">Residência Médica</option>"), "{page}");
    assert!(page.contains("<option value=\"\">Escolha…</option>"), "{page}");
    assert!(page.contains(DEGREES.none), "{page}");
}

#[test]
fn a_refused_form_keeps_what_was_typed_and_ties_each_message_to_its_field() {
    let typed = EntryForm {
        place: "Hospital \"A\"",
        subject: "Enfermeira",
        data_inicio: "2020-05-01",
        data_fim: "2020-04-30",
        municipio: "Natal",
        descricao: "linha <1>",
        ..EntryForm::default()
    };
    let errors = Entry::parse(EntryKind::Experience, &typed).expect_err("end before start");
    let form = form_view(&EXPERIENCES, EXPERIENCES.entry_path(7), "tok", &typed, Some(&errors), "Salvar");
    let page = entry_page(&EXPERIENCES, 7, false, form, true).render().expect("renders");
    assert!(page.contains("role=\"alert\">Não foi possível salvar"), "{page}");
    assert!(page.contains("value=\"Hospital &#34;A&#34;\""), "{page}");
    assert!(page.contains(">linha &#60;1&#62;</textarea>"), "{page}");
    assert!(page.contains(
        "<p class=\"field-error\" id=\"erro-data_fim\">A data de término não pode ser anterior à data de início.</p>"
    ));
    assert!(
        page.contains("<input type=\"date\" id=\"data_fim\" name=\"data_fim\" value=\"2020-04-30\" aria-describedby=\"dica-data_fim erro-data_fim\" aria-invalid=\"true\" autofocus>"),
        "{page}"
    );
    assert_eq!(page.matches("aria-invalid=\"true\"").count(), 1, "only the refused field");
    assert!(page.contains("<form method=\"post\" action=\"/conta/experiencias/7/\""), "{page}");
    assert!(page.contains("<input type=\"hidden\" name=\"csrf_token\" value=\"tok\">"), "{page}");
    assert!(!page.contains("grau_formacao"), "an experience has no degree field");
    assert!(page.contains("<label for=\"estabelecimento\">Estabelecimento</label>"), "{page}");
}

#[test]
fn the_delete_page_asks_with_the_entry_and_posts_with_the_token() {
    let entry = OwnEntry { from_cnes: true, data_inicio: None, ..stored(EntryKind::Experience) };
    let page = delete_page(&EXPERIENCES, &entry, "tok").render().expect("renders");
    assert!(page.contains("<h1>Excluir experiência</h1>"), "{page}");
    assert!(page.contains("Enfermagem — &#60;b&#62;UFRN"), "{page}");
    assert!(page.contains("Período não informado"), "{page}");
    assert!(page.contains("<form method=\"post\" action=\"/conta/experiencias/42/excluir/\">"), "{page}");
    assert!(page.contains("name=\"csrf_token\" value=\"tok\""), "{page}");
}
