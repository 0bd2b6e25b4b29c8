//! How lists and JSON objects may be written: as TOML values, or as text
//! (environment variables hold text only).

use serde::{Deserialize, Deserializer};

/// A list written as a TOML array, a JSON array string, or a
/// comma-separated string (environment variables).
pub fn string_list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        List(Vec<String>),
        Text(String),
    }
    Ok(match Raw::deserialize(d)? {
        Raw::List(v) => v,
        Raw::Text(s) if s.trim_start().starts_with('[') => {
            serde_json::from_str(&s).map_err(serde::de::Error::custom)?
        }
        Raw::Text(s) => s.split(',').map(str::trim).filter(|p| !p.is_empty()).map(str::to_owned).collect(),
    })
}

/// [`string_list`] when given; absent (the field's default) it is `None`.
pub fn optional_string_list<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    string_list(d).map(Some)
}

/// A JSON object kept as JSON text: written as a string (environment
/// variables, TOML) or as a TOML table.
pub fn json_object_text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Text(String),
        Table(serde_json::Map<String, serde_json::Value>),
    }
    Ok(match Raw::deserialize(d)? {
        Raw::Text(s) => s,
        Raw::Table(m) => serde_json::Value::Object(m).to_string(),
    })
}
