//! Tax-id validation: the person types their birth date and mother's name,
//! and they are compared with the tax authority's record of their CPF. A
//! result never tells which field differed; attempts are limited per account.

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

use crate::account::date::IsoDate;
use crate::account::fields::FieldErrors;
use crate::registries::ReceitaFederal;

/// Most validation attempts per account in [`VALIDATION_WINDOW_SECS`].
pub const MAX_VALIDATION_ATTEMPTS: u32 = 5;
/// The attempts window: 24 hours, sliding.
pub const VALIDATION_WINDOW_SECS: i64 = 24 * 60 * 60;

/// What the person typed, checked for form (not yet compared). `Debug`
/// shows neither value: both are personal data that must never be logged.
#[derive(Clone, PartialEq, Eq)]
pub struct TaxIdClaim {
    birth_date: IsoDate,
    mother_name: String,
}

impl std::fmt::Debug for TaxIdClaim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaxIdClaim").finish_non_exhaustive()
    }
}

/// The comparison's outcome; deliberately without a reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaxIdMatch {
    /// Both the birth date and the mother's name match the record.
    Match,
    /// Something differs (which is not said).
    Mismatch,
}

impl TaxIdClaim {
    /// Checks the form fields `data_nascimento` (`YYYY-MM-DD`) and
    /// `nome_mae` (not empty, at most 200 characters).
    pub fn parse(data_nascimento: &str, nome_mae: &str) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::new();
        let birth_date = if data_nascimento.trim().is_empty() {
            errors.push("data_nascimento", "Informe a data de nascimento.");
            None
        } else {
            let d = IsoDate::parse(data_nascimento);
            if d.is_none() {
                errors.push("data_nascimento", crate::account::entries::MSG_DATA_INVALIDA);
            }
            d
        };
        let mother_name = nome_mae.trim();
        if mother_name.is_empty() {
            errors.push("nome_mae", "Informe o nome da mãe.");
        } else if mother_name.chars().count() > crate::account::entries::MAX_TEXT_CHARS {
            errors.push("nome_mae", format!("Use no máximo {} caracteres.", crate::account::entries::MAX_TEXT_CHARS));
        }
        match birth_date {
            Some(birth_date) if errors.is_empty() => Ok(Self { birth_date, mother_name: mother_name.to_owned() }),
            _ => Err(errors),
        }
    }

    /// Compares with the tax authority's record: the birth date exactly, the
    /// mother's name with [`names_match`].
    pub fn compare(&self, record: &ReceitaFederal) -> TaxIdMatch {
        let date = self.birth_date.as_str() == record.dt_nascimento;
        // Both are evaluated, so the time taken does not tell which differed.
        let name = names_match(&self.mother_name, &record.mae);
        if date & name {
            TaxIdMatch::Match
        } else {
            TaxIdMatch::Mismatch
        }
    }
}

/// Whether two names are the same once accents (canonical decomposition,
/// combining marks removed), case and repeated or surrounding white space
/// are set aside. Two empty names never match.
pub fn names_match(a: &str, b: &str) -> bool {
    let (a, b) = (fold_name(a), fold_name(b));
    !a.is_empty() && a == b
}

fn fold_name(name: &str) -> String {
    let bare: String = name.nfd().filter(|c| !is_combining_mark(*c)).collect::<String>().to_lowercase();
    bare.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether another attempt may be made now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptVerdict {
    /// Yes; `remaining` attempts are left in the window, this one included.
    Allowed {
        /// Attempts left, this one included (1 to [`MAX_VALIDATION_ATTEMPTS`]).
        remaining: u32,
    },
    /// No: the oldest attempt that counts leaves the window in
    /// `retry_after_secs` seconds.
    Limited {
        /// Seconds to wait (at least 1).
        retry_after_secs: i64,
    },
}

impl AttemptVerdict {
    /// The wait as the pages say it, e.g. `Você atingiu o limite de 5
    /// tentativas em 24 horas. Tente novamente em 3 h 05 min.`; `None` when
    /// allowed.
    pub fn mensagem(&self) -> Option<String> {
        let Self::Limited { retry_after_secs } = *self else {
            return None;
        };
        let minutes = (retry_after_secs + 59) / 60;
        let wait = match (minutes / 60, minutes % 60) {
            (0, m) => format!("{m} min"),
            (h, 0) => format!("{h} h"),
            (h, m) => format!("{h} h {m:02} min"),
        };
        Some(format!(
            "Você atingiu o limite de {MAX_VALIDATION_ATTEMPTS} tentativas em 24 horas. Tente novamente em {wait}."
        ))
    }
}

/// The start of the window that counts at `now` (Unix seconds): attempts
/// made after it count.
pub fn window_start(now: i64) -> i64 {
    now - VALIDATION_WINDOW_SECS
}

/// Judges a new attempt at `now` given the times (Unix seconds, any order)
/// of the account's earlier attempts; those at or before
/// [`window_start`] are ignored.
pub fn attempt_verdict(attempts: &[i64], now: i64) -> AttemptVerdict {
    let mut recent: Vec<i64> = attempts.iter().copied().filter(|t| *t > window_start(now)).collect();
    recent.sort_unstable();
    let used = u32::try_from(recent.len()).unwrap_or(u32::MAX);
    if used < MAX_VALIDATION_ATTEMPTS {
        return AttemptVerdict::Allowed { remaining: MAX_VALIDATION_ATTEMPTS - used };
    }
    // The attempt that must leave the window for the count to fall below
    // the limit.
    let index = recent.len() - MAX_VALIDATION_ATTEMPTS as usize;
    let leaves_at = recent[index] + VALIDATION_WINDOW_SECS;
    AttemptVerdict::Limited { retry_after_secs: (leaves_at - now).max(1) }
}

#[cfg(test)]
mod tests;
