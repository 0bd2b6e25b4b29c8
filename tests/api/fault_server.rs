//! A raw HTTP/1.1 server on loopback that misbehaves on purpose: it stands
//! in for an upstream and answers each path prefix with a [`Fault`] the
//! test chooses (and may change while the app runs). wiremock makes
//! well-formed answers; this one also makes the faults wiremock cannot: an
//! accepted connection that never answers, an 11 MB body with or without
//! `Content-Length`, a body that drips one byte at a time, and a port that
//! refuses connections.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// Size of the oversized bodies: over 10 MB.
pub const HUGE_BODY_BYTES: usize = 11 * 1024 * 1024;
/// Pause between two bytes of a dripping body.
pub const DRIP_INTERVAL: Duration = Duration::from_millis(200);
/// Announced length of a dripping body: at one byte per interval it would
/// take minutes, far beyond any time-out under test.
const DRIP_BODY_BYTES: usize = 10_000;
/// Largest request head read.
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// What the server does with a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// A well-formed answer: the status and a JSON body.
    Answer(u16, String),
    /// Nothing listens on the port any more: connections are refused.
    Refused,
    /// The connection is accepted and the request read, but no byte of an
    /// answer is ever sent.
    Silent,
    /// `500 Internal Server Error` with an HTML body.
    ServerError,
    /// `200` with `Content-Type: application/json` and a body that is not
    /// JSON (cut off in the middle).
    Malformed,
    /// `200` with a valid JSON body over 10 MB, announced by
    /// `Content-Length`.
    HugeWithLength,
    /// `200` with a valid JSON body over 10 MB, chunked, without
    /// `Content-Length`.
    HugeChunked,
    /// `200` and the headers at once, then the body one byte every
    /// [`DRIP_INTERVAL`], never finishing within any time-out under test.
    Drip,
}

impl Fault {
    /// Every fault, with the short name the tests and docs use.
    pub fn all() -> [(&'static str, Fault); 7] {
        [
            ("refused", Fault::Refused),
            ("timeout", Fault::Silent),
            ("500", Fault::ServerError),
            ("malformed JSON", Fault::Malformed),
            ("11 MB with Content-Length", Fault::HugeWithLength),
            ("11 MB chunked", Fault::HugeChunked),
            ("slow drip", Fault::Drip),
        ]
    }

    /// Whether the caller gives up on its time-out (rather than on an
    /// answer it can judge at once).
    pub fn is_time_out(&self) -> bool {
        matches!(self, Fault::Silent | Fault::Drip)
    }
}

/// What the server does, per path prefix; the longest matching prefix
/// wins, and a path no prefix matches gets a JSON 404.
#[derive(Default)]
struct Routes(Vec<(String, Fault)>);

impl Routes {
    fn fault_for(&self, path: &str) -> Fault {
        self.0
            .iter()
            .filter(|(prefix, _)| path.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, fault)| fault.clone())
            .unwrap_or_else(|| Fault::Answer(404, r#"{"detail": "Not found."}"#.into()))
    }
}

/// A running fault server. Dropping it stops accepting (connections in
/// progress go on until their tasks end with the test's runtime).
pub struct FaultServer {
    address: SocketAddr,
    routes: Arc<Mutex<Routes>>,
    requests: Arc<Mutex<HashMap<String, usize>>>,
    open: Arc<AtomicUsize>,
    acceptor: Mutex<Option<JoinHandle<()>>>,
}

impl FaultServer {
    /// Starts a server on a free loopback port.
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind fault server");
        let address = listener.local_addr().expect("address");
        let routes = Arc::new(Mutex::new(Routes::default()));
        let requests = Arc::new(Mutex::new(HashMap::new()));
        let open = Arc::new(AtomicUsize::new(0));
        let acceptor = tokio::spawn({
            let (routes, requests, open) = (Arc::clone(&routes), Arc::clone(&requests), Arc::clone(&open));
            async move {
                while let Ok((stream, _)) = listener.accept().await {
                    let connection = Connection { routes: Arc::clone(&routes), requests: Arc::clone(&requests) };
                    let open = OpenGuard::new(Arc::clone(&open));
                    tokio::spawn(async move {
                        let _open = open;
                        connection.serve(stream).await;
                    });
                }
            }
        });
        Self { address, routes, requests, open, acceptor: Mutex::new(Some(acceptor)) }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn uri(&self) -> String {
        format!("http://{}", self.address)
    }

    /// From now on, answers paths below `prefix` with `fault`.
    /// [`Fault::Refused`] closes the listener for every path, for good.
    pub async fn set(&self, prefix: &str, fault: Fault) {
        if fault == Fault::Refused {
            self.close().await;
        }
        let mut routes = self.routes.lock().expect("routes");
        routes.0.retain(|(p, _)| p != prefix);
        routes.0.push((prefix.to_owned(), fault));
    }

    /// Stops listening; returns once the port refuses connections.
    async fn close(&self) {
        let acceptor = self.acceptor.lock().expect("acceptor").take();
        if let Some(acceptor) = acceptor {
            acceptor.abort();
            // Resolves once the task, and with it the listener, is dropped.
            let _ = acceptor.await;
        }
    }

    /// How many requests for exactly `path` arrived so far.
    pub fn requests(&self, path: &str) -> usize {
        self.requests.lock().expect("requests").get(path).copied().unwrap_or(0)
    }

    /// Connections accepted and not yet closed.
    pub fn open_connections(&self) -> usize {
        self.open.load(Ordering::SeqCst)
    }

