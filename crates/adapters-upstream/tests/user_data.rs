//! `HttpUserDataSource` against real HTTP servers on loopback: `wiremock`,
//! and a hand-written HTTP/1.1 server where wiremock cannot shape the answer
//! (chunked or stalled bodies).

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use credencial_adapters_upstream::{http_client, BaseUrl, HttpUserDataSource};
use credencial_domain::UpstreamPath;
use credencial_ports::{UpstreamError, UserDataSource};
use serde_json::json;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const TOKEN: &str = "eyJhbGciOiJIUzI1NiJ9.eyJ1c2VyX2lkIjoxfQ.c2lnbmF0dXJl";

fn rh_eu() -> UpstreamPath {
    UpstreamPath::parse("/api/rh/eu/").expect("plain path")
}

fn source(base: &str, timeout: Duration) -> HttpUserDataSource {
    HttpUserDataSource::new(http_client().expect("client"), BaseUrl::parse(base).expect("base URL"), timeout)
}

/// An upstream answering every request with `response`.
async fn upstream(response: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET")).respond_with(response).mount(&server).await;
    server
}

async fn fetch_from(server: &MockServer) -> Result<serde_json::Value, UpstreamError> {
    source(&format!("{}/", server.uri()), Duration::from_secs(5)).fetch(&rh_eu(), TOKEN).await
}

fn assert_bad_response(result: Result<serde_json::Value, UpstreamError>, what: &str) {
    assert!(matches!(result, Err(UpstreamError::BadResponse(_))), "{what}: expected BadResponse, got {result:?}");
}

async fn request_count(server: &MockServer) -> usize {
    server.received_requests().await.expect("recording is on").len()
}

/// A one-shot HTTP/1.1 server on loopback: reads one request's head, then
/// lets `respond` write raw bytes. Returns the base URL.
fn raw_server(respond: impl FnOnce(&mut TcpStream) + Send + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        let Ok((mut stream, _)) = listener.accept() else { return };
        let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
        let mut line = String::new();
        while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
            line.clear();
        }
        respond(&mut stream);
    });
    format!("http://127.0.0.1:{port}/")
}

fn chunked_json(body: &[u8]) -> impl FnOnce(&mut TcpStream) + Send + 'static {
    let body = body.to_vec();
    move |stream| {
        let _ = stream.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
              Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        );
        for chunk in body.chunks(256) {
            let _ = write!(stream, "{:x}\r\n", chunk.len());
            let _ = stream.write_all(chunk);
            let _ = stream.write_all(b"\r\n");
        }
        let _ = stream.write_all(b"0\r\n\r\n");
        let _ = stream.flush();
    }
}

/// A JSON string literal of exactly `len` bytes.
fn json_of_len(len: usize) -> Vec<u8> {
    format!("\"{}\"", "x".repeat(len - 2)).into_bytes()
}

// ------------------------------------------------------------------ success

#[tokio::test]
async fn a_200_json_answer_is_returned_unchanged_from_below_the_base_path_with_the_bearer_token() {
    let server = MockServer::start().await;
    let body = json!({
        "identificacao": "1234567",
        "nome_usual": "Ana Conceição",
        "email": "ana@example.org",
        "campus": "CNAT",
        "tipo_usuario": "Servidor",
        "vinculo": {"setor": "DIGTI", "jornada": [40, null, 1.5, true]}
    });
    Mock::given(method("GET"))
        .and(path("/base/api/rh/eu/"))
        .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(&body))
        .expect(1)
        .mount(&server)
        .await;

    let got = source(&format!("{}/base/", server.uri()), Duration::from_secs(5))
        .fetch(&rh_eu(), TOKEN)
        .await
        .expect("user data");
    assert_eq!(got, body);

    let requests = server.received_requests().await.expect("recording is on");
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].url.path(), "/base/api/rh/eu/");
    assert_eq!(requests[0].url.query(), None);
    let auth: Vec<_> = requests[0].headers.get_all("authorization").iter().collect();
    assert_eq!(auth.len(), 1, "exactly one Authorization header");
    assert_eq!(auth[0].to_str().expect("ascii"), format!("Bearer {TOKEN}"));
}

