//! The SMTP mailer against a real SMTP server on loopback: a whole
//! conversation in plain SMTP to this machine, and with STARTTLS to a
//! server whose certificate a CA made at test time signed; a relay that is
//! down, one that refuses the recipient, one whose certificate is not
//! trusted.

mod support;

use std::time::Duration;

use credencial_adapters_upstream::testing::{SmtpSink, SmtpSinkOptions};
use credencial_adapters_upstream::{SmtpMailer, SmtpSettings};
use credencial_domain::mail::{MailKind, OutgoingMail};
use credencial_domain::Redacted;
use credencial_ports::{MailError, Mailer};
use secrecy::SecretString;
use support::TestCa;

const PATIENCE: Duration = Duration::from_secs(10);

fn settings(url: String) -> SmtpSettings {
    SmtpSettings {
        url: SecretString::from(url),
        from: "Credencial <nao-responda@id.example.gov.br>".into(),
        timeout: Duration::from_secs(5),
        ca_file: None,
    }
}

fn mail() -> OutgoingMail {
    OutgoingMail {
        to: Redacted("ana.souza@example.org".into()),
        subject: "Redefinição de senha".into(),
        text: Redacted(
            "Olá, Ana.\r\nAbra https://id.example/conta/recuperar/abc/ para criar uma nova senha.\r\n".into(),
        ),
        html: Redacted(
            "<p>Olá, Ana.</p><p><a href=\"https://id.example/conta/recuperar/abc/\">Criar nova senha</a></p>".into(),
        ),
        kind: MailKind::PasswordReset,
    }
}

/// The value of header `name` in the message `data`.
fn header<'a>(data: &'a str, name: &str) -> Option<&'a str> {
    let prefix = format!("{name}: ");
    data.lines().take_while(|l| !l.is_empty()).find_map(|l| l.strip_prefix(&prefix))
}

#[tokio::test]
async fn a_mail_arrives_with_its_headers_and_both_parts() {
    let sink = SmtpSink::start().await;
    let mailer = SmtpMailer::new(&settings(format!("smtp://127.0.0.1:{}", sink.address().port()))).expect("mailer");
    mailer.send(&mail()).await.expect("delivered");
    let got = sink.wait_for(1, PATIENCE).await;
    assert_eq!(got.len(), 1);
    let m = &got[0];
    assert_eq!(m.from, "<nao-responda@id.example.gov.br>");
    assert_eq!(m.to, ["<ana.souza@example.org>"]);
    assert!(!m.tls && m.user.is_none());
    assert_eq!(header(&m.data, "From"), Some("Credencial <nao-responda@id.example.gov.br>"));
    assert_eq!(header(&m.data, "To"), Some("ana.souza@example.org"));
    let subject = header(&m.data, "Subject").expect("subject");
    assert!(subject.starts_with("=?utf-8?"), "a non-ASCII subject is encoded: {subject}");
    let id = header(&m.data, "Message-ID").expect("message id");
    assert!(id.starts_with('<') && id.ends_with("@id.example.gov.br>"), "{id}");
    assert!(header(&m.data, "Date").is_some());
    let content_type = header(&m.data, "Content-Type").expect("content type");
    assert!(content_type.starts_with("multipart/alternative"), "{content_type}");
    assert!(m.data.contains("Content-Type: text/plain; charset=utf-8"));
    assert!(m.data.contains("Content-Type: text/html; charset=utf-8"));
    assert!(!m.data.contains("<img"), "no remote images");

    // The pool reuses the connection for the next mail.
    mailer.send(&mail()).await.expect("delivered");
    assert_eq!(sink.wait_for(2, PATIENCE).await.len(), 2);
}

#[tokio::test]
async fn starttls_with_a_trusted_ca_and_a_login_delivers_over_tls() {
    let ca = TestCa::new();
    let options = SmtpSinkOptions { tls: Some(ca.acceptor.clone()), refuse_recipients: false };
    let sink = SmtpSink::start_with(options, "127.0.0.1:0").await;
    let port = sink.address().port();
    let mut trusted = settings(format!("smtp://relay%40inst:s3cr%3At@localhost:{port}?tls=required"));
    trusted.ca_file = Some(ca.ca_file.clone());
    let mailer = SmtpMailer::new(&trusted).expect("mailer");
    mailer.send(&mail()).await.expect("delivered");
    let got = sink.wait_for(1, PATIENCE).await;
    assert_eq!(got.len(), 1);
    assert!(got[0].tls, "sent after STARTTLS");
    assert_eq!(got[0].user.as_deref(), Some("relay@inst"), "the URL's user, decoded");

    // Without the CA the certificate is not trusted: nothing is sent, in
    // plain text or otherwise.
    let untrusted = SmtpMailer::new(&settings(format!("smtp://localhost:{port}?tls=required"))).expect("mailer");
    match untrusted.send(&mail()).await {
        Err(MailError::Unavailable(_)) => {}
        other => panic!("an untrusted certificate is a failed try: {other:?}"),
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(sink.received().len(), 1, "nothing more arrived");
    let _ = std::fs::remove_file(&ca.ca_file);
}

#[tokio::test]
async fn a_relay_that_is_down_is_unavailable_and_a_refused_recipient_is_refused() {
    let sink = SmtpSink::start().await;
    let address = sink.address();
    sink.stop();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mailer = SmtpMailer::new(&settings(format!("smtp://127.0.0.1:{}", address.port()))).expect("mailer");
    match mailer.send(&mail()).await {
        Err(MailError::Unavailable(_)) => {}
        other => panic!("a relay that is down is a temporary failure: {other:?}"),
    }
    let refusing = SmtpSink::start_with(SmtpSinkOptions { tls: None, refuse_recipients: true }, "127.0.0.1:0").await;
    let mailer = SmtpMailer::new(&settings(format!("smtp://127.0.0.1:{}", refusing.address().port()))).expect("m");
    match mailer.send(&mail()).await {
        Err(MailError::Refused(reason)) => assert!(reason.contains("550"), "{reason}"),
        other => panic!("a 550 is a permanent refusal: {other:?}"),
    }
    assert!(refusing.received().is_empty());
}

#[tokio::test]
async fn a_relay_that_accepts_and_then_says_nothing_is_cut_off_at_the_time_out() {
    // Accepts the connection, never greets.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("address").port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let mut stalled = settings(format!("smtp://127.0.0.1:{port}"));
    stalled.timeout = Duration::from_secs(1);
    let mailer = SmtpMailer::new(&stalled).expect("mailer");
    let outcome = tokio::time::timeout(Duration::from_secs(10), mailer.send(&mail())).await.expect("bounded");
    match outcome {
        Err(MailError::Unavailable(reason)) => assert!(reason.contains("1 s"), "{reason}"),
        other => panic!("a silent relay is a temporary failure: {other:?}"),
    }
}
