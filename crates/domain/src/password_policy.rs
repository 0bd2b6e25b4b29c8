//! What a new password must be: long enough, not one of the account's
//! own identifiers (username, CPF, e-mail, name), which anyone who knows
//! the person can guess, and not one of the most common passwords.

use std::collections::HashSet;
use std::io::Read;
use std::sync::LazyLock;

use thiserror::Error;

/// Fewest characters a new password may have.
pub const MIN_PASSWORD_CHARS: usize = 8;

/// Why a new password is refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PasswordRuleError {
    /// Shorter than [`MIN_PASSWORD_CHARS`] characters.
    #[error("the password must have at least {MIN_PASSWORD_CHARS} characters")]
    TooShort,
    /// Equal to one of the account's identifiers (named here: `username`,
    /// `CPF`, `e-mail`, `name`).
    #[error("the password must not be the account's {0}")]
    SameAs(&'static str),
    /// On the bundled list of the most common passwords (see
    /// [`is_common_password`]).
    #[error("the password is too common")]
    TooCommon,
}

impl PasswordRuleError {
    /// The refusal in Portuguese, for the pages.
    pub fn mensagem(&self) -> String {
        match self {
            Self::TooShort => format!("A senha deve ter pelo menos {MIN_PASSWORD_CHARS} caracteres."),
            Self::SameAs(what) => {
                let campo = match *what {
                    "username" => "ao seu nome de usuário",
                    "CPF" => "ao seu CPF",
                    "e-mail" => "ao seu e-mail",
                    "name" => "ao seu nome",
                    _ => "a um dos seus dados",
                };
                format!("A senha não pode ser igual {campo}.")
            }
            Self::TooCommon => "Esta senha é muito comum e fácil de adivinhar; escolha outra.".to_owned(),
        }
    }
}

/// Django's list of the 20,000 most common passwords (Royce Williams'
/// compilation, as shipped in `django/contrib/auth/common-passwords.txt.gz`,
/// BSD-3-Clause; see the crate's `NOTICE`), one lower-case password a line,
/// gzipped as Django ships it.
const COMMON_PASSWORDS_GZ: &[u8] = include_bytes!("../data/common-passwords.txt.gz");

/// The list, decompressed on first use. A list that cannot be read (it is
/// checked by a test, so only a broken build gets here) is empty rather
/// than a panic.
static COMMON_PASSWORDS: LazyLock<HashSet<String>> = LazyLock::new(|| {
    let mut text = String::new();
    match flate2::read::GzDecoder::new(COMMON_PASSWORDS_GZ).read_to_string(&mut text) {
        Ok(_) => text.lines().map(|l| l.trim().to_lowercase()).filter(|l| !l.is_empty()).collect(),
        Err(_) => HashSet::new(),
    }
});

/// Whether `password` is on the bundled common-password list, ignoring case
/// and surrounding white space (as Django's `CommonPasswordValidator`).
pub fn is_common_password(password: &str) -> bool {
    COMMON_PASSWORDS.contains(&fold(password))
}

/// The identifiers of the account a password is for; empty ones are
/// ignored.
#[derive(Debug, Clone, Copy, Default)]
pub struct AccountIdentifiers<'a> {
    /// The login name.
    pub username: &'a str,
    /// The CPF (digits, with or without punctuation).
    pub cpf: &'a str,
    /// The e-mail address.
    pub email: &'a str,
    /// The person's name.
    pub name: &'a str,
}

/// Checks `password` for the account with `ids`: at least
/// [`MIN_PASSWORD_CHARS`] characters (Unicode scalar values, not counting
/// white space around it, so a password of spaces is too short), and not equal
/// to any identifier, ignoring case and surrounding white space; for the
/// CPF, also ignoring its punctuation (`529.982.247-25`); and not on the
/// common-password list ([`is_common_password`]).
pub fn check_new_password(password: &str, ids: AccountIdentifiers<'_>) -> Result<(), PasswordRuleError> {
    // White space around the password does not count toward its length.
    if password.trim().chars().count() < MIN_PASSWORD_CHARS {
        return Err(PasswordRuleError::TooShort);
    }
    let folded = fold(password);
    let same = |id: &str| !id.trim().is_empty() && fold(id) == folded;
    for (id, what) in [(ids.username, "username"), (ids.email, "e-mail"), (ids.name, "name")] {
        if same(id) {
            return Err(PasswordRuleError::SameAs(what));
        }
    }
    let digits = |s: &str| s.chars().filter(char::is_ascii_digit).collect::<String>();
    let only_cpf_characters = password.trim().chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | ' '));
    if same(ids.cpf) || (!digits(ids.cpf).is_empty() && only_cpf_characters && digits(password) == digits(ids.cpf)) {
        return Err(PasswordRuleError::SameAs("CPF"));
    }
    if is_common_password(password) {
        return Err(PasswordRuleError::TooCommon);
    }
    Ok(())
}

