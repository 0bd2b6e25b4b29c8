//! The panel's templates (`templates/admin/`): the frame every panel page
//! shares and the home page.

use askama::Template;

use crate::html::Site;

/// The panel's sections, as the navigation lists them: path and label.
pub const NAV: [(&str, &str); 5] = [
    ("/admin/", "Início"),
    ("/admin/aplicativos/", "Aplicativos"),
    ("/admin/usuarios/", "Usuários"),
    ("/admin/auditoria/", "Auditoria"),
    ("/conta/", "Minha conta"),
];

/// What the frame of a panel page needs: which section is shown.
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    /// The path of the section shown (one of [`NAV`]'s), marked as current.
    pub current: &'static str,
}

impl Frame {
    /// The navigation's entries.
    pub fn nav(&self) -> &'static [(&'static str, &'static str)] {
        &NAV
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
