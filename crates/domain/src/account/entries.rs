//! The entries a person registers: `experiencia_profissional` and
//! `formacao_academica`. Forms come in as typed text; what passes the rules
//! is an entry the storage can trust.

use crate::account::date::IsoDate;
use crate::account::fields::FieldErrors;
use crate::degree::Degree;
use crate::profile::{AcademicDegree, Experience};

/// Primary key of a stored entry (an experience or a degree).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EntryId(pub i64);

/// Most characters of a short text field (names, course, municipality).
pub const MAX_TEXT_CHARS: usize = 200;
/// Most characters of a description.
pub const MAX_DESCRICAO_CHARS: usize = 2_000;

/// Message of a date that is not a real `YYYY-MM-DD` date.
pub const MSG_DATA_INVALIDA: &str = "Informe uma data válida no formato AAAA-MM-DD.";
/// Message of an end before its start.
pub const MSG_FIM_ANTES_DO_INICIO: &str = "A data de término não pode ser anterior à data de início.";

/// The experience form as typed (field names are the contract's).
#[derive(Debug, Clone, Copy, Default)]
pub struct ExperienceForm<'a> {
    /// Establishment (required).
    pub estabelecimento: &'a str,
    /// Profession (required).
    pub profissao: &'a str,
    /// Start, `YYYY-MM-DD` (required).
    pub data_inicio: &'a str,
    /// End, `YYYY-MM-DD`, empty while it goes on.
    pub data_fim: &'a str,
    /// Municipality (required).
    pub municipio: &'a str,
    /// Description (optional).
    pub descricao: &'a str,
}

/// A professional experience that passed the rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExperienceEntry {
    estabelecimento: String,
    profissao: String,
    data_inicio: IsoDate,
    data_fim: Option<IsoDate>,
    municipio: String,
    descricao: String,
}

/// The degree form as typed (field names are the contract's).
#[derive(Debug, Clone, Copy, Default)]
pub struct DegreeForm<'a> {
    /// Institution (required).
    pub instituicao: &'a str,
    /// Course (required).
    pub curso: &'a str,
    /// One of the contract's ten codes (`GRA` … `ERM`).
    pub grau_formacao: &'a str,
    /// Start, `YYYY-MM-DD` (required).
    pub data_inicio: &'a str,
    /// End, `YYYY-MM-DD`, empty while it goes on.
    pub data_fim: &'a str,
    /// Municipality (required).
    pub municipio: &'a str,
    /// Description (optional).
    pub descricao: &'a str,
}

/// An academic degree that passed the rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DegreeEntry {
    instituicao: String,
    curso: String,
    grau: Degree,
    data_inicio: IsoDate,
    data_fim: Option<IsoDate>,
    municipio: String,
    descricao: String,
}

/// A required text field: trimmed, not empty, at most `max` characters.
fn required_text(errors: &mut FieldErrors, field: &'static str, raw: &str, label: &str) -> String {
    let text = raw.trim();
    if text.is_empty() {
        errors.push(field, format!("Informe {label}."));
    } else {
        limit(errors, field, text, MAX_TEXT_CHARS);
    }
    text.to_owned()
}

/// An optional text field: trimmed, at most `max` characters.
fn optional_text(errors: &mut FieldErrors, field: &'static str, raw: &str, max: usize) -> String {
    let text = raw.trim();
    limit(errors, field, text, max);
    text.to_owned()
}

fn limit(errors: &mut FieldErrors, field: &'static str, text: &str, max: usize) {
    if text.chars().count() > max {
        errors.push(field, format!("Use no máximo {max} caracteres."));
    }
    if text.chars().any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t')) {
        errors.push(field, "Remova os caracteres de controle.");
    }
}

/// The start (required) and end (optional, not before the start).
fn period(errors: &mut FieldErrors, inicio: &str, fim: &str) -> (Option<IsoDate>, Option<IsoDate>) {
    let start = if inicio.trim().is_empty() {
        errors.push("data_inicio", "Informe a data de início.");
        None
    } else {
        let d = IsoDate::parse(inicio);
        if d.is_none() {
            errors.push("data_inicio", MSG_DATA_INVALIDA);
        }
        d
    };
    let end = if fim.trim().is_empty() {
        None
    } else {
        let d = IsoDate::parse(fim);
        if d.is_none() {
            errors.push("data_fim", MSG_DATA_INVALIDA);
        }
        d
    };
    if let (Some(s), Some(e)) = (&start, &end) {
        if e < s {
            errors.push("data_fim", MSG_FIM_ANTES_DO_INICIO);
        }
    }
    (start, end)
}

