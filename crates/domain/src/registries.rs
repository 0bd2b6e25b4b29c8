//! The payloads of the upstream-registry scopes (`receita_federal`, `cnes`,
//! `cursos_cdp`), field for field as the contract gives them.
//!
//! Rust fields are snake_case; the JSON keys are exactly the contract's
//! (`dtNascimento`, `noFant`, `type`, ...). Decoding is the check that an
//! upstream answer is usable:
//!
//! - every field of the contract must be present with its type (a missing
//!   field, or `null` where the contract says string, refuses the payload);
//! - fields the contract does not name are dropped, so the profile answer
//!   carries exactly the contract's keys;
//! - dates (`dtNascimento`, `created`) must be real calendar dates written
//!   `YYYY-MM-DD`. A malformed date refuses the *whole* payload: the service
//!   promises that format to its clients (whose attribute maps may write it
//!   into a `DATE` column), and serving a wrong date for up to five years
//!   from the cache is worse than serving the previous snapshot or an
//!   `erro` object;
//! - `nid` and `total` are integers; a string of digits (what Drupal-based
//!   services often send) is accepted and normalised to the integer.
//!
//! Decoding errors never repeat the offending value (it is personal data and
//! the message ends up in the log).

use serde::{Deserialize, Deserializer, Serialize};

/// The tax authority's registration data of a person (`receita_federal`).
/// `Debug` shows none of it (name, birth date and mother's name are
/// personal data and must stay out of logs).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceitaFederal {
    /// Full name (`nome`).
    pub nome: String,
    /// Date of birth, `YYYY-MM-DD` (`dtNascimento`).
    #[serde(rename = "dtNascimento", deserialize_with = "iso_date")]
    pub dt_nascimento: String,
    /// Sex as the registry writes it, e.g. `F` or `M` (`sexo`).
    pub sexo: String,
    /// Mother's name (`mae`).
    pub mae: String,
    /// Municipality of residence (`noMunicipio`).
    #[serde(rename = "noMunicipio")]
    pub no_municipio: String,
    /// Federative unit, e.g. `RN` (`uf`).
    pub uf: String,
}

impl std::fmt::Debug for ReceitaFederal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReceitaFederal").field("uf", &self.uf).finish_non_exhaustive()
    }
}

/// One professional bond in the health-establishment registry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CnesVinculo {
    /// CNES code of the establishment (`cnes`), e.g. `2409208`.
    pub cnes: String,
    /// Trade name of the establishment (`noFant`).
    #[serde(rename = "noFant")]
    pub no_fant: String,
    /// IBGE code of the establishment's municipality (`coMun`), e.g. `240810`.
    #[serde(rename = "coMun")]
    pub co_mun: String,
    /// Occupation in the CBO classification (`noCBO`).
    #[serde(rename = "noCBO")]
    pub no_cbo: String,
}

/// The `cnes` scope: the person's professional bonds (possibly none).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cnes {
    /// The bonds (`vinculos`).
    pub vinculos: Vec<CnesVinculo>,
}

/// One course of the community-of-practice platform.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CdpCourse {
    /// Course title (`title`).
    pub title: String,
    /// Description (`descricao`).
    pub descricao: String,
    /// The person's relation to the course, e.g. `Cursista` (`vinculo`).
    pub vinculo: String,
    /// Course page (`link`).
    pub link: String,
    /// Enrolment status, e.g. `Concluído` (`status`).
    pub status: String,
    /// The platform's id of the course (`nid`).
    #[serde(deserialize_with = "lenient_i64")]
    pub nid: i64,
    /// Creation date, `YYYY-MM-DD` (`created`).
    #[serde(deserialize_with = "iso_date")]
    pub created: String,
    /// Kind of content, e.g. `curso` (`type`).
    #[serde(rename = "type")]
    pub kind: String,
}

