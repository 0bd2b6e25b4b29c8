//! gov.br's reliability levels ("níveis de confiabilidade") and the seals
//! ("selos") that earned them.
//!
//! gov.br names the levels `bronze`, `silver` and `gold` in its tokens;
//! people, settings and pages say bronze, prata and ouro. Each level is an
//! authentication context class of this service (`acr`), so that an
//! application can ask for one with `acr_values`.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A gov.br account's reliability level, lowest first (the order compares
/// them: `Ouro > Prata`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReliabilityLevel {
    /// Bronze: a self-declared registration (the INSS or a bank's basic
    /// registration, or the person's own word).
    Bronze,
    /// Prata: checked against a bank's login, a public servant's
    /// registration or a professional council.
    Prata,
    /// Ouro: the electoral court's biometrics, or a digital certificate.
    Ouro,
}

/// Prefix of the `acr` values of gov.br levels.
const ACR_PREFIX: &str = "urn:credencial:acr:govbr:";

impl ReliabilityLevel {
    /// Every level, lowest first.
    pub const ALL: [Self; 3] = [Self::Bronze, Self::Prata, Self::Ouro];

    /// The level a gov.br token names (`reliability_info.level`: `bronze`,
    /// `silver`, `gold`, in any case); anything else is none.
    pub fn from_govbr(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "bronze" => Some(Self::Bronze),
            "silver" => Some(Self::Prata),
            "gold" => Some(Self::Ouro),
            _ => None,
        }
    }

    /// The level a setting or a form names: the Portuguese name
    /// (`bronze`, `prata`, `ouro`) or gov.br's English one, in any case.
    pub fn from_name(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "prata" => Some(Self::Prata),
            "ouro" => Some(Self::Ouro),
            other => Self::from_govbr(other),
        }
    }

    /// The level's name as people read it and as it is stored: `bronze`,
    /// `prata` or `ouro`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Bronze => "bronze",
            Self::Prata => "prata",
            Self::Ouro => "ouro",
        }
    }

    /// The authentication context class of a login at this level:
    /// `urn:credencial:acr:govbr:<name>`.
    pub fn acr(self) -> &'static str {
        match self {
            Self::Bronze => ACR_BRONZE,
            Self::Prata => ACR_PRATA,
            Self::Ouro => ACR_OURO,
        }
    }

    /// The level an `acr` value names, when it is one of [`acr`](Self::acr)'s.
    pub fn from_acr(value: &str) -> Option<Self> {
        value.strip_prefix(ACR_PREFIX).and_then(|name| Self::ALL.into_iter().find(|level| level.name() == name))
    }

    /// Whether a person at this level has a validated registration when
    /// `minimum` is the level that counts as one (setting
    /// `govbr_validated_level`, `prata` by default).
    pub fn validates(self, minimum: Self) -> bool {
        self >= minimum
    }
}

impl fmt::Display for ReliabilityLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The `acr` of a login through gov.br at level bronze.
pub const ACR_BRONZE: &str = "urn:credencial:acr:govbr:bronze";
/// The `acr` of a login through gov.br at level prata.
pub const ACR_PRATA: &str = "urn:credencial:acr:govbr:prata";
/// The `acr` of a login through gov.br at level ouro.
pub const ACR_OURO: &str = "urn:credencial:acr:govbr:ouro";

/// One of the seals ("selos de confiabilidade") behind a level: gov.br's id
/// for how the registration was checked, and when the seal was last
/// updated, as gov.br wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seal {
    /// gov.br's id of the seal (`"801"`: a digital certificate, …).
    pub id: String,
    /// When gov.br last updated it (its text, unparsed), if it said.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "updatedAt")]
    pub updated_at: Option<String>,
}

/// A person's level and seals as one gov.br login read them, with when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reliability {
    /// The level.
    pub level: ReliabilityLevel,
    /// The seals, as gov.br listed them.
    pub seals: Vec<Seal>,
    /// When this service read them (seconds since the Unix epoch).
    pub read_at: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn govbr_names_map_to_the_portuguese_levels_in_order() {
        assert_eq!(ReliabilityLevel::from_govbr("bronze"), Some(ReliabilityLevel::Bronze));
        assert_eq!(ReliabilityLevel::from_govbr("SILVER"), Some(ReliabilityLevel::Prata));
        assert_eq!(ReliabilityLevel::from_govbr(" gold "), Some(ReliabilityLevel::Ouro));
        assert_eq!(ReliabilityLevel::from_govbr("prata"), None, "gov.br's tokens say silver");
        assert_eq!(ReliabilityLevel::from_govbr("platinum"), None);
        assert!(ReliabilityLevel::Ouro > ReliabilityLevel::Prata && ReliabilityLevel::Prata > ReliabilityLevel::Bronze);
    }

    #[test]
    fn settings_take_either_language() {
        for (text, level) in
            [("prata", ReliabilityLevel::Prata), ("Ouro", ReliabilityLevel::Ouro), ("silver", ReliabilityLevel::Prata)]
        {
            assert_eq!(ReliabilityLevel::from_name(text), Some(level), "{text}");
        }
        assert_eq!(ReliabilityLevel::from_name("diamante"), None);
        assert_eq!(ReliabilityLevel::from_name(""), None);
    }

    #[test]
    fn each_level_is_an_acr_and_back() {
        for level in ReliabilityLevel::ALL {
            assert_eq!(ReliabilityLevel::from_acr(level.acr()), Some(level));
            assert!(level.acr().ends_with(level.name()));
        }
        assert_eq!(ReliabilityLevel::from_acr("urn:credencial:acr:senha"), None);
        assert_eq!(ReliabilityLevel::from_acr("urn:credencial:acr:govbr:gold"), None);
    }

    #[test]
    fn a_level_validates_the_registration_from_the_minimum_up() {
        let minimum = ReliabilityLevel::Prata;
        assert!(!ReliabilityLevel::Bronze.validates(minimum));
        assert!(ReliabilityLevel::Prata.validates(minimum));
        assert!(ReliabilityLevel::Ouro.validates(minimum));
        assert!(ReliabilityLevel::Bronze.validates(ReliabilityLevel::Bronze));
        assert!(!ReliabilityLevel::Prata.validates(ReliabilityLevel::Ouro));
    }

    #[test]
    fn seals_read_govbr_s_field_names() {
        let seal: Seal = serde_json::from_str(r#"{"id": "801", "updatedAt": "2026-01-02 03:04:05"}"#).expect("parses");
        assert_eq!(seal, Seal { id: "801".into(), updated_at: Some("2026-01-02 03:04:05".into()) });
    }
}
