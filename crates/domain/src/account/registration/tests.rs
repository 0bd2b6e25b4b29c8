use super::*;

fn form() -> SignupForm<'static> {
    SignupForm {
        cpf: "529.982.247-25",
        nome: "Carla Dias Moreira",
        email: "carla@example.gov.br",
        username: "Carla.Dias",
        password: "ipê amarelo no cerrado",
        password_confirmacao: "ipê amarelo no cerrado",
    }
}

fn refused(form: SignupForm<'_>) -> Vec<(&'static str, String)> {
    match Registration::parse(form) {
        Ok(r) => panic!("accepted: {r:?}"),
        Err(errors) => errors.iter().map(|e| (e.field, e.message.clone())).collect(),
    }
}

#[test]
fn a_good_sign_up_becomes_a_registration_with_digits_and_a_lower_case_username() {
    let r = Registration::parse(form()).expect("accepted");
    assert_eq!(r.cpf.as_str(), "52998224725");
    assert_eq!(r.username.as_str(), "carla.dias");
    assert_eq!((r.name.as_str(), r.email.as_str()), ("Carla Dias Moreira", "carla@example.gov.br"));
    assert!(!format!("{r:?}").contains("529"), "Debug shows no CPF");
    assert!(!format!("{:?}", form()).contains("ipê"), "nor the form a password");
}

#[test]
fn every_refused_field_is_named_with_a_portuguese_message() {
    let cases: [(SignupForm<'static>, &str, &str); 14] = [
        (SignupForm { cpf: "", ..form() }, "cpf", "Informe o CPF."),
        (SignupForm { cpf: "529.982.247-24", ..form() }, "cpf", "dígitos verificadores"),
        (SignupForm { cpf: "111.111.111-11", ..form() }, "cpf", "dígitos verificadores"),
        (SignupForm { cpf: "5299822472", ..form() }, "cpf", "11 dígitos"),
        (SignupForm { nome: "  ", ..form() }, "nome", "Informe o nome"),
        (SignupForm { email: "", ..form() }, "email", "Informe o e-mail."),
        (SignupForm { email: "carla@", ..form() }, "email", "e-mail válido"),
        (SignupForm { username: "", ..form() }, "username", "Escolha"),
        (SignupForm { username: "52998224725", ..form() }, "username", "comece com uma letra"),
        (SignupForm { password: "", password_confirmacao: "", ..form() }, "password", "Informe a senha."),
        (SignupForm { password: "curta", password_confirmacao: "curta", ..form() }, "password", "8 caracteres"),
        (SignupForm { password: "52998224725", password_confirmacao: "52998224725", ..form() }, "password", "CPF"),
        (SignupForm { password: "senha123", password_confirmacao: "senha123", ..form() }, "password", "muito comum"),
        (SignupForm { password_confirmacao: "outra coisa", ..form() }, "password_confirmacao", "não confere"),
    ];
    for (form, field, text) in cases {
        let errors = refused(form);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].0, field, "{errors:?}");
        assert!(errors[0].1.contains(text), "{errors:?}");
    }
}

#[test]
fn the_password_may_be_none_of_the_typed_identifiers() {
    for same in ["carla@example.gov.br", "Carla Dias Moreira", "carla.dias", "529.982.247-25"] {
        let errors = refused(SignupForm { password: same, password_confirmacao: same, ..form() });
        assert_eq!(errors[0].0, "password", "{same}: {errors:?}");
        assert!(errors[0].1.starts_with("A senha não pode ser igual"), "{same}: {errors:?}");
    }
}

#[test]
fn an_empty_form_reports_every_field_at_once() {
    let fields: Vec<_> = refused(SignupForm::default()).into_iter().map(|(f, _)| f).collect();
    assert_eq!(fields, ["cpf", "nome", "email", "username", "password"]);
}

#[test]
fn e_mail_addresses_have_the_usual_shape() {
    for ok in ["a@b.co", " Ana.Souza+x@Sub.Example.gov.br ", "josé@correio.com.br", "a_b-c@x-y.org"] {
        assert!(EmailAddress::parse(ok).is_some(), "{ok}");
    }
    assert_eq!(EmailAddress::parse(" A@b.co ").expect("ok").as_str(), "A@b.co", "trimmed, case kept");
    let long = format!("{}@example.gov.br", "a".repeat(65));
    for bad in [
        "",
        "ana",
        "@b.co",
        "ana@",
        "ana@localhost",
        "ana@@b.co",
        "a b@c.co",
        "ana@b..co",
        "ana@-b.co",
        "ana@b.123",
        ".ana@b.co",
        "an..a@b.co",
        "ana@b.co\u{0}",
        "<ana>@b.co",
        long.as_str(),
    ] {
        assert!(EmailAddress::parse(bad).is_none(), "{bad:?}");
    }
}

#[test]
fn chosen_usernames_start_with_a_letter_and_stay_short_and_plain() {
    assert_eq!(parse_chosen_username(" Ana_Souza-2 ").expect("ok").as_str(), "ana_souza-2");
    for bad in ["ab", "1ana", "ana souza", "anã", "ana@x", &"a".repeat(31), ".ana"] {
        assert!(parse_chosen_username(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn details_need_a_name_an_e_mail_and_at_most_a_web_url_as_avatar() {
    let ok = DetailsForm { nome: " Carla D. ", email: "c@x.gov.br", avatar: "" };
    let details = AccountDetails::parse(ok).expect("accepted");
    assert_eq!((details.name.as_str(), details.avatar.as_str()), ("Carla D.", ""));
    for avatar in ["https://img.example.gov.br/c.png", "http://x.org/a?b=1"] {
        assert!(AccountDetails::parse(DetailsForm { avatar, ..ok }).is_ok(), "{avatar}");
    }
    for avatar in [
        "javascript:alert(1)",
        "data:image/png;base64,AAAA",
        "ftp://x.org/a.png",
        "//x.org/a.png",
        "/a.png",
        "https://user:pw@x.org/a.png",
        "https://x.org/a b.png",
    ] {
        let errors = AccountDetails::parse(DetailsForm { avatar, ..ok }).expect_err(avatar);
        assert_eq!(errors.fields(), ["avatar"], "{avatar}");
    }
    let long = format!("https://x.org/{}", "a".repeat(MAX_AVATAR_CHARS));
    assert!(AccountDetails::parse(DetailsForm { avatar: &long, ..ok }).is_err());
    let errors = AccountDetails::parse(DetailsForm { nome: "", email: "nope", avatar: "x" }).expect_err("refused");
    assert_eq!(errors.fields(), ["nome", "email", "avatar"]);
}

#[test]
fn taken_values_are_reported_on_their_fields_in_form_order() {
    let errors = UniqueField::errors(&[UniqueField::Username, UniqueField::Cpf]);
    assert_eq!(errors.fields(), ["cpf", "username"]);
    assert!(errors.get("cpf").is_some_and(|m| m.contains("Já existe uma conta com este CPF")));
    assert!(UniqueField::errors(&[]).is_empty());
}

#[test]
fn taken_fields_are_listed_in_form_order() {
    assert_eq!(UniqueField::taken(false, false, false), []);
    assert_eq!(UniqueField::taken(false, true, false), [UniqueField::Email]);
    assert_eq!(UniqueField::taken(true, true, true), [UniqueField::Cpf, UniqueField::Email, UniqueField::Username]);
    assert_eq!(UniqueField::taken(false, true, true), [UniqueField::Email, UniqueField::Username]);
}
