use super::*;

const EXPERIENCE: ExperienceForm<'static> = ExperienceForm {
    estabelecimento: "Hospital Universitário Onofre Lopes",
    profissao: "Enfermeira",
    data_inicio: "2019-02-01",
    data_fim: "",
    municipio: "Natal",
    descricao: "",
};

const DEGREE: DegreeForm<'static> = DegreeForm {
    instituicao: "UFRN",
    curso: "Enfermagem",
    grau_formacao: "GRA",
    data_inicio: "2010-03-01",
    data_fim: "2014-12-15",
    municipio: "Natal",
    descricao: "Bacharelado",
};

#[test]
fn a_complete_experience_is_accepted_and_answered_in_the_contract_format() {
    let e = ExperienceEntry::parse(&ExperienceForm { descricao: "  Plantões noturnos ", ..EXPERIENCE }).expect("valid");
    assert_eq!(e.descricao(), "Plantões noturnos", "trimmed");
    let p = e.to_profile();
    assert_eq!(p.data_inicio.as_deref(), Some("2019-02-01T00:00:00"));
    assert_eq!(p.data_fim, None);
    assert_eq!(p.estabelecimento, "Hospital Universitário Onofre Lopes");
}

#[test]
fn experience_forms_are_refused_field_by_field_in_portuguese() {
    let long = "x".repeat(MAX_TEXT_CHARS + 1);
    let long_descricao = "y".repeat(MAX_DESCRICAO_CHARS + 1);
    let cases: Vec<(ExperienceForm<'_>, Vec<(&str, &str)>)> = vec![
        (ExperienceForm { data_fim: "2019-01-31", ..EXPERIENCE }, vec![("data_fim", MSG_FIM_ANTES_DO_INICIO)]),
        (ExperienceForm { data_fim: "2019-02-01", ..EXPERIENCE }, vec![]),
        (
            ExperienceForm { estabelecimento: "   ", ..EXPERIENCE },
            vec![("estabelecimento", "Informe o estabelecimento.")],
        ),
        (ExperienceForm { profissao: "", ..EXPERIENCE }, vec![("profissao", "Informe a profissão.")]),
        (ExperienceForm { municipio: "", ..EXPERIENCE }, vec![("municipio", "Informe o município.")]),
        (ExperienceForm { data_inicio: "", ..EXPERIENCE }, vec![("data_inicio", "Informe a data de início.")]),
        (ExperienceForm { data_inicio: "01/02/2019", ..EXPERIENCE }, vec![("data_inicio", MSG_DATA_INVALIDA)]),
        (ExperienceForm { data_fim: "2023-02-30", ..EXPERIENCE }, vec![("data_fim", MSG_DATA_INVALIDA)]),
        (
            ExperienceForm { estabelecimento: &long, ..EXPERIENCE },
            vec![("estabelecimento", "Use no máximo 200 caracteres.")],
        ),
        (
            ExperienceForm { descricao: &long_descricao, ..EXPERIENCE },
            vec![("descricao", "Use no máximo 2000 caracteres.")],
        ),
        (
            ExperienceForm { profissao: "Enfer\u{0}meira", ..EXPERIENCE },
            vec![("profissao", "Remova os caracteres de controle.")],
        ),
        (
            ExperienceForm::default(),
            vec![
                ("estabelecimento", "Informe o estabelecimento."),
                ("profissao", "Informe a profissão."),
                ("data_inicio", "Informe a data de início."),
                ("municipio", "Informe o município."),
            ],
        ),
    ];
    for (form, want) in cases {
        let got = match ExperienceEntry::parse(&form) {
            Ok(_) => vec![],
            Err(errors) => errors.iter().map(|e| (e.field, e.message.clone())).collect(),
        };
        let want: Vec<_> = want.into_iter().map(|(f, m)| (f, m.to_owned())).collect();
        assert_eq!(got, want, "{form:?}");
    }
}

#[test]
fn a_complete_degree_is_accepted_and_stored_by_code() {
    let d = DegreeEntry::parse(&DEGREE).expect("valid");
    assert_eq!(d.grau(), Degree::Graduacao);
    let p = d.to_profile();
    assert_eq!((p.data_inicio.as_str(), p.data_fim.as_deref()), ("2010-03-01", Some("2014-12-15")));
    assert_eq!(p.to_json()["grau_formacao"], "Graduação");
    let ongoing = DegreeEntry::parse(&DegreeForm { data_fim: "", descricao: "", ..DEGREE }).expect("valid");
    assert_eq!(ongoing.data_fim(), None);
}

#[test]
fn degree_forms_are_refused_field_by_field_in_portuguese() {
    let cases: Vec<(DegreeForm<'_>, Vec<(&str, &str)>)> = vec![
        (DegreeForm { data_fim: "2010-02-28", ..DEGREE }, vec![("data_fim", MSG_FIM_ANTES_DO_INICIO)]),
        (
            DegreeForm { grau_formacao: "PHD", ..DEGREE },
            vec![("grau_formacao", "Escolha um grau de formação da lista.")],
        ),
        (
            DegreeForm { grau_formacao: "Graduação", ..DEGREE },
            vec![("grau_formacao", "Escolha um grau de formação da lista.")],
        ),
        (DegreeForm { grau_formacao: "", ..DEGREE }, vec![("grau_formacao", "Escolha o grau de formação.")]),
        (DegreeForm { instituicao: " ", ..DEGREE }, vec![("instituicao", "Informe a instituição.")]),
        (DegreeForm { curso: "", ..DEGREE }, vec![("curso", "Informe o curso.")]),
        (
            DegreeForm { data_inicio: "2010-13-01", municipio: "", ..DEGREE },
            vec![("data_inicio", MSG_DATA_INVALIDA), ("municipio", "Informe o município.")],
        ),
    ];
    for (form, want) in cases {
        let got = match DegreeEntry::parse(&form) {
            Ok(_) => vec![],
            Err(errors) => errors.iter().map(|e| (e.field, e.message.clone())).collect(),
        };
        let want: Vec<_> = want.into_iter().map(|(f, m)| (f, m.to_owned())).collect();
        assert_eq!(got, want, "{form:?}");
    }
}

#[test]
fn every_one_of_the_ten_contract_codes_is_accepted() {
    for code in ["GRA", "ESP", "MES", "MEP", "DTR", "PDR", "ENF", "ENM", "EPT", "ERM"] {
        let d = DegreeEntry::parse(&DegreeForm { grau_formacao: code, ..DEGREE }).expect(code);
        assert_eq!(d.grau().code(), code);
    }
}
