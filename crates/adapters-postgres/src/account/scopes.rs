//! Scope sets as `TEXT[]` columns, and times as Unix seconds.

use credencial_domain::{Scope, ScopeSet};
use credencial_ports::RepositoryError;

/// The names of `set`, sorted (the stored form).
pub(crate) fn to_names(set: ScopeSet) -> Vec<&'static str> {
    let mut names: Vec<_> = set.iter().map(Scope::name).collect();
    names.sort_unstable();
    names
}

/// The set of stored names; an unknown name is a storage error (the
/// columns' CHECK constraints keep them out).
pub(crate) fn from_names(names: &[String]) -> Result<ScopeSet, RepositoryError> {
    names.iter().map(|n| n.parse::<Scope>().map_err(|e| RepositoryError::Unexpected(e.to_string()))).collect()
}
