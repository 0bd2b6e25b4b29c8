//! Prints the columns an attribute map would write for a profile answer.
//!
//! ```sh
//! cargo run -p credencial-domain --example map-profile -- [MAP [SCOPES]] < profile.json
//! ```
//!
//! - `MAP` is the attribute map as JSON text, `{column: profile_field}` (the
//!   form of credencial's `SERVICE_USER_ATTR_MAP`), e.g.
//!   `'{"username": "cpf", "(first_name, last_name)": "name"}'`; without
//!   it, the default map (`attr_map::DEFAULT_ATTR_MAP`);
//! - `SCOPES` (optional) is the space-separated scope list the client
//!   requests (`"cpf email receita_federal"`); when given, a map that reads a
//!   scope it does not request is refused, as the service refuses it at
//!   start-up; when left out, every scope counts as requested;
//! - standard input is the profile answer, a JSON object (the body of
//!   `POST /api/perfil/dados/`).
//!
//! Standard output is one JSON object: every column the map would write,
//! with its value (text, a `YYYY-MM-DD` date, or JSON). Each column left
//! alone is reported on standard error with the reason. Exit status: 0, 1
//! for a refused map, scope list or profile, 2 for a usage error.

use std::io::Read;
use std::process::ExitCode;

use credencial_domain::attr_map::{AttrMap, ClientScopes};
use credencial_domain::host_table::HostValue;
use credencial_domain::Scope;
use serde_json::{Map, Value};

/// What one run prints: the columns to write, and the skipped ones with why.
struct Output {
    written: Map<String, Value>,
    skipped: Vec<String>,
}

/// Applies `map_text` (with the optional scope list) to the profile JSON.
fn run(map_text: &str, scopes: Option<&str>, profile_text: &str) -> Result<Output, String> {
    let map = AttrMap::from_json(map_text).map_err(|e| e.to_string())?;
    let scopes = match scopes {
        Some(list) => ClientScopes::parse([list]),
        None => ClientScopes::parse(Scope::ALL.map(Scope::name)),
    }
    .map_err(|e| e.to_string())?;
    map.validate(&scopes).map_err(|e| e.to_string())?;
    let profile: Value = serde_json::from_str(profile_text).map_err(|e| format!("the profile is not JSON: {e}"))?;
    let Value::Object(profile) = profile else {
        return Err("the profile is not a JSON object".to_owned());
    };
    let record = map.apply(&profile);
    let written = record.values_to_set().map(|(column, value)| (column.to_string(), json_of(value))).collect();
    let skipped = record.skipped().map(|(column, reason)| format!("skipped {column}: {reason}")).collect();
    Ok(Output { written, skipped })
}

/// A column value as JSON.
fn json_of(value: &HostValue) -> Value {
    match value {
        HostValue::Text(text) | HostValue::Date(text) => Value::String(text.clone()),
        HostValue::Timestamp(secs) => Value::from(*secs),
        HostValue::Bool(flag) => Value::Bool(*flag),
        HostValue::Json(json) => json.clone(),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let default_map = credencial_domain::attr_map::DEFAULT_ATTR_MAP.to_owned();
    let (map_text, scopes) = match args.as_slice() {
        [] => (&default_map, None),
        [map] => (map, None),
        [map, scopes] => (map, Some(scopes.as_str())),
        _ => {
            eprintln!("usage: map-profile [MAP [SCOPES]] < profile.json");
            return ExitCode::from(2);
        }
    };
    let mut profile_text = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut profile_text) {
        eprintln!("reading standard input: {e}");
        return ExitCode::from(2);
    }
    match run(map_text, scopes, &profile_text) {
        Ok(output) => {
            for line in &output.skipped {
                eprintln!("{line}");
            }
            println!("{}", Value::Object(output.written));
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("{message}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROFILE: &str = r#"{"name": "Ana Beatriz Souza", "cpf": "52998224725", "email": "",
        "receita_federal": {"dtNascimento": "1990-04-01", "mae": "Maria Souza"}, "cnes": {"vinculos": []}}"#;

    #[test]
    fn writes_the_mapped_columns_and_reports_the_skipped_ones() {
        let map = r#"{"username": "cpf", "(first_name, last_name)": "name", "email": "email",
            "birth_date": "receita_federal.dtNascimento", "bonds": "cnes"}"#;
        let output = run(map, None, PROFILE).expect("maps");
        assert_eq!(
            Value::Object(output.written),
            serde_json::json!({"username": "52998224725", "first_name": "Ana", "last_name": "Beatriz Souza",
                "birth_date": "1990-04-01", "bonds": {"vinculos": []}})
        );
        assert_eq!(output.skipped, ["skipped email: the text is empty"]);
    }

    #[test]
    fn a_scope_the_list_does_not_request_is_refused() {
        let e = run(r#"{"birth": "receita_federal.mae"}"#, Some("cpf email"), PROFILE).err();
        assert_eq!(
            e.as_deref(),
            Some(
                "the attribute map: key \"birth\": \"receita_federal.mae\" needs the scope receita_federal, which \
                 the scope list does not request"
            )
        );
        assert!(run(r#"{"birth": "receita_federal.mae"}"#, Some("cpf receita_federal"), PROFILE).is_ok());
    }

    #[test]
    fn a_bad_map_or_profile_is_refused_with_a_message() {
        let refused = |map: &str, profile: &str| run(map, None, profile).err().unwrap_or_default();
        assert!(refused("[]", PROFILE).starts_with("the attribute map: not a JSON object"));
        assert!(refused(r#"{"u": "cpf"}"#, "not json").starts_with("the profile is not JSON"));
        assert_eq!(refused(r#"{"u": "cpf"}"#, "[1]"), "the profile is not a JSON object");
        assert!(run(r#"{"u": "cpf"}"#, Some("openid"), PROFILE).is_err());
    }
}
