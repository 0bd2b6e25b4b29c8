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
