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
use std::time::Instant;

use serde_json::json;
use zidane_bench::loopback::{RawClient, median, mock_server, peak_rss_mb, user_cpu};
use zidane_bench::{measuring, report};
use zidane_core::events::TurnBefore;
use zidane_core::{FnTool, ToolOutput, ToolSet};
use zidane_loop::{LoopConfig, RunLoop, RunOptions};
use zidane_provider::{AnthropicConfig, AnthropicProvider, HttpClient, Provider, Timeouts};

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
        let addr = mock_server(agent_turns, None).await.unwrap();
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
        let addr = mock_server(burst_turns, Some(Arc::clone(&recorded))).await.unwrap();
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
        let bodies: Vec<Vec<u8>> = recorded.lock().unwrap().clone();
        let mut floor_totals = Vec::new();
        let mut floor_turn: Vec<Vec<f64>> = vec![Vec::new(); bodies.len()];
        for _ in 0..reps {
            let mut raw = RawClient::connect(addr).await.unwrap();
            let t0 = Instant::now();
            for (i, body) in bodies.iter().enumerate() {
                let t = Instant::now();
                raw.round_trip(body).await.unwrap();
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
