//! The address a request came from, for the brute-force limits.
//!
//! By default it is the TCP peer: behind a reverse proxy that is the proxy,
//! so every client shares one address limit (the username and client limits
//! still hold). A deployment whose proxy writes the client's address into a
//! header names it with [`ClientAddressSource::header`]; the *last* value
//! of the *last* such header is used — the one the proxy itself added, after
//! anything the client sent (`X-Forwarded-For` appends, `X-Real-IP`
//! replaces). That is only safe when clients cannot reach the service
//! without passing the proxy. A request without a usable value falls back
//! to the peer.

use std::net::{IpAddr, SocketAddr};

use actix_web::http::header::HeaderName;
use actix_web::{web, HttpRequest};
use credencial_domain::throttle::ClientAddress;

/// Where the client address is read from (application data; without it,
/// the TCP peer).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientAddressSource {
    /// A header set by the trusted reverse proxy (`X-Forwarded-For`,
    /// `X-Real-IP`); `None`: the TCP peer.
    pub header: Option<HeaderName>,
}

impl ClientAddressSource {
    /// The client address of `req`.
    pub fn of(&self, req: &HttpRequest) -> Option<ClientAddress> {
        let from_header = self.header.as_ref().and_then(|name| {
            // Bytes, not text: a client can put bytes that are not visible
            // ASCII in front of what the proxy appends, and the whole value
            // must not become unreadable for it.
            let last = req.headers().get_all(name).last()?.as_bytes();
            let value = last.rsplit(|&b| b == b',').next()?;
            parse_address(std::str::from_utf8(value).ok()?.trim())
        });
        from_header.or_else(|| req.peer_addr().map(|peer| peer.ip())).map(ClientAddress::of)
    }
}

/// The client address of `req` as the application's [`ClientAddressSource`]
/// says (the TCP peer when none is registered).
pub fn client_address(req: &HttpRequest) -> Option<ClientAddress> {
    match req.app_data::<web::Data<ClientAddressSource>>() {
        Some(source) => source.of(req),
        None => ClientAddressSource::default().of(req),
    }
}

/// `192.0.2.1`, `2001:db8::1`, `[2001:db8::1]`, or either with a port.
fn parse_address(text: &str) -> Option<IpAddr> {
    text.parse::<IpAddr>()
        .ok()
        .or_else(|| text.parse::<SocketAddr>().ok().map(|s| s.ip()))
        .or_else(|| text.strip_prefix('[')?.strip_suffix(']')?.parse().ok())
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;

    fn peer() -> SocketAddr {
        "10.0.0.2:41000".parse().expect("peer")
    }

    fn source(header: &str) -> ClientAddressSource {
        ClientAddressSource { header: Some(HeaderName::from_bytes(header.as_bytes()).expect("header name")) }
    }

    fn address(text: &str) -> Option<ClientAddress> {
        Some(ClientAddress::of(text.parse().expect("ip")))
    }

    #[test]
    fn without_a_header_setting_the_peer_counts_whatever_the_headers_say() {
        let req = TestRequest::default()
            .peer_addr(peer())
            .insert_header(("x-forwarded-for", "198.51.100.9"))
            .to_http_request();
        assert_eq!(ClientAddressSource::default().of(&req), address("10.0.0.2"));
        assert_eq!(client_address(&req), address("10.0.0.2"));
    }

    #[test]
    fn the_proxys_value_is_the_last_one_so_a_forged_first_value_is_ignored() {
        let req = TestRequest::default()
            .peer_addr(peer())
            .insert_header(("x-forwarded-for", "203.0.113.66, 198.51.100.9"))
            .to_http_request();
        assert_eq!(source("X-Forwarded-For").of(&req), address("198.51.100.9"));
        let req = TestRequest::default()
            .peer_addr(peer())
            .append_header(("x-forwarded-for", "203.0.113.66"))
            .append_header(("x-forwarded-for", "198.51.100.9"))
            .to_http_request();
        assert_eq!(source("x-forwarded-for").of(&req), address("198.51.100.9"));
    }

    #[test]
    fn bytes_a_client_puts_before_the_proxys_value_do_not_hide_it() {
        let forged = actix_web::http::header::HeaderValue::from_bytes(b"\xff\xfe, 198.51.100.9").expect("obs-text");
        let req = TestRequest::default().peer_addr(peer()).insert_header(("x-forwarded-for", forged)).to_http_request();
        assert_eq!(source("X-Forwarded-For").of(&req), address("198.51.100.9"));
    }

    #[test]
    fn addresses_with_ports_and_brackets_are_read() {
        for (value, expected) in [
            ("198.51.100.9:5000", "198.51.100.9"),
            ("[2001:db8::7]", "2001:db8::7"),
            ("[2001:db8::7]:443", "2001:db8::7"),
            (" 2001:db8::7 ", "2001:db8::7"),
        ] {
            let req = TestRequest::default().peer_addr(peer()).insert_header(("x-real-ip", value)).to_http_request();
            assert_eq!(source("X-Real-IP").of(&req), address(expected), "{value}");
        }
    }

    #[test]
    fn a_missing_or_unusable_header_falls_back_to_the_peer() {
        let req = TestRequest::default().peer_addr(peer()).to_http_request();
        assert_eq!(source("X-Real-IP").of(&req), address("10.0.0.2"));
        let req = TestRequest::default().peer_addr(peer()).insert_header(("x-real-ip", "unknown")).to_http_request();
        assert_eq!(source("X-Real-IP").of(&req), address("10.0.0.2"));
        let req = TestRequest::default().insert_header(("x-real-ip", "nonsense")).to_http_request();
        assert_eq!(source("X-Real-IP").of(&req), None);
    }
}
