//! The web page `zidane serve` serves (its browser tests are
//! `tests/web/`, run by `cargo xtask web-tests`) and the usage it charts
//! (`_zidane/usage`), against the real server.

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use zidane_bench::loopback::{scripted_server, sse};

use super::acp::prompt;
use super::serve::{Served, Ws};
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

/// What a request of the scripted model reports, by how many tool
/// results the conversation has: 2,000 tokens written to the cache, read
/// back, then none of them read (a cache break at the third turn).
fn usage_script(_path: &str, body: &str) -> String {
    let step = body.matches("\"tool_result\"").count();
    let (read, write, stop) = match step {
        0 => (0, 2000, "tool_use"),
        1 => (2000, 300, "tool_use"),
        _ => (0, 2500, "end_turn"),
    };
    let block = if stop == "tool_use" {
        json!({"type": "tool_use", "id": format!("toolu_{step}"), "name": "list_files", "input": {}})
    } else {
        json!({"type": "text", "text": ""})
    };
    let delta = if stop == "tool_use" {
        json!({"type": "input_json_delta", "partial_json": "{\"path\": \".\"}"})
    } else {
        json!({"type": "text_delta", "text": "Counted."})
    };
    sse(&[
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "m", "model": "claude-sonnet-4-5", "usage": {
                "input_tokens": 40 + step, "output_tokens": 1,
                "cache_read_input_tokens": read, "cache_creation_input_tokens": write}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": block}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ),
        ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 7}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ])
}

/// `_zidane/usage`: each turn's tokens by where the prompt came from, the
/// cache break where the model's usage says, the context each turn filled;
/// the same after the server restarts (from the sessions file).
#[tokio::test(flavor = "multi_thread")]
async fn usage_per_turn_with_the_cache_break() {
    let url = scripted_server(usage_script).await.unwrap();
    let setup = Setup::with_url(url).await;
    let work = setup.work.path();
    let yolo = [("ZIDANE_APPROVE", "yolo")];
    let mut server = Served::start(&setup, &yolo, &[]).await;
    let mut ws = Ws::open(&server, "charts").await;
    let session = ws.new_session(work, json!({})).await["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let done = ws.call("session/prompt", prompt(&session, "count tokens")).await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let usage = ws.call("_zidane/usage", json!({ "sessionId": session })).await["result"].clone();
    check_usage(&usage, true);
    assert!(usage["compactions"].as_array().unwrap().is_empty());
    // A compaction is marked after the turn it followed.
    let compacted = ws.call("_zidane/compact", json!({ "sessionId": session })).await;
    assert!(compacted["result"]["replaced"].as_u64().unwrap() > 0, "{compacted}");
    let usage = ws.call("_zidane/usage", json!({ "sessionId": session })).await["result"].clone();
    let compactions = usage["compactions"].as_array().unwrap();
    assert_eq!(compactions.len(), 1, "{usage}");
    assert_eq!(compactions[0]["afterTurn"], 3);
    assert!(compactions[0]["replaced"].as_u64().unwrap() > 0);

    // After a restart the figures come from the sessions file; the break is
    // found again from them (what changed is not known then).
    server.kill9().await;
    let server = Served::start(&setup, &yolo, &[]).await;
    let mut ws = Ws::open(&server, "charts").await;
    ws.load(&session, work).await;
    let usage = ws.call("_zidane/usage", json!({ "sessionId": session })).await["result"].clone();
    check_usage(&usage, false);
}

fn check_usage(usage: &Value, live: bool) {
    let turns = usage["turns"].as_array().unwrap_or_else(|| panic!("{usage}"));
    assert_eq!(turns.len(), 3, "{usage}");
    let reads: Vec<u64> = turns.iter().map(|t| t["cacheRead"].as_u64().unwrap()).collect();
    let writes: Vec<u64> = turns.iter().map(|t| t["cacheWrite"].as_u64().unwrap()).collect();
    assert_eq!(reads, [0, 2000, 0]);
    assert_eq!(writes, [2000, 300, 2500]);
    assert_eq!(turns[1]["input"], 41);
    assert_eq!(turns[1]["output"], 7);
    assert_eq!(turns[1]["context"], 41 + 2000 + 300 + 7);
    assert_eq!(turns[0]["turn"], 1);
    let breaks = usage["cacheBreaks"].as_array().unwrap();
    assert_eq!(breaks.len(), 1, "{usage}");
    assert_eq!(breaks[0]["turn"], 3);
    assert_eq!(breaks[0]["rebilledTokens"], 2300);
    if live {
        assert!(breaks[0]["changed"].is_array());
    }
}
