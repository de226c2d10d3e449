//! The server's HTTP side: `GET /health` for anyone, the web page at `/`
//! (its files, `page.rs`) for a request naming the host it listens on, and
//! the WebSocket upgrade at `/acp` for a client that presents the token,
//! from no web page or from the server's own origin, naming that host.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::acp::Hub;

/// What every connection is served from.
pub(super) struct State {
    pub(super) hub: Arc<Hub>,
    pub(super) token: String,
    /// The `Host` values a request may name (`None`: any).
    pub(super) host: Option<Vec<String>>,
}

/// The WebSocket subprotocol a browser client names (beside its token).
pub(crate) const SUBPROTOCOL: &str = "zidane.v1";

/// The subprotocol prefix a browser presents its token in.
pub(crate) const TOKEN_PROTOCOL: &str = "zidane.token.";

/// Serves HTTP/1.1 on `io` until the client goes (a WebSocket upgrade
/// takes the connection over).
pub(super) async fn connection<S>(io: S, state: Arc<State>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |req| {
        let state = Arc::clone(&state);
        async move { Ok::<_, Infallible>(route(req, state)) }
    });
    // A request's head must arrive in time: a connection that sends
    // nothing holds no place for long.
    let _ = hyper::server::conn::http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(std::time::Duration::from_secs(10))
        .serve_connection(TokioIo::new(io), service)
        .with_upgrades()
        .await;
}

fn respond(status: StatusCode, text: &str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(format!("{text}\n"))));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn route(req: Request<Incoming>, state: Arc<State>) -> Response<Full<Bytes>> {
    match (req.method(), req.uri().path()) {
        (&Method::GET, "/health") => respond(StatusCode::OK, "ok"),
        (&Method::GET, "/acp") => match admit(&req, &state) {
            Ok(protocol) => upgrade(req, state, protocol),
            Err((status, why)) => respond(status, why),
        },
        (&Method::GET, path) => match known_host(&req, &state) {
            Ok(()) => super::page::file(path).unwrap_or_else(|| respond(StatusCode::NOT_FOUND, "not found")),
            Err((status, why)) => respond(status, why),
        },
        _ => respond(StatusCode::NOT_FOUND, "not found"),
    }
}

fn header(req: &Request<Incoming>, name: header::HeaderName) -> Option<&str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

/// Whether the request may connect: its host, its origin, its token; the
/// subprotocol to answer with, when a browser named one.
fn admit(req: &Request<Incoming>, state: &State) -> Result<Option<&'static str>, (StatusCode, &'static str)> {
    known_host(req, state)?;
    let host = header(req, header::HOST).unwrap_or_default();
    if let Some(origin) = header(req, header::ORIGIN) {
        let same = ["http://", "https://"]
            .iter()
            .any(|scheme| origin.eq_ignore_ascii_case(&format!("{scheme}{host}")));
        if !same {
            return Err((StatusCode::FORBIDDEN, "connections from another origin are refused"));
        }
    }
    let bearer = header(req, header::AUTHORIZATION).and_then(|v| v.strip_prefix("Bearer "));
    let protocols: Vec<&str> = header(req, header::SEC_WEBSOCKET_PROTOCOL)
        .map(|v| v.split(',').map(str::trim).collect())
        .unwrap_or_default();
    let offered = protocols.iter().find_map(|p| p.strip_prefix(TOKEN_PROTOCOL));
    let authorized = bearer
        .or(offered)
        .is_some_and(|t| super::token::matches(t.trim(), &state.token));
    if !authorized {
        return Err((
            StatusCode::UNAUTHORIZED,
            "a valid token is needed (zidane serve --print-token)",
        ));
    }
    let upgrade = header(req, header::UPGRADE).is_some_and(|u| u.eq_ignore_ascii_case("websocket"));
    if !upgrade || header(req, header::SEC_WEBSOCKET_KEY).is_none() {
        return Err((StatusCode::BAD_REQUEST, "/acp speaks WebSocket"));
    }
    Ok(protocols.contains(&SUBPROTOCOL).then_some(SUBPROTOCOL))
}

/// Whether the request names the host the server listens on (a page
/// reached through DNS rebinding is not served).
fn known_host(req: &Request<Incoming>, state: &State) -> Result<(), (StatusCode, &'static str)> {
    let host = header(req, header::HOST).unwrap_or_default();
    match &state.host {
        Some(allowed) if !allowed.iter().any(|h| h.eq_ignore_ascii_case(host)) => {
            Err((StatusCode::FORBIDDEN, "this server answers only to its own address"))
        }
        _ => Ok(()),
    }
}

/// Switches the connection to WebSocket and serves ACP on it.
fn upgrade(mut req: Request<Incoming>, state: Arc<State>, protocol: Option<&'static str>) -> Response<Full<Bytes>> {
    let key = header(&req, header::SEC_WEBSOCKET_KEY)
        .unwrap_or_default()
        .as_bytes()
        .to_vec();
    let accept = tokio_tungstenite::tungstenite::handshake::derive_accept_key(&key);
    let upgrading = hyper::upgrade::on(&mut req);
    tokio::spawn(async move {
        if let Ok(upgraded) = upgrading.await {
            super::pump::run(TokioIo::new(upgraded), Arc::clone(&state.hub)).await;
        }
    });
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = response.headers_mut();
    headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    headers.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    if let Ok(accept) = HeaderValue::from_str(&accept) {
        headers.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
    }
    if let Some(protocol) = protocol {
        headers.insert(header::SEC_WEBSOCKET_PROTOCOL, HeaderValue::from_static(protocol));
    }
    response
}
