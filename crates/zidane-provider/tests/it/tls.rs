//! A TLS server that offers HTTP/2 (as the providers' APIs do): the client
//! negotiates it and multiplexes every request on one connection, which has
//! its own task. The certificates in `tls/` are a test authority (valid for
//! a century) and a `localhost` / `127.0.0.1` certificate it signed.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;
use zidane_provider::{AbortSignal, AnthropicConfig, AnthropicProvider, HttpClient, Timeouts};

use crate::support::fixture;

const CA: &[u8] = include_bytes!("tls/ca.pem");

/// What a request arrived as: its HTTP version, path and host.
type Seen = (http::Version, String, Option<String>);

struct Tls {
    url: String,
    accepts: Arc<AtomicUsize>,
    versions: Arc<parking_lot::Mutex<Vec<Seen>>>,
}

async fn tls_server(alpn: &[&[u8]]) -> Tls {
    let certs = vec![CertificateDer::from_pem_slice(include_bytes!("tls/server.pem")).unwrap()];
    let key = PrivateKeyDer::from_pem_slice(include_bytes!("tls/server.key")).unwrap();
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepts = Arc::new(AtomicUsize::new(0));
    let versions = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let (a, v) = (Arc::clone(&accepts), Arc::clone(&versions));
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            a.fetch_add(1, Ordering::SeqCst);
            let (acceptor, v) = (acceptor.clone(), Arc::clone(&v));
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else { return };
                let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
                let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                    let v = Arc::clone(&v);
                    async move {
                        let host = request.headers().get("host").map(|h| h.to_str().unwrap().to_owned());
                        let target = request.uri().authority().map(|a| a.to_string()).or(host.clone());
                        v.lock()
                            .push((request.version(), request.uri().path().to_owned(), target));
                        let body = fixture("anthropic/tool_use_response.sse");
                        Ok::<_, Infallible>(
                            Response::builder()
                                .header("content-type", "text/event-stream")
                                .body(Full::new(Bytes::from(body)))
                                .unwrap(),
                        )
                    }
                });
                let io = TokioIo::new(tls);
                if h2 {
                    let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                        .serve_connection(io, service)
                        .await;
                } else {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await;
                }
            });
        }
    });
    Tls {
        url: format!("https://localhost:{port}"),
        accepts,
        versions,
    }
}

fn provider(url: &str) -> AnthropicProvider {
    let client = HttpClient::with_extra_roots(Timeouts::default(), CA).unwrap();
    AnthropicProvider::with_client(AnthropicConfig::new("sk-ant-test").with_base_url(url), client)
}

async fn ask(provider: &AnthropicProvider) -> zidane_provider::AssistantMessage {
    zidane_provider::complete(provider, &crate::http::options(), AbortSignal::never())
        .await
        .unwrap()
}

#[tokio::test]
async fn a_server_that_offers_h2_gets_concurrent_requests_on_one_connection() {
    let server = tls_server(&[b"h2", b"http/1.1"]).await;
    let provider = provider(&server.url);
    // The first request finds out that the server speaks HTTP/2 (requests
    // that start before it knows each open a connection); the next ones,
    // however many at once, share its connection.
    let first = ask(&provider).await;
    let (a, b, c) = tokio::join!(ask(&provider), ask(&provider), ask(&provider));
    for message in [first, a, b, c] {
        assert_eq!(message.tool_calls().count(), 1);
    }
    assert_eq!(server.accepts.load(Ordering::SeqCst), 1, "one multiplexed connection");
    let seen = server.versions.lock().clone();
    assert_eq!(seen.len(), 4);
    for (version, path, authority) in seen {
        assert_eq!(version, http::Version::HTTP_2);
        assert_eq!(path, "/v1/messages");
        assert_eq!(authority.as_deref(), Some(server.url.trim_start_matches("https://")));
    }
}

#[tokio::test]
async fn a_tls_server_without_h2_is_spoken_to_in_http1_and_kept_alive() {
    let server = tls_server(&[b"http/1.1"]).await;
    let provider = provider(&server.url);
    for _ in 0..3 {
        assert_eq!(ask(&provider).await.tool_calls().count(), 1);
    }
    assert_eq!(server.accepts.load(Ordering::SeqCst), 1, "keep-alive over TLS");
    let seen = server.versions.lock().clone();
    assert!(seen.iter().all(|(v, p, host)| *v == http::Version::HTTP_11
        && p == "/v1/messages"
        && host.as_deref() == Some(server.url.trim_start_matches("https://"))));
}

#[test]
fn extra_roots_that_are_not_certificates_are_refused() {
    let err = HttpClient::with_extra_roots(Timeouts::default(), b"not a certificate").unwrap_err();
    assert!(err.message().contains("no certificate"), "{err}");
    let key = include_bytes!("tls/server.key");
    let err = HttpClient::with_extra_roots(Timeouts::default(), key).unwrap_err();
    assert!(err.message().contains("no certificate"), "{err}");
}

#[tokio::test]
async fn a_server_whose_authority_is_not_trusted_is_refused() {
    let server = tls_server(&[b"h2", b"http/1.1"]).await;
    let provider = AnthropicProvider::new(AnthropicConfig::new("sk-ant-test").with_base_url(&server.url)).unwrap();
    let err = zidane_provider::complete(&provider, &crate::http::options(), AbortSignal::never())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), zidane_provider::ErrorKind::Unreachable, "{err}");
}
