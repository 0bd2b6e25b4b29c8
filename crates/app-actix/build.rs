//! Converts `docs/openapi.yaml` to JSON at build time, so that the binary
//! serves `GET /api/openapi.json` as static bytes and carries no YAML parser.

use std::error::Error;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn Error>> {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let source = manifest_dir.join("../../docs/openapi.yaml");
    println!("cargo::rerun-if-changed={}", source.display());
    let text = std::fs::read_to_string(&source).map_err(|e| format!("cannot read {}: {e}", source.display()))?;
    let document: serde_json::Value =
        yaml_serde::from_str(&text).map_err(|e| format!("{} is not valid YAML: {e}", source.display()))?;
    if document.get("openapi").and_then(serde_json::Value::as_str).is_none_or(|v| !v.starts_with("3.1.")) {
        return Err(format!("{} is not an OpenAPI 3.1 document", source.display()).into());
    }
    let out = PathBuf::from(std::env::var("OUT_DIR")?).join("openapi.json");
    std::fs::write(&out, serde_json::to_vec(&document)?)?;
    Ok(())
}
