//! The agent's own cost per turn, over the real stack: the Anthropic HTTP
//! provider, the run loop and a tool, against a loopback mock model.
//!
//! - burst: one loop runs 50 turns back to back; per-turn wall time beside
//!   the raw-bytes floor (a plain HTTP client sending the same request bytes
//!   and reading the same responses, no parsing, no loop), and turn 10
//!   against turn 50;
//! - concurrent: 100 loops × 10 turns at once on two worker threads; user CPU
//!   per turn and the process's peak resident memory.
//!
//! `cargo bench -p zidane-loop --bench agent` (or `cargo xtask bench`).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use zidane_bench::{measuring, report};
use zidane_core::events::TurnBefore;
use zidane_core::{FnTool, ToolOutput, ToolSet};
use zidane_loop::{LoopConfig, RunLoop, RunOptions};
use zidane_provider::{AbortSignal, AnthropicConfig, AnthropicProvider, HttpClient, Provider, Timeouts};

/// One SSE response: some text, then a tool call (or, on the last turn, the
/// final answer).
fn response(tool_call: bool, turn: usize) -> Vec<u8> {
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
async fn mock_server(turns: usize, record: Option<Arc<Mutex<Vec<Vec<u8>>>>>) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let responses: Arc<Vec<Vec<u8>>> = Arc::new((0..turns).map(|t| http_ok(&response(t + 1 < turns, t))).collect());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve(stream, Arc::clone(&responses), record.clone()));
        }
    });
    addr
}

fn http_ok(body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

async fn serve(mut stream: TcpStream, responses: Arc<Vec<Vec<u8>>>, record: Option<Arc<Mutex<Vec<Vec<u8>>>>>) {
    let _ = stream.set_nodelay(true);
    let mut buf = Vec::with_capacity(64 * 1024);
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let head_end = loop {
            if let Some(p) = memchr_find(&buf, b"\r\n\r\n") {
                break p + 4;
            }
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
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
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let body = &buf[head_end..head_end + len];
        // Requests alternate user/assistant; the assistant count is the turn.
        let turn = count(body, b"\"role\":\"assistant\"");
        if let Some(record) = &record {
            record.lock().unwrap().push(body.to_vec());
        }
        let reply = &responses[turn.min(responses.len() - 1)];
        buf.drain(..head_end + len);
        if stream.write_all(reply).await.is_err() {
            return;
        }
    }
}

fn memchr_find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn count(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).filter(|w| *w == needle).count()
}

fn read_file_tool() -> FnTool {
    FnTool::new(
        "read_file",
        "Read a file",
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        |input, _cx| async move {
            let path = input["path"].as_str().unwrap_or_default().to_owned();
            Ok(ToolOutput::text(
                format!("// {path}\nfn handler() -> Result<(), Error> {{\n    Ok(())\n}}\n").repeat(8),
            ))
        },
    )
    .parallel()
}

fn agent(addr: std::net::SocketAddr, client: HttpClient) -> RunLoop {
    let provider = AnthropicProvider::with_client(
        AnthropicConfig::new("bench-key").with_base_url(format!("http://{addr}")),
        client,
    );
    let mut config = LoopConfig::new(Arc::new(provider) as Arc<dyn Provider>);
    config.tools = ToolSet::new().with(read_file_tool());
    config.system = Some("You are a careful code reviewer. ".repeat(30));
    RunLoop::new(config)
}

/// User CPU time of this process (from /proc; Linux only).
fn user_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = stat.rsplit_once(')')?.1;
    let utime: u64 = after.split_whitespace().nth(11)?.parse().ok()?;
    Some(Duration::from_millis(utime * 10)) // USER_HZ is 100 on Linux
}