/// The `cursos_cdp` scope: the person's courses (possibly none).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CursosCdp {
    /// Number of courses as the platform counts them (`total`).
    #[serde(deserialize_with = "lenient_i64")]
    pub total: i64,
    /// The courses (`data`).
    pub data: Vec<CdpCourse>,
}

impl CursosCdp {
    /// A list whose `total` is the number of courses in it.
    pub fn from_courses(data: Vec<CdpCourse>) -> Self {
        Self { total: i64::try_from(data.len()).unwrap_or(i64::MAX), data }
    }
}

/// Whether `s` is a real calendar date written `YYYY-MM-DD` (years
/// 0001–9999, Gregorian leap years).
pub fn is_iso_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let number = |range: std::ops::Range<usize>| -> Option<u32> {
        b[range].iter().try_fold(0u32, |acc, c| c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0')))
    };
    let (Some(year), Some(month), Some(day)) = (number(0..4), number(5..7), number(8..10)) else {
        return false;
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days_in_month = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    year >= 1 && (1..=days_in_month).contains(&day)
}

fn iso_date<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let s = String::deserialize(deserializer)?;
    if is_iso_date(&s) {
        Ok(s)
    } else {
        Err(serde::de::Error::custom("not a YYYY-MM-DD date"))
    }
}

/// An integer, or a string holding one.
#[derive(Deserialize)]
#[serde(untagged)]
enum IntOrDigits {
    Int(i64),
    Text(String),
}

