//! The mails' words: [`MailContent`] rendered through askama templates
//! (`templates/mail/`), a text part and an HTML part each, in Portuguese,
//! with the pages' name and colours. No tracking and no remote images: the
//! HTML part is inline styles and text; its links come from the content
//! (the configured public URL).

use askama::Template;
use credencial_application::{MailContent, MailRenderer};
use credencial_domain::local_time::brasilia_time;
use credencial_domain::mail::{greeting_name, MailKind, OutgoingMail};
use credencial_domain::Redacted;

use crate::account::security::kind_words;
use crate::branding::Branding;
use credencial_domain::security_event::SecurityEventKind;
use std::sync::Arc;

#[derive(Template)]
#[template(path = "mail/password_reset.txt")]
struct ResetText<'a> {
    site: &'a Branding,
    greeting: &'a str,
    link: &'a str,
    minutes: i64,
    when: String,
    device: &'a str,
    place: &'a str,
}

#[derive(Template)]
#[template(path = "mail/password_reset.html")]
struct ResetHtml<'a> {
    site: &'a Branding,
    subject: &'a str,
    greeting: &'a str,
    link: &'a str,
    minutes: i64,
    when: String,
    device: &'a str,
    place: &'a str,
}

#[derive(Template)]
#[template(path = "mail/password_reset_done.txt")]
struct ResetDoneText<'a> {
    site: &'a Branding,
    greeting: &'a str,
    when: String,
    device: &'a str,
    place: &'a str,
    recover_link: &'a str,
}

#[derive(Template)]
#[template(path = "mail/password_reset_done.html")]
struct ResetDoneHtml<'a> {
    site: &'a Branding,
    subject: &'a str,
    greeting: &'a str,
    when: String,
    device: &'a str,
    place: &'a str,
    recover_link: &'a str,
}

#[derive(Template)]
#[template(path = "mail/security_notice.txt")]
struct NoticeText<'a> {
    site: &'a Branding,
    greeting: &'a str,
    headline: &'a str,
    what: &'a str,
    when: String,
    device: &'a str,
    place: &'a str,
    recover_link: &'a str,
}

#[derive(Template)]
#[template(path = "mail/security_notice.html")]
struct NoticeHtml<'a> {
    site: &'a Branding,
    subject: &'a str,
    greeting: &'a str,
    headline: &'a str,
    what: &'a str,
    when: String,
    device: &'a str,
    place: &'a str,
    recover_link: &'a str,
}

#[derive(Template)]
#[template(path = "mail/email_confirm.txt")]
struct ConfirmText<'a> {
    site: &'a Branding,
    greeting: &'a str,
    link: &'a str,
    hours: i64,
    email: &'a str,
    change: bool,
}

#[derive(Template)]
#[template(path = "mail/email_confirm.html")]
struct ConfirmHtml<'a> {
    site: &'a Branding,
    subject: &'a str,
    greeting: &'a str,
    link: &'a str,
    hours: i64,
    email: &'a str,
    change: bool,
}

#[derive(Template)]
#[template(path = "mail/email_undo.txt")]
struct UndoText<'a> {
    site: &'a Branding,
    greeting: &'a str,
    link: &'a str,
    days: i64,
    new_email: &'a str,
    when: String,
    device: &'a str,
    place: &'a str,
}

#[derive(Template)]
#[template(path = "mail/email_undo.html")]
struct UndoHtml<'a> {
    site: &'a Branding,
    subject: &'a str,
    greeting: &'a str,
    link: &'a str,
    days: i64,
    new_email: &'a str,
    when: String,
    device: &'a str,
    place: &'a str,
}

