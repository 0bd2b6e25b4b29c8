//! The entries a person registers: `experiencia_profissional` and
//! `formacao_academica`. Both have one shape — where (an establishment or
//! an institution), what (a profession or a course), a period, a
//! municipality and a description — and a degree adds its level, so one set
//! of rules serves both kinds. Forms come in as typed text; what passes the
//! rules is an [`Entry`] the storage can trust.

use crate::account::date::IsoDate;
use crate::account::fields::FieldErrors;
use crate::degree::Degree;

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

/// Which of the person's two lists an entry belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// A professional experience (`experiencia_profissional`).
    Experience,
    /// An academic degree (`formacao_academica`).
    Degree,
}

const EXPERIENCE_FIELDS: [&str; 6] =
    ["estabelecimento", "profissao", "data_inicio", "data_fim", "municipio", "descricao"];
const DEGREE_FIELDS: [&str; 7] =
    ["instituicao", "curso", "grau_formacao", "data_inicio", "data_fim", "municipio", "descricao"];

impl EntryKind {
    /// The field that says where: `estabelecimento` or `instituicao`.
    pub fn place_field(self) -> &'static str {
        match self {
            Self::Experience => "estabelecimento",
            Self::Degree => "instituicao",
        }
    }

    /// The field that says what: `profissao` or `curso`.
    pub fn subject_field(self) -> &'static str {
        match self {
            Self::Experience => "profissao",
            Self::Degree => "curso",
        }
    }

    /// The form's fields, named as the contract names them, in form order.
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            Self::Experience => &EXPERIENCE_FIELDS,
            Self::Degree => &DEGREE_FIELDS,
        }
    }
}

/// An entry form as typed; which fields it has depends on the kind (a
/// degree has `grau_formacao`, an experience ignores it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EntryForm<'a> {
    /// `estabelecimento` or `instituicao` (required).
    pub place: &'a str,
    /// `profissao` or `curso` (required).
    pub subject: &'a str,
    /// Degrees only: one of the contract's ten codes (`GRA` … `ERM`).
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

impl<'a> EntryForm<'a> {
    /// The form of `kind` read by the contract's field names through
    /// `field` (an absent field is empty).
    pub fn read(kind: EntryKind, field: impl Fn(&'static str) -> Option<&'a str>) -> Self {
        let get = |name| field(name).unwrap_or("");
        Self {
            place: get(kind.place_field()),
            subject: get(kind.subject_field()),
            grau_formacao: if kind == EntryKind::Degree { get("grau_formacao") } else { "" },
            data_inicio: get("data_inicio"),
            data_fim: get("data_fim"),
            municipio: get("municipio"),
            descricao: get("descricao"),
        }
    }

    /// What was typed in the field `name` (the contract's name) of a `kind`
    /// form; empty for a field the kind does not have.
    pub fn value(&self, kind: EntryKind, name: &str) -> &'a str {
        match name {
            _ if name == kind.place_field() => self.place,
            _ if name == kind.subject_field() => self.subject,
            "grau_formacao" if kind == EntryKind::Degree => self.grau_formacao,
            "data_inicio" => self.data_inicio,
            "data_fim" => self.data_fim,
            "municipio" => self.municipio,
            "descricao" => self.descricao,
            _ => "",
        }
    }
}

/// An experience or a degree that passed the rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    kind: EntryKind,
    place: String,
    subject: String,
    grau: Option<Degree>,
    data_inicio: IsoDate,
    data_fim: Option<IsoDate>,
    municipio: String,
    descricao: String,
}

/// The message of a required text field left empty.
fn missing(field: &str) -> &'static str {
    match field {
        "estabelecimento" => "Informe o estabelecimento.",
        "profissao" => "Informe a profissão.",
        "instituicao" => "Informe a instituição.",
        "curso" => "Informe o curso.",
        "municipio" => "Informe o município.",
        _ => "Preencha este campo.",
    }
}

/// A required text field: trimmed, not empty, at most [`MAX_TEXT_CHARS`].
fn required_text(errors: &mut FieldErrors, field: &'static str, raw: &str) -> String {
    let text = raw.trim();
    if text.is_empty() {
        errors.push(field, missing(field));
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

/// A degree's level: required, one of the contract's codes.
fn degree(errors: &mut FieldErrors, code: &str) -> Option<Degree> {
    let code = code.trim();
    if code.is_empty() {
        errors.push("grau_formacao", "Escolha o grau de formação.");
        return None;
    }
    let grau = Degree::from_code(code);
    if grau.is_none() {
        errors.push("grau_formacao", "Escolha um grau de formação da lista.");
    }
    grau
}

impl Entry {
    /// Checks a typed form of `kind`: required fields, a degree code of the
    /// contract (degrees), real dates, an end not before its start,
    /// lengths. Every refused field is reported at once, in form order.
    pub fn parse(kind: EntryKind, form: &EntryForm<'_>) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::new();
        let place = required_text(&mut errors, kind.place_field(), form.place);
        let subject = required_text(&mut errors, kind.subject_field(), form.subject);
        let grau = match kind {
            EntryKind::Degree => degree(&mut errors, form.grau_formacao),
            EntryKind::Experience => None,
        };
        let (data_inicio, data_fim) = period(&mut errors, form.data_inicio, form.data_fim);
        let municipio = required_text(&mut errors, "municipio", form.municipio);
        let descricao = optional_text(&mut errors, "descricao", form.descricao, MAX_DESCRICAO_CHARS);
        match data_inicio {
            Some(data_inicio) if errors.is_empty() => {
                Ok(Self { kind, place, subject, grau, data_inicio, data_fim, municipio, descricao })
            }
            _ => Err(errors),
        }
    }

    /// Which list it belongs to.
    pub fn kind(&self) -> EntryKind {
        self.kind
    }
    /// Establishment (experience) or institution (degree).
    pub fn place(&self) -> &str {
        &self.place
    }
    /// Profession (experience) or course (degree).
    pub fn subject(&self) -> &str {
        &self.subject
    }
    /// The degree's level; `None` for an experience (and only then).
    pub fn grau(&self) -> Option<Degree> {
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
}

#[cfg(test)]
mod tests;
