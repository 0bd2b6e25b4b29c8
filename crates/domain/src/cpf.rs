//! CPF (Cadastro de Pessoas Físicas) numbers with their check digits.

use thiserror::Error;

/// A CPF whose check digits are right, stored as 11 digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Cpf(String);

/// Why a CPF was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CpfError {
    /// Not 11 digits (after removing `.` and `-`).
    #[error("a CPF has 11 digits")]
    Length,
    /// All digits equal (e.g. 111.111.111-11), which passes the arithmetic
    /// but is never issued.
    #[error("a CPF cannot have all digits equal")]
    Repeated,
    /// A check digit does not match.
    #[error("the CPF check digits do not match")]
    CheckDigits,
}

impl Cpf {
    /// Accepts `123.456.789-09` or `12345678909`.
    pub fn parse(raw: &str) -> Result<Self, CpfError> {
        let digits: Vec<u32> = raw
            .chars()
            .filter(|c| !matches!(c, '.' | '-' | ' '))
            .map(|c| c.to_digit(10).ok_or(CpfError::Length))
            .collect::<Result<_, _>>()?;
        if digits.len() != 11 {
            return Err(CpfError::Length);
        }
        if digits.iter().all(|d| *d == digits[0]) {
            return Err(CpfError::Repeated);
        }
        let check = |len: usize| {
            let sum: u32 = digits[..len].iter().zip((2..=len as u32 + 1).rev()).map(|(d, w)| d * w).sum();
            let rest = (sum * 10) % 11;
            if rest == 10 {
                0
            } else {
                rest
            }
        };
        if check(9) != digits[9] || check(10) != digits[10] {
            return Err(CpfError::CheckDigits);
        }
        Ok(Self(digits.iter().map(|d| char::from_digit(*d, 10).unwrap_or('0')).collect()))
    }

    /// The 11 digits.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The CPF as shown where the full value is not needed (LGPD): the
    /// first three and the last two digits, `529.***.***-25`.
    pub fn masked(&self) -> String {
        format!("{}.***.***-{}", &self.0[..3], &self.0[9..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_cpfs_are_accepted_with_or_without_punctuation() {
        assert_eq!(Cpf::parse("529.982.247-25").expect("valid").as_str(), "52998224725");
        assert!(Cpf::parse("12345678909").is_ok());
        assert!(Cpf::parse("11144477735").is_ok());
    }

    #[test]
    fn invalid_cpfs_are_refused() {
        assert_eq!(Cpf::parse("52998224724"), Err(CpfError::CheckDigits));
        assert_eq!(Cpf::parse("12345678900"), Err(CpfError::CheckDigits));
        assert_eq!(Cpf::parse("11111111111"), Err(CpfError::Repeated));
        assert_eq!(Cpf::parse("1234567890"), Err(CpfError::Length));
        assert_eq!(Cpf::parse("1234567890a"), Err(CpfError::Length));
        assert_eq!(Cpf::parse(""), Err(CpfError::Length));
    }

    #[test]
    fn a_masked_cpf_shows_the_first_three_and_the_last_two_digits() {
        assert_eq!(Cpf::parse("529.982.247-25").expect("valid").masked(), "529.***.***-25");
    }
}