/// The subject and first line of a notice of `kind`.
fn notice_heading(kind: SecurityEventKind, detail: &str, site: &Branding) -> (String, String) {
    use SecurityEventKind as K;
    let (subject, headline) = match kind {
        K::Login if detail.split_whitespace().any(|m| m == "rec") => (
            "um código de recuperação foi usado",
            "Um dos seus códigos de recuperação foi usado para entrar na sua conta. Cada código vale uma vez.",
        ),
        K::Login => ("entrada em um dispositivo novo", "Houve uma entrada na sua conta de um navegador ou rede que não estava entre as suas entradas recentes."),
        K::EmailChangeUndone => (
            "a troca de e-mail foi desfeita",
            "A troca do e-mail da sua conta foi desfeita pelo link enviado a este endereço, e todas as sessões foram encerradas.",
        ),
        K::ProviderLinked => (
            "sua conta foi vinculada a um provedor de identidade",
            "Sua conta passou a aceitar a entrada por um provedor de identidade externo (como o gov.br).",
        ),
        K::ProviderUnlinked => (
            "um vínculo da sua conta foi desfeito",
            "Sua conta deixou de aceitar a entrada por um provedor de identidade externo.",
        ),
        K::SecondFactorLocked => (
            "códigos errados na verificação em duas etapas",
            "A senha da sua conta foi usada com códigos errados do segundo fator, tantas vezes que a verificação em duas etapas ficou bloqueada por alguns minutos. Se não foi você, troque a sua senha agora.",
        ),
        K::AppPasswordCreated => (
            "uma senha de aplicativo foi criada",
            "Foi criada uma senha de aplicativo na sua conta. Com ela, um programa (como um cliente do SUAP) entra na sua conta sem o código da verificação em duas etapas. Se não foi você, revogue-a na página de segurança da conta e troque a sua senha agora.",
        ),
        K::AppPasswordRevoked => (
            "uma senha de aplicativo foi revogada",
            "Uma senha de aplicativo da sua conta foi revogada: o programa que a usava não entra mais com ela.",
        ),
        K::AccountDeactivated => ("a conta foi desativada", "A sua conta foi desativada pela equipe do serviço e todas as sessões foram encerradas."),
        _ => ("alteração na sua conta", "Houve uma alteração na segurança da sua conta."),
    };
    (format!("Aviso de segurança do {}: {subject}", site.service_name), headline.to_owned())
}

/// The service's mails, rendered with its templates in the institution's
/// identity (its service name, name and colour; no logo: a mail carries
/// no remote image).
#[derive(Debug, Clone, Default)]
pub struct MailTemplates {
    branding: Arc<Branding>,
}

impl MailTemplates {
    /// The mails of the institution `branding` describes.
    pub fn new(branding: Arc<Branding>) -> Self {
        Self { branding }
    }
}

/// A mail's first line: "Olá, Ana." by the first name of a plain name,
/// "Olá," otherwise (a name that looks like a link, an address or
/// markup is never written into a mail: [`greeting_name`]).
fn greeting_line(name: &str) -> String {
    match greeting_name(name) {
        Some(first) => format!("Olá, {first}."),
        None => "Olá,".to_owned(),
    }
}

