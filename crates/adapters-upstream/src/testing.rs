//! Real servers on loopback for tests of upstream calls (this crate's and
//! the end-to-end suite's): a forward proxy that records the request lines
//! it is sent. Behind the `test-support` feature.

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// The JSON a fake registry answers: a tax-authority record.
pub const RECEITA_BODY: &str = r#"{"nome": "ANA BEATRIZ SOUZA", "dtNascimento": "1988-03-14", "sexo": "F", "mae": "MARIA DAS GRACAS SOUZA", "noMunicipio": "NATAL", "uf": "RN"}"#;

/// A `200` JSON answer with `body`, closing the connection.
pub fn ok_answer(body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// Reads a request head (up to the blank line, at most 64 KiB) and returns
/// its first line; `None` when the peer stops first.
pub async fn read_request_line<S: AsyncReadExt + Unpin>(stream: &mut S) -> Option<String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).await.ok()? == 0 || head.len() > 64 * 1024 {
            return None;
        }
        head.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    text.lines().next().map(str::to_owned)
}

/// A forward proxy on loopback that records every request line it gets
/// (`GET http://receita.test/cpf/… HTTP/1.1`) and answers each with a fixed
/// JSON body, as the upstream behind it would.
pub struct RecordingProxy {
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    seen: Arc<Mutex<Vec<String>>>,
}

impl RecordingProxy {
    /// Starts a proxy answering [`RECEITA_BODY`] on a free loopback port.
    pub async fn start() -> Self {
        Self::answering(RECEITA_BODY.to_owned()).await
    }

    /// Starts a proxy answering `body` on a free loopback port.
    pub async fn answering(body: String) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind the proxy");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let answer = Arc::new(ok_answer(&body));
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let (log, answer) = (Arc::clone(&log), Arc::clone(&answer));
                tokio::spawn(async move {
                    if let Some(line) = read_request_line(&mut socket).await {
                        log.lock().expect("lock").push(line);
                        let _ = socket.write_all(answer.as_bytes()).await;
                        let _ = socket.shutdown().await;
                    }
                });
            }
        });
        Self { url, seen }
    }

    /// The request lines received so far.
    pub fn seen(&self) -> Vec<String> {
        self.seen.lock().expect("lock").clone()
    }
}

/// One mail an [`SmtpSink`] received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedMail {
    /// The envelope sender (`MAIL FROM`).
    pub from: String,
    /// The envelope recipients (`RCPT TO`).
    pub to: Vec<String>,
    /// The message as sent after `DATA` (headers and body, CRLF lines,
    /// dot-stuffing undone).
    pub data: String,
    /// Whether the conversation had switched to TLS by then.
    pub tls: bool,
    /// The decoded `AUTH PLAIN` identity (`user`), if the client logged in.
    pub user: Option<String>,
}

/// A real SMTP server on loopback for tests: it speaks enough of RFC 5321
/// (EHLO, STARTTLS, AUTH PLAIN, MAIL, RCPT, DATA, RSET, NOOP, QUIT) for a
/// real client to deliver to it, and keeps what it receives. With a TLS
/// acceptor it offers STARTTLS and refuses mail until the client took it.
pub struct SmtpSink {
    address: std::net::SocketAddr,
    received: Arc<Mutex<Vec<ReceivedMail>>>,
    task: tokio::task::JoinHandle<()>,
}

/// How an [`SmtpSink`] behaves.
#[derive(Clone, Default)]
pub struct SmtpSinkOptions {
    /// Offer (and require) STARTTLS with this acceptor.
    pub tls: Option<tokio_rustls::TlsAcceptor>,
    /// Answer every `RCPT TO` with a permanent refusal (550).
    pub refuse_recipients: bool,
}

impl SmtpSink {
    /// A plain sink on a free loopback port.
    pub async fn start() -> Self {
        Self::start_with(SmtpSinkOptions::default(), "127.0.0.1:0").await
    }