impl ExperienceEntry {
    /// Checks the typed form: required fields, real dates, an end not before
    /// its start, lengths. Every refused field is reported at once.
    pub fn parse(form: &ExperienceForm<'_>) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::new();
        let estabelecimento = required_text(&mut errors, "estabelecimento", form.estabelecimento, "o estabelecimento");
        let profissao = required_text(&mut errors, "profissao", form.profissao, "a profissão");
        let (data_inicio, data_fim) = period(&mut errors, form.data_inicio, form.data_fim);
        let municipio = required_text(&mut errors, "municipio", form.municipio, "o município");
        let descricao = optional_text(&mut errors, "descricao", form.descricao, MAX_DESCRICAO_CHARS);
        match data_inicio {
            Some(data_inicio) if errors.is_empty() => {
                Ok(Self { estabelecimento, profissao, data_inicio, data_fim, municipio, descricao })
            }
            _ => Err(errors),
        }
    }

    /// Establishment.
    pub fn estabelecimento(&self) -> &str {
        &self.estabelecimento
    }
    /// Profession.
    pub fn profissao(&self) -> &str {
        &self.profissao
    }
    /// Start date.
    pub fn data_inicio(&self) -> &IsoDate {
        &self.data_inicio
    }
    /// End date, if it ended.
    pub fn data_fim(&self) -> Option<&IsoDate> {
        self.data_fim.as_ref()
    }
    /// Municipality.
    pub fn municipio(&self) -> &str {
        &self.municipio
    }
    /// Description (may be empty).
    pub fn descricao(&self) -> &str {
        &self.descricao
    }

    /// The profile answer's form (datetimes at midnight, as the contract
    /// writes them: `2019-02-01T00:00:00`).
    pub fn to_profile(&self) -> Experience {
        let at_midnight = |d: &IsoDate| format!("{d}T00:00:00");
        Experience {
            estabelecimento: self.estabelecimento.clone(),
            profissao: self.profissao.clone(),
            data_inicio: Some(at_midnight(&self.data_inicio)),
            data_fim: self.data_fim.as_ref().map(at_midnight),
            municipio: self.municipio.clone(),
            descricao: self.descricao.clone(),
        }
    }
}

impl DegreeEntry {
    /// Checks the typed form: required fields, a degree code of the
    /// contract, real dates, an end not before its start, lengths. Every
    /// refused field is reported at once.
    pub fn parse(form: &DegreeForm<'_>) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::new();
        let instituicao = required_text(&mut errors, "instituicao", form.instituicao, "a instituição");
        let curso = required_text(&mut errors, "curso", form.curso, "o curso");
        let grau = if form.grau_formacao.trim().is_empty() {
            errors.push("grau_formacao", "Escolha o grau de formação.");
            None
        } else {
            let g = Degree::from_code(form.grau_formacao.trim());
            if g.is_none() {
                errors.push("grau_formacao", "Escolha um grau de formação da lista.");
            }
            g
        };
        let (data_inicio, data_fim) = period(&mut errors, form.data_inicio, form.data_fim);
        let municipio = required_text(&mut errors, "municipio", form.municipio, "o município");
        let descricao = optional_text(&mut errors, "descricao", form.descricao, MAX_DESCRICAO_CHARS);
        match (grau, data_inicio) {
            (Some(grau), Some(data_inicio)) if errors.is_empty() => {
                Ok(Self { instituicao, curso, grau, data_inicio, data_fim, municipio, descricao })
            }
            _ => Err(errors),
        }
    }

    /// Institution.
    pub fn instituicao(&self) -> &str {
        &self.instituicao
    }
    /// Course.
    pub fn curso(&self) -> &str {
        &self.curso
    }
    /// Degree level.
    pub fn grau(&self) -> Degree {
        self.grau
    }
    /// Start date.
    pub fn data_inicio(&self) -> &IsoDate {
        &self.data_inicio
    }
    /// End date, if it ended.
    pub fn data_fim(&self) -> Option<&IsoDate> {
        self.data_fim.as_ref()
    }
    /// Municipality.
    pub fn municipio(&self) -> &str {
        &self.municipio
    }
    /// Description (may be empty).
    pub fn descricao(&self) -> &str {
        &self.descricao
    }

    /// The stored/profile form of the degree.
    pub fn to_profile(&self) -> AcademicDegree {
        AcademicDegree {
            instituicao: self.instituicao.clone(),
            curso: self.curso.clone(),
            data_inicio: self.data_inicio.to_string(),
            data_fim: self.data_fim.as_ref().map(ToString::to_string),
            municipio: self.municipio.clone(),
            descricao: self.descricao.clone(),
            grau: self.grau,
        }
    }
}

#[cfg(test)]
mod tests;
