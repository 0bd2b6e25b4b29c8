//! Table-driven tests of the mapping rules, and properties of the split and
//! of `apply` on arbitrary payloads.

use proptest::prelude::*;
use serde_json::json;

use super::*;

fn map(text: &str) -> AttrMap {
    AttrMap::from_json(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn scopes(names: &[&str]) -> ClientScopes {
    ClientScopes::parse(names).expect("known scopes")
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(o) => o,
        other => panic!("not an object: {other}"),
    }
}

fn text(s: &str) -> ColumnValue {
    ColumnValue::Set(HostValue::Text(s.to_owned()))
}

/// A full profile answer, every scope present.
fn ana() -> Map<String, Value> {
    object(json!({
        "name": "Ana Beatriz Souza",
        "avatar": "https://example.gov.br/a.png",
        "cpf": "52998224725",
        "email": "ana@example.gov.br",
        "receita_federal": {
            "nome": "ANA BEATRIZ SOUZA",
            "dtNascimento": "1990-04-12",
            "sexo": "F",
            "mae": "MARIA SOUZA",
            "noMunicipio": "NATAL",
            "uf": "RN"
        },
        "cnes": {"vinculos": [{"cnes": "2409208", "noFant": "HOSPITAL", "coMun": "240810", "noCBO": "ENFERMEIRO"}]},
        "experiencia_profissional": [{
            "estabelecimento": "Hospital", "profissao": "Enfermeira", "data_inicio": "2019-02-01T00:00:00",
            "data_fim": null, "municipio": "Natal", "descricao": ""
        }],
        "formacao_academica": [],
        "cursos_cdp": {"total": 0, "data": []}
    }))
}

/// A map that uses every kind of value.
const EVERYTHING: &str = r#"{
    "username": "cpf",
    "email": "email",
    "(first_name, last_name)": "name",
    "photo": "avatar",
    "birth_date": "receita_federal.dtNascimento",
    "mother_name": "receita_federal.mae",
    "state": "receita_federal.uf",
    "receita": "receita_federal",
    "bonds": "cnes",
    "experiences": "experiencia_profissional",
    "degrees": "formacao_academica",
    "courses": "cursos_cdp",
    "profile": "fulljson"
}"#;

fn everything() -> UserMapping {
    UserMapping::new(
        map(EVERYTHING),
        LookupField::default(),
        ClientScopes::parse(Scope::ALL.map(Scope::name)).expect("all"),
    )
    .expect("valid")
}

// ---- parsing: keys ----

