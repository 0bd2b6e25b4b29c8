//! The validation page's template (`templates/account/validation.html`)
//! and its texts.

use askama::Template;
use credencial_application::ValidationState;
use credencial_domain::account::{AttemptVerdict, FieldErrors};

use crate::html::Frame;
use crate::html::{Site, PROVIDER};

/// The page's path (one of the frame's sections).
pub const PATH: &str = "/conta/validacao/";

/// The message of an account without a (valid) CPF.
pub const NO_CPF: &str =
    "Sua conta não tem um CPF válido cadastrado; sem ele não é possível validar o cadastro pela Receita Federal.";
/// The message of a mismatch (which field differs is not said).
pub const MISMATCH: &str = "Os dados informados não conferem com o cadastro da Receita Federal.";

/// How many attempts are left, as the page says it.
pub fn attempts_left(remaining: u32) -> String {
    match remaining {
        1 => "Resta 1 tentativa nas próximas 24 horas.".to_owned(),
        n => format!("Restam {n} tentativas nas próximas 24 horas."),
    }
}

/// The message of an attempt the registry could not answer.
pub fn unavailable(erro: &str) -> String {
    format!("{erro} Nada foi alterado e esta tentativa não foi contada. Tente novamente mais tarde.")
}

/// The message of used-up attempts, with the time to wait.
pub fn limited(retry_after_secs: i64) -> String {
    AttemptVerdict::Limited { retry_after_secs }.mensagem().unwrap_or_default()
}

/// The form, as typed (empty at first), with its refusals.
#[derive(Debug, Default)]
pub struct ClaimForm<'a> {
    /// The anti-forgery token.
    pub hidden: Vec<(&'static str, &'a str)>,
    /// `data_nascimento` as typed.
    pub data_nascimento: &'a str,
    /// `nome_mae` as typed.
    pub nome_mae: &'a str,
    /// Why `data_nascimento` was refused, if it was.
    pub error_data_nascimento: Option<&'a str>,
    /// Why `nome_mae` was refused, if it was.
    pub error_nome_mae: Option<&'a str>,
    /// Attempts left, the next one included.
    pub remaining: u32,
}

impl<'a> ClaimForm<'a> {
    /// The form carrying `token`, holding what was typed and the refusals
    /// in `errors`.
    pub fn new(token: &'a str, typed: (&'a str, &'a str), errors: Option<&'a FieldErrors>, remaining: u32) -> Self {
        Self {
            hidden: vec![("csrf_token", token)],
            data_nascimento: typed.0,
            nome_mae: typed.1,
            error_data_nascimento: errors.and_then(|e| e.get("data_nascimento")),
            error_nome_mae: errors.and_then(|e| e.get("nome_mae")),
            remaining,
        }
    }

    /// The attempts note under the form.
    pub fn attempts(&self) -> String {
        match self.remaining {
            1 => "Você tem 1 tentativa nas próximas 24 horas.".to_owned(),
            n => format!("Você tem {n} tentativas nas próximas 24 horas."),
        }
    }
}

/// The validation page (`templates/account/validation.html`).
#[derive(Debug, Template)]
#[template(path = "account/validation.html")]
pub struct ValidationPage<'a> {
    /// Who the page speaks for.
    pub site: &'static Site,
    /// The page title.
    pub title: &'a str,
    /// The account frame.
    pub frame: Frame,
    /// What went wrong, if anything (announced).
    pub message: Option<String>,
    /// Whether the account is validated.
    pub validated: bool,
    /// The form, when an attempt may be made.
    pub form: Option<ClaimForm<'a>>,
}

