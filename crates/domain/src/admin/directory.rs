//! The user-management API's rules (compatible with the Sabiá API): how a
//! user is looked up, what a pre-registration form must hold, and the
//! pre-registered account that has no usable password until the person
//! claims it at sign-up.

use crate::account::{EmailAddress, FieldErrors, IsoDate};
use crate::cpf::{Cpf, CpfError};

/// Users on a page of `GET /usuarios/?cpfs=…`.
pub const DIRECTORY_PAGE_SIZE: u32 = 100;
/// Most CPFs one list request may name.
pub const MAX_LISTED_CPFS: usize = 1_000;
/// Most characters of `genero`.
pub const MAX_GENERO_CHARS: usize = 50;
/// Most characters of `nome`.
pub const MAX_NOME_CHARS: usize = crate::account::registration::MAX_NAME_CHARS;

/// The first character of a password hash that is no password (Django's
/// `set_unusable_password`): a pre-registered account's, which no login
/// accepts and which a sign-up with the same CPF and e-mail replaces.
pub const UNUSABLE_PASSWORD_PREFIX: char = '!';

/// Whether `stored` is an unusable password hash (a pre-registered
/// account's).
pub fn is_unusable_password(stored: &str) -> bool {
    stored.starts_with(UNUSABLE_PASSWORD_PREFIX)
}

/// How `GET /usuarios/{cpf-or-email}/` names a user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirectoryKey {
    /// By CPF (11 digits, punctuation allowed, valid check digits).
    Cpf(Cpf),
    /// By e-mail address (ignoring case).
    Email(EmailAddress),
}

impl DirectoryKey {
    /// The key `raw` stands for: an e-mail address when it holds `@`, else
    /// a CPF; `None` when it is neither (no user can match it).
    pub fn parse(raw: &str) -> Option<Self> {
        if raw.contains('@') {
            EmailAddress::parse(raw).map(Self::Email)
        } else {
            Cpf::parse(raw.trim()).ok().map(Self::Cpf)
        }
    }
}

/// A user as the API answers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectoryUser {
    /// The login name.
    pub username: String,
    /// The CPF, 11 digits (`""` when the account has none).
    pub cpf: String,
    /// The e-mail address.
    pub email: String,
    /// The full name.
    pub nome: String,
    /// The gender as registered (`""` when unknown).
    pub genero: String,
    /// The birth date, `YYYY-MM-DD`, when known.
    pub data_de_nascimento: Option<String>,
    /// Whether the account's CPF was validated at the tax authority.
    pub validado: bool,
}

/// The pre-registration form (`POST /usuarios/`) as sent.
#[derive(Debug, Clone, Copy, Default)]
pub struct PreRegistrationForm<'a> {
    /// CPF, with or without punctuation.
    pub cpf: Option<&'a str>,
    /// E-mail address.
    pub email: Option<&'a str>,
    /// Full name.
    pub nome: Option<&'a str>,
    /// Gender, as the host application writes it.
    pub genero: Option<&'a str>,
    /// Birth date, `YYYY-MM-DD`.
    pub data_de_nascimento: Option<&'a str>,
}

/// A pre-registration that passed the rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreRegistration {
    /// The CPF (also the account's username until the person claims it).
    pub cpf: Cpf,
    /// The e-mail address.
    pub email: EmailAddress,
    /// The full name.
    pub nome: String,
    /// The gender as sent, trimmed.
    pub genero: String,
    /// The birth date.
    pub data_de_nascimento: IsoDate,
}

/// DRF's message for a field that was not sent (the clients of the
/// original service read it).
pub const MSG_REQUIRED: &str = "This field is required.";
/// DRF's message for a field sent empty.
pub const MSG_BLANK: &str = "This field may not be blank.";

