//! The profile answer: which keys a grant yields, and their exact shapes.
//!
//! Assembly is pure: it takes the user's own data, what each upstream scope
//! produced, and the effective scopes, and returns the JSON object of
//! `POST /api/perfil/dados/`.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::degree::Degree;
use crate::scope::{Scope, ScopeSet};

/// `erro` text of `receita_federal` for a user who did not validate.
pub const ERRO_NAO_VALIDADO: &str = "Os dados do usuário não foram validados na Receita Federal.";
/// `erro` text of `experiencia_profissional` when none is registered.
pub const ERRO_SEM_EXPERIENCIA: &str = "O usuário não possui experiência profissional cadastrada.";

/// One professional experience, as the profile answer carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Experience {
    /// Establishment.
    pub estabelecimento: String,
    /// Profession.
    pub profissao: String,
    /// Start, ISO 8601 without zone (`2019-02-01T00:00:00`), or null.
    pub data_inicio: Option<String>,
    /// End, ISO 8601 without zone, or null.
    pub data_fim: Option<String>,
    /// Municipality.
    pub municipio: String,
    /// Description (may be empty).
    pub descricao: String,
}

/// One academic degree as stored (with its code).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcademicDegree {
    /// Institution.
    pub instituicao: String,
    /// Course.
    pub curso: String,
    /// Start date, `YYYY-MM-DD`.
    pub data_inicio: String,
    /// End date, `YYYY-MM-DD`, or none.
    pub data_fim: Option<String>,
    /// Municipality.
    pub municipio: String,
    /// Description (may be empty).
    pub descricao: String,
    /// Degree level.
    pub grau: Degree,
}

impl AcademicDegree {
    /// The answer's form: `grau_formacao` carries the description text.
    pub fn to_json(&self) -> Value {
        json!({
            "instituicao": self.instituicao,
            "curso": self.curso,
            "data_inicio": self.data_inicio,
            "data_fim": self.data_fim,
            "municipio": self.municipio,
            "descricao": self.descricao,
            "grau_formacao": self.grau.description(),
        })
    }
}

/// The user's own data, read in one go from the service's database.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OwnProfile {
    /// Public name.
    pub name: String,
    /// Avatar URL.
    pub avatar: String,
    /// CPF (11 digits), if known.
    pub cpf: Option<String>,
    /// E-mail.
    pub email: String,
    /// Whether the registration was validated through the tax id.
    pub receita_validated: bool,
    /// Professional experiences, oldest first.
    pub experiences: Vec<Experience>,
    /// Academic degrees, oldest first.
    pub degrees: Vec<AcademicDegree>,
    /// How gov.br last vouched for the CPF, when a gov.br link proves it
    /// ([`GOVBR_RELIABILITY`]: `{"nivel", "selos", "lido_em"}`).
    pub govbr_reliability: Option<Value>,
}

/// The key, next to `cpf`, of gov.br's level and seals for the CPF: an
/// object `{"nivel": "bronze"|"prata"|"ouro", "selos": [{"id",
/// "updatedAt"}], "lido_em": "YYYY-MM-DDTHH:MM:SSZ"}`, present only when a
/// gov.br login proved the CPF (docs/api.md).
pub const GOVBR_RELIABILITY: &str = "confiabilidade_govbr";

/// What one upstream scope produced for this request.
#[derive(Debug, Clone, PartialEq)]
pub enum UpstreamScopeData {
    /// The payload (fresh or from cache).
    Value(Value),
    /// No payload: the text goes into the scope's `erro` object.
    Erro(String),
}

/// Builds the profile answer for `scopes` (required scopes are always
/// included). `upstream` gives the data of each upstream scope in `scopes`;
/// a missing entry yields an `erro` object.
pub fn assemble(scopes: ScopeSet, own: &OwnProfile, upstream: &[(Scope, UpstreamScopeData)]) -> Map<String, Value> {
    let scopes = scopes.union(ScopeSet::required());
    let mut out = Map::new();
    for scope in scopes.iter() {
        match scope {
            Scope::DadosPublicos => {
                out.insert("name".into(), Value::String(own.name.clone()));
                out.insert("avatar".into(), Value::String(own.avatar.clone()));
            }
            Scope::Cpf => {
                out.insert("cpf".into(), Value::String(own.cpf.clone().unwrap_or_default()));
                if let Some(reliability) = &own.govbr_reliability {
                    out.insert(GOVBR_RELIABILITY.into(), reliability.clone());
                }
            }
            Scope::Email => {
                out.insert("email".into(), Value::String(own.email.clone()));
            }
            Scope::ExperienciaProfissional => {
                let v = if own.experiences.is_empty() {
                    erro(ERRO_SEM_EXPERIENCIA)
                } else {
                    serde_json::to_value(&own.experiences).unwrap_or_else(|_| erro(ERRO_SEM_EXPERIENCIA))
                };
                out.insert(scope.name().into(), v);
            }
            Scope::FormacaoAcademica => {
                let list = own.degrees.iter().map(AcademicDegree::to_json).collect();
                out.insert(scope.name().into(), Value::Array(list));
            }
            Scope::ReceitaFederal | Scope::Cnes | Scope::CursosCdp => {
                let v = match upstream.iter().find(|(s, _)| *s == scope) {
                    Some((_, UpstreamScopeData::Value(v))) => v.clone(),
                    Some((_, UpstreamScopeData::Erro(text))) => erro(text),
                    None if scope == Scope::ReceitaFederal && !own.receita_validated => erro(ERRO_NAO_VALIDADO),
                    None => erro("Dados indisponíveis no momento."),
                };
                out.insert(scope.name().into(), v);
            }
        }
    }
    out
}

