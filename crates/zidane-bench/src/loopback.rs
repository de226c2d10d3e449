//! A loopback model for the agent benchmarks: an HTTP/1.1 server on
//! 127.0.0.1 that answers Anthropic Messages requests with recorded-shape
//! SSE streams (a tool call each turn until the last, which answers), and a
//! raw-bytes floor client that sends the same request bytes and reads the
//! same responses with no parsing and no loop. Also the process figures the
//! benchmarks report (user CPU, peak resident memory) and `median`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One SSE response: some text, then a tool call (or, on the last turn, the
/// final answer).
pub fn response(tool_call: bool, turn: usize) -> Vec<u8> {
    let mut s = String::new();
    let mut ev = |name: &str, data: serde_json::Value| s.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    ev(
        "message_start",
        json!({"type": "message_start", "message": {"id": format!("msg_{turn}"), "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [], "stop_reason": null, "usage": {"input_tokens": 1500, "cache_read_input_tokens": 12000, "cache_creation_input_tokens": 200, "output_tokens": 1}}}),
    );
    ev(
        "content_block_start",
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    );
    ev("ping", json!({"type": "ping"}));
    for piece in ["I'll look at ", "the next file ", "to continue ", "the review."] {
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}),
        );
    }
    ev("content_block_stop", json!({"type": "content_block_stop", "index": 0}));
    if tool_call {
        ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": format!("toolu_{turn}"), "name": "read_file", "input": {}}}),
        );
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \"src/"}}),
        );
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": format!("file_{turn}.rs\"}}")}}),
        );
        ev("content_block_stop", json!({"type": "content_block_stop", "index": 1}));
    }
    let stop = if tool_call { "tool_use" } else { "end_turn" };
    ev(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 60}}),
    );
    ev("message_stop", json!({"type": "message_stop"}));
    s.into_bytes()
}

/// The loopback model: answers with a tool call until the conversation has
/// `turns` assistant messages' worth of requests, then with a final answer.
/// Records request bodies when asked.
pub async fn mock_server(
    turns: usize,
    record: Option<Arc<Mutex<Vec<Vec<u8>>>>>,
) -> std::io::Result<std::net::SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let responses: Arc<Vec<Vec<u8>>> = Arc::new((0..turns).map(|t| http_ok(&response(t + 1 < turns, t))).collect());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve(stream, Arc::clone(&responses), record.clone()));
        }
    });
    Ok(addr)
}

