//! The web page `zidane serve` serves at `/`: plain ES modules and CSS,
//! embedded in the binary, with a Content-Security-Policy that lets the
//! page run only its own scripts and talk only to its own server (the
//! WebSocket at `/acp`, the same protocol as every other client). The page
//! asks for the token once and keeps it in the tab's session storage.

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};

/// The page's files: path, media type, content.
const FILES: &[(&str, &str, &[u8])] = &[
    ("/", "text/html; charset=utf-8", include_bytes!("web/index.html")),
    (
        "/app.js",
        "text/javascript; charset=utf-8",
        include_bytes!("web/app.js"),
    ),
    (
        "/rpc.js",
        "text/javascript; charset=utf-8",
        include_bytes!("web/rpc.js"),
    ),
    ("/md.js", "text/javascript; charset=utf-8", include_bytes!("web/md.js")),
    (
        "/diff.js",
        "text/javascript; charset=utf-8",
        include_bytes!("web/diff.js"),
    ),
    (
        "/charts.js",
        "text/javascript; charset=utf-8",
        include_bytes!("web/charts.js"),
    ),
    (
        "/transcript.js",
        "text/javascript; charset=utf-8",
        include_bytes!("web/transcript.js"),
    ),
    ("/style.css", "text/css; charset=utf-8", include_bytes!("web/style.css")),
    ("/icon.svg", "image/svg+xml", include_bytes!("web/icon.svg")),
];

/// Only the page's own scripts, styles and images; connections only to
/// its own origin (`'self'` covers the `ws:`/`wss:` of the same host); no
/// framing, no forms posted, no base URL changed.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
                   connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The file at `path`, when the page has one.
pub(super) fn file(path: &str) -> Option<Response<Full<Bytes>>> {
    let path = if path == "/index.html" { "/" } else { path };
    let (_, media, body) = FILES.iter().find(|(p, _, _)| *p == path)?;
    let mut response = Response::new(Full::new(Bytes::from_static(body)));
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(media));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    Some(response)
}
