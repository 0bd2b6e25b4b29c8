//! Academic degree codes and their descriptions (the contract's table).

/// One degree level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Degree {
    /// GRA — Graduação.
    Graduacao,
    /// ESP — Especialização.
    Especializacao,
    /// MES — Mestrado.
    Mestrado,
    /// MEP — Mestrado Profissional.
    MestradoProfissional,
    /// DTR — Doutorado.
    Doutorado,
    /// PDR — Pós-Doutorado.
    PosDoutorado,
    /// ENF — Ensino Fundamental.
    EnsinoFundamental,
    /// ENM — Ensino Médio.
    EnsinoMedio,
    /// EPT — Ed. Prof. Técnica.
    EducacaoProfissionalTecnica,
    /// ERM — Residência Médica.
    ResidenciaMedica,
}

const TABLE: [(Degree, &str, &str); 10] = [
    (Degree::Graduacao, "GRA", "Graduação"),
    (Degree::Especializacao, "ESP", "Especialização"),
    (Degree::Mestrado, "MES", "Mestrado"),
    (Degree::MestradoProfissional, "MEP", "Mestrado Profissional"),
    (Degree::Doutorado, "DTR", "Doutorado"),
    (Degree::PosDoutorado, "PDR", "Pós-Doutorado"),
    (Degree::EnsinoFundamental, "ENF", "Ensino Fundamental"),
    (Degree::EnsinoMedio, "ENM", "Ensino Médio"),
    (Degree::EducacaoProfissionalTecnica, "EPT", "Ed. Prof. Técnica"),
    (Degree::ResidenciaMedica, "ERM", "Residência Médica"),
];

impl Degree {
    /// The ten degrees, in the contract's order.
    pub fn all() -> impl Iterator<Item = Self> {
        TABLE.iter().map(|(d, _, _)| *d)
    }

    /// The degree of a stored code (`GRA`…`ERM`).
    pub fn from_code(code: &str) -> Option<Self> {
        TABLE.iter().find(|(_, c, _)| *c == code).map(|(d, _, _)| *d)
    }

    /// The stored code.
    pub fn code(self) -> &'static str {
        TABLE.iter().find(|(d, _, _)| *d == self).map_or("", |(_, c, _)| c)
    }

    /// The description the profile answer carries (e.g. `Graduação`).
    pub fn description(self) -> &'static str {
        TABLE.iter().find(|(d, _, _)| *d == self).map_or("", |(_, _, t)| t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_maps_to_its_description_and_back() {
        let expected = [
            ("GRA", "Graduação"),
            ("ESP", "Especialização"),
            ("MES", "Mestrado"),
            ("MEP", "Mestrado Profissional"),
            ("DTR", "Doutorado"),
            ("PDR", "Pós-Doutorado"),
            ("ENF", "Ensino Fundamental"),
            ("ENM", "Ensino Médio"),
            ("EPT", "Ed. Prof. Técnica"),
            ("ERM", "Residência Médica"),
        ];
        for (code, text) in expected {
            let d = Degree::from_code(code).expect(code);
            assert_eq!((d.code(), d.description()), (code, text));
        }
        assert_eq!(Degree::from_code("gra"), None);
        assert_eq!(Degree::from_code("PHD"), None);
    }
}
