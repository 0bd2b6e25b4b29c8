//! The templates of the applications pages (`templates/admin/application*.html`).

use askama::Template;
use credencial_domain::federation::ReliabilityLevel;
use credencial_domain::{Scope, ScopeSet};
use credencial_ports::OAuthClient;

use crate::html::Frame;
use crate::html::{self, Site};

/// A client as the pages show it.
#[derive(Debug)]
pub struct ClientView {
    /// The client id.
    pub client_id: String,
    /// The name shown on the consent page.
    pub name: String,
    /// `Confidencial` or `Pública`.
    pub kind: &'static str,
    /// Whether it has a secret.
    pub confidential: bool,
    /// Whether PKCE is required (always for a public client).
    pub pkce_required: bool,
    /// Whether a confidential client was registered to require PKCE.
    pub require_pkce: bool,
    /// Whether its users must pass a second factor.
    pub requires_second_factor: bool,
    /// The lowest gov.br level its users must log in with, as the page
    /// names it (`Nenhum` when none).
    pub minimum_govbr_level: &'static str,
    /// The scopes a grant can carry (the enabled ones and the required ones).
    pub scopes: String,
    /// Whether it may use the provider.
    pub active: bool,
    /// When it was registered, in Brasília time.
    pub created: String,
    /// The redirect URIs, one a line.
    pub redirect_uris: String,
}

impl ClientView {
    /// The view of `client`.
    pub fn of(client: &OAuthClient) -> Self {
        Self {
            client_id: client.client_id.to_string(),
            name: client.name.clone(),
            kind: if client.confidential { "Confidencial" } else { "Pública" },
            confidential: client.confidential,
            pkce_required: client.policy().pkce_required(),
            require_pkce: client.require_pkce,
            requires_second_factor: client.requires_second_factor,
            minimum_govbr_level: level_label(client.minimum_govbr_level),
            scopes: client.enabled_scopes.union(ScopeSet::required()).to_scope_string(),
            active: client.is_active,
            created: html::brasilia_time(client.created_at),
            redirect_uris: client.redirect_uris.join("\n"),
        }
    }
}

/// The select's value for no minimum level.
pub const NO_LEVEL: &str = "nenhum";

/// How the pages name a minimum gov.br level.
fn level_label(level: Option<ReliabilityLevel>) -> &'static str {
    match level {
        None => "Nenhum",
        Some(ReliabilityLevel::Bronze) => "Bronze",
        Some(ReliabilityLevel::Prata) => "Prata",
        Some(ReliabilityLevel::Ouro) => "Ouro",
    }
}

/// One option of the minimum gov.br level's select.
#[derive(Debug)]
pub struct LevelOption {
    /// The value sent: `nenhum` ([`NO_LEVEL`]), else the level's name.
    pub value: &'static str,
    /// What the option says.
    pub label: &'static str,
    /// Whether it is the current one.
    pub selected: bool,
}

/// The select's options, "Nenhum" and the levels lowest first, `current`
/// selected.
pub fn level_options(current: Option<ReliabilityLevel>) -> Vec<LevelOption> {
    std::iter::once(None)
        .chain(ReliabilityLevel::ALL.into_iter().map(Some))
        .map(|level| LevelOption {
            value: level.map_or(NO_LEVEL, ReliabilityLevel::name),
            label: level_label(level),
            selected: level == current,
        })
        .collect()
}

/// One scope's checkbox.
#[derive(Debug)]
pub struct ScopeBox {
    /// The scope's name (the field is `escopo_<name>`).
    pub name: &'static str,
    /// What it gives, in Portuguese.
    pub description: &'static str,
    /// Whether it is checked.
    pub checked: bool,
    /// Whether it is required (always granted: checked and disabled).
    pub required: bool,
}

/// The eight scopes' checkboxes, `enabled` checked (the required ones always).
pub fn scope_boxes(enabled: ScopeSet) -> Vec<ScopeBox> {
    Scope::ALL
        .into_iter()
        .map(|scope| ScopeBox {
            name: scope.name(),
            description: scope.description(),
            checked: scope.is_required() || enabled.contains(scope),
            required: scope.is_required(),
        })
        .collect()
}

