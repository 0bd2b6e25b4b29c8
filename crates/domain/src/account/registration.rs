//! The forms through which a person creates and keeps their account: the
//! sign-up form (`/conta/cadastro/`) and the overview's details form (name,
//! e-mail, avatar). Forms come in as typed text; what passes the rules is a
//! value the storage can trust. A taken CPF, e-mail or username is found by
//! the storage (unique indexes) and reported with [`UniqueField`].

use crate::account::fields::FieldErrors;
use crate::cpf::{Cpf, CpfError};
use crate::email::EmailKey;
use crate::password_policy::{check_new_password, AccountIdentifiers};
use crate::user::Username;

/// Most characters of a name.
pub const MAX_NAME_CHARS: usize = 200;
/// Most characters of an e-mail address (RFC 5321's path limit).
pub const MAX_EMAIL_CHARS: usize = 254;
/// Most characters of an avatar URL.
pub const MAX_AVATAR_CHARS: usize = 2_000;
/// Fewest characters of a username chosen at sign-up.
pub const MIN_USERNAME_CHARS: usize = 3;
/// Most characters of a username chosen at sign-up.
pub const MAX_USERNAME_CHARS: usize = 30;

/// The sign-up form as typed (field names are the pages').
#[derive(Clone, Copy, Default)]
pub struct SignupForm<'a> {
    /// CPF, with or without punctuation.
    pub cpf: &'a str,
    /// Full name.
    pub nome: &'a str,
    /// E-mail address.
    pub email: &'a str,
    /// The login name the person chooses.
    pub username: &'a str,
    /// The new password.
    pub password: &'a str,
    /// The password typed again.
    pub password_confirmacao: &'a str,
}

/// Shows no field: the form holds a CPF and a password.
impl std::fmt::Debug for SignupForm<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignupForm").finish_non_exhaustive()
    }
}

/// A sign-up that passed the rules (the password too; it is not kept here).
#[derive(Clone, PartialEq, Eq)]
pub struct Registration {
    /// The login name: lower case, see [`parse_chosen_username`].
    pub username: Username,
    /// The CPF, with valid check digits.
    pub cpf: Cpf,
    /// The full name.
    pub name: String,
    /// The e-mail address.
    pub email: EmailAddress,
}

/// Shows the username only: the rest is personal data.
impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration").field("username", &self.username).finish_non_exhaustive()
    }
}

/// The overview's details form as typed.
#[derive(Debug, Clone, Copy, Default)]
pub struct DetailsForm<'a> {
    /// Full name.
    pub nome: &'a str,
    /// E-mail address.
    pub email: &'a str,
    /// Avatar URL (may be empty).
    pub avatar: &'a str,
}

/// The details of an account that passed the rules.
#[derive(Clone, PartialEq, Eq)]
pub struct AccountDetails {
    /// The full name.
    pub name: String,
    /// The e-mail address.
    pub email: EmailAddress,
    /// An `http` or `https` URL, or empty.
    pub avatar: String,
}

/// Shows nothing: every field is personal data.
impl std::fmt::Debug for AccountDetails {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccountDetails").finish_non_exhaustive()
    }
}

/// An e-mail address of the usual shape (`local@domain.tld`), trimmed, as
/// typed otherwise. Two addresses with one [`EmailKey`] (they differ in
/// case or Unicode form only) are the same account's: the storage compares
/// their keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmailAddress(String);