#[tokio::test]
async fn a_base_url_without_trailing_slash_keeps_its_path_prefix() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/base/api/rh/eu/"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"ok": 1})))
        .mount(&server)
        .await;
    let got = source(&format!("{}/base", server.uri()), Duration::from_secs(5))
        .fetch(&rh_eu(), TOKEN)
        .await
        .expect("user data");
    assert_eq!(got, json!({"ok": 1}));
}

// ----------------------------------------------------------------- statuses

#[tokio::test]
async fn a_401_is_unauthorized() {
    let server = upstream(ResponseTemplate::new(401).set_body_json(json!({"detail": "x"}))).await;
    assert_eq!(fetch_from(&server).await, Err(UpstreamError::Unauthorized));
}

#[tokio::test]
async fn a_403_is_forbidden() {
    let server = upstream(ResponseTemplate::new(403).set_body_json(json!({"detail": "x"}))).await;
    assert_eq!(fetch_from(&server).await, Err(UpstreamError::Forbidden));
}

#[tokio::test]
async fn server_errors_are_bad_responses() {
    for status in [500, 502, 503] {
        let server = upstream(ResponseTemplate::new(status).set_body_json(json!({"a": 1}))).await;
        assert_bad_response(fetch_from(&server).await, &format!("status {status}"));
    }
}

#[tokio::test]
async fn a_404_is_a_bad_response() {
    let server = upstream(ResponseTemplate::new(404).set_body_json(json!({"detail": "nope"}))).await;
    assert_bad_response(fetch_from(&server).await, "status 404");
}

// -------------------------------------------------------------------- bodies

#[tokio::test]
async fn a_200_html_body_is_a_bad_response() {
    let server = upstream(
        ResponseTemplate::new(200).set_body_raw("<!doctype html><html><body>Login</body></html>", "text/html"),
    )
    .await;
    assert_bad_response(fetch_from(&server).await, "HTML body");
}

#[tokio::test]
async fn a_200_empty_body_is_a_bad_response() {
    let server = upstream(ResponseTemplate::new(200).set_body_raw("", "application/json")).await;
    assert_bad_response(fetch_from(&server).await, "empty body");
}

#[tokio::test]
async fn a_json_body_larger_than_the_cap_is_a_bad_response() {
    let big = json!({"blob": "x".repeat(4096)});
    let server = upstream(ResponseTemplate::new(200).set_body_json(&big)).await;
    let result = source(&format!("{}/", server.uri()), Duration::from_secs(5))
        .with_max_body_bytes(1024)
        .fetch(&rh_eu(), TOKEN)
        .await;
    assert_bad_response(result, "4 KiB body with a 1 KiB cap");
}

#[tokio::test]
async fn a_json_body_of_exactly_the_cap_is_accepted_and_one_byte_more_is_not() {
    for (len, accepted) in [(1024, true), (1025, false)] {
        let server = upstream(ResponseTemplate::new(200).set_body_raw(json_of_len(len), "application/json")).await;
        let result = source(&format!("{}/", server.uri()), Duration::from_secs(5))
            .with_max_body_bytes(1024)
            .fetch(&rh_eu(), TOKEN)
            .await;
        if accepted {
            assert_eq!(result, Ok(json!("x".repeat(len - 2))), "{len} bytes");
        } else {
            assert_bad_response(result, &format!("{len} bytes"));
        }
    }
}

#[tokio::test]
async fn a_chunked_body_without_length_is_capped_while_streaming() {
    // Control: the same server with a small body works.
    let small = serde_json::to_vec(&json!({"a": "b"})).expect("json");
    let base = raw_server(chunked_json(&small));
    let result = source(&base, Duration::from_secs(5)).with_max_body_bytes(1024).fetch(&rh_eu(), TOKEN).await;
    assert_eq!(result, Ok(json!({"a": "b"})));

    let base = raw_server(chunked_json(&json_of_len(4096)));
    let result = source(&base, Duration::from_secs(5)).with_max_body_bytes(1024).fetch(&rh_eu(), TOKEN).await;
    assert_bad_response(result, "4 KiB chunked body with a 1 KiB cap");
}

// ----------------------------------------------------------------- time-outs

