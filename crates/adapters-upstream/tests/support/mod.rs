//! Real servers on loopback for the outbound tests: an HTTPS server with a
//! certificate of a CA made at test time, and a forward proxy that records
//! the request lines it is sent.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

use credencial_adapters_upstream::testing::{ok_answer, read_request_line};
#[allow(unused_imports)]
pub use credencial_adapters_upstream::testing::{RecordingProxy, RECEITA_BODY};

/// A test CA and an HTTPS server on 127.0.0.1 whose certificate it signed.
pub struct TlsUpstream {
    /// `https://127.0.0.1:<port>` (the certificate names 127.0.0.1 and localhost).
    pub url: String,
    /// The address it listens on.
    pub address: SocketAddr,
    /// The CA's certificate, as a PEM file.
    pub ca_file: PathBuf,
    /// Request lines received over TLS.
    seen: Arc<Mutex<Vec<String>>>,
}

impl TlsUpstream {
    /// Makes a CA and a server certificate, and serves [`RECEITA_BODY`] over TLS.
    pub async fn start() -> Self {
        let TestCa { acceptor, ca_file } = TestCa::new();
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                let log = Arc::clone(&log);
                tokio::spawn(async move {
                    // A client that does not trust the CA aborts the handshake here.
                    let Ok(mut tls) = acceptor.accept(socket).await else { return };
                    if let Some(line) = read_request_line(&mut tls).await {
                        log.lock().expect("lock").push(line);
                        let _ = tls.write_all(ok_answer(RECEITA_BODY).as_bytes()).await;
                        let _ = tls.shutdown().await;
                    }
                });
            }
        });
        Self { url: format!("https://127.0.0.1:{}", address.port()), address, ca_file, seen }
    }

    /// The request lines received over TLS so far.
    pub fn seen(&self) -> Vec<String> {
        self.seen.lock().expect("lock").clone()
    }
}

/// A CA made at test time (its certificate in a PEM file) and a TLS
/// acceptor for a server certificate it signed, naming 127.0.0.1 and
/// localhost.
pub struct TestCa {
    /// Accepts TLS with the server certificate.
    pub acceptor: tokio_rustls::TlsAcceptor,
    /// The CA's certificate, as a PEM file (the caller removes it).
    pub ca_file: PathBuf,
}

impl TestCa {
    /// A fresh CA and server certificate.
    pub fn new() -> Self {
        use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
        use tokio_rustls::rustls;

        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.distinguished_name.push(rcgen::DnType::CommonName, "credencial test CA");
        let ca_key = KeyPair::generate().expect("CA key");
        let ca_cert = ca_params.self_signed(&ca_key).expect("CA certificate");
        let issuer = Issuer::new(ca_params, ca_key);
        let leaf_key = KeyPair::generate().expect("server key");
        let leaf = CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
            .expect("server params")
            .signed_by(&leaf_key, &issuer)
            .expect("server certificate");

        let ca_file =
            std::env::temp_dir().join(format!("credencial-test-ca-{}-{}.pem", std::process::id(), rand_suffix()));
        std::fs::write(&ca_file, ca_cert.pem()).expect("write the CA file");

        let key = rustls::pki_types::PrivateKeyDer::try_from(leaf_key.serialize_der()).expect("key DER");
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .expect("protocols")
            .with_no_client_auth()
            .with_single_cert(vec![leaf.der().clone()], key)
            .expect("server config");
        Self { acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)), ca_file }
    }
}

impl Drop for TlsUpstream {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.ca_file);
    }
}

/// A number that differs between calls in one process.
fn rand_suffix() -> usize {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}