    /// Waits (polling, at most `limit`) until `n` connections are open.
    pub async fn wait_for_open_connections(&self, n: usize, limit: Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        while self.open_connections() < n {
            assert!(tokio::time::Instant::now() < deadline, "{} of {n} connections open", self.open_connections());
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

impl Drop for FaultServer {
    fn drop(&mut self) {
        if let Some(acceptor) = self.acceptor.lock().expect("acceptor").take() {
            acceptor.abort();
        }
    }
}

/// Counts an open connection until dropped.
struct OpenGuard(Arc<AtomicUsize>);

impl OpenGuard {
    fn new(open: Arc<AtomicUsize>) -> Self {
        open.fetch_add(1, Ordering::SeqCst);
        Self(open)
    }
}

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// One accepted connection: one request, one (mis)behaviour, then close.
struct Connection {
    routes: Arc<Mutex<Routes>>,
    requests: Arc<Mutex<HashMap<String, usize>>>,
}

impl Connection {
    async fn serve(self, mut stream: TcpStream) {
        let Some(path) = read_request(&mut stream).await else {
            return;
        };
        *self.requests.lock().expect("requests").entry(path.clone()).or_default() += 1;
        let fault = self.routes.lock().expect("routes").fault_for(&path);
        // Write errors mean the client gave up: that ends the connection.
        let _ = respond(&mut stream, fault).await;
    }
}

/// Reads a request head and its `Content-Length` body; returns the path.
async fn read_request(stream: &mut TcpStream) -> Option<String> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buffer.len() > MAX_HEAD_BYTES {
            return None;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let path = head.split_whitespace().nth(1)?.split('?').next()?.to_owned();
    let length = head
        .lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = buffer.len() - head_end;
    while body < length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body += n;
    }
    Some(path)
}

fn head(status: &str, headers: &str) -> String {
    format!("HTTP/1.1 {status}\r\nConnection: close\r\n{headers}\r\n")
}

async fn respond(stream: &mut TcpStream, fault: Fault) -> std::io::Result<()> {
    match fault {
        Fault::Answer(status, body) => {
            let headers = format!("Content-Type: application/json\r\nContent-Length: {}\r\n", body.len());
            stream.write_all(head(&format!("{status} Answer"), &headers).as_bytes()).await?;
            stream.write_all(body.as_bytes()).await?;
            stream.shutdown().await
        }
        // Unreachable once the listener is closed; a connection accepted
        // just before is closed without an answer.
        Fault::Refused => Ok(()),
        Fault::Silent => {
            // Hold the connection, answering nothing, until the client goes.
            let mut sink = [0u8; 1024];
            while stream.read(&mut sink).await? > 0 {}
            Ok(())
        }
        Fault::ServerError => {
            let body = "<html><body><h1>Internal Server Error</h1></body></html>";
            let headers = format!("Content-Type: text/html\r\nContent-Length: {}\r\n", body.len());
            stream.write_all(head("500 Internal Server Error", &headers).as_bytes()).await?;
            stream.write_all(body.as_bytes()).await?;
            stream.shutdown().await
        }
        Fault::Malformed => {
            let body = r#"{"nome": "ANA DA SILVA", "dtNascimento": "1988-03-"#;
            let headers = format!("Content-Type: application/json\r\nContent-Length: {}\r\n", body.len());
            stream.write_all(head("200 OK", &headers).as_bytes()).await?;
            stream.write_all(body.as_bytes()).await?;
            stream.shutdown().await
        }
        Fault::HugeWithLength => {
            let headers = format!("Content-Type: application/json\r\nContent-Length: {HUGE_BODY_BYTES}\r\n");
            stream.write_all(head("200 OK", &headers).as_bytes()).await?;
            for piece in huge_body() {
                stream.write_all(&piece).await?;
            }
            stream.shutdown().await
        }
        Fault::HugeChunked => {
            let headers = "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n";
            stream.write_all(head("200 OK", headers).as_bytes()).await?;
            for piece in huge_body() {
                stream.write_all(format!("{:x}\r\n", piece.len()).as_bytes()).await?;
                stream.write_all(&piece).await?;
                stream.write_all(b"\r\n").await?;
            }
            stream.write_all(b"0\r\n\r\n").await?;
            stream.shutdown().await
        }
        Fault::Drip => {
            let headers = format!("Content-Type: application/json\r\nContent-Length: {DRIP_BODY_BYTES}\r\n");
            stream.write_all(head("200 OK", &headers).as_bytes()).await?;
            stream.flush().await?;
            for i in 0..DRIP_BODY_BYTES {
                stream.write_all(if i == 0 { b"[" } else { b" " }).await?;
                stream.flush().await?;
                tokio::time::sleep(DRIP_INTERVAL).await;
            }
            Ok(())
        }
    }
}

/// A valid JSON object of exactly [`HUGE_BODY_BYTES`], in pieces of at
/// most 64 KiB (none empty: an empty chunk would end a chunked body).
fn huge_body() -> impl Iterator<Item = Vec<u8>> {
    const PIECE: usize = 64 * 1024;
    let (open, close) = (br#"{"data": ""#.to_vec(), br#""}"#.to_vec());
    let filler = HUGE_BODY_BYTES - open.len() - close.len();
    let sizes = (0..filler.div_ceil(PIECE)).map(move |i| PIECE.min(filler - i * PIECE));
    std::iter::once(open).chain(sizes.map(|n| vec![b'a'; n])).chain(std::iter::once(close))
}
