//! The SMTP [`Mailer`]: a relay through `lettre` (implicit TLS, STARTTLS,
//! or plain SMTP to a relay on this machine).

use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use credencial_domain::mail::OutgoingMail;
use credencial_domain::oauth::is_loopback_host;
use credencial_ports::{MailError, Mailer};
use lettre::message::{header::ContentType, Mailbox, MultiPart, SinglePart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
use lettre::transport::smtp::extension::ClientId;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use rand::RngCore;
use secrecy::{ExposeSecret, SecretString};
use url::{Host, Url};

/// How long one SMTP conversation may take, unless configured.
pub const DEFAULT_SMTP_TIMEOUT: Duration = Duration::from_secs(20);

/// How a relay is reached, from its URL's scheme and `tls` parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmtpSecurity {
    /// `smtps://`: TLS from the first byte (port 465 by default).
    ImplicitTls,
    /// `smtp://…?tls=required`: STARTTLS, and the mail is not sent unless
    /// it succeeds (port 587 by default).
    StartTls,
    /// `smtp://` to a relay on this machine (a loopback address or
    /// `localhost`) only: no TLS (port 25 by default).
    Plain,
}

/// The relay's settings: `smtp_url` (with the optional user and password),
/// `mail_from`, the time-out and the extra trusted CA bundle.
#[derive(Clone)]
pub struct SmtpSettings {
    /// `smtps://[user:password@]host[:port]`, `smtp://host[:port]?tls=required`
    /// or `smtp://localhost[:port]`. Its password is never logged.
    pub url: SecretString,
    /// The sender: `Nome <endereco@dominio>` or a bare address.
    pub from: String,
    /// How long one SMTP conversation may take.
    pub timeout: Duration,
    /// A PEM bundle trusted besides the operating system's store.
    pub ca_file: Option<PathBuf>,
}

impl std::fmt::Debug for SmtpSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmtpSettings").field("from", &self.from).field("timeout", &self.timeout).finish_non_exhaustive()
    }
}

/// A relay setting that cannot be used; the text names what is wrong
/// (never the password).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidSmtpSettings(pub String);

/// Delivers mail to an SMTP relay. Cloning shares its connection pool.
#[derive(Clone)]
pub struct SmtpMailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    /// The domain of message ids (the sender's).
    domain: String,
    security: SmtpSecurity,
    /// How long one conversation may take.
    timeout: Duration,
}

impl std::fmt::Debug for SmtpMailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmtpMailer").field("security", &self.security).finish_non_exhaustive()
    }
}

impl SmtpMailer {
    /// The mailer `settings` describe. Errors: a URL that is not an SMTP
    /// one, plain SMTP to another machine, an unreadable CA bundle, a
    /// sender that is not an address.
    pub fn new(settings: &SmtpSettings) -> Result<Self, InvalidSmtpSettings> {
        let bad = |what: &str| InvalidSmtpSettings(what.to_owned());
        let url = Url::parse(settings.url.expose_secret()).map_err(|e| bad(&format!("smtp_url is not a URL: {e}")))?;
        let host = url.host_str().filter(|h| !h.is_empty()).ok_or_else(|| bad("smtp_url has no host"))?;
        let tls_param = url.query_pairs().find(|(k, _)| k == "tls").map(|(_, v)| v.into_owned());
        let security = match (url.scheme(), tls_param.as_deref()) {
            ("smtps", None) => SmtpSecurity::ImplicitTls,
            ("smtp", Some("required")) => SmtpSecurity::StartTls,
            ("smtp", None) if is_loopback(&url) => SmtpSecurity::Plain,
            ("smtp", None) => {
                return Err(bad(
                    "smtp_url: plain SMTP is allowed only to this machine (localhost); use smtps:// or add \
                     ?tls=required for STARTTLS",
                ))
            }
            ("smtp" | "smtps", Some(other)) => {
                return Err(bad(&format!("smtp_url: tls={other} is not supported (only tls=required on smtp://)")))
            }
            (other, _) => return Err(bad(&format!("smtp_url: the scheme {other}:// is not smtp:// or smtps://"))),
        };
        let from: Mailbox =
            settings.from.parse().map_err(|e| bad(&format!("mail_from is not an e-mail address: {e}")))?;
        let domain = from.email.domain().to_owned();
        let host = host.trim_start_matches('[').trim_end_matches(']').to_owned();
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(host.clone())
            .timeout(Some(settings.timeout))
            .hello_name(ClientId::Domain(domain.clone()));
        let default_port = match security {
            SmtpSecurity::ImplicitTls => 465,
            SmtpSecurity::StartTls => 587,
            SmtpSecurity::Plain => 25,
        };
        builder = builder.port(url.port().unwrap_or(default_port));
        if security != SmtpSecurity::Plain {
            let mut tls = TlsParameters::builder(host);
            for cert in extra_roots(settings.ca_file.as_ref())? {
                tls = tls.add_root_certificate(cert);
            }
            let tls = tls.build_rustls().map_err(|e| bad(&format!("smtp_url: TLS cannot be set up: {e}")))?;
            builder = builder.tls(match security {
                SmtpSecurity::ImplicitTls => Tls::Wrapper(tls),
                _ => Tls::Required(tls),
            });
        }
        if !url.username().is_empty() {
            let user = percent_decoded(url.username());
            let password = percent_decoded(url.password().unwrap_or(""));
            builder = builder.credentials(Credentials::new(user, password));
        }
        Ok(Self { transport: builder.build(), from, domain, security, timeout: settings.timeout })
    }

    /// How this mailer reaches its relay.
    pub fn security(&self) -> SmtpSecurity {
        self.security
    }