#[tokio::test]
async fn a_slow_upstream_times_out_without_waiting_for_it() {
    let server =
        upstream(ResponseTemplate::new(200).set_body_json(json!({"late": true})).set_delay(Duration::from_secs(2)))
            .await;
    let adapter = source(&format!("{}/", server.uri()), Duration::from_millis(200));
    let started = Instant::now();
    let result = adapter.fetch(&rh_eu(), TOKEN).await;
    let elapsed = started.elapsed();
    assert_eq!(result, Err(UpstreamError::Timeout));
    assert!(elapsed < Duration::from_millis(1500), "took {elapsed:?}");
}

#[tokio::test]
async fn a_body_that_stalls_after_the_headers_times_out() {
    let base = raw_server(|stream| {
        let _ = stream.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
              Content-Length: 20\r\n\r\n{\"a\": ",
        );
        let _ = stream.flush();
        std::thread::sleep(Duration::from_secs(2));
    });
    let adapter = source(&base, Duration::from_millis(300));
    let started = Instant::now();
    let result = adapter.fetch(&rh_eu(), TOKEN).await;
    let elapsed = started.elapsed();
    assert_eq!(result, Err(UpstreamError::Timeout));
    assert!(elapsed < Duration::from_millis(1500), "took {elapsed:?}");
}

// ------------------------------------------------------------------ redirects

#[tokio::test]
async fn a_redirect_is_not_followed_and_the_token_never_reaches_the_other_host() {
    for status in [301, 302, 303, 307, 308] {
        let elsewhere = upstream(ResponseTemplate::new(200).set_body_json(json!({"stolen": true}))).await;
        let server = upstream(
            ResponseTemplate::new(status).insert_header("Location", format!("{}/api/rh/eu/", elsewhere.uri()).as_str()),
        )
        .await;

        assert_bad_response(fetch_from(&server).await, &format!("redirect {status}"));
        assert_eq!(request_count(&server).await, 1, "{status}");
        assert_eq!(request_count(&elsewhere).await, 0, "{status}: the other host got a request");
    }
}

// ---------------------------------------------------------------- transport

#[tokio::test]
async fn a_refused_connection_is_a_bad_response() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").port()
    };
    let result = source(&format!("http://127.0.0.1:{port}/"), Duration::from_secs(5)).fetch(&rh_eu(), TOKEN).await;
    assert_bad_response(result, "connection refused");
}

// ------------------------------------------------------------------ base URL

#[test]
fn joining_any_accepted_path_to_a_prefixed_base_keeps_scheme_host_and_port() {
    let paths = [
        "/",
        "/api/rh/eu/",
        "/api/rh/eu",
        "/a",
        "/api/v1/perfil.json",
        "/~user/x",
        "/a-b_c.d~e/",
        "/a//b",
        "/.../x",
        "/.hidden/",
        "/..a/b..",
    ];
    let bases = [
        ("https://suap.example:8443/base/", "https", "suap.example", Some(8443), "/base"),
        ("http://127.0.0.1:9000/base", "http", "127.0.0.1", Some(9000), "/base"),
        ("https://suap.example/a/b/", "https", "suap.example", None, "/a/b"),
        ("http://[::1]:8080/", "http", "[::1]", Some(8080), ""),
        ("http://suap.example", "http", "suap.example", None, ""),
    ];
    for (raw_base, scheme, host, port, prefix) in bases {
        let base = BaseUrl::parse(raw_base).expect("valid base");
        for raw_path in paths {
            let upstream_path = UpstreamPath::parse(raw_path).expect("accepted path");
            let url = base.join(&upstream_path);
            let what = format!("{raw_base} + {raw_path} = {url}");
            assert_eq!(url.scheme(), scheme, "{what}");
            assert_eq!(url.host_str(), Some(host), "{what}");
            assert_eq!(url.port(), port, "{what}");
            assert_eq!(url.path(), format!("{prefix}{raw_path}"), "{what}");
            assert_eq!(url.query(), None, "{what}");
            assert_eq!(url.fragment(), None, "{what}");
            assert!(url.username().is_empty() && url.password().is_none(), "{what}");
            assert!(base.same_origin(&url), "{what}");
            // What goes on the wire parses back to the same place.
            let reparsed = url::Url::parse(url.as_str()).expect("reparse");
            assert_eq!(reparsed, url, "{what}");
        }
    }
}
