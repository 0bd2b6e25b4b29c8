//! What a login session proves, and whether that is enough for an
//! application: a second factor (`urn:credencial:acr:dois-fatores`) and,
//! for a login through gov.br, a reliability level
//! (`urn:credencial:acr:govbr:<level>`).
//!
//! An application requires them by its settings (every one named must be
//! met) or by `acr_values` in its request (OpenID Connect's alternatives:
//! one of those named must be met; `urn:credencial:acr:senha` asks for
//! nothing beyond a login).

use super::level::ReliabilityLevel;
use crate::session::{ACR_PASSWORD, ACR_TWO_FACTORS};

/// What a session proves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Assurance {
    /// Whether a second factor was passed (here, or at the upstream).
    pub second_factor: bool,
    /// The gov.br level read at this login, for a login through gov.br.
    pub level: Option<ReliabilityLevel>,
}

/// One thing an application may require of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requirement {
    /// A second factor.
    SecondFactor,
    /// A login through gov.br at this level or above.
    Level(ReliabilityLevel),
}

impl Requirement {
    /// The requirement an `acr` value names; `senha` and unknown values
    /// name none.
    pub fn from_acr(value: &str) -> Option<Self> {
        if value == ACR_TWO_FACTORS {
            return Some(Self::SecondFactor);
        }
        ReliabilityLevel::from_acr(value).map(Self::Level)
    }

    /// The `acr` value of the requirement.
    pub fn acr(self) -> &'static str {
        match self {
            Self::SecondFactor => ACR_TWO_FACTORS,
            Self::Level(level) => level.acr(),
        }
    }
}

/// What an application asks of a session: its settings' requirements, and
/// the alternatives of its request's `acr_values`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Demand {
    /// Every one must be met (the application's settings).
    pub all_of: Vec<Requirement>,
    /// One must be met, when any is named (`acr_values`, in the request's
    /// order of preference).
    pub one_of: Vec<Requirement>,
}

impl Demand {
    /// The demand of an application that requires a second factor or not,
    /// and a minimum gov.br level or not, for a request with `acr_values`.
    pub fn new(second_factor: bool, minimum_level: Option<ReliabilityLevel>, acr_values: Option<&str>) -> Self {
        let mut all_of = Vec::new();
        if second_factor {
            all_of.push(Requirement::SecondFactor);
        }
        all_of.extend(minimum_level.map(Requirement::Level));
        let values: Vec<&str> = acr_values.unwrap_or_default().split_ascii_whitespace().collect();
        // The password among the alternatives accepts any login; values
        // this service does not define are left out.
        let one_of = if values.contains(&ACR_PASSWORD) {
            Vec::new()
        } else {
            values.into_iter().filter_map(Requirement::from_acr).collect()
        };
        Self { all_of, one_of }
    }

    /// The first requirement `session` does not meet (what the person is
    /// told they need), or none when it meets the demand. Of unmet
    /// alternatives, the request's first is named.
    pub fn unmet(&self, session: Assurance) -> Option<Requirement> {
        if let Some(missing) = self.all_of.iter().copied().find(|r| !session.meets(*r)) {
            return Some(missing);
        }
        if self.one_of.is_empty() || self.one_of.iter().any(|r| session.meets(*r)) {
            return None;
        }
        self.one_of.first().copied()
    }

    /// The `acr` an ID token for `session` says: the first alternative of
    /// the request it meets; else, for an application that requires two
    /// factors and no level, `dois-fatores` (what it checks for, whatever
    /// the login's level); else the session's own ([`Assurance::acr`]: its
    /// level, which meets any minimum level it passed).
    pub fn acr(&self, session: Assurance) -> &'static str {
        if let Some(met) = self.one_of.iter().find(|r| session.meets(**r)) {
            return met.acr();
        }
        let wants_level = self.all_of.iter().any(|r| matches!(r, Requirement::Level(_)));
        if !wants_level && self.all_of.contains(&Requirement::SecondFactor) && session.second_factor {
            return ACR_TWO_FACTORS;
        }
        session.acr()
    }
}

impl Assurance {
    /// Whether the session meets `requirement`.
    pub fn meets(self, requirement: Requirement) -> bool {
        match requirement {
            Requirement::SecondFactor => self.second_factor,
            Requirement::Level(minimum) => self.level.is_some_and(|level| level >= minimum),
        }
    }