/// A `200 OK` event-stream response carrying `body`.
pub fn http_ok(body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

/// Reads one HTTP/1.1 request from `stream` into `buf` (which keeps what
/// arrives after it): the length of its head and of its body, so the
/// request is `buf[..head + body]`. `None` when the connection ends first.
pub async fn read_request(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<(usize, usize)> {
    let mut chunk = vec![0u8; 64 * 1024];
    let head_end = loop {
        if let Some(p) = memchr_find(buf, b"\r\n\r\n") {
            break p + 4;
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = std::str::from_utf8(&buf[..head_end])
        .unwrap_or_default()
        .to_ascii_lowercase();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + len {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    Some((head_end, len))
}

async fn serve(mut stream: TcpStream, responses: Arc<Vec<Vec<u8>>>, record: Option<Arc<Mutex<Vec<Vec<u8>>>>>) {
    let _ = stream.set_nodelay(true);
    let mut buf = Vec::with_capacity(64 * 1024);
    while let Some((head_end, len)) = read_request(&mut stream, &mut buf).await {
        let body = &buf[head_end..head_end + len];
        // Requests alternate user/assistant; the assistant count is the turn.
        let turn = count(body, b"\"role\":\"assistant\"");
        if let Some(record) = &record {
            record
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(body.to_vec());
        }
        let reply = &responses[turn.min(responses.len() - 1)];
        buf.drain(..head_end + len);
        if stream.write_all(reply).await.is_err() {
            return;
        }
    }
}

pub(crate) fn memchr_find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(hay, needle)
}

/// Occurrences of `needle` (SIMD search: the server must cost little beside
/// the client it serves).
fn count(hay: &[u8], needle: &[u8]) -> usize {
    memchr::memmem::find_iter(hay, needle).count()
}

/// User CPU time of this process (from /proc; Linux only).
pub fn user_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = stat.rsplit_once(')')?.1;
    let utime: u64 = after.split_whitespace().nth(11)?.parse().ok()?;
    Some(Duration::from_millis(utime * 10)) // USER_HZ is 100 on Linux
}

/// Peak resident memory of this process, in MB.
pub fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

/// The median of `v` (the upper one of an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The floor: one kept-alive connection that writes each request's bytes and
/// reads the response to its last byte, parsing nothing but the length.
pub struct RawClient {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl RawClient {
    /// Connects to the loopback model.
    pub async fn connect(addr: std::net::SocketAddr) -> std::io::Result<Self> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(RawClient {
            stream,
            buf: Vec::with_capacity(64 * 1024),
        })
    }

    /// Sends one `POST /v1/messages` with `body` and reads the whole answer.
    pub async fn round_trip(&mut self, body: &[u8]) -> std::io::Result<usize> {
        let head = format!(
            "POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        self.stream.write_all(head.as_bytes()).await?;
        self.stream.write_all(body).await?;
        self.buf.clear();
        let mut chunk = [0u8; 64 * 1024];
        loop {
            if let Some(end) = memchr_find(&self.buf, b"\r\n\r\n") {
                let head = std::str::from_utf8(&self.buf[..end])
                    .unwrap_or_default()
                    .to_ascii_lowercase();
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                if self.buf.len() >= end + 4 + len {
                    return Ok(len);
                }
            }
            let n = self.stream.read(&mut chunk).await?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

/// An Anthropic Messages event stream of `events` (name, data).
pub fn sse(events: &[(&str, serde_json::Value)]) -> String {
    events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}

/// A streamed final answer: `text`, after `input_tokens` of input.
pub fn answer_sse(text: &str, input_tokens: u64) -> String {
    sse(&[
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "m", "model": "claude-sonnet-4-5", "usage": {"input_tokens": input_tokens, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        ),
        ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ])
}

/// A streamed call of tool `name` with `input` (call id `id`).
pub fn call_sse(id: &str, name: &str, input: &serde_json::Value, input_tokens: u64) -> String {
    sse(&[
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "m", "model": "claude-sonnet-4-5", "usage": {"input_tokens": input_tokens, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
        ),
        ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 10}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ])
}

/// A scripted model on 127.0.0.1: every request gets the event stream
/// `respond` returns for its path and body. Returns the base URL.
pub async fn scripted_server(
    respond: impl Fn(&str, &str) -> String + Send + Sync + 'static,
) -> std::io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let respond = Arc::new(respond);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let respond = Arc::clone(&respond);
            tokio::spawn(async move {
                let mut buf = Vec::new();
                while let Some((head_end, len)) = read_request(&mut stream, &mut buf).await {
                    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
                    let body = String::from_utf8_lossy(&buf[head_end..head_end + len]).into_owned();
                    buf.drain(..head_end + len);
                    let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
                    let reply = respond(&path, &body);
                    if stream.write_all(&http_ok(reply.as_bytes())).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    Ok(format!("http://{addr}"))
}

/// A request a [`windowed_server`] was sent: its prompt as the server
/// counted it, and whether it was refused for the window.
#[derive(Debug, Clone)]
pub struct WindowedRequest {
    /// The request body.
    pub body: String,
    /// Its prompt in tokens, as the server counts them.
    pub prompt_tokens: u64,
    /// Refused: the prompt did not fit the window.
    pub refused: bool,
}

/// What a [`windowed_server`] answers a request that fits: the answer's
/// text (cut where the window ends, as llama.cpp stops generating there).
pub type WindowedAnswer = fn(&str) -> String;

/// A loopback model with a context window, as llama.cpp serves one: OpenAI
/// chat completions at `/v1/chat/completions` (streamed, with usage) and
/// `GET /props` naming the window (`n_ctx`). A request's prompt is counted
/// at one token per four bytes of its system prompt and message texts; one
/// larger than `window` is refused as llama.cpp refuses it (HTTP 400,
/// `exceed_context_size_error`, with `n_prompt_tokens` and `n_ctx`), and an
/// answer is cut where prompt and answer together fill the window
/// (`finish_reason: "length"`). Returns the base URL (`http://…/v1`) and the
/// requests, in order.
pub async fn windowed_server(
    window: u64,
    answer: WindowedAnswer,
) -> std::io::Result<(String, Arc<Mutex<Vec<WindowedRequest>>>)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let requests: Arc<Mutex<Vec<WindowedRequest>>> = Arc::default();
    let seen = Arc::clone(&requests);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let seen = Arc::clone(&seen);
            tokio::spawn(async move {
                let mut buf = Vec::new();
                while let Some((head_end, len)) = read_request(&mut stream, &mut buf).await {
                    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
                    let body = String::from_utf8_lossy(&buf[head_end..head_end + len]).into_owned();
                    buf.drain(..head_end + len);
                    let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
                    let (status, kind, payload) = if path.ends_with("/props") {
                        (200, "application/json", json!({"n_ctx": window}).to_string())
                    } else {
                        let prompt = prompt_tokens(&body);
                        let refused = prompt > window;
                        seen.lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .push(WindowedRequest {
                                body: body.clone(),
                                prompt_tokens: prompt,
                                refused,
                            });
                        if refused {
                            let error = json!({"error": {
                                "code": 400,
                                "message": format!("the request exceeds the available context size ({prompt} tokens, the context holds {window}), try increasing it"),
                                "type": "exceed_context_size_error",
                                "n_prompt_tokens": prompt,
                                "n_ctx": window,
                            }});
                            (400, "application/json", error.to_string())
                        } else {
                            let room = (window - prompt) as usize * 4;
                            let mut text = answer(&body);
                            let cut = text.len() > room;
                            if cut {
                                let mut end = room;
                                while !text.is_char_boundary(end) {
                                    end -= 1;
                                }
                                text.truncate(end);
                            }
                            (200, "text/event-stream", chat_stream(&text, prompt, cut))
                        }
                    };
                    let response = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\r\n{payload}",
                        payload.len()
                    );
                    if stream.write_all(response.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    Ok((format!("http://{addr}/v1"), requests))
}

/// The prompt of a chat completions request in tokens, as
/// [`windowed_server`] counts them.
fn prompt_tokens(body: &str) -> u64 {
    let Ok(request) = serde_json::from_str::<serde_json::Value>(body) else {
        return 0;
    };
    let mut bytes = 0;
    for message in request["messages"].as_array().into_iter().flatten() {
        match &message["content"] {
            serde_json::Value::String(text) => bytes += text.len(),
            serde_json::Value::Array(parts) => {
                bytes += parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .map(str::len)
                    .sum::<usize>();
            }
            _ => {}
        }
        bytes += message["tool_calls"]
            .as_array()
            .map_or(0, |c| serde_json::Value::from(c.clone()).to_string().len());
    }
    bytes += request["tools"]
        .as_array()
        .map_or(0, |t| serde_json::Value::from(t.clone()).to_string().len());
    (bytes / 4) as u64
}

/// An OpenAI chat completions stream of `text`, with its usage.
fn chat_stream(text: &str, prompt: u64, cut: bool) -> String {
    let chunks = [
        json!({"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]}),
        json!({"id": "c", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": if cut { "length" } else { "stop" }}]}),
        json!({"id": "c", "model": "m", "choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": text.len() / 4}}),
    ];
    chunks.iter().map(|c| format!("data: {c}\n\n")).collect::<String>() + "data: [DONE]\n\n"
}
