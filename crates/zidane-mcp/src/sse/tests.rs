use super::resolve;

#[test]
fn endpoints_resolve_against_the_stream_url() {
    let base = "http://127.0.0.1:8000/mcp/sse".parse().unwrap();
    assert_eq!(
        resolve(&base, "/messages/?session_id=1").unwrap(),
        "http://127.0.0.1:8000/messages/?session_id=1"
    );
    assert_eq!(
        resolve(&base, "message?sessionId=2").unwrap(),
        "http://127.0.0.1:8000/mcp/message?sessionId=2"
    );
    assert_eq!(resolve(&base, "https://other/post").unwrap(), "https://other/post");
}
