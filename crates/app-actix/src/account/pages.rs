//! The account pages' templates (`templates/account/`): the account's
//! navigation (its [`Frame`]), the login form, the overview (with its details
//! form) and the logout page.

use askama::Template;
use credencial_application::AccountOverview;
use credencial_domain::account::FieldErrors;

use crate::html::{Frame, Site, PROVIDER};

/// The account's sections, as the navigation lists them: path and label.
pub const NAV: [(&str, &str); 10] = [
    ("/conta/", "Visão geral"),
    ("/conta/experiencias/", "Experiências"),
    ("/conta/formacoes/", "Formações"),
    ("/conta/validacao/", "Validação"),
    ("/conta/aplicativos/", "Aplicativos"),
    ("/conta/acessos/", "Quem acessou meus dados"),
    ("/conta/senha/", "Senha"),
    ("/conta/seguranca/", "Segurança"),
    ("/conta/sessoes/", "Sessões"),
    ("/conta/sair/", "Sair"),
];

impl Frame {
    /// The frame of a signed-in account page showing the section `current` (one of
    /// [`NAV`]'s paths).
    pub const fn account(current: &'static str) -> Self {
        Self { nav: &NAV, label: "Minha conta", class: "account", current }
    }
}

/// The account's login form (`templates/account/login.html`).
#[derive(Debug, Template)]
#[template(path = "account/login.html")]
pub struct Login<'a> {
    /// Who the page speaks for.
    pub site: &'static Site,
    /// The page title.
    pub title: &'a str,
    /// Where the form posts.
    pub action: &'a str,
    /// A message (wrong password, expired form, …).
    pub message: Option<&'a str>,
    /// Hidden fields: the anti-forgery token and `next`.
    pub hidden: Vec<(&'static str, &'a str)>,
    /// The username typed before, shown again.
    pub username: &'a str,
    /// Whether to offer the sign-up page.
    pub signup: bool,
    /// Where the passkey button posts.
    pub passkey_path: &'static str,
    /// Where a login by passkey goes on to, when passkeys are offered here.
    pub passkey_next: Option<&'a str>,
    /// The form token the passkey button posts (the login form's).
    pub passkey_token: &'a str,
    /// The sign-up page's path.
    pub signup_path: &'a str,
    /// "Esqueci minha senha", when the service can send mail.
    pub recovery_path: Option<&'static str>,
    /// The buttons of the upstream providers ("Entrar com gov.br").
    pub providers: Vec<super::federation::ProviderButton>,
}

/// The overview (`templates/account/overview.html`).
#[derive(Debug, Template)]
#[template(path = "account/overview.html")]
pub struct Overview<'a> {
    /// Who the page speaks for.
    pub site: &'static Site,
    /// The page title.
    pub title: &'a str,
    /// The account frame.
    pub frame: Frame,
    /// A message to announce, if any.
    pub message: Option<&'a str>,
    /// A success to announce (after a change), if any.
    pub notice: Option<&'a str>,
    /// The account.
    pub account: &'a AccountOverview,
    /// The details form's anti-forgery token.
    pub hidden: Vec<(&'static str, &'a str)>,
    /// What the details form shows: the account's values, or what was
    /// typed when it was refused.
    pub form: DetailsValues<'a>,
    /// The details form's refused fields.
    pub errors: FieldErrors,
    /// Whether the address is confirmed: `None` when the service sends no
    /// mail (nothing to say).
    pub email_confirmed: Option<bool>,
    /// The address the person asked to change to, until they confirm it.
    pub email_pending: Option<String>,
}

/// The values of the overview's details form.
#[derive(Debug, Clone, Copy, Default)]
pub struct DetailsValues<'a> {
    /// Full name.
    pub nome: &'a str,
    /// E-mail address.
    pub email: &'a str,
    /// Avatar URL.
    pub avatar: &'a str,
}

/// The logout page (`templates/account/logout.html`).
#[derive(Debug, Template)]
#[template(path = "account/logout.html")]
pub struct Logout<'a> {
    /// Who the page speaks for.
    pub site: &'static Site,
    /// The page title.
    pub title: &'a str,
    /// The account frame.
    pub frame: Frame,
    /// The anti-forgery token.
    pub hidden: Vec<(&'static str, &'a str)>,
}

/// The overview of `account`, its details form carrying `form_token` and
/// showing the account's values, and `notice` announced.
pub fn overview<'a>(account: &'a AccountOverview, form_token: &'a str, notice: Option<&'a str>) -> Overview<'a> {
    Overview {
        site: &PROVIDER,
        title: "Minha conta",
        frame: Frame::account("/conta/"),
        message: None,
        notice,
        account,
        hidden: vec![("csrf_token", form_token)],
        form: DetailsValues { nome: &account.name, email: &account.email, avatar: &account.avatar },
        errors: FieldErrors::new(),
        email_confirmed: None,
        email_pending: None,
    }
}

/// The logout page, its form carrying `form_token`.
pub fn logout(form_token: &str) -> Logout<'_> {
    Logout {
        site: &PROVIDER,
        title: "Sair",
        frame: Frame::account("/conta/sair/"),
        hidden: vec![("csrf_token", form_token)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn account() -> AccountOverview {
        AccountOverview {
            username: "bruno".into(),
            name: "<b>Bruno</b>".into(),
            email: "bruno@example.org".into(),
            avatar: String::new(),
            cpf_masked: Some("529.***.***-25".into()),
            validated: false,
        }
    }

    #[test]
    fn the_overview_escapes_the_name_shows_the_masked_cpf_and_marks_its_section() {
        let account = account();
        let page = overview(&account, "tok", None).render().expect("renders");
        assert!(!page.contains("<b>Bruno</b>") && page.contains("&#60;b&#62;Bruno"), "{page}");
        assert!(page.contains("529.***.***-25"), "{page}");
        assert!(page.contains("<a href=\"/conta/\" aria-current=\"page\">Visão geral</a>"), "{page}");
        assert_eq!(page.matches("aria-current=\"page\"").count(), 1, "one current section");
        assert!(page.contains("href=\"/conta/validacao/\">Validar meu cadastro"), "{page}");
        assert!(page.contains("<nav class=\"account\" aria-label=\"Minha conta\">"), "{page}");
    }
}