impl MailRenderer for MailTemplates {
    fn render(&self, to: &str, content: &MailContent) -> Result<OutgoingMail, String> {
        let site = &*self.branding;
        let (kind, subject, text, html) = match content {
            MailContent::PasswordReset { name, link, minutes, at, device, place } => {
                let subject = format!("Redefinição de senha do {}", site.service_name);
                let greeting = &greeting_line(name);
                let when = brasilia_time(*at);
                let text =
                    ResetText { site, greeting, link, minutes: *minutes, when: when.clone(), device, place }.render();
                let html =
                    ResetHtml { site, subject: &subject, greeting, link, minutes: *minutes, when, device, place }
                        .render();
                (MailKind::PasswordReset, subject, text, html)
            }
            MailContent::PasswordResetDone { name, at, device, place, recover_link } => {
                let subject = format!("Sua senha do {} foi redefinida", site.service_name);
                let greeting = &greeting_line(name);
                let when = brasilia_time(*at);
                let text = ResetDoneText { site, greeting, when: when.clone(), device, place, recover_link }.render();
                let html =
                    ResetDoneHtml { site, subject: &subject, greeting, when, device, place, recover_link }.render();
                (MailKind::PasswordResetDone, subject, text, html)
            }
            MailContent::EmailConfirm { name, link, hours, email, change } => {
                let subject = match change {
                    true => format!("Confirme o seu novo e-mail no {}", site.service_name),
                    false => format!("Confirme o seu e-mail no {}", site.service_name),
                };
                let (greeting, hours, change) = (&greeting_line(name), *hours, *change);
                let text = ConfirmText { site, greeting, link, hours, email, change }.render();
                let html = ConfirmHtml { site, subject: &subject, greeting, link, hours, email, change }.render();
                (MailKind::EmailConfirm, subject, text, html)
            }
            MailContent::EmailUndo { name, link, days, new_email, at, device, place } => {
                let subject = format!("Aviso de segurança do {}: o e-mail da conta foi alterado", site.service_name);
                let (greeting, days, when) = (&greeting_line(name), *days, brasilia_time(*at));
                let text =
                    UndoText { site, greeting, link, days, new_email, when: when.clone(), device, place }.render();
                let html =
                    UndoHtml { site, subject: &subject, greeting, link, days, new_email, when, device, place }.render();
                (MailKind::EmailUndo, subject, text, html)
            }
            MailContent::SecurityNotice { name, kind, detail, at, device, place, recover_link } => {
                let (subject, headline) = notice_heading(*kind, detail, site);
                let what = kind_words(*kind, detail);
                let greeting = &greeting_line(name);
                let when = brasilia_time(*at);
                let text = NoticeText {
                    site,
                    greeting,
                    headline: &headline,
                    what: &what,
                    when: when.clone(),
                    device,
                    place,
                    recover_link,
                }
                .render();
                let html = NoticeHtml {
                    site,
                    subject: &subject,
                    greeting,
                    headline: &headline,
                    what: &what,
                    when,
                    device,
                    place,
                    recover_link,
                }
                .render();
                (MailKind::SecurityNotice, subject, text, html)
            }
        };
        let text = text.map_err(|e| e.to_string())?;
        let html = html.map_err(|e| e.to_string())?;
        Ok(OutgoingMail { to: Redacted(to.to_owned()), subject, text: Redacted(text), html: Redacted(html), kind })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn templates() -> MailTemplates {
        MailTemplates::default()
    }

    #[test]
    fn a_reset_mail_carries_the_link_in_both_parts_and_no_remote_content() {
        let content = MailContent::PasswordReset {
            name: "Ana Souza".into(),
            link: "https://id.example.gov.br/conta/recuperar/abc_DEF-123/".into(),
            minutes: 30,
            at: 1_800_000_000,
            device: "Firefox no Linux".into(),
            place: "203.0.113.0/24".into(),
        };
        let mail = templates().render("ana@example.org", &content).expect("rendered");
        assert_eq!(mail.kind, MailKind::PasswordReset);
        assert_eq!(mail.to.as_str(), "ana@example.org");
        assert!(mail.subject.contains("Redefinição de senha"));
        for part in [mail.text.as_str(), mail.html.as_str()] {
            assert!(part.contains("https://id.example.gov.br/conta/recuperar/abc_DEF-123/"), "{part}");
            assert!(part.contains("30 minutos"));
            assert!(part.contains("Firefox no Linux") && part.contains("203.0.113.0/24"));
            assert!(part.contains("horário de Brasília"));
            assert!(part.contains("Não foi você?"));
        }
        assert!(mail.text.contains("Olá, Ana."), "the first name: {}", mail.text.as_str());
        assert!(mail.html.contains("Olá, Ana."));
        assert!(!mail.html.contains("<img") && !mail.html.contains("<script"), "no images, no scripts");
        assert!(!mail.html.contains("src="), "nothing loaded from anywhere");
        let hrefs: Vec<&str> = mail.html.split("href=\"").skip(1).filter_map(|s| s.split('"').next()).collect();
        assert_eq!(hrefs, ["https://id.example.gov.br/conta/recuperar/abc_DEF-123/"], "the one link");
    }

    #[test]
    fn a_name_is_escaped_in_html_and_an_empty_one_greets_neutrally() {
        let content = MailContent::PasswordReset {
            name: "<script>x</script>".into(),
            link: "https://id.example/l/".into(),
            minutes: 30,
            at: 1_800_000_000,
            device: String::new(),
            place: String::new(),
        };
        let mail = templates().render("a@example.org", &content).expect("rendered");
        assert!(!mail.html.contains("<script>"), "escaped");
        assert!(!mail.text.contains(", de ") && !mail.text.contains(", rede "), "no empty device or place");
        let empty = MailContent::PasswordReset {
            name: "  ".into(),
            link: "https://id.example/l/".into(),
            minutes: 30,
            at: 1_800_000_000,
            device: String::new(),
            place: String::new(),
        };
        let mail = templates().render("a@example.org", &empty).expect("rendered");
        assert!(mail.text.starts_with("Olá,\n"), "{}", mail.text.as_str());
        assert!(mail.html.contains("<p>Olá,</p>"));
    }

    #[test]
    fn a_name_that_looks_like_a_link_is_never_written_into_a_mail() {
        // Anyone can sign up with another person's address: the name is
        // text the attacker chose, in the service's own mail.
        for name in ["https://evil.example/login", "Ana www.evil.example", "evil.example/entrar Ana"] {
            let contents = [
                MailContent::EmailConfirm {
                    name: name.into(),
                    link: "https://id.example.gov.br/conta/email/confirmar/abc/".into(),
                    hours: 24,
                    email: "ana@example.org".into(),
                    change: false,
                },
                MailContent::PasswordReset {
                    name: name.into(),
                    link: "https://id.example.gov.br/conta/recuperar/abc/".into(),
                    minutes: 30,
                    at: 1_800_000_000,
                    device: String::new(),
                    place: String::new(),
                },
            ];
            for content in contents {
                let mail = templates().render("ana@example.org", &content).expect("rendered");
                for part in [mail.text.as_str(), mail.html.as_str()] {
                    assert!(!part.contains("evil"), "{name}: {part}");
                }
                assert!(mail.text.starts_with("Olá,\n"), "a neutral greeting: {}", mail.text.as_str());
            }
        }
    }

    #[test]
    fn a_security_notice_says_what_when_from_where_and_what_to_do() {
        let content = MailContent::security_notice(
            "Ana Souza",
            SecurityEventKind::PasskeyRemoved,
            "Notebook <b>",
            1_800_000_000,
            "Firefox no Linux",
            "203.0.113.0/24",
            "https://id.example.gov.br/conta/recuperar/".into(),
        );
        let mail = templates().render("ana@example.org", &content).expect("rendered");
        assert_eq!(mail.kind, MailKind::SecurityNotice);
        assert!(mail.subject.starts_with("Aviso de segurança do credencial"), "{}", mail.subject);
        for part in [mail.text.as_str(), mail.html.as_str()] {
            assert!(part.contains(&brasilia_time(1_800_000_000)) && part.contains("Firefox no Linux"), "{part}");
            assert!(part.contains("https://id.example.gov.br/conta/recuperar/"));
            assert!(part.contains("Não foi você?"));
        }
        assert!(mail.text.contains("Chave de acesso «Notebook <b>» removida"), "{}", mail.text.as_str());
        assert!(!mail.html.contains("<b>»"), "escaped in HTML");
        let login = MailContent::security_notice("Ana", SecurityEventKind::Login, "pwd", 1, "", "", "x".into());
        let mail = templates().render("ana@example.org", &login).expect("rendered");
        assert!(mail.subject.contains("dispositivo novo"), "{}", mail.subject);
    }

    #[test]
    fn the_reset_notice_says_when_from_where_and_what_to_do() {
        let content = MailContent::PasswordResetDone {
            name: "Bruno Lima".into(),
            at: 1_800_000_000,
            device: "Chrome no Android".into(),
            place: "198.51.100.0/24".into(),
            recover_link: "https://id.example.gov.br/conta/recuperar/".into(),
        };
        let mail = templates().render("bruno@example.org", &content).expect("rendered");
        assert_eq!(mail.kind, MailKind::PasswordResetDone);
        for part in [mail.text.as_str(), mail.html.as_str()] {
            assert!(part.contains(&brasilia_time(1_800_000_000)), "{part}");
            assert!(part.contains("Chrome no Android") && part.contains("198.51.100.0/24"));
            assert!(part.contains("https://id.example.gov.br/conta/recuperar/"));
            assert!(part.contains("sessões abertas foram encerradas"));
        }
    }

    #[test]
    fn a_change_link_goes_to_the_new_address_and_the_undo_mail_to_the_old_one() {
        let change = MailContent::EmailConfirm {
            name: "Bruno Lima".into(),
            link: "https://id.example.gov.br/conta/email/confirmar/abc/".into(),
            hours: 24,
            email: "bruno.novo@example.org".into(),
            change: true,
        };
        let mail = templates().render("bruno.novo@example.org", &change).expect("rendered");
        assert_eq!(mail.kind, MailKind::EmailConfirm);
        assert!(mail.subject.contains("novo e-mail"), "{}", mail.subject);
        for part in [mail.text.as_str(), mail.html.as_str()] {
            assert!(part.contains("trocar o e-mail da sua conta") && part.contains("bruno.novo@example.org"), "{part}");
            assert!(part.contains("só muda quando você confirmar") && part.contains("/conta/email/confirmar/abc/"));
        }
        let undo = MailContent::EmailUndo {
            name: "Bruno Lima".into(),
            link: "https://id.example.gov.br/conta/email/desfazer/xyz/".into(),
            days: 7,
            new_email: "bruno.novo@example.org".into(),
            at: 1_800_000_000,
            device: "Firefox no Linux".into(),
            place: "203.0.113.0/24".into(),
        };
        let mail = templates().render("bruno@example.org", &undo).expect("rendered");
        assert_eq!((mail.kind, mail.to.as_str()), (MailKind::EmailUndo, "bruno@example.org"));
        assert!(mail.subject.contains("e-mail da conta foi alterado"), "{}", mail.subject);
        for part in [mail.text.as_str(), mail.html.as_str()] {
            assert!(part.contains("foi trocado para") && part.contains("bruno.novo@example.org"), "{part}");
            assert!(part.contains("/conta/email/desfazer/xyz/") && part.contains("7 dias"));
            assert!(part.contains(&brasilia_time(1_800_000_000)) && part.contains("Firefox no Linux"));
            assert!(!part.contains("<img") && !part.contains("src="), "no remote content");
        }
    }
}
