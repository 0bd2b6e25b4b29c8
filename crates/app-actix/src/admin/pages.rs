//! The panel's templates (`templates/admin/`): the panel's navigation (its
//! [`Frame`]) and the home page.

use askama::Template;

use crate::html::{Frame, Site};

/// The panel's sections, as the navigation lists them: path and label.
pub const NAV: [(&str, &str); 6] = [
    ("/admin/", "Início"),
    ("/admin/aplicativos/", "Aplicativos"),
    ("/admin/usuarios/", "Usuários"),
    ("/admin/auditoria/", "Auditoria"),
    ("/admin/emails/", "E-mails"),
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

#[cfg(test)]
mod tests {
    use askama::Template;

    use super::*;
    use crate::html::PROVIDER;

    #[test]
    fn each_area_s_frame_names_its_navigation_and_marks_the_section_shown() {
        let admin = Home { site: &PROVIDER, title: "Administração", frame: Frame::admin("/admin/"), staff: "ana" }
            .render()
            .expect("render");
        assert!(admin.contains(r#"<nav class="account admin" aria-label="Administração">"#), "{admin}");
        assert!(admin.contains(r#"<li><a href="/admin/" aria-current="page">Início</a></li>"#), "{admin}");
        assert!(admin.contains(r#"<li><a href="/conta/">Minha conta</a></li>"#), "{admin}");

        let account = crate::account::pages::logout("t").render().expect("render");
        assert!(account.contains(r#"<nav class="account" aria-label="Minha conta">"#), "{account}");
        assert!(account.contains(r#"<li><a href="/conta/sair/" aria-current="page">Sair</a></li>"#), "{account}");
    }
}