#[test]
fn keys_that_are_not_plain_sql_identifiers_are_refused_naming_the_key() {
    let long = "a".repeat(64);
    let cases: Vec<(String, &str)> = vec![
        (r#"{"": "cpf"}"#.into(), "empty column name"),
        (r#"{"   ": "cpf"}"#.into(), "empty column name"),
        (r#"{"User": "cpf"}"#.into(), "not a plain SQL identifier"),
        (r#"{"1abc": "cpf"}"#.into(), "not a plain SQL identifier"),
        (r#"{"first name": "name"}"#.into(), "not a plain SQL identifier"),
        (r#"{"a-b": "cpf"}"#.into(), "not a plain SQL identifier"),
        (r#"{"a\"b": "cpf"}"#.into(), "not a plain SQL identifier"),
        (r#"{"nome_é": "cpf"}"#.into(), "not a plain SQL identifier"),
        (r#"{"first_name, last_name": "name"}"#.into(), "not a plain SQL identifier"),
        (r#"{"(first_name, last_name": "name"}"#.into(), "not a plain SQL identifier"),
        (format!(r#"{{"{long}": "cpf"}}"#), "longer than 63 bytes"),
        (r#"{"(a, )": "name"}"#.into(), "empty column name"),
        (r#"{"(a, B)": "name"}"#.into(), "not a plain SQL identifier"),
    ];
    for (text, expected) in cases {
        let e = AttrMap::from_json(&text).expect_err(&text);
        assert!(matches!(e, AttrMapError::BadColumn { .. }), "{text}: {e:?}");
        assert_eq!(e.input(), MappingInput::AttrMap);
        let message = e.to_string();
        assert!(message.starts_with("the attribute map: key "), "{message}");
        assert!(message.contains(expected), "{text}: {message}");
    }
}

#[test]
fn plain_identifiers_up_to_63_bytes_are_accepted() {
    for name in ["username", "_x", "a1", "first_name", "user", "select", &"a".repeat(63)] {
        assert_eq!(ColumnName::parse(name).map(|c| c.as_str().to_owned()), Ok(name.to_owned()));
    }
    assert_eq!(ColumnName::parse("  email ").map(|c| c.to_string()), Ok("email".into()), "spaces around are ignored");
}

#[test]
fn a_tuple_key_needs_exactly_two_columns() {
    let cases = [("(first_name)", 1), ("(a, b, c)", 3), ("()", 0), ("(  )", 0), ("(a, b,)", 3)];
    for (key, found) in cases {
        let text = json!({ key: "name" }).to_string();
        let e = AttrMap::from_json(&text).expect_err(key);
        assert_eq!(e, AttrMapError::TupleArity { key: key.into(), found }, "{key}");
        assert!(e.to_string().contains(key) && e.to_string().contains("exactly two columns"), "{e}");
    }
    let ok = map(r#"{"( first_name ,last_name )": "name"}"#);
    assert_eq!(
        ok.entries()[0].target,
        MappingTarget::Split(ColumnName::parse("first_name").expect("ok"), ColumnName::parse("last_name").expect("ok"))
    );
}

#[test]
fn a_column_written_twice_is_refused() {
    let cases = [
        (r#"{"(a, a)": "name"}"#, "(a, a)", "a"),
        (r#"{"email": "email", " email ": "cpf"}"#, " email ", "email"),
        (r#"{"email": "email", "email": "cpf"}"#, "email", "email"),
        (r#"{"email": "email", "(email, x)": "name"}"#, "(email, x)", "email"),
        (r#"{"(first_name, last_name)": "name", "last_name": "email"}"#, "last_name", "last_name"),
    ];
    for (text, key, column) in cases {
        let e = AttrMap::from_json(text).expect_err(text);
        assert_eq!(e, AttrMapError::DuplicateColumn { key: key.into(), column: column.into() }, "{text}");
        assert!(e.to_string().starts_with("the attribute map: "), "{e}");
    }
}

// ---- parsing: values ----

#[test]
fn every_accepted_value_has_its_source_and_kind() {
    use MappingSource as S;
    let rf = Scope::ReceitaFederal;
    let cases: Vec<(&str, MappingSource, ValueKind)> = vec![
        ("name", S::Field(ProfileField::Name), ValueKind::Text),
        ("avatar", S::Field(ProfileField::Avatar), ValueKind::Text),
        ("cpf", S::Field(ProfileField::Cpf), ValueKind::Text),
        ("email", S::Field(ProfileField::Email), ValueKind::Text),
        (" cpf ", S::Field(ProfileField::Cpf), ValueKind::Text),
        ("receita_federal.nome", S::ObjectField { scope: rf, field: "nome" }, ValueKind::Text),
        ("receita_federal.dtNascimento", S::ObjectField { scope: rf, field: "dtNascimento" }, ValueKind::Date),
        ("receita_federal.sexo", S::ObjectField { scope: rf, field: "sexo" }, ValueKind::Text),
        ("receita_federal.mae", S::ObjectField { scope: rf, field: "mae" }, ValueKind::Text),
        ("receita_federal.noMunicipio", S::ObjectField { scope: rf, field: "noMunicipio" }, ValueKind::Text),
        ("receita_federal.uf", S::ObjectField { scope: rf, field: "uf" }, ValueKind::Text),
        ("receita_federal", S::WholeScope(rf), ValueKind::Json),
        ("cnes", S::WholeScope(Scope::Cnes), ValueKind::Json),
        ("experiencia_profissional", S::WholeScope(Scope::ExperienciaProfissional), ValueKind::Json),
        ("formacao_academica", S::WholeScope(Scope::FormacaoAcademica), ValueKind::Json),
        ("cursos_cdp", S::WholeScope(Scope::CursosCdp), ValueKind::Json),
        ("fulljson", S::FullJson, ValueKind::Json),
    ];
    for (value, source, kind) in cases {
        let m = map(&json!({ "col": value }).to_string());
        assert_eq!(m.entries()[0].source, source, "{value}");
        assert_eq!(m.entries()[0].source.kind(), kind, "{value}");
        assert_eq!(m.kind_of("col"), Some(kind), "{value}");
        assert_eq!(m.entries()[0].value, value, "the value is kept as written");
    }
}

#[test]
fn values_that_name_no_profile_field_are_refused_naming_key_and_value() {
    type Check = fn(&AttrMapError) -> bool;
    let cases: [(&str, Check, &str); 18] = [
        ("nome", |e| matches!(e, AttrMapError::UnknownField { .. }), "is not a profile field"),
        ("CPF", |e| matches!(e, AttrMapError::UnknownField { .. }), "is not a profile field"),
        ("", |e| matches!(e, AttrMapError::UnknownField { .. }), "is not a profile field"),
        ("dados_publicos", |e| matches!(e, AttrMapError::UnknownField { .. }), "is not a profile field"),
        ("receita.nome", |e| matches!(e, AttrMapError::UnknownScope { .. }), "\"receita\" is not a scope"),
        (".nome", |e| matches!(e, AttrMapError::UnknownScope { .. }), "is not a scope"),
        ("cnes.vinculos", |e| matches!(e, AttrMapError::DotOnListScope { scope: Scope::Cnes, .. }), "returns a list"),
        (
            "experiencia_profissional.profissao",
            |e| matches!(e, AttrMapError::DotOnListScope { scope: Scope::ExperienciaProfissional, .. }),
            "returns a list",
        ),
        (
            "formacao_academica.curso",
            |e| matches!(e, AttrMapError::DotOnListScope { scope: Scope::FormacaoAcademica, .. }),
            "returns a list",
        ),
        ("cursos_cdp.total", |e| matches!(e, AttrMapError::DotOnListScope { .. }), "into a jsonb column"),
        ("cpf.cpf", |e| matches!(e, AttrMapError::DotOnTopLevelScope { scope: Scope::Cpf, .. }), "no nested object"),
        ("email.email", |e| matches!(e, AttrMapError::DotOnTopLevelScope { .. }), "no nested object"),
        ("dados_publicos.name", |e| matches!(e, AttrMapError::DotOnTopLevelScope { .. }), "no nested object"),
        ("receita_federal.cpf", |e| matches!(e, AttrMapError::UnknownObjectField { .. }), "has no field \"cpf\""),
        ("receita_federal.dtnascimento", |e| matches!(e, AttrMapError::UnknownObjectField { .. }), "dtNascimento"),
        ("receita_federal.", |e| matches!(e, AttrMapError::UnknownObjectField { .. }), "its fields are nome"),
        ("receita_federal.nome.x", |e| matches!(e, AttrMapError::UnknownObjectField { .. }), "has no field"),
        ("full_json", |e| matches!(e, AttrMapError::UnknownField { .. }), "fulljson"),
    ];
    for (value, check, expected) in cases {
        let e = AttrMap::from_json(&json!({ "col": value }).to_string()).expect_err(value);
        assert!(check(&e), "{value}: {e:?}");
        assert_eq!(e.input(), MappingInput::AttrMap);
        let message = e.to_string();
        assert!(message.starts_with("the attribute map: key \"col\""), "{message}");
        assert!(message.contains(&format!("{value:?}")), "names the value: {message}");
        assert!(message.contains(expected), "{value}: {message}");
    }
}

#[test]
fn a_tuple_key_splits_text_never_json() {
    for value in ["fulljson", "cnes", "receita_federal", "experiencia_profissional"] {
        let text = json!({ "(a, b)": value }).to_string();
        let e = AttrMap::from_json(&text).expect_err(value);
        assert_eq!(e, AttrMapError::TupleNeedsText { key: "(a, b)".into(), value: value.into() });
    }
    for value in ["name", "email", "receita_federal.nome", "receita_federal.dtNascimento"] {
        let m = map(&json!({ "(a, b)": value }).to_string());
        assert_eq!(m.kind_of("a"), Some(ValueKind::Text));
        assert_eq!(m.kind_of("b"), Some(ValueKind::Text));
    }
}

#[test]
fn the_setting_must_be_an_object_of_strings() {
    for text in ["[]", "\"cpf\"", "not json", "", "{\"a\": \"cpf\"", "null"] {
        let e = AttrMap::from_json(text).expect_err(text);
        assert!(matches!(e, AttrMapError::NotAnObject(_)), "{text}: {e:?}");
        assert!(e.to_string().starts_with("the attribute map: not a JSON object"), "{e}");
    }
    for value in [json!(1), json!(null), json!(["cpf"]), json!({"x": "cpf"}), json!(true)] {
        let e = AttrMap::from_json(&json!({ "username": value }).to_string()).expect_err("not a string");
        assert_eq!(e, AttrMapError::ValueNotAString { key: "username".into() });
    }
    assert_eq!(map("{}").entries().len(), 0, "an empty map parses; the lookup check refuses it");
}

#[test]
fn pairs_and_json_text_build_the_same_map() {
    let from_pairs =
        AttrMap::from_pairs([("username", "cpf"), ("email", "email"), ("(first_name, last_name)", "name")])
            .expect("valid");
    assert_eq!(from_pairs, map(DEFAULT_ATTR_MAP));
}

// ---- defaults ----

#[test]
fn the_defaults_are_the_documented_ones() {
    assert_eq!(AttrMap::default(), map(DEFAULT_ATTR_MAP));
    let needs = AttrMap::default().column_needs().into_iter().map(|(c, k)| (c.to_owned(), k)).collect::<Vec<_>>();
    let expected = [("username", ValueKind::Text), ("email", ValueKind::Text)]
        .into_iter()
        .chain([("first_name", ValueKind::Text), ("last_name", ValueKind::Text)])
        .map(|(c, k)| (c.to_owned(), k))
        .collect::<Vec<_>>();
    assert_eq!(needs, expected);
    assert_eq!(LookupField::default().column().as_str(), "username");
    assert_eq!(ClientScopes::default().to_scope_string(), "dados_publicos cpf email");
    let defaults =
        UserMapping::new(AttrMap::default(), LookupField::default(), ClientScopes::default()).expect("defaults valid");
    assert_eq!(defaults, UserMapping::default());
}

#[test]
fn the_default_map_turns_a_profile_into_username_email_and_names() {
    let mapped = UserMapping::default().apply(&ana()).expect("lookup present");
    assert_eq!(mapped.lookup_column.as_str(), "username");
    assert_eq!(mapped.lookup_value, "52998224725");
    let values = mapped.record.into_values();
    let expected = [
        ("username", "52998224725"),
        ("email", "ana@example.gov.br"),
        ("first_name", "Ana"),
        ("last_name", "Beatriz Souza"),
    ]
    .map(|(c, v)| (ColumnName::parse(c).expect("column"), HostValue::Text(v.to_owned())));
    assert_eq!(values, expected);
}

// ---- the scope list ----

#[test]
fn requested_scopes_are_strict_and_always_carry_dados_publicos() {
    let cases: [(&[&str], Result<&str, &str>); 8] = [
        (&[], Ok("dados_publicos")),
        (&["cpf"], Ok("dados_publicos cpf")),
        (&["cpf", "cpf", "email"], Ok("dados_publicos cpf email")),
        (&["receita_federal cnes", " email "], Ok("dados_publicos email receita_federal cnes")),
        (
            &["dados_publicos", "cpf", "email", "receita_federal", "cnes", "experiencia_profissional"],
            Ok("dados_publicos cpf email receita_federal cnes experiencia_profissional"),
        ),
        (&["openid"], Err("\"openid\"")),
        (&["CPF"], Err("\"CPF\"")),
        (&["cpf", "receita"], Err("\"receita\"")),
    ];
    for (names, expected) in cases {
        match (ClientScopes::parse(names), expected) {
            (Ok(s), Ok(text)) => {
                assert_eq!(s.to_scope_string(), text, "{names:?}");
                assert!(s.contains(Scope::DadosPublicos));
            }
            (Err(e), Err(name)) => {
                assert_eq!(e.input(), MappingInput::Scopes);
                let message = e.to_string();
                assert!(message.starts_with("the scope list: unknown scope ") && message.contains(name), "{message}");
            }
            (got, _) => panic!("{names:?}: {got:?}"),
        }
    }
}

#[test]
fn a_mapped_scope_must_be_requested_unless_it_is_always_present() {
    let cases: [(&str, &[&str], Option<Scope>); 11] = [
        ("receita_federal.nome", &["dados_publicos", "cpf", "email"], Some(Scope::ReceitaFederal)),
        ("receita_federal.nome", &["receita_federal"], None),
        ("receita_federal", &["cnes"], Some(Scope::ReceitaFederal)),
        ("cnes", &["dados_publicos", "cpf", "email"], Some(Scope::Cnes)),
        ("cnes", &["cnes"], None),
        ("experiencia_profissional", &[], Some(Scope::ExperienciaProfissional)),
        ("cursos_cdp", &["cursos_cdp"], None),
        ("name", &[], None),
        ("cpf", &[], None),
        ("email", &[], None),
        ("fulljson", &[], None),
    ];
    for (value, requested, missing) in cases {
        let m = map(&json!({ "col": value }).to_string());
        match (m.validate(&scopes(requested)), missing) {
            (Ok(()), None) => {}
            (Err(e), Some(scope)) => {
                assert_eq!(e, AttrMapError::ScopeNotRequested { key: "col".into(), value: value.into(), scope });
                let message = e.to_string();
                assert!(
                    message.starts_with("the attribute map: ")
                        && message.contains("which the scope list does not request"),
                    "{message}"
                );
                assert!(message.contains(value) && message.contains("\"col\""), "{message}");
            }
            (got, _) => panic!("{value} with {requested:?}: {got:?}"),
        }
    }
}

// ---- the lookup field ----

#[test]
fn the_lookup_column_must_be_a_mapped_text_column() {
    let all = ClientScopes::parse(Scope::ALL.map(Scope::name)).expect("all");
    let cases: [(&str, &str, Result<(), &str>); 9] = [
        (DEFAULT_ATTR_MAP, "username", Ok(())),
        (DEFAULT_ATTR_MAP, "email", Ok(())),
        (DEFAULT_ATTR_MAP, "first_name", Ok(())),
        (r#"{"cpf": "cpf", "profile": "fulljson"}"#, "cpf", Ok(())),
        (DEFAULT_ATTR_MAP, "cpf", Err("is not one of the columns")),
        ("{}", "username", Err("is not one of the columns")),
        (r#"{"username": "cpf", "profile": "fulljson"}"#, "profile", Err("not a plain text value")),
        (r#"{"username": "cpf", "bonds": "cnes"}"#, "bonds", Err("not a plain text value")),
        (r#"{"username": "cpf", "birth": "receita_federal.dtNascimento"}"#, "birth", Err("not a plain text value")),
    ];
    for (text, lookup, expected) in cases {
        let lookup_field = LookupField::parse(lookup).expect("identifier");
        match (UserMapping::new(map(text), lookup_field, all), expected) {
            (Ok(_), Ok(())) => {}
            (Err(e), Err(fragment)) => {
                assert_eq!(e.input(), MappingInput::LookupField, "{e}");
                let message = e.to_string();
                assert!(message.starts_with("the lookup field: column "), "{message}");
                assert!(message.contains(lookup) && message.contains(fragment), "{message}");
            }
            (got, _) => panic!("{text} / {lookup}: {got:?}"),
        }
    }
}

#[test]
fn a_lookup_column_that_is_not_an_identifier_is_refused() {
    for bad in ["", "User Name", "1x", "a;drop"] {
        let e = LookupField::parse(bad).expect_err(bad);
        assert!(matches!(e, AttrMapError::BadLookupColumn { .. }));
        assert!(e.to_string().starts_with("the lookup field: "), "{e}");
    }
}

#[test]
fn scope_errors_come_before_lookup_errors() {
    let e = UserMapping::new(map(r#"{"x": "cnes"}"#), LookupField::default(), ClientScopes::default())
        .expect_err("cnes not requested");
    assert!(matches!(e, AttrMapError::ScopeNotRequested { .. }), "{e:?}");
}

// ---- apply ----

#[test]
fn every_rule_applied_to_a_full_profile() {
    let record = everything().map().apply(&ana());
    let payload = ana();
    let expected: Vec<(&str, ColumnValue)> = vec![
        ("username", text("52998224725")),
        ("email", text("ana@example.gov.br")),
        ("first_name", text("Ana")),
        ("last_name", text("Beatriz Souza")),
        ("photo", text("https://example.gov.br/a.png")),
        ("birth_date", ColumnValue::Set(HostValue::Date("1990-04-12".into()))),
        ("mother_name", text("MARIA SOUZA")),
        ("state", text("RN")),
        ("receita", ColumnValue::Set(HostValue::Json(payload["receita_federal"].clone()))),
        ("bonds", ColumnValue::Set(HostValue::Json(payload["cnes"].clone()))),
        ("experiences", ColumnValue::Set(HostValue::Json(payload["experiencia_profissional"].clone()))),
        ("degrees", ColumnValue::Set(HostValue::Json(json!([])))),
        ("courses", ColumnValue::Set(HostValue::Json(json!({"total": 0, "data": []})))),
        ("profile", ColumnValue::Set(HostValue::Json(Value::Object(payload.clone())))),
    ];
    let got: Vec<(&str, ColumnValue)> = record.iter().map(|(c, v)| (c.as_str(), v.clone())).collect();
    assert_eq!(got, expected);
    assert_eq!(record.skipped().count(), 0);
}

#[test]
fn the_tuple_split_happens_at_the_first_space_only() {
    let cases: [(&str, (&str, &str)); 6] = [
        ("Ana Beatriz Souza", ("Ana", "Beatriz Souza")),
        ("Ana Souza", ("Ana", "Souza")),
        ("Ana", ("Ana", "")),
        ("Ana  Souza", ("Ana", " Souza")),
        ("Ana Souza ", ("Ana", "Souza ")),
        ("José da Silva-Ñúñez", ("José", "da Silva-Ñúñez")),
    ];
    let m = AttrMap::default();
    for (name, (first, last)) in cases {
        let mut payload = ana();
        payload.insert("name".into(), json!(name));
        let record = m.apply(&payload);
        assert_eq!(record.get("first_name"), Some(&text(first)), "{name}");
        assert_eq!(record.get("last_name"), Some(&text(last)), "{name}: no space gives an empty second column");
    }
}

#[test]
fn an_unavailable_scope_skips_its_columns_and_keeps_the_others() {
    type Edit = fn(&mut Map<String, Value>);
    let rf = Scope::ReceitaFederal;
    type Skipped<'a> = &'a [(&'a str, SkipReason)];
    let cases: [(&str, Edit, Skipped<'_>); 10] = [
        (
            "receita_federal not validated",
            |p| {
                p.insert("receita_federal".into(), json!({"erro": "não validado"}));
            },
            &[
                ("birth_date", SkipReason::ScopeError(rf)),
                ("mother_name", SkipReason::ScopeError(rf)),
                ("state", SkipReason::ScopeError(rf)),
                ("receita", SkipReason::ScopeError(rf)),
            ],
        ),
        (
            "receita_federal not granted",
            |p| {
                p.remove("receita_federal");
            },
            &[
                ("birth_date", SkipReason::ScopeAbsent(rf)),
                ("mother_name", SkipReason::ScopeAbsent(rf)),
                ("state", SkipReason::ScopeAbsent(rf)),
                ("receita", SkipReason::ScopeAbsent(rf)),
            ],
        ),
        (
            "receita_federal null",
            |p| {
                p.insert("receita_federal".into(), Value::Null);
            },
            &[
                ("birth_date", SkipReason::ScopeAbsent(rf)),
                ("mother_name", SkipReason::ScopeAbsent(rf)),
                ("state", SkipReason::ScopeAbsent(rf)),
                ("receita", SkipReason::ScopeAbsent(rf)),
            ],
        ),
        (
            "receita_federal not an object",
            |p| {
                p.insert("receita_federal".into(), json!(["nome"]));
            },
            &[
                ("birth_date", SkipReason::MalformedScope(rf)),
                ("mother_name", SkipReason::MalformedScope(rf)),
                ("state", SkipReason::MalformedScope(rf)),
            ],
        ),
        (
            "one field null, one absent, one a bad date",
            |p| {
                p.insert("receita_federal".into(), json!({"nome": "X", "mae": null, "dtNascimento": "12/04/1990"}));
            },
            &[
                ("birth_date", SkipReason::NotADate),
                ("mother_name", SkipReason::FieldAbsent),
                ("state", SkipReason::FieldAbsent),
            ],
        ),
        (
            "cnes upstream down",
            |p| {
                p.insert("cnes".into(), json!({"erro": "O serviço CNES está indisponível no momento."}));
            },
            &[("bonds", SkipReason::ScopeError(Scope::Cnes))],
        ),
        (
            "no experience registered",
            |p| {
                p.insert("experiencia_profissional".into(), json!({"erro": "nenhuma"}));
            },
            &[("experiences", SkipReason::ScopeError(Scope::ExperienciaProfissional))],
        ),
        (
            "list scopes not granted",
            |p| {
                p.remove("formacao_academica");
                p.remove("cursos_cdp");
            },
            &[
                ("degrees", SkipReason::ScopeAbsent(Scope::FormacaoAcademica)),
                ("courses", SkipReason::ScopeAbsent(Scope::CursosCdp)),
            ],
        ),
        (
            "dados_publicos fields missing or null",
            |p| {
                p.remove("name");
                p.insert("avatar".into(), Value::Null);
            },
            &[
                ("first_name", SkipReason::ScopeAbsent(Scope::DadosPublicos)),
                ("last_name", SkipReason::ScopeAbsent(Scope::DadosPublicos)),
                ("photo", SkipReason::FieldAbsent),
            ],
        ),
        (
            "blank or odd text",
            |p| {
                p.insert("name".into(), json!("   "));
                p.insert("email".into(), json!(""));
                p.insert("avatar".into(), json!({"url": "x"}));
            },
            &[
                ("first_name", SkipReason::Blank),
                ("last_name", SkipReason::Blank),
                ("email", SkipReason::Blank),
                ("photo", SkipReason::NotText),
            ],
        ),
    ];
    let mapping = everything();
    let full = mapping.map().apply(&ana());
    for (what, edit, skipped) in cases {
        let mut payload = ana();
        edit(&mut payload);
        let record = mapping.map().apply(&payload);
        for (column, reason) in skipped {
            assert_eq!(record.get(column), Some(&ColumnValue::Skip(*reason)), "{what}: {column}");
        }
        for (column, value) in record.iter() {
            let expected_skip = skipped.iter().any(|(c, _)| *c == column.as_str());
            // `profile` (fulljson) and `receita` (the whole scope) carry the edit.
            if !expected_skip && !["profile", "receita"].contains(&column.as_str()) {
                assert_eq!(Some(value), full.get(column.as_str()), "{what}: {column} is unaffected");
            }
        }
        assert!(
            !record.values_to_set().any(|(c, _)| skipped.iter().any(|(s, _)| *s == c.as_str())),
            "{what}: a skipped column is never written"
        );
        let lookup = mapping.apply(&payload).expect("the record is still created");
        assert_eq!(lookup.lookup_value, "52998224725", "{what}");
    }
}

#[test]
fn fulljson_stores_the_payload_as_received_erro_objects_included() {
    let mut payload = ana();
    payload.insert("receita_federal".into(), json!({"erro": "não validado"}));
    let record = map(r#"{"profile": "fulljson"}"#).apply(&payload);
    assert_eq!(record.get("profile"), Some(&ColumnValue::Set(HostValue::Json(Value::Object(payload.clone())))));
    let record = map(r#"{"profile": "fulljson"}"#).apply(&Map::new());
    assert_eq!(record.get("profile"), Some(&ColumnValue::Set(HostValue::Json(json!({})))));
}

#[test]
fn numbers_become_text_and_other_types_are_not_text() {
    let m = map(r#"{"username": "cpf", "email": "email"}"#);
    let record = m.apply(&object(json!({"cpf": 52998224725_u64, "email": false})));
    assert_eq!(record.get("username"), Some(&text("52998224725")));
    assert_eq!(record.get("email"), Some(&ColumnValue::Skip(SkipReason::NotText)));
    assert_eq!(record.get("nope"), None);
}

#[test]
fn a_login_cannot_proceed_without_the_lookup_value() {
    type Edit = fn(&mut Map<String, Value>);
    let cases: [(&str, &str, Edit, SkipReason); 6] = [
        (
            "username",
            DEFAULT_ATTR_MAP,
            |p| {
                p.insert("cpf".into(), json!(""));
            },
            SkipReason::Blank,
        ),
        (
            "username",
            DEFAULT_ATTR_MAP,
            |p| {
                p.remove("cpf");
            },
            SkipReason::ScopeAbsent(Scope::Cpf),
        ),
        (
            "username",
            DEFAULT_ATTR_MAP,
            |p| {
                p.insert("cpf".into(), Value::Null);
            },
            SkipReason::FieldAbsent,
        ),
        (
            "last_name",
            r#"{"username": "cpf", "(first_name, last_name)": "name"}"#,
            |p| {
                p.insert("name".into(), json!("Ana"));
            },
            SkipReason::Blank,
        ),
        (
            "nome",
            r#"{"nome": "receita_federal.nome"}"#,
            |p| {
                p.insert("receita_federal".into(), json!({"erro": "x"}));
            },
            SkipReason::ScopeError(Scope::ReceitaFederal),
        ),
        (
            "nome",
            r#"{"nome": "receita_federal.nome"}"#,
            |p| {
                p.remove("receita_federal");
            },
            SkipReason::ScopeAbsent(Scope::ReceitaFederal),
        ),
    ];
    let all = ClientScopes::parse(Scope::ALL.map(Scope::name)).expect("all");
    for (lookup, text, edit, reason) in cases {
        let mapping = UserMapping::new(map(text), LookupField::parse(lookup).expect("ok"), all).expect("valid");
        assert!(mapping.apply(&ana()).is_ok(), "{lookup}: the full profile has it");
        let mut payload = ana();
        edit(&mut payload);
        let e = mapping.apply(&payload).expect_err(lookup);
        assert_eq!(e, LookupUnavailable { column: ColumnName::parse(lookup).expect("ok"), reason }, "{lookup}");
        assert!(e.to_string().contains(lookup), "{e}");
    }
}

#[test]
fn records_list_set_and_skipped_columns_in_map_order() {
    let mut payload = ana();
    payload.remove("email");
    let record = AttrMap::default().apply(&payload);
    let set: Vec<&str> = record.values_to_set().map(|(c, _)| c.as_str()).collect();
    assert_eq!(set, ["username", "first_name", "last_name"]);
    let skipped: Vec<(&str, SkipReason)> = record.skipped().map(|(c, r)| (c.as_str(), r)).collect();
    assert_eq!(skipped, [("email", SkipReason::ScopeAbsent(Scope::Email))]);
    let owned: Vec<String> = record.into_values().into_iter().map(|(c, _)| c.to_string()).collect();
    assert_eq!(owned, ["username", "first_name", "last_name"]);
}

#[test]
fn errors_and_skip_reasons_never_carry_profile_data() {
    let mut payload = ana();
    payload.insert("cpf".into(), json!("   "));
    let e = UserMapping::default().apply(&payload).expect_err("blank cpf");
    assert!(!e.to_string().contains("Ana"), "{e}");
    let record = everything().map().apply(&ana());
    let debug = format!("{record:?}");
    assert!(!debug.contains("52998224725") && !debug.contains("Ana"), "{debug}");
}

// ---- properties ----

/// Any JSON value, a few levels deep.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
        "\\PC{0,12}".prop_map(Value::String),
        "[ a-zA-Z]{0,12}".prop_map(Value::String),
        Just(json!("1990-04-12")),
        Just(json!("")),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..5).prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Keys the map reads, plus arbitrary ones.
fn key() -> impl Strategy<Value = String> {
    let known = [
        "name",
        "avatar",
        "cpf",
        "email",
        "erro",
        "nome",
        "dtNascimento",
        "mae",
        "uf",
        "receita_federal",
        "cnes",
        "experiencia_profissional",
        "formacao_academica",
        "cursos_cdp",
    ];
    prop_oneof![prop::sample::select(known.to_vec()).prop_map(str::to_owned), "\\PC{0,8}"]
}

fn any_payload() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec((key(), any_json()), 0..12).prop_map(|kv| kv.into_iter().collect())
}

proptest! {
    #[test]
    fn splitting_never_loses_characters(s in "\\PC{0,40}", t in "[a-zé ]{0,20}") {
        for original in [s, t] {
            let (first, rest) = split_at_first_space(&original);
            if original.contains(' ') {
                prop_assert_eq!(format!("{first} {rest}"), original.clone());
                prop_assert!(!first.contains(' '));
            } else {
                prop_assert_eq!(first, original.as_str());
                prop_assert_eq!(rest, "");
            }
        }
    }

    #[test]
    fn applying_the_tuple_key_never_loses_characters(name in "[A-Za-zÀ-ú ]{0,30}") {
        let mut payload = Map::new();
        payload.insert("name".into(), json!(name));
        let record = AttrMap::default().apply(&payload);
        match (record.get("first_name"), record.get("last_name")) {
            (Some(ColumnValue::Set(HostValue::Text(first))), Some(ColumnValue::Set(HostValue::Text(rest)))) => {
                prop_assert!(!name.trim().is_empty());
                let joined = if name.contains(' ') { format!("{first} {rest}") } else { first.clone() };
                prop_assert_eq!(joined, name);
            }
            (Some(ColumnValue::Skip(SkipReason::Blank)), Some(ColumnValue::Skip(SkipReason::Blank))) => {
                prop_assert!(name.trim().is_empty());
            }
            other => prop_assert!(false, "{other:?}"),
        }
    }

    #[test]
    fn apply_never_panics_and_never_sets_nothing(payload in any_payload()) {
        let mapping = everything();
        let record = mapping.map().apply(&payload);
        prop_assert_eq!(record.iter().count(), mapping.map().column_needs().len());
        for (column, value) in record.iter() {
            match value {
                ColumnValue::Set(HostValue::Json(v)) => prop_assert!(!v.is_null(), "{column}"),
                // The parts of a tuple split may be empty (the contract's rule:
                // no space gives an empty second part, a leading space an empty
                // first part); every other text column gets real text.
                ColumnValue::Set(HostValue::Text(t)) if !matches!(column.as_str(), "first_name" | "last_name") => {
                    prop_assert!(!t.trim().is_empty(), "{column}")
                }
                ColumnValue::Set(HostValue::Date(d)) => prop_assert!(is_iso_date(d), "{column}"),
                ColumnValue::Set(HostValue::Timestamp(_) | HostValue::Bool(_)) => prop_assert!(false, "{column}"),
                _ => {}
            }
        }
        match mapping.apply(&payload) {
            Ok(user) => prop_assert!(!user.lookup_value.trim().is_empty()),
            Err(e) => prop_assert_eq!(e.column.as_str(), "username"),
        }
    }

    #[test]
    fn parsing_never_panics(key in "\\PC{0,20}", value in "\\PC{0,30}", text in "\\PC{0,60}") {
        let _ = AttrMap::from_pairs([(key.clone(), value.clone())]);
        let _ = AttrMap::from_json(&text);
        let _ = ClientScopes::parse([value.as_str()]);
        let _ = LookupField::parse(&key);
        if let Ok(m) = AttrMap::from_pairs([(key, value)]) {
            for (column, _) in m.column_needs() {
                prop_assert!(ColumnName::parse(column).is_ok());
            }
        }
    }
}

/// Text with at least one visible character.
fn some_text() -> impl Strategy<Value = String> {
    "[A-Za-zÀ-ú0-9][A-Za-zÀ-ú0-9 .-]{0,20}"
}

/// A real calendar date, `YYYY-MM-DD`.
fn some_date() -> impl Strategy<Value = String> {
    (1900u32..2100, 1u32..=12, 1u32..=28).prop_map(|(y, m, d)| format!("{y:04}-{m:02}-{d:02}"))
}

/// A profile answer in the contract's shapes, every value usable.
fn contract_payload() -> impl Strategy<Value = Map<String, Value>> {
    (some_text(), some_text(), "[0-9]{11}", some_text(), some_date(), some_text(), "[A-Z]{2}", any_json()).prop_map(
        |(name, avatar, cpf, email, birth, mother, uf, extra)| {
            let payload = json!({
                "name": name, "avatar": avatar, "cpf": cpf, "email": email,
                "receita_federal": {"nome": name, "dtNascimento": birth, "sexo": "F", "mae": mother,
                                    "noMunicipio": "NATAL", "uf": uf},
                "cnes": {"vinculos": [{"cnes": "1", "noFant": "H", "coMun": "2", "noCBO": "E", "extra": extra}]},
                "experiencia_profissional": [],
                "formacao_academica": [],
                "cursos_cdp": {"total": 0, "data": []},
            });
            match payload {
                Value::Object(map) => map,
                _ => Map::new(),
            }
        },
    )
}

proptest! {
    #[test]
    fn a_well_formed_payload_sets_every_column_with_the_value_it_holds(payload in contract_payload()) {
        let record = everything().map().apply(&payload);
        for (column, value) in record.iter() {
            prop_assert!(matches!(value, ColumnValue::Set(_)), "{column}: {value:?}");
        }
        let text = |c: &str| match record.get(c) {
            Some(ColumnValue::Set(HostValue::Text(t))) => t.clone(),
            other => format!("{other:?}"),
        };
        prop_assert_eq!(text("username"), payload["cpf"].as_str().unwrap_or_default());
        prop_assert_eq!(text("mother_name"), payload["receita_federal"]["mae"].as_str().unwrap_or_default());
        let name = payload["name"].as_str().unwrap_or_default();
        let (first, rest) = split_at_first_space(name);
        prop_assert_eq!((text("first_name"), text("last_name")), (first.to_owned(), rest.to_owned()));
        prop_assert_eq!(
            record.get("birth_date"),
            Some(&ColumnValue::Set(HostValue::Date(payload["receita_federal"]["dtNascimento"].as_str().unwrap_or_default().to_owned())))
        );
        prop_assert_eq!(record.get("profile"), Some(&ColumnValue::Set(HostValue::Json(Value::Object(payload.clone())))));
    }
}

#[test]
fn a_tool_names_the_inputs_its_own_way_in_every_message() {
    let name = |input: MappingInput| {
        match input {
            MappingInput::AttrMap => "MY_MAP",
            MappingInput::LookupField => "MY_LOOKUP",
            MappingInput::Scopes => "MY_SCOPES",
        }
        .to_owned()
    };
    let all = ClientScopes::parse(Scope::ALL.map(Scope::name)).expect("all");
    let cases: [(AttrMapError, &str); 5] = [
        (AttrMap::from_json("[]").expect_err("not an object"), "MY_MAP: not a JSON object"),
        (ClientScopes::parse(["openid"]).expect_err("unknown"), "MY_SCOPES: unknown scope \"openid\""),
        (LookupField::parse("1x").expect_err("not an identifier"), "MY_LOOKUP: column name"),
        (
            map(r#"{"col": "cnes"}"#).validate(&scopes(&[])).expect_err("not requested"),
            "MY_MAP: key \"col\": \"cnes\" needs the scope cnes, which MY_SCOPES does not request",
        ),
        (
            UserMapping::new(map(DEFAULT_ATTR_MAP), LookupField::parse("cpf").expect("ok"), all)
                .expect_err("not mapped"),
            "MY_LOOKUP: column \"cpf\" is not one of the columns of MY_MAP, so",
        ),
    ];
    for (e, expected) in cases {
        let message = e.message_naming(name);
        assert!(message.starts_with(expected), "{message}");
        assert!(!message.contains("the attribute map") && !message.contains("the scope list"), "{message}");
        let default = e.to_string();
        assert!(default.starts_with(e.input().description()), "{default}");
    }
}
