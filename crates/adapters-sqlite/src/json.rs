//! SQLite's stand-in for PostgreSQL's arrays: JSON text (`TEXT[]` columns
//! are JSON arrays of strings; a list bound as one parameter is a JSON
//! array that `json_each` opens).

use credencial_domain::ScopeSet;
use credencial_ports::stored::{scope_names, scopes_from_names};
use credencial_ports::RepositoryError;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// `value` as JSON text.
pub(crate) fn to_json<T: Serialize + ?Sized>(value: &T) -> Result<String, RepositoryError> {
    serde_json::to_string(value).map_err(|e| RepositoryError::Unexpected(e.to_string()))
}

/// The value of stored JSON text; text that does not decode is a storage
/// error.
pub(crate) fn from_json<T: DeserializeOwned>(text: &str) -> Result<T, RepositoryError> {
    serde_json::from_str(text).map_err(|e| RepositoryError::Unexpected(format!("stored JSON: {e}")))
}

/// The stored form of a scope set: a JSON array of its names, sorted.
pub(crate) fn scopes_to_json(set: ScopeSet) -> Result<String, RepositoryError> {
    to_json(&scope_names(set))
}

/// The scope set of a stored JSON array of names.
pub(crate) fn scopes_from_json(text: &str) -> Result<ScopeSet, RepositoryError> {
    scopes_from_names(&from_json::<Vec<String>>(text)?)
}
