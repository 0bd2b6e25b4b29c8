use super::*;

const EXPERIENCE: EntryForm<'static> = EntryForm {
    place: "Hospital Universitário Onofre Lopes",
    subject: "Enfermeira",
    grau_formacao: "",
    data_inicio: "2019-02-01",
    data_fim: "",
    municipio: "Natal",
    descricao: "",
};

const DEGREE: EntryForm<'static> = EntryForm {
    place: "UFRN",
    subject: "Enfermagem",
    grau_formacao: "GRA",
    data_inicio: "2010-03-01",
    data_fim: "2014-12-15",
    municipio: "Natal",
    descricao: "Bacharelado",
};

/// The refused fields and their messages, or none when accepted.
fn refusals(kind: EntryKind, form: &EntryForm<'_>) -> Vec<(&'static str, String)> {
    match Entry::parse(kind, form) {
        Ok(_) => vec![],
        Err(errors) => errors.iter().map(|e| (e.field, e.message.clone())).collect(),
    }
}

/// A form of a kind and the refusals it should get.
type Case<'a> = (EntryKind, EntryForm<'a>, Vec<(&'static str, &'a str)>);

fn owned(want: Vec<(&'static str, &str)>) -> Vec<(&'static str, String)> {
    want.into_iter().map(|(f, m)| (f, m.to_owned())).collect()
}

#[test]
fn a_complete_experience_is_accepted_trimmed_and_without_a_degree() {
    let form = EntryForm { descricao: "  Plantões noturnos ", grau_formacao: "GRA", ..EXPERIENCE };
    let e = Entry::parse(EntryKind::Experience, &form).expect("valid");
    assert_eq!(e.kind(), EntryKind::Experience);
    assert_eq!((e.place(), e.subject()), ("Hospital Universitário Onofre Lopes", "Enfermeira"));
    assert_eq!(e.descricao(), "Plantões noturnos", "trimmed");
    assert_eq!(e.grau(), None, "an experience has no degree, whatever was sent");
    assert_eq!((e.data_inicio().as_str(), e.data_fim()), ("2019-02-01", None));
}

#[test]
fn a_complete_degree_is_accepted_with_its_level() {
    let d = Entry::parse(EntryKind::Degree, &DEGREE).expect("valid");
    assert_eq!(d.grau(), Some(Degree::Graduacao));
    assert_eq!(d.grau().map(Degree::description), Some("Graduação"));
    assert_eq!(d.data_fim().map(IsoDate::as_str), Some("2014-12-15"));
    let ongoing = Entry::parse(EntryKind::Degree, &EntryForm { data_fim: "", descricao: "", ..DEGREE }).expect("valid");
    assert_eq!(ongoing.data_fim(), None);
}

#[test]
fn forms_of_both_kinds_are_refused_field_by_field_in_portuguese_under_the_contract_s_names() {
    let long = "x".repeat(MAX_TEXT_CHARS + 1);
    let long_descricao = "y".repeat(MAX_DESCRICAO_CHARS + 1);
    let (exp, deg) = (EntryKind::Experience, EntryKind::Degree);
    let cases: Vec<Case<'_>> = vec![
        (exp, EntryForm { data_fim: "2019-01-31", ..EXPERIENCE }, vec![("data_fim", MSG_FIM_ANTES_DO_INICIO)]),
        (exp, EntryForm { data_fim: "2019-02-01", ..EXPERIENCE }, vec![]),
        (exp, EntryForm { place: "   ", ..EXPERIENCE }, vec![("estabelecimento", "Informe o estabelecimento.")]),
        (exp, EntryForm { subject: "", ..EXPERIENCE }, vec![("profissao", "Informe a profissão.")]),
        (exp, EntryForm { municipio: "", ..EXPERIENCE }, vec![("municipio", "Informe o município.")]),
        (exp, EntryForm { data_inicio: "", ..EXPERIENCE }, vec![("data_inicio", "Informe a data de início.")]),
        (exp, EntryForm { data_inicio: "01/02/2019", ..EXPERIENCE }, vec![("data_inicio", MSG_DATA_INVALIDA)]),
        (exp, EntryForm { data_fim: "2023-02-30", ..EXPERIENCE }, vec![("data_fim", MSG_DATA_INVALIDA)]),
        (exp, EntryForm { place: &long, ..EXPERIENCE }, vec![("estabelecimento", "Use no máximo 200 caracteres.")]),
        (
            exp,
            EntryForm { descricao: &long_descricao, ..EXPERIENCE },
            vec![("descricao", "Use no máximo 2000 caracteres.")],
        ),
        (
            exp,
            EntryForm { subject: "Enfer\u{0}meira", ..EXPERIENCE },
            vec![("profissao", "Remova os caracteres de controle.")],
        ),
        (exp, EntryForm { descricao: "linha 1\r\nlinha 2\tfim", ..EXPERIENCE }, vec![]),
        (
            exp,
            EntryForm::default(),
            vec![
                ("estabelecimento", "Informe o estabelecimento."),
                ("profissao", "Informe a profissão."),
                ("data_inicio", "Informe a data de início."),
                ("municipio", "Informe o município."),
            ],
        ),
        (deg, EntryForm { data_fim: "2010-02-28", ..DEGREE }, vec![("data_fim", MSG_FIM_ANTES_DO_INICIO)]),
        (
            deg,
            EntryForm { grau_formacao: "PHD", ..DEGREE },
            vec![("grau_formacao", "Escolha um grau de formação da lista.")],
        ),
        (
            deg,
            EntryForm { grau_formacao: "Graduação", ..DEGREE },
            vec![("grau_formacao", "Escolha um grau de formação da lista.")],
        ),
        (
            deg,
            EntryForm { grau_formacao: "gra", ..DEGREE },
            vec![("grau_formacao", "Escolha um grau de formação da lista.")],
        ),
        (deg, EntryForm { grau_formacao: "", ..DEGREE }, vec![("grau_formacao", "Escolha o grau de formação.")]),
        (deg, EntryForm { place: " ", ..DEGREE }, vec![("instituicao", "Informe a instituição.")]),
        (deg, EntryForm { subject: "", ..DEGREE }, vec![("curso", "Informe o curso.")]),
        (
            deg,
            EntryForm { data_inicio: "2010-13-01", municipio: "", ..DEGREE },
            vec![("data_inicio", MSG_DATA_INVALIDA), ("municipio", "Informe o município.")],
        ),
        (
            deg,
            EntryForm::default(),
            vec![
                ("instituicao", "Informe a instituição."),
                ("curso", "Informe o curso."),
                ("grau_formacao", "Escolha o grau de formação."),
                ("data_inicio", "Informe a data de início."),
                ("municipio", "Informe o município."),
            ],
        ),
    ];
    for (kind, form, want) in cases {
        assert_eq!(refusals(kind, &form), owned(want), "{kind:?} {form:?}");
    }
}