    /// `mail` as a MIME message from the configured sender: a
    /// `multipart/alternative` of the text and the HTML part.
    fn message(&self, mail: &OutgoingMail) -> Result<Message, MailError> {
        let to: Mailbox =
            mail.to.parse().map_err(|e| MailError::Refused(format!("the recipient is not an address: {e}")))?;
        let mut id = [0u8; 16];
        rand::thread_rng().fill_bytes(&mut id);
        let id: String = id.iter().map(|b| format!("{b:02x}")).collect();
        Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(mail.subject.clone())
            .message_id(Some(format!("<{id}@{}>", self.domain)))
            .multipart(
                MultiPart::alternative()
                    .singlepart(SinglePart::builder().header(ContentType::TEXT_PLAIN).body(mail.text.to_string()))
                    .singlepart(SinglePart::builder().header(ContentType::TEXT_HTML).body(mail.html.to_string())),
            )
            .map_err(|e| MailError::Refused(format!("the mail cannot be built: {e}")))
    }
}

#[async_trait]
impl Mailer for SmtpMailer {
    async fn send(&self, mail: &OutgoingMail) -> Result<(), MailError> {
        let message = self.message(mail)?;
        // lettre's own time-out bounds the connect only: the whole
        // conversation (TLS, greeting, AUTH, DATA) is bounded here.
        match tokio::time::timeout(self.timeout, self.transport.send(message)).await {
            Err(_) => Err(MailError::Unavailable(format!("no answer within {} s", self.timeout.as_secs()))),
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) if e.is_permanent() => Err(MailError::Refused(e.to_string())),
            Ok(Err(e)) => Err(MailError::Unavailable(e.to_string())),
        }
    }
}

/// Whether `url` names this machine.
fn is_loopback(url: &Url) -> bool {
    url.host().is_some_and(|host| {
        is_loopback_host(&host)
            // `smtp:` is not a scheme the URL standard knows: an IPv4
            // address comes back as a domain.
            || matches!(host, Host::Domain(d) if d.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| ip.is_loopback()))
    })
}

/// A URL's user or password part as typed (`%40` back to `@`; a `+`
/// stays a `+`).
fn percent_decoded(part: &str) -> String {
    percent_encoding::percent_decode_str(part).decode_utf8_lossy().into_owned()
}

/// The certificates of the PEM bundle `file`, if any.
fn extra_roots(file: Option<&PathBuf>) -> Result<Vec<Certificate>, InvalidSmtpSettings> {
    let Some(file) = file else { return Ok(Vec::new()) };
    let text = std::fs::read_to_string(file)
        .map_err(|e| InvalidSmtpSettings(format!("ca_file {} cannot be read: {e}", file.display())))?;
    let mut roots = Vec::new();
    for block in text.split_inclusive("-----END CERTIFICATE-----") {
        let Some(start) = block.find("-----BEGIN CERTIFICATE-----") else { continue };
        let cert = Certificate::from_pem(&block.as_bytes()[start..])
            .map_err(|e| InvalidSmtpSettings(format!("ca_file {}: {e}", file.display())))?;
        roots.push(cert);
    }
    if roots.is_empty() {
        return Err(InvalidSmtpSettings(format!("ca_file {} holds no certificate", file.display())));
    }
    Ok(roots)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(url: &str) -> SmtpSettings {
        SmtpSettings {
            url: SecretString::from(url.to_owned()),
            from: "Credencial <nao-responda@id.example.gov.br>".into(),
            timeout: DEFAULT_SMTP_TIMEOUT,
            ca_file: None,
        }
    }

    #[test]
    fn the_scheme_and_tls_parameter_choose_how_the_relay_is_reached() {
        let security = |url: &str| SmtpMailer::new(&settings(url)).map(|m| m.security());
        assert_eq!(security("smtps://user:p%40ss@smtp.example.org"), Ok(SmtpSecurity::ImplicitTls));
        assert_eq!(security("smtp://smtp.example.org:587?tls=required"), Ok(SmtpSecurity::StartTls));
        assert_eq!(security("smtp://127.0.0.1:2525"), Ok(SmtpSecurity::Plain));
        assert_eq!(security("smtp://localhost"), Ok(SmtpSecurity::Plain));
        assert_eq!(security("smtp://[::1]:25"), Ok(SmtpSecurity::Plain));
    }

    #[test]
    fn plain_smtp_to_another_machine_and_odd_urls_are_refused_by_name() {
        let refusal = |url: &str| SmtpMailer::new(&settings(url)).expect_err("refused").0;
        assert!(refusal("smtp://smtp.example.org").contains("only to this machine"));
        assert!(refusal("smtp://smtp.example.org?tls=opportunistic").contains("tls=opportunistic"));
        assert!(refusal("http://smtp.example.org").contains("http://"));
        assert!(refusal("not a url").contains("not a URL"));
        let secret = refusal("smtps://user:hunter2@smtp.example.org?tls=never");
        assert!(!secret.contains("hunter2"), "{secret}");
        let mut bad_from = settings("smtps://smtp.example.org");
        bad_from.from = "not an address".into();
        assert!(SmtpMailer::new(&bad_from).expect_err("refused").0.contains("mail_from"));
        let mut missing_ca = settings("smtps://smtp.example.org");
        missing_ca.ca_file = Some("/nonexistent/ca.pem".into());
        assert!(SmtpMailer::new(&missing_ca).expect_err("refused").0.contains("/nonexistent/ca.pem"));
    }

    #[test]
    fn a_user_and_password_are_read_as_typed() {
        assert_eq!(percent_decoded("p%40ss%3Aword"), "p@ss:word");
        assert_eq!(percent_decoded("plain"), "plain");
        assert_eq!(percent_decoded("a+b&c"), "a+b&c", "as typed");
    }
}