impl EmailAddress {
    /// Accepts a trimmed address of at most [`MAX_EMAIL_CHARS`] characters
    /// with one `@`, a local part of 1 to 64 characters without white
    /// space, control characters or `"(),:;<>[\]`, and a domain of at least
    /// two labels of letters, digits and inner hyphens.
    pub fn parse(raw: &str) -> Option<Self> {
        let text = raw.trim();
        if text.chars().count() > MAX_EMAIL_CHARS {
            return None;
        }
        let (local, domain) = text.split_once('@')?;
        let local_ok = (1..=64).contains(&local.chars().count())
            && !local.starts_with('.')
            && !local.ends_with('.')
            && !local.contains("..")
            && local.chars().all(|c| !c.is_whitespace() && !c.is_control() && !"\"(),:;<>@[\\]".contains(c));
        let labels: Vec<&str> = domain.split('.').collect();
        let domain_ok = labels.len() >= 2
            && labels.iter().all(|l| {
                (1..=63).contains(&l.chars().count())
                    && !l.starts_with('-')
                    && !l.ends_with('-')
                    && l.chars().all(|c| c.is_alphanumeric() || c == '-')
            })
            && labels.last().is_some_and(|tld| !tld.chars().all(|c| c.is_ascii_digit()));
        (local_ok && domain_ok).then(|| Self(text.to_owned()))
    }

    /// The address.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The key the address is unique and looked up under.
    pub fn key(&self) -> EmailKey {
        EmailKey::of(&self.0)
    }
}

/// A value of an account that no other account may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UniqueField {
    /// The username (exact match).
    Username,
    /// The CPF.
    Cpf,
    /// The e-mail address (by its [`EmailKey`]: ignoring case and Unicode form).
    Email,
}

impl UniqueField {
    /// The form field it is typed into.
    pub fn field(self) -> &'static str {
        match self {
            Self::Username => "username",
            Self::Cpf => "cpf",
            Self::Email => "email",
        }
    }

    /// What the page says when another account has it.
    pub fn taken_message(self) -> &'static str {
        match self {
            Self::Username => "Este nome de usuário já está em uso. Escolha outro.",
            Self::Cpf => "Já existe uma conta com este CPF. Se ela é sua, entre com o CPF e a senha.",
            Self::Email => "Este e-mail já está em uso por outra conta.",
        }
    }

    /// The fields in form order.
    pub const FORM_ORDER: [UniqueField; 3] = [Self::Cpf, Self::Email, Self::Username];

    /// The fields another account was found to have (`cpf`, `email`,
    /// `username`: whether it has each), in form order: what a storage
    /// adapter answers when it created nothing.
    pub fn taken(cpf: bool, email: bool, username: bool) -> Vec<UniqueField> {
        Self::FORM_ORDER
            .into_iter()
            .zip([cpf, email, username])
            .filter_map(|(field, is_taken)| is_taken.then_some(field))
            .collect()
    }

    /// The field errors of `taken`, in form order.
    pub fn errors(taken: &[UniqueField]) -> FieldErrors {
        let mut errors = FieldErrors::new();
        for field in Self::FORM_ORDER {
            if taken.contains(&field) {
                errors.push(field.field(), field.taken_message());
            }
        }
        errors
    }
}

/// Message of a password and its confirmation that differ.
pub const MSG_CONFIRMACAO: &str = "A confirmação não confere com a senha.";

impl Registration {
    /// Checks the typed sign-up form: a CPF with valid check digits, a
    /// name, an e-mail address, a username (see [`parse_chosen_username`])
    /// and a password that passes [`check_new_password`] for these
    /// identifiers, typed twice alike. Every refused field is reported.
    pub fn parse(form: SignupForm<'_>) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::new();
        let cpf = if form.cpf.trim().is_empty() {
            errors.push("cpf", "Informe o CPF.");
            None
        } else {
            match Cpf::parse(form.cpf.trim()) {
                Ok(cpf) => Some(cpf),
                Err(CpfError::Length) => {
                    errors.push("cpf", "O CPF tem 11 dígitos: confira o número.");
                    None
                }
                Err(CpfError::Repeated | CpfError::CheckDigits) => {
                    errors.push("cpf", "CPF inválido: os dígitos verificadores não conferem. Confira o número.");
                    None
                }
            }
        };
        let name = name(&mut errors, form.nome);
        let email = email(&mut errors, form.email);
        let username = match parse_chosen_username(form.username) {
            Ok(u) => Some(u),
            Err(message) => {
                errors.push("username", message);
                None
            }
        };
        if form.password.is_empty() {
            errors.push("password", "Informe a senha.");
        } else {
            let ids = AccountIdentifiers {
                username: username.as_ref().map(Username::as_str).unwrap_or(form.username.trim()),
                cpf: form.cpf,
                email: form.email,
                name: form.nome,
            };
            if let Err(e) = check_new_password(form.password, ids) {
                errors.push("password", e.mensagem());
            } else if form.password_confirmacao != form.password {
                errors.push("password_confirmacao", MSG_CONFIRMACAO);
            }
        }
        match (cpf, email, username) {
            (Some(cpf), Some(email), Some(username)) if errors.is_empty() => Ok(Self { username, cpf, name, email }),
            _ => Err(errors),
        }
    }
}

