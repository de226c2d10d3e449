//! `zidane acp`'s resources, measured on the real binary over its pipes
//! against a loopback model: `cargo bench -p zidane-cli --bench acp`.
//!
//! - memory: the resident set with 10 and 100 idle sessions open, and with
//!   10 and 100 sessions each in the middle of a prompt (the model holding
//!   its answer until all are running);
//! - latency: from `session/prompt` to the first `agent_message_chunk`,
//!   and from the model's first byte to that chunk (the median of 50).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout, missing_docs)]

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::net::TcpListener;
use tokio::process::{ChildStdin, ChildStdout};
use zidane_bench::loopback::{answer_sse, read_request};

/// The model: answers each request once `open` is set, noting when its
/// first byte went out.
struct Model {
    url: String,
    open: tokio::sync::watch::Sender<bool>,
    first_bytes: Arc<Mutex<Vec<Instant>>>,
}

async fn model() -> Model {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (open, gate) = tokio::sync::watch::channel(true);
    let first_bytes: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let sent = Arc::clone(&first_bytes);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut gate = gate.clone();
            let sent = Arc::clone(&sent);
            tokio::spawn(async move {
                let mut buf = Vec::new();
                while let Some((head_end, len)) = read_request(&mut stream, &mut buf).await {
                    buf.drain(..head_end + len);
                    REQUESTS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let _ = gate.wait_for(|open| *open).await;
                    let body = answer_sse("Done.", 200);
                    let head = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n",
                        body.len()
                    );
                    // One write: a head and a body apart would wait on the
                    // peer's delayed acknowledgement.
                    let reply = format!("{head}{body}");
                    sent.lock().push(Instant::now());
                    if stream.write_all(reply.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    Model { url, open, first_bytes }
}

struct Client {
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next: i64,
}

impl Client {
    async fn send(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next;
        self.next += 1;
        let line = format!(
            "{}\n",
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        );
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        id
    }

    /// Reads until `ok` holds for a message; that message.
    async fn until(&mut self, ok: impl Fn(&Value) -> bool) -> Value {
        loop {
            let line = tokio::time::timeout(Duration::from_secs(60), self.lines.next_line())
                .await
                .expect("zidane acp went quiet")
                .unwrap()
                .expect("zidane acp ended");
            let message: Value = serde_json::from_str(&line).unwrap();
            if ok(&message) {
                return message;
            }
        }
    }

    async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params).await;
        self.until(|m| m["id"] == json!(id) && m.get("method").is_none()).await
    }
}

fn rss_mb(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    kb / 1024.0
}

fn main() {
    let measuring = std::env::args().any(|a| a == "--bench");
    let (few, many, rounds) = if measuring { (10, 100, 50) } else { (2, 4, 3) };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let model = model().await;
        let home = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let mut child = tokio::process::Command::new(zidane_bench::program("zidane", env!("CARGO_BIN_EXE_zidane")))
            .env("ANTHROPIC_API_KEY", "sk-bench")
            .env("ZIDANE_HOME", home.path())
            .env("ZIDANE_APPROVE", "yolo")
            .env_remove("OPENAI_API_KEY")
            .args(["--base-url", &model.url, "acp"])
            .current_dir(work.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let pid = child.id().unwrap();
        let mut client = Client {
            stdin: child.stdin.take().unwrap(),
            lines: BufReader::new(child.stdout.take().unwrap()).lines(),
            next: 1,
        };
        client
            .call("initialize", json!({"protocolVersion": 1, "clientCapabilities": {}}))
            .await;
        println!("acp: started: {:.1} MB", rss_mb(pid));
        let mut sessions = Vec::new();
        let mut idle = Vec::new();
        for n in 1..=many {
            let new = client
                .call("session/new", json!({"cwd": work.path(), "mcpServers": []}))
                .await;
            sessions.push(new["result"]["sessionId"].as_str().unwrap().to_owned());
            if n == few || n == many {
                idle.push((n, rss_mb(pid)));
            }
        }
        for (n, mb) in &idle {
            println!("acp: {n:>3} idle sessions: {mb:.1} MB");
        }
        let per_idle = (idle[1].1 - idle[0].1) / (many - few) as f64;
        println!("acp: {:.2} MB per idle session", per_idle);

        // Active: every session in a prompt, the model holding its answers.
        for count in [few, many] {
            model.open.send(false).unwrap();
            let before = REQUESTS.load(std::sync::atomic::Ordering::SeqCst);
            let mut ids = Vec::new();
            for session in &sessions[..count] {
                let params = json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]});
                ids.push(client.send("session/prompt", params).await);
            }
            // Until the model has been asked by every one of them.
            let deadline = Instant::now() + Duration::from_secs(60);
            while REQUESTS.load(std::sync::atomic::Ordering::SeqCst) < before + count && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let mb = rss_mb(pid);
            model.open.send(true).unwrap();
            let mut left: std::collections::HashSet<i64> = ids.into_iter().collect();
            while !left.is_empty() {
                let done = client
                    .until(|m| m.get("method").is_none() && m["id"].as_i64().is_some())
                    .await;
                left.remove(&done["id"].as_i64().unwrap());
            }
            println!("acp: {count:>3} active sessions: {mb:.1} MB");
        }

        // Latency of the first chunk.
        let session = sessions[0].clone();
        let mut from_prompt = Vec::new();
        let mut from_model = Vec::new();
        for _ in 0..rounds {
            model.first_bytes.lock().clear();
            let sent = Instant::now();
            let params = json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]});
            let id = client.send("session/prompt", params).await;
            client
                .until(|m| m["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
                .await;
            let chunk = Instant::now();
            let first = model.first_bytes.lock().first().copied().unwrap();
            from_prompt.push(chunk - sent);
            from_model.push(chunk.saturating_duration_since(first));
            client.until(|m| m["id"] == json!(id) && m.get("method").is_none()).await;
        }
        from_prompt.sort();
        from_model.sort();
        println!(
            "acp: first agent_message_chunk {:.2} ms after session/prompt, {:.2} ms after the model's first byte (medians of {rounds})",
            from_prompt[rounds / 2].as_secs_f64() * 1000.0,
            from_model[rounds / 2].as_secs_f64() * 1000.0
        );
        drop(client);
        let _ = child.wait().await;
    });
}

/// Requests the model has taken (held or answered).
static REQUESTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