    /// The session's own `acr`: its gov.br level's, else two factors or
    /// the password alone.
    pub fn acr(self) -> &'static str {
        match (self.level, self.second_factor) {
            (Some(level), _) => level.acr(),
            (None, true) => ACR_TWO_FACTORS,
            (None, false) => ACR_PASSWORD,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ReliabilityLevel::{Bronze, Ouro, Prata};

    const PASSWORD: Assurance = Assurance { second_factor: false, level: None };
    const TWO_FACTORS: Assurance = Assurance { second_factor: true, level: None };

    fn govbr(level: ReliabilityLevel, second_factor: bool) -> Assurance {
        Assurance { second_factor, level: Some(level) }
    }

    #[test]
    fn a_session_s_acr_is_its_level_else_its_factors() {
        assert_eq!(PASSWORD.acr(), ACR_PASSWORD);
        assert_eq!(TWO_FACTORS.acr(), ACR_TWO_FACTORS);
        assert_eq!(govbr(Prata, true).acr(), "urn:credencial:acr:govbr:prata");
    }

    #[test]
    fn an_application_s_minimum_level_needs_a_govbr_login_at_or_above_it() {
        let demand = Demand::new(false, Some(Prata), None);
        assert_eq!(demand.unmet(govbr(Bronze, true)), Some(Requirement::Level(Prata)));
        assert_eq!(demand.unmet(govbr(Prata, false)), None);
        assert_eq!(demand.unmet(govbr(Ouro, false)), None);
        assert_eq!(
            demand.unmet(TWO_FACTORS),
            Some(Requirement::Level(Prata)),
            "two factors here prove no gov.br level"
        );
    }

    #[test]
    fn settings_require_every_one_they_name() {
        let demand = Demand::new(true, Some(Bronze), None);
        assert_eq!(demand.unmet(govbr(Ouro, false)), Some(Requirement::SecondFactor));
        assert_eq!(demand.unmet(TWO_FACTORS), Some(Requirement::Level(Bronze)));
        assert_eq!(demand.unmet(govbr(Bronze, true)), None);
        assert_eq!(Demand::new(false, None, None).unmet(PASSWORD), None);
    }

    #[test]
    fn acr_values_are_alternatives_and_the_first_met_is_said() {
        let demand = Demand::new(false, None, Some("urn:credencial:acr:govbr:ouro urn:credencial:acr:dois-fatores"));
        assert_eq!(demand.unmet(PASSWORD), Some(Requirement::Level(Ouro)), "the request's first is named");
        assert_eq!(demand.unmet(TWO_FACTORS), None);
        assert_eq!(demand.acr(TWO_FACTORS), ACR_TWO_FACTORS);
        assert_eq!(demand.acr(govbr(Ouro, true)), "urn:credencial:acr:govbr:ouro");
        assert_eq!(demand.acr(govbr(Prata, true)), ACR_TWO_FACTORS, "prata is not ouro; the second factor is met");
    }

    #[test]
    fn a_client_requiring_two_factors_reads_two_factors_whatever_the_level() {
        let demand = Demand::new(true, None, None);
        assert_eq!(demand.acr(govbr(Prata, true)), ACR_TWO_FACTORS);
        assert_eq!(Demand::new(false, None, None).acr(govbr(Prata, true)), "urn:credencial:acr:govbr:prata");
        assert_eq!(Demand::new(false, Some(Bronze), None).acr(govbr(Ouro, false)), "urn:credencial:acr:govbr:ouro");
    }

    #[test]
    fn the_password_among_alternatives_accepts_any_login() {
        let demand = Demand::new(false, None, Some("urn:credencial:acr:govbr:ouro urn:credencial:acr:senha"));
        assert_eq!(demand.unmet(PASSWORD), None);
        assert_eq!(demand.acr(PASSWORD), ACR_PASSWORD);
        let demand = Demand::new(true, None, Some("urn:credencial:acr:senha"));
        assert_eq!(
            demand.unmet(PASSWORD),
            Some(Requirement::SecondFactor),
            "the application's own setting still holds"
        );
    }

    #[test]
    fn the_password_and_unknown_values_ask_for_nothing() {
        let demand = Demand::new(false, None, Some("urn:credencial:acr:senha urn:other:loa:3"));
        assert_eq!(demand.unmet(PASSWORD), None);
        assert_eq!(demand.acr(PASSWORD), ACR_PASSWORD);
        assert_eq!(demand.acr(govbr(Bronze, false)), "urn:credencial:acr:govbr:bronze");
        assert_eq!(Requirement::from_acr("urn:credencial:acr:govbr:silver"), None);
    }
}