/// The page for `state`, with `message` over it and, when an attempt may
/// be made, `form` (whose `remaining` is set from the state).
pub fn validation_page<'a>(state: ValidationState, message: Option<String>, form: ClaimForm<'a>) -> ValidationPage<'a> {
    let (message, form) = match state {
        ValidationState::Open { remaining } => (message, Some(ClaimForm { remaining, ..form })),
        ValidationState::Validated => (message, None),
        ValidationState::NoCpf => (Some(NO_CPF.to_owned()), None),
        ValidationState::Limited { retry_after_secs } => {
            let wait = limited(retry_after_secs);
            (Some(message.map_or_else(|| wait.clone(), |m| format!("{m} {wait}"))), None)
        }
    };
    ValidationPage {
        site: &PROVIDER,
        title: "Validação do cadastro",
        frame: Frame::account(PATH),
        message,
        validated: state == ValidationState::Validated,
        form,
    }
}

#[cfg(test)]
mod tests {
    use credencial_domain::account::TaxIdClaim;

    use super::*;

    #[test]
    fn an_open_account_gets_the_form_with_its_attempts_and_the_typed_values_escaped() {
        let form = ClaimForm::new("tok", ("1991-07-21", "Joana \"<b>\""), None, 0);
        let page = validation_page(ValidationState::Open { remaining: 4 }, None, form).render().expect("renders");
        assert!(page.contains("<form method=\"post\" action=\"/conta/validacao/\" novalidate>"), "{page}");
        assert!(page.contains("name=\"csrf_token\" value=\"tok\""), "{page}");
        assert!(page.contains("value=\"1991-07-21\""), "{page}");
        assert!(page.contains("value=\"Joana &#34;&#60;b&#62;&#34;\""), "{page}");
        assert!(page.contains("Você tem 4 tentativas nas próximas 24 horas."), "{page}");
        assert!(page.contains("<a href=\"/conta/validacao/\" aria-current=\"page\">"), "{page}");
        assert!(!page.contains("role=\"alert\"") && !page.contains("role=\"status\""), "{page}");
    }

    #[test]
    fn refused_fields_are_marked_and_described() {
        let errors = TaxIdClaim::parse("21/07/1991", "").expect_err("refused");
        let form = ClaimForm::new("tok", ("21/07/1991", ""), Some(&errors), 0);
        let page = validation_page(ValidationState::Open { remaining: 1 }, None, form).render().expect("renders");
        assert!(page.contains("id=\"erro-data_nascimento\">Informe uma data válida"), "{page}");
        assert!(page.contains("aria-describedby=\"dica-data_nascimento erro-data_nascimento\" aria-invalid=\"true\""));
        assert!(page.contains("id=\"erro-nome_mae\">Informe o nome da mãe.</p>"), "{page}");
        assert!(page.contains("Você tem 1 tentativa nas"), "{page}");
    }

    #[test]
    fn validated_no_cpf_and_limited_accounts_get_no_form() {
        let cases = [
            (ValidationState::Validated, "role=\"status\">Seu cadastro está validado"),
            (ValidationState::NoCpf, NO_CPF),
            (
                ValidationState::Limited { retry_after_secs: 3_600 },
                "Você atingiu o limite de 5 tentativas em 24 horas. Tente novamente em 1 h.",
            ),
        ];
        for (state, shown) in cases {
            let page =
                validation_page(state, None, ClaimForm::new("tok", ("", ""), None, 0)).render().expect("renders");
            assert!(page.contains(shown), "{state:?}: {page}");
            assert!(!page.contains("<form"), "{state:?}: {page}");
        }
        let page = validation_page(
            ValidationState::Limited { retry_after_secs: 60 },
            Some(MISMATCH.to_owned()),
            ClaimForm::default(),
        )
        .render()
        .expect("renders");
        assert!(page.contains(&format!("{MISMATCH} Você atingiu o limite")), "the last mismatch says both: {page}");
    }

    #[test]
    fn messages_count_attempts_in_portuguese() {
        assert_eq!(attempts_left(1), "Resta 1 tentativa nas próximas 24 horas.");
        assert_eq!(attempts_left(3), "Restam 3 tentativas nas próximas 24 horas.");
        assert!(unavailable("O serviço da Receita Federal está indisponível no momento.")
            .ends_with("Nada foi alterado e esta tentativa não foi contada. Tente novamente mais tarde."));
    }
}
