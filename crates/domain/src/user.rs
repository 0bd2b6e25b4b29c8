//! Users as the token service sees them.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Longest username accepted (Django's `AbstractUser.username`).
pub const MAX_USERNAME_LEN: usize = 150;

/// Primary key of a user row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct UserId(pub i64);

/// A username that passed validation: 1 to 150 characters, no whitespace
/// or control characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Username(String);

/// Why a username was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum UsernameError {
    /// Empty.
    #[error("username must not be empty")]
    Empty,
    /// Over [`MAX_USERNAME_LEN`] characters.
    #[error("username must have at most {MAX_USERNAME_LEN} characters")]
    TooLong,
    /// Contains whitespace or a control character.
    #[error("username must not contain whitespace or control characters")]
    BadCharacter,
}

impl Username {
    /// Validates `raw` as a username.
    pub fn parse(raw: &str) -> Result<Self, UsernameError> {
        if raw.is_empty() {
            return Err(UsernameError::Empty);
        }
        if raw.chars().count() > MAX_USERNAME_LEN {
            return Err(UsernameError::TooLong);
        }
        if raw.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(UsernameError::BadCharacter);
        }
        Ok(Self(raw.to_owned()))
    }

    /// The username text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Username {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The user data the upstream user-data resource (`/api/rh/eu/`) returns and
/// that we keep for each user.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserData {
    /// Registration id at the institution (e.g. an employee number).
    pub identificacao: String,
    /// The name the person goes by.
    pub nome_usual: String,
    /// E-mail address.
    pub email: String,
    /// Campus the person belongs to.
    pub campus: String,
    /// Kind of user (e.g. `Servidor`, `Aluno`).
    pub tipo_usuario: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usernames_are_validated() {
        assert!(Username::parse("ana").is_ok());
        assert!(Username::parse("ana.souza@ifrn").is_ok());
        assert_eq!(Username::parse(""), Err(UsernameError::Empty));
        assert_eq!(Username::parse("a b"), Err(UsernameError::BadCharacter));
        assert_eq!(Username::parse("a\u{0}"), Err(UsernameError::BadCharacter));
        assert_eq!(Username::parse(&"x".repeat(151)), Err(UsernameError::TooLong));
        assert!(Username::parse(&"é".repeat(150)).is_ok(), "counted in characters");
    }
}
