//! The client component: the provider it logs people in with, and how a
//! verified profile maps onto the host user table.

use credencial_adapters_upstream::BaseUrl;
use credencial_domain::host_table::{ColumnName, HostValue, LoginWrites, TableName};
use secrecy::SecretString;
use serde::{Deserialize, Serialize};

use super::lists::{json_object_text, optional_string_list, string_list};

/// The client component: the provider it logs people in with, and how a
/// verified profile maps onto the host user table.
#[derive(Clone, Deserialize, Serialize)]
#[serde(default)]
pub struct ClientSettings {
    /// Client component: `{column: profile_field}` as JSON text
    /// (`SERVICE_USER_ATTR_MAP`); in TOML also a table.
    #[serde(deserialize_with = "json_object_text")]
    pub user_attr_map: String,
    /// Client component: the host user column of the get-or-create lookup.
    pub user_lookup_field: String,
    /// Client component: the scopes to request (`dados_publicos` is added).
    #[serde(deserialize_with = "string_list")]
    pub scopes: Vec<String>,
    /// Client component: the provider's base URL for the server-to-server
    /// calls (`/oauth/token/`, `/api/perfil/dados/`); setting it enables the
    /// client component in `serve` (demo: this service itself).
    #[serde(with = "super::text::option")]
    pub provider_base_url: Option<BaseUrl>,
    /// Client component: the provider's base URL as browsers reach it (the
    /// authorize page); default: `provider_base_url`.
    #[serde(with = "super::text::option")]
    pub provider_public_url: Option<BaseUrl>,
    /// Client component: this host application's OAuth2 client id.
    pub provider_client_id: Option<String>,
    /// Client component: its client secret (never logged).
    #[serde(skip_serializing)]
    pub provider_client_secret: Option<SecretString>,
    /// Client component: the redirect URI registered for the client (this
    /// service's `/auth/callback/`).
    pub provider_redirect_uri: Option<String>,
    /// Client component: time-out of one provider call, in milliseconds.
    pub provider_timeout_ms: u64,
    /// Client component: whether logins ask for `openid` and the provider's
    /// back-channel logout tokens are taken at `/auth/backchannel-logout/`
    /// (register that URL at the provider). Unset: off (the demo: on).
    pub provider_backchannel_logout: Option<bool>,
    /// Client component: the provider's issuer identifier, which its
    /// logout tokens carry as `iss`; default: `provider_public_url` without
    /// its trailing slash.
    pub provider_issuer_url: Option<String>,
    /// Client component: the host user table the mapping writes.
    #[serde(with = "super::text")]
    pub user_table: TableName,
    /// Client component: whether a person without a host user gets one
    /// (`true`) or is refused with a page saying so (django-sabia-auth's
    /// `CREATE_USER`).
    pub create_users: bool,
    /// Client component: the mapped columns refreshed on every login; the
    /// other mapped columns are written only when the user is created
    /// (`UPDATE_FIELDS_ON_LOGIN`). Unset: every mapped column; `""`: none.
    #[serde(deserialize_with = "optional_string_list")]
    pub update_fields_on_login: Option<Vec<String>>,
    /// Client component: `{column: value}` as JSON text (strings and
    /// booleans), the values of new host users (`USER_DEFAULTS`); in TOML
    /// also a table.
    #[serde(deserialize_with = "json_object_text")]
    pub user_defaults: String,
    /// Client component: a timestamp column set at every login (Django's
    /// `last_login`); unset: none (the demo: `last_login`).
    pub last_login_column: Option<String>,
    /// Client component: a timestamp column set when the host user is
    /// created (Django's `date_joined`); unset: none.
    pub date_joined_column: Option<String>,
}

impl Default for ClientSettings {
    fn default() -> Self {
        Self {
            user_attr_map: credencial_domain::attr_map::DEFAULT_ATTR_MAP.into(),
            user_lookup_field: credencial_domain::attr_map::DEFAULT_LOOKUP_FIELD.into(),
            scopes: credencial_domain::attr_map::DEFAULT_SCOPES.iter().map(|s| s.name().to_owned()).collect(),
            provider_base_url: None,
            provider_public_url: None,
            provider_client_id: None,
            provider_client_secret: None,
            provider_redirect_uri: None,
            provider_timeout_ms: 3_000,
            provider_backchannel_logout: None,
            provider_issuer_url: None,
            user_table: TableName::parse("host_users").expect("a plain table name"),
            create_users: true,
            update_fields_on_login: None,
            user_defaults: "{}".into(),
            last_login_column: None,
            date_joined_column: None,
        }
    }
}

impl ClientSettings {
    /// The client component's mapping (`SERVICE_USER_ATTR_MAP`,
    /// `SERVICE_USER_LOOKUP_FIELD`, `SERVICE_SCOPES`), parsed and checked
    /// against each other; errors name those settings.
    pub fn user_mapping(&self) -> Result<credencial_domain::attr_map::UserMapping, super::SettingsError> {
        use credencial_domain::attr_map::{AttrMap, AttrMapError, ClientScopes, LookupField, UserMapping};
        // The domain names its inputs; the operator reads the settings' names.
        let named =
            |e: AttrMapError| super::SettingsError(format!("setting {}", e.message_naming(super::mapping_setting)));
        let scopes = ClientScopes::parse(&self.scopes).map_err(named)?;
        let map = AttrMap::from_json(&self.user_attr_map).map_err(named)?;
        let lookup = LookupField::parse(&self.user_lookup_field).map_err(named)?;
        UserMapping::new(map, lookup, scopes).map_err(named)
    }

    /// What a login writes besides the mapped values (`create_users`,
    /// `update_fields_on_login`, `user_defaults`, `last_login_column`,
    /// `date_joined_column`), parsed; errors name the setting. Checked
    /// against the host table at start ([`crate::startup::check_host_table`]).
    pub fn login_writes(&self) -> Result<LoginWrites, super::SettingsError> {
        let column = |key: &str, name: &str| {
            ColumnName::parse(name).map_err(|e| super::SettingsError::about(key, format!("{name:?}: {e}")))
        };
        let update_fields_on_login = match &self.update_fields_on_login {
            None => None,
            Some(list) => Some(
                list.iter()
                    .map(|item| item.trim())
                    .filter(|name| !name.is_empty())
                    .map(|name| column("update_fields_on_login", name))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        let defaults: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&self.user_defaults)
            .map_err(|e| super::SettingsError::about("user_defaults", format!("is not a JSON object: {e}")))?;
        let mut user_defaults = Vec::with_capacity(defaults.len());
        for (name, value) in defaults {
            let value = match value {
                serde_json::Value::String(s) => HostValue::Text(s),
                serde_json::Value::Bool(b) => HostValue::Bool(b),
                other => {
                    return Err(super::SettingsError::about(
                        "user_defaults",
                        format!("the value for {name:?} is {other}; give a string or a boolean"),
                    ))
                }
            };
            user_defaults.push((column("user_defaults", &name)?, value));
        }
        // A blank value means none, as an unset one does.
        let optional = |key: &str, value: &Option<String>| {
            value.as_deref().map(str::trim).filter(|name| !name.is_empty()).map(|name| column(key, name)).transpose()
        };
        Ok(LoginWrites {
            create_users: self.create_users,
            update_fields_on_login,
            user_defaults,
            last_login_column: optional("last_login_column", &self.last_login_column)?,
            date_joined_column: optional("date_joined_column", &self.date_joined_column)?,
        })
    }
}
