//! HTTP layer of credencial on actix-web.
//!
//! - [`jwt::JwtApi`] is the mountable JWT sub-application (`pair`,
//!   `refresh`, `verify`, `user-info`, `rh/eu`); [`jwt::pair`],
//!   [`jwt::refresh`] and [`jwt::verify`] are also exported on their own for
//!   custom routes.
//! - [`oauth::OAuthApi`] serves the OAuth2 provider: `/oauth/authorize/`
//!   (HTML login and consent) and `/oauth/token/`.
//! - [`client_login::ClientLoginApi`] serves the client component:
//!   `/auth/login/`, `/auth/callback/`, `/auth/logout/`, `/auth/me/`.
//! - [`account::AccountApi`] serves the person's own account: the pages
//!   under `/conta/`.
//! - [`admin::AdminApi`] serves the administration panel: the pages under
//!   `/admin/`.
//! - [`user_directory`] serves the user-management API (compatible with
//!   the Sabiá API): `/usuarios/`.
//! - [`server`] assembles the whole service for the binary.
//!
//! Knows the ports and use cases, never a concrete adapter.

/// The value of a page helper's `Ok`, or return from the handler with
/// its early answer (`Err`: the login redirect, a refusal page). Defined
/// before the page modules, so that they all see it.
macro_rules! or_answer {
    ($result:expr) => {
        match $result {
            Ok(value) => value,
            Err(answer) => return answer,
        }
    };
}

pub mod account;
pub mod admin;
pub mod body;
pub mod branding;
pub mod client_address;
pub mod client_login;
pub mod confirmation;
pub mod consume;
pub mod cookies;
pub mod error;
pub mod error_pages;
pub mod form;
pub mod health;
pub mod html;
pub mod jwt;
pub mod keys;
pub mod mail_templates;
pub mod metrics;
pub mod oauth;
pub mod openapi;
pub mod private;
pub mod profile;
pub mod public_pages;
pub mod routes;
pub mod sandbox;
pub mod sandbox_govbr;
pub mod sandbox_mail;
pub mod sandbox_registries;
pub mod server;
pub mod session;
pub mod telemetry;
pub mod user_directory;

pub use client_address::ClientAddressSource;
pub use error::ApiError;
pub use jwt::JwtApi;
pub use metrics::MetricsExporter;
pub use server::{build_server, HttpSettings, Services};