impl PreRegistration {
    /// Checks the form: every field present and not blank, a CPF with
    /// valid check digits, an e-mail address of the usual shape, a name of
    /// at most [`MAX_NOME_CHARS`] characters, a gender of at most
    /// [`MAX_GENERO_CHARS`], and a real date written `YYYY-MM-DD` (not in
    /// the future is not checked: the host knows its data). Every refused
    /// field is reported.
    pub fn parse(form: PreRegistrationForm<'_>) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::new();
        let cpf = present(&mut errors, "cpf", form.cpf).and_then(|raw| match Cpf::parse(raw) {
            Ok(cpf) => Some(cpf),
            Err(CpfError::Length) => {
                errors.push("cpf", "CPF inválido: um CPF tem 11 dígitos.");
                None
            }
            Err(CpfError::Repeated | CpfError::CheckDigits) => {
                errors.push("cpf", "CPF inválido: os dígitos verificadores não conferem.");
                None
            }
        });
        let email = present(&mut errors, "email", form.email).and_then(|raw| {
            let parsed = EmailAddress::parse(raw);
            if parsed.is_none() {
                errors.push("email", "Informe um endereço de e-mail válido.");
            }
            parsed
        });
        let nome = present(&mut errors, "nome", form.nome).and_then(|raw| {
            if raw.chars().any(char::is_control) {
                errors.push("nome", "O nome não pode ter caracteres de controle.");
                return None;
            }
            if raw.chars().count() > MAX_NOME_CHARS {
                errors.push("nome", format!("O nome tem no máximo {MAX_NOME_CHARS} caracteres."));
                return None;
            }
            Some(raw.to_owned())
        });
        let genero = present(&mut errors, "genero", form.genero).and_then(|raw| {
            if raw.chars().count() > MAX_GENERO_CHARS || raw.chars().any(char::is_control) {
                errors.push(
                    "genero",
                    format!("O gênero tem no máximo {MAX_GENERO_CHARS} caracteres, sem caracteres de controle."),
                );
                return None;
            }
            Some(raw.to_owned())
        });
        let data_de_nascimento = present(&mut errors, "data_de_nascimento", form.data_de_nascimento).and_then(|raw| {
            let parsed = IsoDate::parse(raw);
            if parsed.is_none() {
                errors.push("data_de_nascimento", crate::account::entries::MSG_DATA_INVALIDA);
            }
            parsed
        });
        match (cpf, email, nome, genero, data_de_nascimento) {
            (Some(cpf), Some(email), Some(nome), Some(genero), Some(data_de_nascimento)) => {
                Ok(Self { cpf, email, nome, genero, data_de_nascimento })
            }
            _ => Err(errors),
        }
    }
}

/// The trimmed value of a field that must be sent and not blank.
fn present<'a>(errors: &mut FieldErrors, field: &'static str, value: Option<&'a str>) -> Option<&'a str> {
    match value.map(str::trim) {
        None => {
            errors.push(field, MSG_REQUIRED);
            None
        }
        Some("") => {
            errors.push(field, MSG_BLANK);
            None
        }
        Some(text) => Some(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form<'a>() -> PreRegistrationForm<'a> {
        PreRegistrationForm {
            cpf: Some("529.982.247-25"),
            email: Some("joana@example.org"),
            nome: Some("Joana Silva"),
            genero: Some("F"),
            data_de_nascimento: Some("1990-04-12"),
        }
    }

    #[test]
    fn a_complete_form_is_accepted() {
        let r = PreRegistration::parse(form()).expect("valid");
        assert_eq!(r.cpf.as_str(), "52998224725");
        assert_eq!(r.data_de_nascimento.as_str(), "1990-04-12");
        assert_eq!((r.nome.as_str(), r.genero.as_str()), ("Joana Silva", "F"));
    }

    #[test]
    fn every_refused_field_is_reported() {
        let bad = PreRegistrationForm {
            cpf: Some("529.982.247-24"),
            email: None,
            nome: Some("  "),
            genero: Some("F"),
            data_de_nascimento: Some("12/04/1990"),
        };
        let errors = PreRegistration::parse(bad).expect_err("refused");
        assert_eq!(errors.fields(), vec!["cpf", "email", "nome", "data_de_nascimento"]);
        assert_eq!(errors.get("email"), Some(MSG_REQUIRED));
        assert_eq!(errors.get("nome"), Some(MSG_BLANK));
    }

    #[test]
    fn impossible_dates_and_short_cpfs_are_refused() {
        let errors = PreRegistration::parse(PreRegistrationForm {
            cpf: Some("1234"),
            data_de_nascimento: Some("1990-02-30"),
            ..form()
        })
        .expect_err("refused");
        assert_eq!(errors.fields(), vec!["cpf", "data_de_nascimento"]);
    }

    #[test]
    fn control_characters_are_refused_before_they_reach_the_storage() {
        let errors =
            PreRegistration::parse(PreRegistrationForm { nome: Some("Jo\u{0}ana"), genero: Some("F\u{7}"), ..form() })
                .expect_err("refused");
        assert_eq!(errors.fields(), vec!["nome", "genero"]);
    }

    #[test]
    fn keys_are_emails_when_they_hold_an_at_sign() {
        assert!(matches!(DirectoryKey::parse("Joana@Example.org"), Some(DirectoryKey::Email(_))));
        assert!(matches!(DirectoryKey::parse("529.982.247-25"), Some(DirectoryKey::Cpf(_))));
        assert_eq!(DirectoryKey::parse("52998224724"), None);
        assert_eq!(DirectoryKey::parse("joana@"), None);
    }

    #[test]
    fn only_a_bang_prefixed_hash_is_unusable() {
        assert!(is_unusable_password("!abc"));
        assert!(!is_unusable_password("pbkdf2_sha256$1$salt$hash"));
    }
}
