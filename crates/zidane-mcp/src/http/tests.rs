use super::EventBound;

/// An expired token is refreshed before it is sent: the refresh grant
/// goes to the stored token endpoint, the new tokens are stored, and
/// the connection is told (which fires `oauth:refresh`).
#[tokio::test]
async fn an_expired_token_is_refreshed_before_use() {
    use std::sync::{Arc, Mutex};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use crate::oauth::{MemoryOAuthStore, OAuthClient, OAuthConfig, OAuthStore, OAuthTokens};

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen: Arc<Mutex<String>> = Arc::default();
    let s = Arc::clone(&seen);
    tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut buf = vec![0u8; 4096];
        let n = stream.read(&mut buf).await.unwrap();
        *s.lock().unwrap() = String::from_utf8_lossy(&buf[..n]).into_owned();
        let body = r#"{"access_token":"access-2","token_type":"Bearer","expires_in":3600,"refresh_token":"refresh-2"}"#;
        let answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(answer.as_bytes()).await.unwrap();
    });
    let store = Arc::new(MemoryOAuthStore::default());
    let expired = OAuthTokens {
        server_url: "http://127.0.0.1:1/mcp".into(),
        resource: "http://127.0.0.1:1/mcp".into(),
        token_endpoint: format!("http://{addr}/token"),
        client: OAuthClient {
            client_id: "client-1".into(),
            client_secret: None,
            auth_method: "none".into(),
        },
        access_token: "access-1".into(),
        refresh_token: Some("refresh-1".into()),
        expires_at: Some(1),
        scope: None,
    };
    store.save("docs", &expired).unwrap();
    let http = super::http_client(std::time::Duration::from_secs(5), std::time::Duration::from_secs(5)).unwrap();
    let flow = crate::oauth::OAuthFlow::new(
        "docs",
        "http://127.0.0.1:1/mcp",
        OAuthConfig::default(),
        Arc::clone(&store) as Arc<dyn OAuthStore>,
        http,
    );
    let noted: Arc<Mutex<Vec<Option<u64>>>> = Arc::default();
    let n = Arc::clone(&noted);
    let session = super::OAuthSession::new(flow, None, Some(Arc::new(move |at| n.lock().unwrap().push(at))));
    assert_eq!(session.token().await.unwrap().as_deref(), Some("access-2"));
    let request = seen.lock().unwrap().clone();
    assert!(request.starts_with("POST /token "), "{request}");
    assert!(
        request.contains("grant_type=refresh_token&refresh_token=refresh-1"),
        "{request}"
    );
    assert!(request.contains("client_id=client-1"), "{request}");
    let stored = store.load("docs").unwrap().unwrap();
    assert_eq!(
        (stored.access_token.as_str(), stored.refresh_token.as_deref()),
        ("access-2", Some("refresh-2"))
    );
    assert_eq!(noted.lock().unwrap().len(), 1);
    assert!(noted.lock().unwrap()[0].is_some());
}

#[test]
fn an_event_over_the_limit_fails_and_a_blank_line_resets_the_count() {
    let mut bound = EventBound::new(10);
    assert!(bound.feed(b"data: 1234\n\n").is_ok());
    assert!(bound.feed(b"data: 12\r\n\r\ndata: 12\n\n").is_ok());
    // Split across chunks and lines, the event still counts as one.
    assert!(bound.feed(b"data: 12").is_ok());
    assert!(bound.feed(b"\ndata: 34\n").is_err());
}