impl AccountDetails {
    /// Checks the typed details form: a name, an e-mail address, and an
    /// avatar that is empty or an absolute `http`/`https` URL with a host
    /// and no credentials, of at most [`MAX_AVATAR_CHARS`] characters.
    pub fn parse(form: DetailsForm<'_>) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::new();
        let name = name(&mut errors, form.nome);
        let email = email(&mut errors, form.email);
        let avatar = form.avatar.trim();
        if !avatar.is_empty() && !is_web_url(avatar) {
            errors.push(
                "avatar",
                format!(
                    "Informe o endereço completo da imagem, começando com https:// (no máximo {MAX_AVATAR_CHARS} \
                     caracteres), ou deixe o campo vazio."
                ),
            );
        }
        match email {
            Some(email) if errors.is_empty() => Ok(Self { name, email, avatar: avatar.to_owned() }),
            _ => Err(errors),
        }
    }
}

/// A username a person chooses at sign-up: lower-cased, 3 to 30
/// characters, starting with a letter, then letters `a-z`, digits, `.`,
/// `_` or `-`. Starting with a letter, it is never read as a CPF at the
/// login form. Errors: the message for the page.
pub fn parse_chosen_username(raw: &str) -> Result<Username, &'static str> {
    let text = raw.trim().to_lowercase();
    if text.is_empty() {
        return Err("Escolha um nome de usuário.");
    }
    let count = text.chars().count();
    let shaped = text.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && text.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'));
    if !(MIN_USERNAME_CHARS..=MAX_USERNAME_CHARS).contains(&count) || !shaped {
        return Err("O nome de usuário tem de 3 a 30 caracteres: comece com uma letra e use só letras sem acento, \
                    números, ponto, hífen ou sublinhado.");
    }
    Username::parse(&text).map_err(|_| "Nome de usuário inválido.")
}

fn name(errors: &mut FieldErrors, raw: &str) -> String {
    let text = raw.trim();
    if text.is_empty() {
        errors.push("nome", "Informe o nome completo.");
    } else if text.chars().count() > MAX_NAME_CHARS {
        errors.push("nome", format!("Use no máximo {MAX_NAME_CHARS} caracteres."));
    } else if text.chars().any(char::is_control) {
        errors.push("nome", "Remova os caracteres de controle.");
    }
    text.to_owned()
}

fn email(errors: &mut FieldErrors, raw: &str) -> Option<EmailAddress> {
    if raw.trim().is_empty() {
        errors.push("email", "Informe o e-mail.");
        return None;
    }
    let parsed = EmailAddress::parse(raw);
    if parsed.is_none() {
        errors.push("email", "Informe um e-mail válido, como nome@exemplo.gov.br.");
    }
    parsed
}

/// Whether `text` is an absolute `http`/`https` URL with a host, no user
/// or password, and at most [`MAX_AVATAR_CHARS`] characters.
fn is_web_url(text: &str) -> bool {
    if text.chars().count() > MAX_AVATAR_CHARS || text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return false;
    }
    match url::Url::parse(text) {
        Ok(url) => {
            matches!(url.scheme(), "http" | "https")
                && url.host_str().is_some_and(|h| !h.is_empty())
                && url.username().is_empty()
                && url.password().is_none()
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests;
