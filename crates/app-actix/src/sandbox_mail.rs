//! Demo only: the sandbox mailbox. Every mail the service sends is kept in
//! this process (the last [`SANDBOX_MAILBOX_SIZE`]) instead of leaving the
//! machine, and `GET /_sandbox/email/` shows them, links clickable, so
//! that the README's journeys (a password reset) need no mail server.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use askama::Template;
use async_trait::async_trait;
use credencial_application::password_reset::RECOVER_PATH;
use credencial_domain::local_time::brasilia_time;
use credencial_domain::mail::{MailKind, OutgoingMail};
use credencial_ports::{MailError, Mailer};

use crate::html::{self, Site, PROVIDER};
use crate::routes::{self, resource};

/// Where the mailbox is shown.
pub const SANDBOX_MAIL_PATH: &str = "/_sandbox/email/";

/// How many mails the sandbox mailbox keeps (the oldest go first).
pub const SANDBOX_MAILBOX_SIZE: usize = 50;

/// One mail the sandbox mailbox received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxMail {
    /// When it arrived (Unix seconds).
    pub at: i64,
    /// The recipient.
    pub to: String,
    /// The subject.
    pub subject: String,
    /// The text part.
    pub text: String,
    /// What it was about.
    pub kind: MailKind,
}

/// A mailbox in this process that takes every mail. Cloning shares it.
#[derive(Debug, Clone, Default)]
pub struct SandboxMailbox {
    mails: Arc<Mutex<VecDeque<SandboxMail>>>,
}

impl SandboxMailbox {
    /// An empty mailbox.
    pub fn new() -> Self {
        Self::default()
    }

    /// The mails received, newest first.
    pub fn mails(&self) -> Vec<SandboxMail> {
        let mails = self.mails.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        mails.iter().rev().cloned().collect()
    }
}

#[async_trait]
impl Mailer for SandboxMailbox {
    async fn send(&self, mail: &OutgoingMail) -> Result<(), MailError> {
        let at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        let received = SandboxMail {
            at,
            to: mail.to.to_string(),
            subject: mail.subject.clone(),
            text: mail.text.to_string(),
            kind: mail.kind,
        };
        let mut mails = self.mails.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if mails.len() == SANDBOX_MAILBOX_SIZE {
            mails.pop_front();
        }
        mails.push_back(received);
        Ok(())
    }
}

/// A piece of a mail's text: words, or a link.
#[derive(Debug, PartialEq, Eq)]
enum Part {
    Text(String),
    Link(String),
}

/// `text` cut into plain pieces and `http(s)://` links.
fn parts(text: &str) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut plain = String::new();
    for piece in text.split_inclusive(char::is_whitespace) {
        let word = piece.trim_end();
        if word.starts_with("https://") || word.starts_with("http://") {
            if !plain.is_empty() {
                parts.push(Part::Text(std::mem::take(&mut plain)));
            }
            parts.push(Part::Link(word.to_owned()));
            plain.push_str(&piece[word.len()..]);
        } else {
            plain.push_str(piece);
        }
    }
    if !plain.is_empty() {
        parts.push(Part::Text(plain));
    }
    parts
}

struct ShownMail {
    to: String,
    subject: String,
    when: String,
    parts: Vec<Part>,
}

#[derive(Template)]
#[template(path = "sandbox/email.html")]
struct MailboxPage {
    site: &'static Site,
    title: &'static str,
    size: usize,
    recover_path: &'static str,
    mails: Vec<ShownMail>,
}

/// `GET /_sandbox/email/`.
async fn mailbox(mailbox: web::Data<SandboxMailbox>) -> HttpResponse {
    let mails = mailbox
        .mails()
        .into_iter()
        .map(|m| ShownMail { parts: parts(&m.text), when: brasilia_time(m.at), to: m.to, subject: m.subject })
        .collect();
    let page = MailboxPage {
        site: &PROVIDER,
        title: "Caixa de e-mail da demonstração",
        size: SANDBOX_MAILBOX_SIZE,
        recover_path: RECOVER_PATH,
        mails,
    };
    html::html(html::response(StatusCode::OK), &page)
}

/// The mailbox's page over `mailbox`.
pub fn resource_for(mailbox: SandboxMailbox) -> actix_web::Resource {
    resource(SANDBOX_MAIL_PATH, "GET").app_data(web::Data::new(mailbox)).route(routes::get().to(self::mailbox))
}

#[cfg(test)]
mod tests {
    use super::*;
    use credencial_domain::Redacted;

    #[test]
    fn links_are_cut_out_of_the_text_with_the_spacing_kept() {
        let text = "Abra\nhttps://id.example/conta/recuperar/abc/\npara continuar.\n";
        assert_eq!(
            parts(text),
            [
                Part::Text("Abra\n".into()),
                Part::Link("https://id.example/conta/recuperar/abc/".into()),
                Part::Text("\npara continuar.\n".into()),
            ]
        );
        assert_eq!(parts("sem links"), [Part::Text("sem links".into())]);
    }

    #[tokio::test]
    async fn the_sandbox_mailbox_keeps_the_newest_mails_first_and_bounded() {
        let mailbox = SandboxMailbox::new();
        for i in 0..=SANDBOX_MAILBOX_SIZE {
            let mail = OutgoingMail {
                to: Redacted(format!("p{i}@example.org")),
                subject: format!("assunto {i}"),
                text: Redacted("texto".into()),
                html: Redacted("<p>texto</p>".into()),
                kind: MailKind::PasswordReset,
            };
            mailbox.send(&mail).await.expect("taken");
        }
        let mails = mailbox.mails();
        assert_eq!(mails.len(), SANDBOX_MAILBOX_SIZE);
        assert_eq!(mails[0].subject, format!("assunto {SANDBOX_MAILBOX_SIZE}"));
        assert_eq!(mails.last().expect("oldest").subject, "assunto 1", "the oldest went first");
    }
}
