use serde_json::json;

use super::*;

#[tokio::test]
async fn a_message_round_trips_and_two_follow_each_other() {
    let mut bytes = encode(&json!({"jsonrpc": "2.0", "id": 1, "result": "é"}));
    bytes.extend(encode(&json!({"jsonrpc": "2.0", "method": "m"})));
    let mut reader = tokio::io::BufReader::new(&bytes[..]);
    let first = read(&mut reader).await.unwrap().unwrap();
    assert_eq!(first["result"], "é");
    let second = read(&mut reader).await.unwrap().unwrap();
    assert_eq!(second["method"], "m");
    assert!(read(&mut reader).await.unwrap().is_none());
}

#[tokio::test]
async fn other_headers_are_skipped_and_bad_ones_are_typed_errors() {
    let bytes = b"Content-Type: application/vscode-jsonrpc\r\ncontent-length: 2\r\n\r\n{}";
    let mut reader = tokio::io::BufReader::new(&bytes[..]);
    assert_eq!(read(&mut reader).await.unwrap().unwrap(), json!({}));

    for bad in [
        &b"Content-Length: x\r\n\r\n"[..],
        b"X: 1\r\n\r\n{}",
        b"nonsense\r\n\r\n",
        b"Content-Length: 99999999999\r\n\r\n",
    ] {
        let mut reader = tokio::io::BufReader::new(bad);
        assert!(matches!(read(&mut reader).await, Err(LspError::Protocol(_))), "{bad:?}");
    }
}