#[test]
fn every_one_of_the_ten_contract_codes_is_accepted() {
    let codes: Vec<_> = Degree::all().map(Degree::code).collect();
    assert_eq!(codes, ["GRA", "ESP", "MES", "MEP", "DTR", "PDR", "ENF", "ENM", "EPT", "ERM"]);
    for code in codes {
        let d = Entry::parse(EntryKind::Degree, &EntryForm { grau_formacao: code, ..DEGREE }).expect(code);
        assert_eq!(d.grau().map(Degree::code), Some(code));
    }
}

#[test]
fn a_form_is_read_and_shown_again_by_the_contract_s_field_names() {
    let typed = [
        ("instituicao", "UFRN"),
        ("curso", "Enfermagem"),
        ("grau_formacao", "MEP"),
        ("data_inicio", "2020-03-02"),
        ("municipio", "Natal"),
        ("estabelecimento", "ignored: not a degree field"),
    ];
    let field = |name: &'static str| typed.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    let form = EntryForm::read(EntryKind::Degree, field);
    assert_eq!(form.place, "UFRN");
    assert_eq!(form.data_fim, "", "absent is empty");
    let shown: Vec<_> = EntryKind::Degree.fields().iter().map(|f| form.value(EntryKind::Degree, f)).collect();
    assert_eq!(shown, ["UFRN", "Enfermagem", "MEP", "2020-03-02", "", "Natal", ""]);
    assert_eq!(form.value(EntryKind::Degree, "estabelecimento"), "");

    let experience = EntryForm::read(EntryKind::Experience, field);
    assert_eq!((experience.place, experience.grau_formacao), ("ignored: not a degree field", ""));
    assert_eq!(experience.value(EntryKind::Experience, "grau_formacao"), "", "an experience has no degree field");
    assert_eq!(EntryKind::Experience.fields()[..2], ["estabelecimento", "profissao"]);
}