/// The list (`templates/admin/applications.html`).
#[derive(Debug, Template)]
#[template(path = "admin/applications.html")]
pub struct ListPage<'a> {
    /// Who the page speaks for.
    pub site: &'static Site,
    /// The page title.
    pub title: &'a str,
    /// The panel frame.
    pub frame: Frame,
    /// Every application.
    pub clients: Vec<ClientView>,
}

/// What was typed in the new-application form, and its errors.
#[derive(Debug, Default)]
pub struct NewForm {
    /// The client id.
    pub client_id: String,
    /// The name.
    pub name: String,
    /// The redirect URIs, one a line.
    pub redirect_uris: String,
    /// Whether it is public.
    pub public: bool,
    /// Whether a confidential one requires PKCE.
    pub require_pkce: bool,
    /// The client id's error.
    pub client_id_error: Option<String>,
    /// The name's error.
    pub name_error: Option<String>,
    /// The redirect URIs' error.
    pub uris_error: Option<String>,
}

/// The new-application form (`templates/admin/application_new.html`).
#[derive(Debug, Template)]
#[template(path = "admin/application_new.html")]
pub struct NewPage<'a> {
    /// Who the page speaks for.
    pub site: &'static Site,
    /// The page title.
    pub title: &'a str,
    /// The panel frame.
    pub frame: Frame,
    /// The session's form token.
    pub csrf_token: &'a str,
    /// What a refused form says above it.
    pub message: Option<&'a str>,
    /// What was typed, and the errors.
    pub form: NewForm,
    /// The scopes' checkboxes.
    pub scopes: Vec<ScopeBox>,
}

/// The detail page with its forms (`templates/admin/application.html`).
#[derive(Debug, Template)]
#[template(path = "admin/application.html")]
pub struct DetailPage<'a> {
    /// Who the page speaks for.
    pub site: &'static Site,
    /// The page title.
    pub title: &'a str,
    /// The panel frame.
    pub frame: Frame,
    /// The session's form token.
    pub csrf_token: &'a str,
    /// What the last change did.
    pub notice: Option<&'a str>,
    /// What a refused form says above the page.
    pub message: Option<&'a str>,
    /// The application.
    pub client: ClientView,
    /// The name field's value (as typed after a refusal).
    pub name: String,
    /// The redirect URIs field's value (as typed after a refusal).
    pub redirect_uris: String,
    /// The post-logout redirect URIs field's value (as typed after a
    /// refusal).
    pub post_logout_redirect_uris: String,
    /// The back-channel logout URI field's value (as typed after a
    /// refusal; empty: none).
    pub backchannel_logout_uri: String,
    /// The name's error.
    pub name_error: Option<String>,
    /// The redirect URIs' error.
    pub uris_error: Option<String>,
    /// The post-logout redirect URIs' error.
    pub post_logout_error: Option<String>,
    /// The back-channel logout URI's error.
    pub backchannel_error: Option<String>,
    /// The scopes' checkboxes.
    pub scopes: Vec<ScopeBox>,
    /// The minimum gov.br level's options.
    pub levels: Vec<LevelOption>,
    /// Whether the service offers a login through gov.br (without it, no
    /// one meets a minimum level).
    pub govbr_offered: bool,
}

/// A secret shown once, after a registration or a rotation
/// (`templates/admin/application_secret.html`).
#[derive(Debug, Template)]
#[template(path = "admin/application_secret.html")]
pub struct SecretPage<'a> {
    /// Who the page speaks for.
    pub site: &'static Site,
    /// The page title.
    pub title: &'a str,
    /// The panel frame.
    pub frame: Frame,
    /// What happened.
    pub heading: &'a str,
    /// The application.
    pub client: ClientView,
    /// The secret.
    pub secret: &'a str,
}