/// The `{"erro": text}` object of a scope whose data is unavailable.
pub fn erro(text: &str) -> Value {
    json!({ "erro": text })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ana() -> OwnProfile {
        OwnProfile {
            name: "Ana Beatriz Souza".into(),
            avatar: "https://example.gov.br/a.png".into(),
            cpf: Some("52998224725".into()),
            email: "ana@example.gov.br".into(),
            receita_validated: true,
            experiences: vec![Experience {
                estabelecimento: "Hospital".into(),
                profissao: "Enfermeira".into(),
                data_inicio: Some("2019-02-01T00:00:00".into()),
                data_fim: None,
                municipio: "Natal".into(),
                descricao: String::new(),
            }],
            degrees: vec![AcademicDegree {
                instituicao: "UFRN".into(),
                curso: "Enfermagem".into(),
                data_inicio: "2010-03-01".into(),
                data_fim: Some("2014-12-15".into()),
                municipio: "Natal".into(),
                descricao: String::new(),
                grau: Degree::Graduacao,
            }],
            govbr_reliability: None,
        }
    }

    #[test]
    fn required_scopes_are_always_present() {
        let out = assemble(ScopeSet::empty(), &ana(), &[]);
        let keys: Vec<_> = out.keys().cloned().collect();
        assert_eq!(keys, ["avatar", "cpf", "email", "name"]);
    }

    #[test]
    fn own_lists_have_the_contract_shapes() {
        let scopes = ScopeSet::parse_strict("experiencia_profissional formacao_academica").expect("known");
        let out = assemble(scopes, &ana(), &[]);
        assert_eq!(out["experiencia_profissional"][0]["data_inicio"], "2019-02-01T00:00:00");
        assert_eq!(out["experiencia_profissional"][0]["data_fim"], Value::Null);
        assert_eq!(out["formacao_academica"][0]["grau_formacao"], "Graduação");
        assert_eq!(out["formacao_academica"][0]["data_fim"], "2014-12-15");
    }

    #[test]
    fn missing_data_becomes_erro_objects() {
        let bruno = OwnProfile { receita_validated: false, ..OwnProfile::default() };
        let scopes =
            ScopeSet::parse_strict("receita_federal experiencia_profissional formacao_academica cnes").expect("known");
        let out = assemble(scopes, &bruno, &[(Scope::Cnes, UpstreamScopeData::Erro("CNES fora do ar".into()))]);
        assert_eq!(out["receita_federal"], json!({"erro": ERRO_NAO_VALIDADO}));
        assert_eq!(out["experiencia_profissional"], json!({"erro": ERRO_SEM_EXPERIENCIA}));
        assert_eq!(out["formacao_academica"], json!([]));
        assert_eq!(out["cnes"], json!({"erro": "CNES fora do ar"}));
    }

    #[test]
    fn upstream_values_are_placed_under_their_scope() {
        let scopes = ScopeSet::parse_strict("cursos_cdp").expect("known");
        let data = json!({"total": 0, "data": []});
        let out = assemble(scopes, &ana(), &[(Scope::CursosCdp, UpstreamScopeData::Value(data.clone()))]);
        assert_eq!(out["cursos_cdp"], data);
        assert!(!out.contains_key("cnes"), "scopes not asked for are omitted");
    }

    #[test]
    fn govbr_s_word_on_the_cpf_goes_with_the_cpf_when_there_is_one() {
        let word = serde_json::json!({"nivel": "prata", "selos": [{"id": "401"}], "lido_em": "2026-11-29T10:00:00Z"});
        let vouched = OwnProfile { govbr_reliability: Some(word.clone()), ..ana() };
        let with_cpf = assemble(ScopeSet::parse_strict("cpf").expect("scope"), &vouched, &[]);
        assert_eq!(with_cpf.get(GOVBR_RELIABILITY), Some(&word));
        let unvouched = assemble(ScopeSet::parse_strict("cpf").expect("scope"), &ana(), &[]);
        assert!(!unvouched.contains_key(GOVBR_RELIABILITY), "absent, not null");
    }
}