/// Peak resident memory of this process, in MB.
fn peak_rss_mb() -> Option<f64> {
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

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let full = measuring();
    let (burst_turns, agents, agent_turns, reps) = if full { (50, 100, 10, 7) } else { (5, 4, 3, 1) };

    // Concurrent first, in a fresh process, so the peak memory is its own.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let rss_before = peak_rss_mb();
    let (cpu, turns_done, wall) = rt.block_on(async {
        let addr = mock_server(agent_turns, None).await;
        let client = HttpClient::new(Timeouts::default()).unwrap();
        let done = Arc::new(AtomicUsize::new(0));
        let cpu0 = user_cpu();
        let t0 = Instant::now();
        let mut handles = Vec::new();
        for _ in 0..agents {
            let looped = agent(addr, client.clone());
            let done = Arc::clone(&done);
            handles.push(tokio::spawn(async move {
                let stats = looped.run(RunOptions::prompt("Review the repository.")).await.unwrap();
                done.fetch_add(stats.turns as usize, Ordering::Relaxed);
            }));
        }
        for h in handles {
            h.await.unwrap();
        }
        let wall = t0.elapsed();
        (
            user_cpu().zip(cpu0).map(|(b, a)| b - a),
            done.load(Ordering::Relaxed),
            wall,
        )
    });
    assert_eq!(turns_done, agents * agent_turns, "every agent ran every turn");
    if full {
        println!(
            "concurrent: {agents} agents x {agent_turns} turns in {:.2} s",
            wall.as_secs_f64()
        );
        if let Some(cpu) = cpu {
            report(
                "  user CPU per turn",
                format!("{:.3} ms", cpu.as_secs_f64() * 1000.0 / turns_done as f64),
            );
        }
        if let Some(peak) = peak_rss_mb() {
            report(
                "  peak RSS (whole process)",
                format!("{peak:.1} MB (before the agents: {:.1} MB)", rss_before.unwrap_or(0.0)),
            );
        }
    } else {
        println!("concurrent mode ran (smoke test; `cargo bench` measures)");
    }
    drop(rt);

    // Burst: one agent, turns back to back; then the floor on the same bytes.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let recorded: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
        let addr = mock_server(burst_turns, Some(Arc::clone(&recorded))).await;
        let client = HttpClient::new(Timeouts::default()).unwrap();
        let mut per_turn: Vec<Vec<f64>> = vec![Vec::new(); burst_turns];
        let mut totals = Vec::new();
        for _ in 0..reps {
            recorded.lock().unwrap().clear();
            let looped = agent(addr, client.clone());
            let marks: Arc<Mutex<Vec<Instant>>> = Arc::default();
            let m = Arc::clone(&marks);
            looped.hooks().on_sync::<TurnBefore, _>(move |_, _| {
                m.lock().unwrap().push(Instant::now());
                Ok(())
            });
            let t0 = Instant::now();
            let stats = looped.run(RunOptions::prompt("Review the repository.")).await.unwrap();
            let end = Instant::now();
            assert_eq!(stats.turns as usize, burst_turns);
            totals.push(end.duration_since(t0).as_secs_f64() * 1000.0 / burst_turns as f64);
            let mut marks = marks.lock().unwrap().clone();
            marks.push(end);
            for (i, w) in marks.windows(2).enumerate() {
                per_turn[i].push(w[1].duration_since(w[0]).as_secs_f64() * 1000.0);
            }
        }
        let bodies: Vec<Bytes> = recorded
            .lock()
            .unwrap()
            .iter()
            .map(|b| Bytes::from(b.clone()))
            .collect();
        let mut floor_totals = Vec::new();
        let mut floor_turn: Vec<Vec<f64>> = vec![Vec::new(); bodies.len()];
        for _ in 0..reps {
            let t0 = Instant::now();
            for (i, body) in bodies.iter().enumerate() {
                let t = Instant::now();
                let request = http::Request::post(format!("http://{addr}/v1/messages"))
                    .header("content-type", "application/json")
                    .body(Full::new(body.clone()))
                    .unwrap();
                let _ = client
                    .send_for_body("floor", request, &AbortSignal::never())
                    .await
                    .unwrap();
                floor_turn[i].push(t.elapsed().as_secs_f64() * 1000.0);
            }
            floor_totals.push(t0.elapsed().as_secs_f64() * 1000.0 / bodies.len() as f64);
        }
        if full {
            let ours = median(totals);
            let floor = median(floor_totals);
            println!("burst: 1 agent x {burst_turns} turns, median of {reps} runs");
            report("  per turn, zidane", format!("{ours:.3} ms"));
            report("  per turn, raw-bytes floor", format!("{floor:.3} ms"));
            report("  ratio to the floor", format!("{:.2}x", ours / floor));
            let t10 = median(per_turn[9].clone());
            let t50 = median(per_turn[burst_turns - 1].clone());
            report(
                "  turn 10 / turn 50, zidane",
                format!("{t10:.3} ms / {t50:.3} ms ({:.2}x)", t50 / t10),
            );
            let (f10, f50) = (
                median(floor_turn[9].clone()),
                median(floor_turn[burst_turns - 1].clone()),
            );
            report(
                "  turn 10 / turn 50, floor",
                format!("{f10:.3} ms / {f50:.3} ms ({:.2}x)", f50 / f10),
            );
            report(
                "  own cost (zidane - floor), turn 10 / turn 50",
                format!(
                    "{:.3} ms / {:.3} ms ({:.2}x)",
                    t10 - f10,
                    t50 - f50,
                    (t50 - f50) / (t10 - f10)
                ),
            );
        } else {
            println!("burst mode ran (smoke test; `cargo bench` measures)");
        }
    });
}