/// Lower case, surrounding white space removed.
fn fold(s: &str) -> String {
    s.trim().to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANA: AccountIdentifiers<'static> = AccountIdentifiers {
        username: "ana",
        cpf: "52998224725",
        email: "ana@example.gov.br",
        name: "Ana Beatriz Souza",
    };

    #[test]
    fn passwords_are_checked_against_length_and_every_identifier() {
        let cases: [(&str, Result<(), PasswordRuleError>); 13] = [
            ("short", Err(PasswordRuleError::TooShort)),
            ("sete777", Err(PasswordRuleError::TooShort)),
            ("çãéíóúâ", Err(PasswordRuleError::TooShort)),
            ("oito8888", Ok(())),
            ("password", Err(PasswordRuleError::TooCommon)),
            (" PassWord1 ", Err(PasswordRuleError::TooCommon)),
            ("12345678", Err(PasswordRuleError::TooCommon)),
            ("52998224725", Err(PasswordRuleError::SameAs("CPF"))),
            ("529.982.247-25", Err(PasswordRuleError::SameAs("CPF"))),
            (" ANA@example.gov.br ", Err(PasswordRuleError::SameAs("e-mail"))),
            ("ana beatriz souza", Err(PasswordRuleError::SameAs("name"))),
            ("52998224725x", Ok(())),
            ("uma frase longa o bastante", Ok(())),
        ];
        for (password, want) in cases {
            assert_eq!(check_new_password(password, ANA), want, "{password:?}");
        }
    }

    #[test]
    fn a_username_of_eight_characters_or_more_is_no_password() {
        let ids = AccountIdentifiers { username: "anasouza2026", ..ANA };
        assert_eq!(check_new_password("AnaSouza2026", ids), Err(PasswordRuleError::SameAs("username")));
    }

    #[test]
    fn empty_identifiers_are_ignored() {
        let none = AccountIdentifiers::default();
        assert_eq!(check_new_password("sabia-2026-ok", none), Ok(()));
        assert_eq!(check_new_password("abcd efgh", none), Ok(()), "inner spaces count");
    }

    #[test]
    fn white_space_around_a_password_does_not_make_it_long_enough() {
        let none = AccountIdentifiers::default();
        assert_eq!(check_new_password("        ", none), Err(PasswordRuleError::TooShort));
        assert_eq!(check_new_password("  abc12  ", none), Err(PasswordRuleError::TooShort));
    }

    #[test]
    fn the_bundled_list_is_django_s_whole_list() {
        assert_eq!(COMMON_PASSWORDS.len(), 19_640, "every line of Django's list, none lost in decompression");
        for common in ["123456", "qwerty", "iloveyou", "senha123", "brasil"] {
            assert!(is_common_password(common), "{common}");
        }
        assert!(is_common_password("QWERTY123"), "case is ignored");
        assert!(!is_common_password("cavalo correto bateria grampo"));
        assert!(!is_common_password(""));
    }

    #[test]
    fn the_identifier_rules_come_before_the_list() {
        let ids = AccountIdentifiers { username: "password", ..ANA };
        assert_eq!(check_new_password("password", ids), Err(PasswordRuleError::SameAs("username")));
    }

    #[test]
    fn every_refusal_has_a_portuguese_message() {
        let cases = [
            (PasswordRuleError::TooShort, "A senha deve ter pelo menos 8 caracteres."),
            (PasswordRuleError::SameAs("CPF"), "A senha não pode ser igual ao seu CPF."),
            (PasswordRuleError::SameAs("e-mail"), "A senha não pode ser igual ao seu e-mail."),
            (PasswordRuleError::TooCommon, "Esta senha é muito comum e fácil de adivinhar; escolha outra."),
        ];
        for (error, text) in cases {
            assert_eq!(error.mensagem(), text);
        }
    }
}
