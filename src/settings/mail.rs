//! Outbound mail: the SMTP relay, the sender, the outbox and the base URL
//! links in mails start with.

use std::path::PathBuf;

use credencial_domain::oauth::discovery::IssuerUrl;
use secrecy::SecretString;
use serde::{Deserialize, Serialize};

/// Outbound mail: the SMTP relay, the sender, the outbox and the base URL
/// links in mails start with.
#[derive(Clone, Deserialize, Serialize)]
#[serde(default)]
pub struct MailSettings {
    /// Outbound mail: the SMTP relay (`SERVICE_SMTP_URL`):
    /// `smtps://user:password@host:465` (TLS), `smtp://host:587?tls=required`
    /// (STARTTLS) or `smtp://localhost:25` (plain, to this machine only).
    /// Unset: `serve` sends no mail and offers no password recovery; the
    /// demo delivers every mail to its sandbox mailbox (`/_sandbox/email/`).
    #[serde(skip_serializing)]
    pub smtp_url: Option<SecretString>,
    /// The sender of every mail, `Nome <endereco@dominio>` (required with
    /// `smtp_url`).
    pub mail_from: Option<String>,
    /// How long one SMTP conversation may take, in seconds.
    pub smtp_timeout_secs: u64,
    /// PEM bundle trusted for the relay's certificate besides the
    /// operating system's store.
    pub smtp_ca_file: Option<PathBuf>,
    /// Days delivered mail stays in the outbox before the purge deletes it.
    pub mail_retention_days: i64,
    /// The public base URL that links in mails start with
    /// (`https://id.example.gov.br`), never taken from a request. Unset:
    /// `issuer_url`; the demo uses its own address.
    #[serde(with = "super::text::option")]
    pub public_url: Option<IssuerUrl>,
}

impl Default for MailSettings {
    fn default() -> Self {
        Self {
            smtp_url: None,
            mail_from: None,
            smtp_timeout_secs: credencial_adapters_upstream::DEFAULT_SMTP_TIMEOUT.as_secs(),
            smtp_ca_file: None,
            mail_retention_days: credencial_application::mail::DEFAULT_MAIL_RETENTION_DAYS,
            public_url: None,
        }
    }
}
