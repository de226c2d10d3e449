//! `zidane serve`'s resources, measured on the real binary over real
//! WebSockets against a loopback model: `cargo bench -p zidane-cli --bench
//! serve`.
//!
//! - memory: the resident set at start, with 10 and 100 idle sessions, and
//!   with 10 sessions each in the middle of a prompt (the model holding its
//!   answer until all are running);
//! - latency: from `session/prompt` to the first `agent_message_chunk`
//!   through the server (a WebSocket client, and a stdio client through
//!   `zidane acp --connect`), beside the same through `zidane acp` on its
//!   pipes in the same run (medians of 50);
//! - idle: the server's CPU over 60 s with 10 clients attached, each
//!   asking the status once a second as `zidane attach` does.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout, missing_docs)]

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use zidane_bench::loopback::{answer_sse, read_request};

/// Requests the model has taken (held or answered).
static REQUESTS: AtomicUsize = AtomicUsize::new(0);

/// The model: answers each request once `open` is set.
struct Model {
    url: String,
    open: tokio::sync::watch::Sender<bool>,
}

async fn model() -> Model {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (open, gate) = tokio::sync::watch::channel(true);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut gate = gate.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                while let Some((head_end, len)) = read_request(&mut stream, &mut buf).await {
                    buf.drain(..head_end + len);
                    REQUESTS.fetch_add(1, Ordering::SeqCst);
                    let _ = gate.wait_for(|open| *open).await;
                    let body = answer_sse("Done.", 200);
                    let reply = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if stream.write_all(reply.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    Model { url, open }
}

/// One way of sending a line and reading the next.
enum Wire {
    Socket(WebSocketStream<TcpStream>),
    Pipes {
        stdin: tokio::process::ChildStdin,
        lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    },
}

/// An ACP client over either wire.
struct Client {
    wire: Wire,
    next: i64,
}

impl Client {
    async fn socket(url: &str, token: &str) -> Client {
        let authority = url.trim_start_matches("ws://").split('/').next().unwrap().to_owned();
        let stream = TcpStream::connect(&authority).await.unwrap();
        stream.set_nodelay(true).unwrap();
        let mut request = url.into_client_request().unwrap();
        request
            .headers_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
        let (socket, _) = tokio_tungstenite::client_async(request, stream).await.unwrap();
        let mut client = Client {
            wire: Wire::Socket(socket),
            next: 1,
        };
        client.initialize().await;
        client
    }

    fn pipes(child: &mut tokio::process::Child) -> Client {
        Client {
            wire: Wire::Pipes {
                stdin: child.stdin.take().unwrap(),
                lines: BufReader::new(child.stdout.take().unwrap()).lines(),
            },
            next: 1,
        }
    }

    async fn initialize(&mut self) {
        self.call("initialize", json!({"protocolVersion": 1, "clientCapabilities": {}}))
            .await;
    }

    async fn send(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next;
        self.next += 1;
        let text = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        match &mut self.wire {
            Wire::Socket(socket) => socket.send(Message::text(text)).await.unwrap(),
            Wire::Pipes { stdin, .. } => {
                stdin.write_all(format!("{text}\n").as_bytes()).await.unwrap();
            }
        }
        id
    }

    async fn next_message(&mut self) -> Value {
        let text = match &mut self.wire {
            Wire::Socket(socket) => loop {
                let frame = tokio::time::timeout(Duration::from_secs(60), socket.next())
                    .await
                    .expect("the server went quiet")
                    .expect("the server closed")
                    .unwrap();
                if let Message::Text(text) = frame {
                    break text.to_string();
                }
            },
            Wire::Pipes { lines, .. } => tokio::time::timeout(Duration::from_secs(60), lines.next_line())
                .await
                .expect("zidane went quiet")
                .unwrap()
                .expect("zidane ended"),
        };
        serde_json::from_str(&text).unwrap()
    }

    async fn until(&mut self, ok: impl Fn(&Value) -> bool) -> Value {
        loop {
            let message = self.next_message().await;
            if ok(&message) {
                return message;
            }
        }
    }

    async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params).await;
        self.until(|m| m["id"] == json!(id) && m.get("method").is_none()).await
    }

    async fn new_session(&mut self, cwd: &std::path::Path) -> String {
        let new = self.call("session/new", json!({"cwd": cwd, "mcpServers": []})).await;
        new["result"]["sessionId"].as_str().unwrap().to_owned()
    }

    /// The first chunk's latency after `session/prompt` (the prompt's end
    /// waited for), `rounds` times: the median.
    async fn first_chunk(&mut self, session: &str, rounds: usize) -> Duration {
        let mut took = Vec::new();
        for _ in 0..rounds {
            let sent = Instant::now();
            let params = json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]});
            let id = self.send("session/prompt", params).await;
            self.until(|m| m["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
                .await;
            took.push(sent.elapsed());
            self.until(|m| m["id"] == json!(id) && m.get("method").is_none()).await;
        }
        took.sort();
        took[rounds / 2]
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

/// The process's user and system CPU time so far.
fn cpu(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat.rsplit_once(')').unwrap().1.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}

fn zidane(home: &std::path::Path, work: &std::path::Path, args: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_zidane"));
    cmd.env("ANTHROPIC_API_KEY", "sk-bench")
        .env("ZIDANE_HOME", home)
        .env("ZIDANE_APPROVE", "yolo")
        .env_remove("OPENAI_API_KEY")
        .args(args)
        .current_dir(work)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

fn main() {
    let measuring = std::env::args().any(|a| a == "--bench");
    let (few, many, rounds, idle) = if measuring { (10, 100, 50, 60) } else { (2, 4, 3, 2) };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let model = model().await;
        let home = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let mut server = zidane(home.path(), work.path(), &["--base-url", &model.url, "serve"])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = server.id().unwrap();
        let mut said = BufReader::new(server.stderr.take().unwrap()).lines();
        let url = loop {
            let line = said.next_line().await.unwrap().expect("zidane serve ended");
            if let Some(rest) = line.split("listening on ").nth(1) {
                break rest.split_whitespace().next().unwrap().to_owned();
            }
        };
        tokio::spawn(async move { while let Ok(Some(_)) = said.next_line().await {} });
        let token = std::fs::read_to_string(home.path().join("serve-token")).unwrap();
        let token = token.trim();
        let mut client = Client::socket(&url, token).await;
        println!("serve: started: {:.1} MB", rss_mb(pid));

        let mut sessions = Vec::new();
        for n in 1..=many {
            sessions.push(client.new_session(work.path()).await);
            if n == few || n == many {
                println!("serve: {n:>3} idle sessions: {:.1} MB", rss_mb(pid));
            }
        }

        // Active: `few` sessions in a prompt, the model holding its answers.
        model.open.send(false).unwrap();
        let before = REQUESTS.load(Ordering::SeqCst);
        let mut ids = Vec::new();
        for session in &sessions[..few] {
            let params = json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]});
            ids.push(client.send("session/prompt", params).await);
        }
        while REQUESTS.load(Ordering::SeqCst) < before + few {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        println!("serve: {few:>3} active sessions: {:.1} MB", rss_mb(pid));
        model.open.send(true).unwrap();
        let mut left: std::collections::HashSet<i64> = ids.into_iter().collect();
        while !left.is_empty() {
            let done = client
                .until(|m| m.get("method").is_none() && m["id"].as_i64().is_some())
                .await;
            left.remove(&done["id"].as_i64().unwrap());
        }

        // The first chunk: through the server, then locally, same model.
        let served = client.first_chunk(&sessions[0], rounds).await;
        let mut bridge = zidane(home.path(), work.path(), &["acp", "--connect", &url])
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut bridged = Client::pipes(&mut bridge);
        bridged.initialize().await;
        let session = bridged.new_session(work.path()).await;
        let through_bridge = bridged.first_chunk(&session, rounds).await;
        let mut local = zidane(home.path(), work.path(), &["--base-url", &model.url, "acp"])
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut direct = Client::pipes(&mut local);
        direct.initialize().await;
        let session = direct.new_session(work.path()).await;
        let local_chunk = direct.first_chunk(&session, rounds).await;
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        println!(
            "serve: first agent_message_chunk after session/prompt (medians of {rounds}): {:.2} ms over a WebSocket, {:.2} ms through acp --connect, {:.2} ms from a local zidane acp ({:+.2} ms served)",
            ms(served),
            ms(through_bridge),
            ms(local_chunk),
            ms(served) - ms(local_chunk)
        );
        drop(direct);
        drop(bridged);
        let _ = local.wait().await;
        let _ = bridge.wait().await;

        // Idle: `few` clients attached, each asking the status once a
        // second as `zidane attach` does.
        let stop = Arc::new(Mutex::new(false));
        let mut pollers = Vec::new();
        for session in &sessions[..few] {
            let session = session.clone();
            let mut attached = Client::socket(&url, token).await;
            attached
                .call("session/load", json!({"sessionId": session, "cwd": work.path(), "mcpServers": []}))
                .await;
            let stop = Arc::clone(&stop);
            pollers.push(tokio::spawn(async move {
                while !*stop.lock() {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    attached.call("_zidane/status", json!({"sessionId": session})).await;
                }
            }));
        }
        let before = cpu(pid);
        tokio::time::sleep(Duration::from_secs(idle)).await;
        let used = cpu(pid) - before;
        *stop.lock() = true;
        for poller in pollers {
            let _ = poller.await;
        }
        println!(
            "serve: idle with {few} attached clients for {idle} s: {:.2} s of CPU ({:.3} % of a core), {:.1} MB",
            used.as_secs_f64(),
            used.as_secs_f64() / idle as f64 * 100.0,
            rss_mb(pid)
        );
        drop(client);
        server.kill().await.unwrap();
    });
}
