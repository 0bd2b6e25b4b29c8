//! The upstream identity providers people may log in through (gov.br, or
//! any OpenID provider): a list of nested settings, `[[providers]]` tables
//! in the TOML file or a JSON array in `SERVICE_PROVIDERS`.

use std::sync::Arc;
use std::time::Duration;

use credencial_adapters_upstream::{
    HttpIdentityProvider, IdentityProviderSettings, DEFAULT_IDENTITY_PROVIDER_TIMEOUT, MIN_KEYS_REFRESH,
};
use credencial_application::UpstreamProvider;
use credencial_domain::assurance::UpstreamTrust;
use credencial_domain::federation::linking::LinkKey;
use credencial_domain::federation::ProviderKind;
use secrecy::SecretString;
use serde::{Deserialize, Deserializer};

use super::SettingsError;

/// The scopes asked of gov.br when none are set: its guide's list, with
/// the reliability levels in the ID token.
pub const GOVBR_SCOPES: &[&str] =
    &["openid", "email", "profile", "govbr_confiabilidades", "govbr_confiabilidades_idtoken"];

/// The scopes asked of a standard provider when none are set.
pub const OIDC_SCOPES: &[&str] = &["openid", "email", "profile"];

/// Longest provider id: it is part of URLs and of stored links.
const MAX_ID_CHARS: usize = 32;

/// One upstream provider as written in the settings. `Debug` never shows
/// the secret.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderSettings {
    /// The id in this service's URLs (`/conta/entrar/externo/{id}/`) and
    /// stored links: lower-case letters, digits, `-` and `_`, at most 32.
    pub id: String,
    /// The name people see on the button ("gov.br" by default for the
    /// `govbr` profile; required for `oidc`).
    #[serde(default)]
    pub name: Option<String>,
    /// `govbr` (gov.br's rules: the CPF is the subject, levels and seals,
    /// string booleans) or `oidc` (a standard OpenID provider).
    pub profile: String,
    /// The provider's issuer identifier, exactly as its ID tokens' `iss`
    /// (gov.br production: `https://sso.acesso.gov.br/`; staging:
    /// `https://sso.staging.acesso.gov.br/`).
    pub issuer: String,
    /// This service's client id at the provider.
    pub client_id: String,
    /// This service's client secret (sent with HTTP Basic; never logged).
    pub client_secret: SecretString,
    /// The scopes asked for (default: gov.br's list, or `openid email
    /// profile`).
    #[serde(default)]
    pub scopes: Option<Vec<String>>,
    /// `oidc` only: what a first login finds an existing account by —
    /// `sub` (nothing: a new account, the default), `cpf` (a `cpf` claim)
    /// or `email` (an address the provider verified; never an unverified
    /// one).
    #[serde(default)]
    pub link_by: Option<String>,
    /// The algorithms its ID tokens may be signed with (default `RS256`;
    /// among RS256, PS256 and ES256).
    #[serde(default)]
    pub algorithms: Option<Vec<String>>,
    /// The logout URL when the discovery document names none (gov.br's
    /// default: `{issuer}logout`).
    #[serde(default)]
    pub logout_url: Option<String>,
    /// Time-out of one call to the provider, in milliseconds (default
    /// 5,000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Whether a login through the provider stands in for this service's
    /// second factor, for accounts that have one: `never`,
    /// `when_upstream_mfa` (the default: when its `amr` proves two factors;
    /// for gov.br also `prata`/`ouro` reached with a code, a certificate
    /// or a bank's login) or `always`.
    #[serde(default)]
    pub satisfies_second_factor: Option<String>,
}

impl std::fmt::Debug for ProviderSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderSettings")
            .field("id", &self.id)
            .field("profile", &self.profile)
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

/// The list as a TOML array of tables, or a JSON array (the environment).
pub(super) fn provider_list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<ProviderSettings>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        List(Vec<ProviderSettings>),
        Text(String),
    }
    match Raw::deserialize(d)? {
        Raw::List(list) => Ok(list),
        Raw::Text(text) if text.trim().is_empty() => Ok(Vec::new()),
        Raw::Text(text) => serde_json::from_str(&text).map_err(serde::de::Error::custom),
    }
}

/// A provider, checked: what the service builds it from.
struct Checked {
    id: String,
    name: String,
    kind: ProviderKind,
    link_key: LinkKey,
    trust: UpstreamTrust,
    settings: IdentityProviderSettings,
}

