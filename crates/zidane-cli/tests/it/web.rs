//! The web page `zidane serve` serves, against the real server.

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::serve::Served;
use super::session::Setup;

/// `GET path` with `host`: the status line, the headers (lower-cased) and
/// the body.
async fn get(server: &Served, path: &str, host: Option<&str>) -> (String, String, String) {
    let authority = server
        .url
        .trim_start_matches("ws://")
        .trim_end_matches("/acp")
        .to_owned();
    let mut stream = tokio::net::TcpStream::connect(&authority).await.unwrap();
    let host = host.unwrap_or(&authority);
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let text = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let (status, headers) = head.split_once("\r\n").unwrap_or((head, ""));
    (status.to_owned(), headers.to_lowercase(), body.to_owned())
}

/// The page and its modules, each with a policy that runs only the page's
/// own scripts and connects only to its own server; no inline script; no
/// page for another host name (DNS rebinding); nothing else served.
#[tokio::test(flavor = "multi_thread")]
async fn the_page_is_served_with_a_strict_policy() {
    let setup = Setup::new().await;
    let server = Served::start(&setup, &[], &[]).await;
    let (status, headers, body) = get(&server, "/", None).await;
    assert!(status.contains(" 200 "), "{status}");
    assert!(headers.contains("content-type: text/html"), "{headers}");
    let csp = headers
        .lines()
        .find_map(|l| l.strip_prefix("content-security-policy: "))
        .unwrap_or_else(|| panic!("no policy: {headers}"));
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "connect-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(directive), "{csp}");
    }
    assert!(!csp.contains("unsafe") && !csp.contains("http"), "{csp}");
    // Every script is a file of the page's own.
    assert_eq!(
        body.matches("<script").count(),
        body.matches("<script type=\"module\" src=\"/").count()
    );
    assert!(!body.contains(&server.token));
    let (status, headers, body) = get(&server, "/app.js", None).await;
    assert!(
        status.contains(" 200 ") && headers.contains("text/javascript"),
        "{status} {headers}"
    );
    assert!(
        body.contains("zidane.token"),
        "the page keeps the token in session storage"
    );
    assert!(!body.contains("innerHTML") && !body.contains("eval("));
    let (status, _, _) = get(&server, "/", Some("attacker.example:80")).await;
    assert!(status.contains(" 403 "), "{status}");
    let (status, _, _) = get(&server, "/../Cargo.toml", None).await;
    assert!(status.contains(" 404 "), "{status}");
}
