use super::*;

#[test]
fn private_addresses_and_redirect_targets() {
    for ip in [
        "127.0.0.1",
        "10.1.2.3",
        "192.168.0.1",
        "172.16.5.4",
        "169.254.1.1",
        "100.64.0.1",
        "0.0.0.0",
        "::1",
        "fd00::1",
        "fe80::1",
        "::ffff:127.0.0.1",
    ] {
        assert!(is_private(ip.parse().unwrap()), "{ip}");
    }
    for ip in ["93.184.216.34", "1.1.1.1", "2606:4700::1111"] {
        assert!(!is_private(ip.parse().unwrap()), "{ip}");
    }
    let base: http::Uri = "https://docs.rs/a/b?q".parse().unwrap();
    assert_eq!(resolve(&base, "/c").unwrap(), "https://docs.rs/c");
    assert_eq!(resolve(&base, "c").unwrap(), "https://docs.rs/a/c");
    assert_eq!(resolve(&base, "//x.org/y").unwrap(), "https://x.org/y");
    assert_eq!(resolve(&base, "http://e.com/").unwrap(), "http://e.com/");
}

#[tokio::test]
async fn without_network_every_call_is_refused() {
    use zidane_core::Tool as _;
    let tool = web_fetch(WebFetchOptions {
        network: false,
        ..Default::default()
    });
    let cx = zidane_core::tool::ToolContext::detached("web_fetch", "c1", AbortSignal::never());
    let err = tool.execute(json!({"url": "https://docs.rs/"}), cx).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "web_fetch is off: this run has no network access (--no-network)"
    );
}

#[test]
fn html_becomes_markdown_and_binary_is_refused() {
    let md = to_text(
        "text/html; charset=utf-8",
        b"<html><head><title>T</title><script>x()</script></head><body><h1>Title</h1><p>Some <b>bold</b> text.</p></body></html>",
    )
    .unwrap();
    assert_eq!(md, "# Title\n\nSome **bold** text.");
    assert!(to_text("image/png", b"\x89PNG").unwrap_err().contains("not text"));
}