impl ProviderSettings {
    /// The provider's settings checked, or what is wrong with them (each
    /// message names the entry).
    fn check(&self, index: usize) -> Result<Checked, Vec<SettingsError>> {
        let mut problems = Vec::new();
        let entry = format!("providers[{index}]");
        let mut wrong = |field: &str, message: String| {
            problems.push(SettingsError::about("providers", format!("{entry}.{field} {message}")));
        };
        let id_ok = !self.id.is_empty()
            && self.id.chars().count() <= MAX_ID_CHARS
            && self.id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
        if !id_ok {
            wrong("id", "must be 1 to 32 lower-case letters, digits, - or _".into());
        }
        let kind = ProviderKind::from_name(&self.profile);
        if kind.is_none() {
            wrong("profile", format!("must be govbr or oidc, not {:?}", self.profile));
        }
        let name = match (&self.name, kind) {
            (Some(name), _) if !name.trim().is_empty() => Some(name.trim().to_owned()),
            (_, Some(ProviderKind::GovBr)) => Some("gov.br".to_owned()),
            _ => {
                wrong("name", "is not set (the name on the login button)".into());
                None
            }
        };
        let link_key = match (kind, self.link_by.as_deref()) {
            (Some(ProviderKind::GovBr), None) => LinkKey::Cpf,
            (Some(ProviderKind::GovBr), Some(_)) => {
                wrong("link_by", "is not set for govbr (gov.br accounts are linked by CPF)".into());
                LinkKey::Cpf
            }
            (_, None) => LinkKey::Subject,
            (_, Some(value)) => LinkKey::from_name(value).unwrap_or_else(|| {
                wrong("link_by", format!("must be sub, cpf or email, not {value:?}"));
                LinkKey::Subject
            }),
        };
        let trust = match self.satisfies_second_factor.as_deref() {
            None => UpstreamTrust::default(),
            Some(value) => UpstreamTrust::parse(value).unwrap_or_else(|| {
                wrong("satisfies_second_factor", format!("must be never, when_upstream_mfa or always, not {value:?}"));
                UpstreamTrust::default()
            }),
        };
        let default_scopes = if kind == Some(ProviderKind::GovBr) { GOVBR_SCOPES } else { OIDC_SCOPES };
        let scopes =
            self.scopes.clone().unwrap_or_else(|| default_scopes.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
        let mut algorithms = Vec::new();
        for name in self.algorithms.clone().unwrap_or_else(|| vec!["RS256".to_owned()]) {
            match name.parse::<jsonwebtoken::Algorithm>() {
                Ok(algorithm) => algorithms.push(algorithm),
                Err(_) => wrong("algorithms", format!("names an unknown algorithm {name:?}")),
            }
        }
        let logout_url = match (&self.logout_url, kind) {
            (Some(url), _) => Some(url.clone()),
            (None, Some(ProviderKind::GovBr)) => Some(format!("{}/logout", self.issuer.trim_end_matches('/'))),
            (None, _) => None,
        };
        let timeout = Duration::from_millis(
            self.timeout_ms.unwrap_or(DEFAULT_IDENTITY_PROVIDER_TIMEOUT.as_millis().try_into().unwrap_or(5_000)),
        );
        let settings = IdentityProviderSettings {
            issuer: self.issuer.clone(),
            client_id: self.client_id.clone(),
            client_secret: self.client_secret.clone(),
            scopes,
            algorithms,
            logout_url,
            timeout,
            keys_refresh: MIN_KEYS_REFRESH,
        };
        // What the adapter refuses, refused here, named.
        if let Err(e) = settings.check() {
            wrong("", e.to_string());
        }
        match (problems.is_empty(), kind, name) {
            (true, Some(kind), Some(name)) => {
                Ok(Checked { id: self.id.clone(), name, kind, link_key, trust, settings })
            }
            _ => Err(problems),
        }
    }
}

impl super::FederationSettings {
    /// What is wrong with `providers`.
    pub(super) fn provider_problems(&self) -> Vec<SettingsError> {
        let mut problems = Vec::new();
        let mut ids = Vec::new();
        let mut govbr = 0;
        for (index, provider) in self.providers.iter().enumerate() {
            match provider.check(index) {
                Ok(checked) => govbr += usize::from(checked.kind == ProviderKind::GovBr),
                Err(found) => problems.extend(found),
            }
            if ids.contains(&provider.id.as_str()) {
                problems.push(SettingsError::about(
                    "providers",
                    format!("providers[{index}].id {} is repeated", provider.id),
                ));
            }
            ids.push(provider.id.as_str());
        }
        if govbr > 1 {
            problems.push(SettingsError::about("providers", "at most one provider may have the govbr profile"));
        }
        problems
    }

    /// The providers, built over `client` (whose redirects are off: the
    /// adapter refuses any answer from another URL).
    pub fn identity_providers(&self, client: &reqwest::Client) -> Result<Vec<UpstreamProvider>, SettingsError> {
        let mut providers = Vec::new();
        for (index, provider) in self.providers.iter().enumerate() {
            let checked = provider
                .check(index)
                .map_err(|problems| SettingsError(problems.into_iter().map(|p| p.0).collect::<Vec<_>>().join("\n")))?;
            let identity = HttpIdentityProvider::new(client.clone(), checked.settings)
                .map_err(|e| SettingsError::about("providers", format!("providers[{index}] {e}")))?;
            providers.push(UpstreamProvider {
                id: checked.id,
                name: checked.name,
                kind: checked.kind,
                link_key: checked.link_key,
                trust: checked.trust,
                identity: Arc::new(identity),
            });
        }
        Ok(providers)
    }
}