    /// A sink with `options` listening on `address` (a port of an earlier
    /// sink, to stand for a relay that comes back).
    pub async fn start_with(options: SmtpSinkOptions, address: &str) -> Self {
        let listener = TcpListener::bind(address).await.expect("bind the SMTP sink");
        let address = listener.local_addr().expect("address");
        let received = Arc::new(Mutex::new(Vec::new()));
        let keep = Arc::clone(&received);
        let task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let (keep, options) = (Arc::clone(&keep), options.clone());
                tokio::spawn(async move {
                    let _ = smtp_conversation(socket, options, keep).await;
                });
            }
        });
        Self { address, received, task }
    }

    /// Where it listens.
    pub fn address(&self) -> std::net::SocketAddr {
        self.address
    }

    /// The mails received so far, in order.
    pub fn received(&self) -> Vec<ReceivedMail> {
        self.received.lock().expect("lock").clone()
    }

    /// Waits until at least `count` mails arrived (up to `patience`), and
    /// answers them.
    pub async fn wait_for(&self, count: usize, patience: std::time::Duration) -> Vec<ReceivedMail> {
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            let got = self.received();
            if got.len() >= count || tokio::time::Instant::now() >= deadline {
                return got;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// Stops listening (connections in progress are dropped with it).
    pub fn stop(self) {
        self.task.abort();
    }
}

/// One SMTP conversation on `socket`, switching to TLS when asked.
async fn smtp_conversation(
    socket: tokio::net::TcpStream,
    options: SmtpSinkOptions,
    keep: Arc<Mutex<Vec<ReceivedMail>>>,
) -> std::io::Result<()> {
    let mut plain = tokio::io::BufReader::new(socket);
    plain.get_mut().write_all(b"220 smtp-sink.test ESMTP\r\n").await?;
    match smtp_commands(&mut plain, &options, false, &keep).await? {
        Some(acceptor) => {
            let tls = acceptor.accept(plain.into_inner()).await?;
            let mut secure = tokio::io::BufReader::new(tls);
            smtp_commands(&mut secure, &options, true, &keep).await?;
            Ok(())
        }
        None => Ok(()),
    }
}

/// Answers commands until QUIT or the end (`None`), or until STARTTLS
/// (`Some(acceptor)`: the caller switches to TLS and calls again).
async fn smtp_commands<S>(
    stream: &mut tokio::io::BufReader<S>,
    options: &SmtpSinkOptions,
    tls: bool,
    keep: &Arc<Mutex<Vec<ReceivedMail>>>,
) -> std::io::Result<Option<tokio_rustls::TlsAcceptor>>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    use base64::Engine;
    use tokio::io::AsyncBufReadExt;
    let (mut from, mut to, mut user) = (String::new(), Vec::new(), None);
    let mut line = String::new();
    loop {
        line.clear();
        if stream.read_line(&mut line).await? == 0 {
            return Ok(None);
        }
        let command = line.trim_end().to_owned();
        let verb = command.split([' ', ':']).next().unwrap_or("").to_ascii_uppercase();
        let must_tls = options.tls.is_some() && !tls;
        let answer: String = match verb.as_str() {
            "EHLO" | "HELO" => {
                let mut lines = vec!["250-smtp-sink.test".to_owned(), "250-8BITMIME".to_owned()];
                if must_tls {
                    lines.push("250-STARTTLS".to_owned());
                }
                lines.push("250 AUTH PLAIN".to_owned());
                lines.join("\r\n")
            }
            "STARTTLS" if must_tls => {
                stream.get_mut().write_all(b"220 go ahead\r\n").await?;
                return Ok(options.tls.clone());
            }
            "AUTH" => {
                let encoded = command.split(' ').nth(2).unwrap_or("");
                let decoded = base64::engine::general_purpose::STANDARD.decode(encoded).unwrap_or_default();
                let parts: Vec<&[u8]> = decoded.split(|b| *b == 0).collect();
                user = parts.get(1).map(|u| String::from_utf8_lossy(u).into_owned());
                "235 2.7.0 accepted".to_owned()
            }
            "MAIL" if must_tls => "530 5.7.0 must issue STARTTLS first".to_owned(),
            "MAIL" => {
                from = command.split_once(':').map(|(_, a)| a.trim().to_owned()).unwrap_or_default();
                to.clear();
                "250 ok".to_owned()
            }
            "RCPT" if options.refuse_recipients => "550 5.1.1 mailbox unavailable".to_owned(),
            "RCPT" => {
                to.push(command.split_once(':').map(|(_, a)| a.trim().to_owned()).unwrap_or_default());
                "250 ok".to_owned()
            }
            "DATA" => {
                stream.get_mut().write_all(b"354 end with <CRLF>.<CRLF>\r\n").await?;
                let mut data = String::new();
                loop {
                    line.clear();
                    if stream.read_line(&mut line).await? == 0 {
                        return Ok(None);
                    }
                    if line == ".\r\n" {
                        break;
                    }
                    data.push_str(line.strip_prefix('.').filter(|_| line.starts_with("..")).unwrap_or(&line));
                }
                let mail = ReceivedMail { from: from.clone(), to: to.clone(), data, tls, user: user.clone() };
                keep.lock().expect("lock").push(mail);
                "250 2.0.0 queued".to_owned()
            }
            "RSET" | "NOOP" => "250 ok".to_owned(),
            "QUIT" => {
                stream.get_mut().write_all(b"221 bye\r\n").await?;
                return Ok(None);
            }
            _ => "502 5.5.2 command not recognised".to_owned(),
        };
        stream.get_mut().write_all(format!("{answer}\r\n").as_bytes()).await?;
    }
}
