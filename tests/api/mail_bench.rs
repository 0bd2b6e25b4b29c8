//! The outbox's measures (issue 24), run by `bench/mail.sh` (ignored in
//! the ordinary test run; nothing here asserts a time):
//! - throughput: `MAIL_BENCH_COUNT` mails (default 2,000) written to the
//!   outbox at once, delivered by the service's background sender to a
//!   real SMTP server on loopback: mails per second from the first to the
//!   last arrival;
//! - the wait after the relay returns: a mail written while the relay is
//!   down, the relay back after `MAIL_BENCH_DOWN_SECS` (default 40: the
//!   sender is in its every-30-seconds cycle by then), and the time from
//!   its return to the mail's arrival.

use std::time::{Duration, Instant};

use credencial_adapters_upstream::testing::{SmtpSink, SmtpSinkOptions};
use credencial_domain::mail::{MailKind, OutgoingMail};
use credencial_domain::Redacted;

use crate::helpers::{spawn_app_with, TestApp};

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

async fn app_mailing_to(sink: &SmtpSink) -> TestApp {
    let port = sink.address().port();
    spawn_app_with(|s| {
        s.mail.smtp_url = Some(format!("smtp://127.0.0.1:{port}").into());
        s.mail.mail_from = Some("Credencial <nao-responda@id.example.gov.br>".into());
        s.mail.public_url = Some(crate::helpers::issuer_url("https://id.example.gov.br"));
    })
    .await
}

fn mail(i: u64) -> OutgoingMail {
    OutgoingMail {
        to: Redacted(format!("pessoa{i}@example.gov.br")),
        subject: "Redefinição de senha do credencial".into(),
        text: Redacted(format!("Olá.\r\nAbra https://id.example.gov.br/conta/recuperar/{i:043}/ para continuar.\r\n")),
        html: Redacted(format!(
            "<p>Olá.</p><p><a href=\"https://id.example.gov.br/conta/recuperar/{i:043}/\">link</a></p>"
        )),
        kind: MailKind::PasswordReset,
    }
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs() as i64
}

#[tokio::test]
#[ignore = "a benchmark: bash bench/mail.sh"]
async fn mail_throughput_to_a_loopback_relay() {
    let count = env_number("MAIL_BENCH_COUNT", 2_000);
    let sink = SmtpSink::start().await;
    let app = app_mailing_to(&sink).await;
    let store = app.db.storage().mail;
    let written = Instant::now();
    for i in 0..count {
        store.enqueue(&mail(i), now()).await.expect("written");
    }
    let writing = written.elapsed();
    let started = Instant::now();
    let got = sink.wait_for(count as usize, Duration::from_secs(600)).await;
    let took = started.elapsed();
    assert_eq!(got.len() as u64, count, "every mail arrived");
    let engine = format!("{:?}", crate::database::engine());
    println!(
        "mail_bench engine={engine} mails={count} write_ms={} deliver_ms={} mails_per_sec={:.0}",
        writing.as_millis(),
        took.as_millis(),
        count as f64 / took.as_secs_f64()
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(sink.received().len() as u64, count, "none twice");
}

#[tokio::test]
#[ignore = "a benchmark: bash bench/mail.sh"]
async fn mail_wait_after_the_relay_returns() {
    let down = env_number("MAIL_BENCH_DOWN_SECS", 40);
    let sink = SmtpSink::start().await;
    let address = sink.address();
    let app = app_mailing_to(&sink).await;
    sink.stop();
    app.db.storage().mail.enqueue(&mail(1), now()).await.expect("written");
    tokio::time::sleep(Duration::from_secs(down)).await;
    let back = Instant::now();
    let sink = SmtpSink::start_with(SmtpSinkOptions::default(), &address.to_string()).await;
    let got = sink.wait_for(1, Duration::from_secs(120)).await;
    assert_eq!(got.len(), 1);
    let engine = format!("{:?}", crate::database::engine());
    println!("mail_bench engine={engine} relay_down_s={down} waited_after_return_ms={}", back.elapsed().as_millis());
}
