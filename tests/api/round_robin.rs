//! A round-robin TCP balancer on loopback: it accepts on one port and hands
//! each new connection to the next backend in turn, copying bytes both
//! ways, and remembers which backend got each connection. With a client
//! that opens a connection per request, consecutive requests alternate.

use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// A running balancer; dropping it stops accepting.
pub struct RoundRobin {
    address: String,
    served: Arc<Mutex<Vec<usize>>>,
    acceptor: JoinHandle<()>,
}

impl RoundRobin {
    /// Balances over `backends` (`host:port` each).
    pub async fn start(backends: Vec<String>) -> Self {
        assert!(!backends.is_empty(), "at least one backend");
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind balancer");
        let address = format!("http://{}", listener.local_addr().expect("address"));
        let served = Arc::new(Mutex::new(Vec::new()));
        let acceptor = tokio::spawn({
            let served = Arc::clone(&served);
            async move {
                while let Ok((mut inbound, _)) = listener.accept().await {
                    let index = {
                        let mut served = served.lock().expect("served");
                        let index = served.len() % backends.len();
                        served.push(index);
                        index
                    };
                    let backend = backends[index].clone();
                    tokio::spawn(async move {
                        if let Ok(mut outbound) = TcpStream::connect(&backend).await {
                            // Ends when either side closes.
                            let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                        }
                    });
                }
            }
        });
        Self { address, served, acceptor }
    }

    /// `http://127.0.0.1:<port>` of the balancer.
    pub fn uri(&self) -> &str {
        &self.address
    }

    /// The backend index each connection went to, in the order accepted.
    pub fn served(&self) -> Vec<usize> {
        self.served.lock().expect("served").clone()
    }
}

impl Drop for RoundRobin {
    fn drop(&mut self) {
        self.acceptor.abort();
    }
}

/// A client that opens a new connection for every request (no idle
/// connection is kept), so that a balancer sees each request apart, and
/// that never follows redirects.
pub fn one_connection_per_request_client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}
