//! The institution's identity on every page and mail: names, logo,
//! primary colour, footer links and the gov.br bar.

use std::path::PathBuf;

use credencial_app_actix::branding::{Branding, Colour, Href, Logo};
use serde::{Deserialize, Serialize};

use super::text::SettingText;
use super::SettingsError;
use crate::startup::Mode;

/// The institution's identity on every page and mail. Unset, the pages
/// carry a neutral identity (the service's own name and blue); the demo,
/// with none of these set, shows a fictional federal institute.
#[derive(Clone, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct BrandingSettings {
    /// The service's name as people know it: in page titles, the header
    /// and mails, read after "a sua conta no …" (so a name such as
    /// `ID Exemplo` or `Acesso Exemplo`).
    pub service_name: String,
    /// The institution's full name, in the header and the footer.
    pub institution_name: Option<String>,
    /// Its short name (an acronym), shown in the header on narrow screens.
    pub institution_short_name: Option<String>,
    /// The institution's logo: an `.svg`, `.png`, `.jpg` or `.webp` file of
    /// at most 256 KB, read at start-up and served at `/marca/logo`.
    pub institution_logo: Option<PathBuf>,
    /// The primary colour (`#rrggbb`) of the header rule, links and
    /// buttons; white text on it must have a contrast of at least 4.5:1.
    #[serde(with = "super::text")]
    pub primary_colour: Colour,
    /// The footer's privacy notice link (default: this service's notice,
    /// `/privacidade/`).
    #[serde(with = "super::text")]
    pub privacy_notice_url: Href,
    /// The footer's help link (an `https://` address, a `mailto:` or a
    /// path of this service); unset: none.
    #[serde(with = "super::text::option")]
    pub help_url: Option<Href>,
    /// The footer's accessibility statement link; unset: none.
    #[serde(with = "super::text::option")]
    pub accessibility_url: Option<Href>,
    /// The footer's contact link ("Fale conosco"); unset: none.
    #[serde(with = "super::text::option")]
    pub contact_url: Option<Href>,
    /// Open every page with the federal government's gov.br bar (links
    /// only: no script or resource of gov.br is loaded).
    pub govbr_bar: bool,
}

impl Default for BrandingSettings {
    fn default() -> Self {
        let neutral = Branding::default();
        Self {
            service_name: neutral.service_name,
            institution_name: None,
            institution_short_name: None,
            institution_logo: None,
            primary_colour: neutral.primary,
            privacy_notice_url: neutral.privacy,
            help_url: None,
            accessibility_url: None,
            contact_url: None,
            govbr_bar: false,
        }
    }
}

/// The longest name accepted: a name is a line of the header.
const MAX_NAME_CHARS: usize = 120;

impl BrandingSettings {
    /// Names that are empty where one is needed, too long, or not one line.
    pub fn problems(&self) -> Vec<SettingsError> {
        let mut problems = Vec::new();
        if self.service_name.trim().is_empty() {
            problems.push(SettingsError::about("service_name", "must not be empty"));
        }
        for (key, value) in [
            ("service_name", Some(&self.service_name)),
            ("institution_name", self.institution_name.as_ref()),
            ("institution_short_name", self.institution_short_name.as_ref()),
        ] {
            let Some(value) = value else { continue };
            if value.chars().count() > MAX_NAME_CHARS || value.chars().any(char::is_control) {
                problems.push(SettingsError::about(
                    key,
                    format!("must be one line of at most {MAX_NAME_CHARS} characters"),
                ));
            }
        }
        if let Some(path) = &self.institution_logo {
            if let Err(e) = Logo::from_file(path) {
                problems.push(SettingsError::about("institution_logo", e));
            }
        }
        problems
    }

    /// Whether every branding setting is at its default (the demo then
    /// shows its own institution).
    fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// The identity the pages and mails carry in `mode`: these settings,
    /// or, for a demo that sets none of them, the demo's institution. The
    /// logo file is loaded here (the checks read it too, at start-up).
    pub fn branding(&self, mode: Mode) -> Result<Branding, SettingsError> {
        if mode == Mode::Demo && self.is_default() {
            return Ok(Branding::demo());
        }
        let logo = match &self.institution_logo {
            Some(path) => Some(Logo::from_file(path).map_err(|e| SettingsError::about("institution_logo", e))?),
            None => None,
        };
        Ok(Branding {
            service_name: self.service_name.trim().to_owned(),
            institution_name: self.institution_name.as_deref().unwrap_or("").trim().to_owned(),
            institution_short_name: self.institution_short_name.as_deref().unwrap_or("").trim().to_owned(),
            logo,
            primary: self.primary_colour,
            privacy: self.privacy_notice_url.clone(),
            help: self.help_url.clone(),
            accessibility: self.accessibility_url.clone(),
            contact: self.contact_url.clone(),
            govbr_bar: self.govbr_bar,
        })
    }
}

impl SettingText for Colour {
    fn from_text(text: &str) -> Result<Self, String> {
        Colour::parse(text)
    }
    fn to_text(&self) -> String {
        self.to_string()
    }
}

impl SettingText for Href {
    fn from_text(text: &str) -> Result<Self, String> {
        Href::parse(text)
    }
    fn to_text(&self) -> String {
        self.as_str().to_owned()
    }
}
