//! What a new password must be: long enough, and not one of the account's
//! own identifiers (username, CPF, e-mail, name), which anyone who knows
//! the person can guess.

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
/// CPF, also ignoring its punctuation (`529.982.247-25`).
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
        let cases: [(&str, Result<(), PasswordRuleError>); 10] = [
            ("short", Err(PasswordRuleError::TooShort)),
            ("sete777", Err(PasswordRuleError::TooShort)),
            ("çãéíóúâ", Err(PasswordRuleError::TooShort)),
            ("oito8888", Ok(())),
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
        assert_eq!(check_new_password("12345678", none), Ok(()));
        assert_eq!(check_new_password("abcd efgh", none), Ok(()), "inner spaces count");
    }

    #[test]
    fn white_space_around_a_password_does_not_make_it_long_enough() {
        let none = AccountIdentifiers::default();
        assert_eq!(check_new_password("        ", none), Err(PasswordRuleError::TooShort));
        assert_eq!(check_new_password("  abc12  ", none), Err(PasswordRuleError::TooShort));
    }
}