fn lenient_i64<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
    match IntOrDigits::deserialize(deserializer)? {
        IntOrDigits::Int(n) => Ok(n),
        IntOrDigits::Text(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
            s.parse().map_err(|_| serde::de::Error::custom("integer out of range"))
        }
        IntOrDigits::Text(_) => Err(serde::de::Error::custom("not an integer")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn receita_json() -> Value {
        json!({
            "nome": "ANA BEATRIZ SOUZA",
            "dtNascimento": "1988-03-14",
            "sexo": "F",
            "mae": "MARIA DAS GRACAS SOUZA",
            "noMunicipio": "NATAL",
            "uf": "RN"
        })
    }

    fn course_json() -> Value {
        json!({
            "title": "Acolhimento na Atenção Básica",
            "descricao": "Curso autoinstrucional",
            "vinculo": "Cursista",
            "link": "https://cdp.example.gov.br/node/101",
            "status": "Concluído",
            "nid": 101,
            "created": "2021-05-10",
            "type": "curso"
        })
    }

    #[test]
    fn receita_round_trips_with_the_contract_keys() {
        let record: ReceitaFederal = serde_json::from_value(receita_json()).expect("contract payload");
        assert_eq!(record.dt_nascimento, "1988-03-14");
        assert_eq!(record.no_municipio, "NATAL");
        assert_eq!(serde_json::to_value(&record).expect("serialise"), receita_json());
    }

    #[test]
    fn cnes_round_trips_with_the_contract_keys() {
        let body = json!({"vinculos": [
            {"cnes": "2409208", "noFant": "HOSPITAL X", "coMun": "240810", "noCBO": "ENFERMEIRO"}
        ]});
        let cnes: Cnes = serde_json::from_value(body.clone()).expect("contract payload");
        assert_eq!(cnes.vinculos[0].no_cbo, "ENFERMEIRO");
        assert_eq!(serde_json::to_value(&cnes).expect("serialise"), body);
        let empty: Cnes = serde_json::from_value(json!({"vinculos": []})).expect("no bonds");
        assert_eq!(empty, Cnes::default());
    }

    #[test]
    fn courses_round_trip_with_the_contract_keys() {
        let body = json!({"total": 1, "data": [course_json()]});
        let courses: CursosCdp = serde_json::from_value(body.clone()).expect("contract payload");
        assert_eq!(courses.data[0].kind, "curso");
        assert_eq!(serde_json::to_value(&courses).expect("serialise"), body);
        assert_eq!(CursosCdp::from_courses(courses.data.clone()), courses);
        assert_eq!(serde_json::to_value(CursosCdp::default()).expect("serialise"), json!({"total": 0, "data": []}));
    }

    #[test]
    fn fields_outside_the_contract_are_dropped() {
        let mut body = receita_json();
        body["cpf"] = json!("52998224725");
        body["situacao"] = json!("REGULAR");
        let record: ReceitaFederal = serde_json::from_value(body).expect("extra fields tolerated");
        assert_eq!(serde_json::to_value(&record).expect("serialise"), receita_json());
    }

    #[test]
    fn a_missing_or_null_field_refuses_the_payload() {
        for key in ["nome", "dtNascimento", "sexo", "mae", "noMunicipio", "uf"] {
            let mut missing = receita_json();
            missing.as_object_mut().expect("object").remove(key);
            assert!(serde_json::from_value::<ReceitaFederal>(missing).is_err(), "{key} missing");
            let mut null = receita_json();
            null[key] = Value::Null;
            assert!(serde_json::from_value::<ReceitaFederal>(null).is_err(), "{key} null");
        }
        assert!(serde_json::from_value::<Cnes>(json!({})).is_err());
        assert!(serde_json::from_value::<CursosCdp>(json!({"total": 0})).is_err());
        assert!(serde_json::from_value::<CursosCdp>(json!({"data": []})).is_err());
    }

    #[test]
    fn a_malformed_date_refuses_the_whole_payload() {
        for bad in ["14/03/1988", "1988-3-14", "1988-03-14T00:00:00", "1988-02-30", "", "19880314"] {
            let mut record = receita_json();
            record["dtNascimento"] = json!(bad);
            assert!(serde_json::from_value::<ReceitaFederal>(record).is_err(), "{bad:?}");
            let mut course = course_json();
            course["created"] = json!(bad);
            let body = json!({"total": 1, "data": [course]});
            assert!(serde_json::from_value::<CursosCdp>(body).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn nid_and_total_accept_integers_or_digit_strings_only() {
        let mut course = course_json();
        course["nid"] = json!("101");
        let body = json!({"total": "1", "data": [course]});
        let courses: CursosCdp = serde_json::from_value(body).expect("digit strings");
        assert_eq!((courses.total, courses.data[0].nid), (1, 101));
        assert_eq!(serde_json::to_value(&courses).expect("serialise")["data"][0]["nid"], json!(101));
        for bad in [json!("10a"), json!(""), json!(1.5), json!(null), json!("-1"), json!("99999999999999999999")] {
            let mut course = course_json();
            course["nid"] = bad.clone();
            assert!(serde_json::from_value::<CdpCourse>(course).is_err(), "{bad}");
        }
    }

    #[test]
    fn iso_dates_are_real_calendar_dates() {
        for good in ["1988-03-14", "2000-02-29", "2024-02-29", "0001-01-01", "9999-12-31"] {
            assert!(is_iso_date(good), "{good}");
        }
        for bad in [
            "1900-02-29",
            "2023-02-29",
            "2023-04-31",
            "2023-13-01",
            "2023-00-10",
            "2023-01-00",
            "0000-01-01",
            "2023-1-01",
            "+988-03-14",
            "1988-03-1x",
            "1988/03/14",
            "1988-03-14 ",
            "١٩٨٨-03-14",
        ] {
            assert!(!is_iso_date(bad), "{bad}");
        }
    }

    #[test]
    fn a_tax_record_shows_no_personal_data_when_debugged() {
        let record = ReceitaFederal {
            nome: "BRUNO CARVALHO LIMA".into(),
            dt_nascimento: "1991-07-21".into(),
            sexo: "M".into(),
            mae: "JOANA PEREIRA LIMA".into(),
            no_municipio: "MOSSORO".into(),
            uf: "RN".into(),
        };
        let shown = format!("{record:?}");
        for personal in ["BRUNO", "1991", "JOANA", "MOSSORO"] {
            assert!(!shown.contains(personal), "{personal} in {shown}");
        }
    }
}
