use super::*;

#[test]
fn bodies_by_length_and_in_chunks() {
    let raw = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
    assert_eq!(complete_body(raw).as_deref(), Some(&b"{}"[..]));
    assert_eq!(complete_body(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n{}"), None);
    let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{\"\r\n4\r\na\":1\r\n1\r\n}\r\n0\r\n\r\n";
    assert_eq!(complete_body(chunked).as_deref(), Some(&b"{\"a\":1}"[..]));
    assert_eq!(
        complete_body(b"HTTP/1.1 404 Not Found\r\n\r\n").as_deref(),
        Some(&b""[..])
    );
}

#[test]
fn the_hint_names_the_server_and_the_flags() {
    let found = Found {
        name: "Ollama".into(),
        base_url: "http://127.0.0.1:11434/v1".into(),
        models: vec!["qwen".into()],
    };
    let text = hint(&[found]);
    assert!(text.contains("Ollama at http://127.0.0.1:11434/v1 (qwen)"), "{text}");
    assert!(
        text.contains("--provider openai-compatible --base-url http://127.0.0.1:11434/v1 --model qwen"),
        "{text}"
    );
}
