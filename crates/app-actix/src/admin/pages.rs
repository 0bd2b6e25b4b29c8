//! The panel's templates (`templates/admin/`): the panel's navigation (its
//! [`Frame`]) and the home page.

use askama::Template;

use crate::html::{Frame, Site};

/// The panel's sections, as the navigation lists them: path and label.
pub const NAV: [(&str, &str); 5] = [
    ("/admin/", "Início"),
    ("/admin/aplicativos/", "Aplicativos"),
    ("/admin/usuarios/", "Usuários"),
    ("/admin/auditoria/", "Auditoria"),
    ("/conta/", "Minha conta"),
];

impl Frame {
    /// The frame of a panel page showing the section `current` (one of
    /// [`NAV`]'s paths).
    pub const fn admin(current: &'static str) -> Self {
        Self { nav: &NAV, label: "Administração", class: "account admin", current }
    }
}

/// The panel's home (`templates/admin/home.html`).
#[derive(Debug, Template)]
#[template(path = "admin/home.html")]
pub struct Home<'a> {
    /// Who the page speaks for.
    pub site: &'static Site,
    /// The page title.
    pub title: &'a str,
    /// The panel frame.
    pub frame: Frame,
    /// The signed-in staff user's username.
    pub staff: &'a str,
}
