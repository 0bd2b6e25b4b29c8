//! Logins through upstream identity providers (gov.br, any OpenID provider).

use credencial_domain::federation::ReliabilityLevel;
use serde::{Deserialize, Serialize};

use super::ProviderSettings;

/// Logins through upstream identity providers (gov.br, any OpenID provider).
#[derive(Clone, Deserialize, Serialize)]
#[serde(default)]
pub struct FederationSettings {
    /// Upstream identity providers people may log in through ("Entrar com
    /// gov.br", or any OpenID provider): `[[providers]]` tables in the
    /// file, a JSON array in `SERVICE_PROVIDERS` (docs/configuration.md).
    #[serde(deserialize_with = "super::providers::provider_list", skip_serializing)]
    pub providers: Vec<ProviderSettings>,
    /// The gov.br level from which a login through gov.br counts as a
    /// validated registration (`receita_federal`): `bronze`, `prata`
    /// (default) or `ouro`.
    #[serde(with = "super::text")]
    pub govbr_validated_level: ReliabilityLevel,
}

impl Default for FederationSettings {
    fn default() -> Self {
        Self { providers: Vec::new(), govbr_validated_level: ReliabilityLevel::Prata }
    }
}
