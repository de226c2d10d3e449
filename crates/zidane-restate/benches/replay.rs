//! The replay runtime's cost per step against the checkpoint runtime's, on
//! one workload: an agent with a `read_file` tool runs N tool-calling turns
//! against the loopback model (each turn is a model step and a tool step),
//! on
//!
//! - the memory runtime with a SQLite session (no step records),
//! - the checkpoint runtime (SQLite, `synchronous=FULL`),
//! - the replay runtime inside a `ZidaneAgent` invocation on a real Restate
//!   server (single node, loopback), started through the ingress.
//!
//! Per-turn wall time is the median over every turn of every run (201
//! turns by default, `BENCH_TURNS=N` to change; from
//! `turn:before` to the next); CPU is this process's user + system time
//! per turn (agent, model server and, for replay, the service), and for
//! replay also the Restate server's.
//!
//! The tool is `unsafe` as an `FnTool` is by default (each call is preceded
//! by what led to it); `BENCH_TOOL=safe` declares it safe, as the product's
//! own `read_file` is.
//!
//! `cargo bench -p zidane-restate --bench replay` (needs the server
//! `cargo xtask restate-server` installs). Under `cargo test` it runs a few
//! turns of each as a smoke test and prints no figure.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[path = "../tests/it/harness.rs"]
#[allow(dead_code)]
mod harness;

use std::sync::{Arc, Mutex};
use std::time::Instant;
use zidane_core::durable::CheckpointBackend;

use serde_json::json;
use zidane_agent::{
    AgentOptions, AgentRunOptions, CheckpointOptions, CheckpointRuntime, DurableOptions, SqliteStore, Synchronous,
    create_agent,
};
use zidane_bench::loopback::{median, mock_server};
use zidane_bench::{measuring, report};
use zidane_core::events::TurnBefore;
use zidane_core::session::SessionStore;
use zidane_core::{FnTool, ToolOutput, ToolSet};
use zidane_hooks::HookMap;
use zidane_loop::Behavior;
use zidane_provider::{AnthropicConfig, AnthropicProvider, HttpClient, Provider, Timeouts};
use zidane_restate::ZidaneAgent;

fn read_file_tool(safe: bool) -> FnTool {
    let tool = FnTool::new(
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
    .parallel();
    if safe { tool.safe() } else { tool }
}

/// User + system CPU of process `pid` (`self` for this one), from /proc.
fn cpu_ms(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, a)| a);
    let field = |n: usize| {
        after
            .split_whitespace()
            .nth(n)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (field(11) + field(12)) * 10.0 // USER_HZ is 100 on Linux
}

/// What one configuration measured.
#[derive(Default)]
struct Figures {
    per_turn_ms: Vec<f64>,
    cpu_ms_per_turn: Vec<f64>,
    server_cpu_ms_per_turn: Vec<f64>,
}

fn marks_hook(marks: &Arc<Mutex<Vec<Instant>>>) -> HookMap {
    let m = Arc::clone(marks);
    HookMap::new().on_sync::<TurnBefore, _>(move |_, _| {
        m.lock().unwrap().push(Instant::now());
        Ok(())
    })
}

fn per_turn(marks: &[Instant], end: Instant) -> Vec<f64> {
    let mut all = marks.to_vec();
    all.push(end);
    all.windows(2)
        .map(|w| w[1].duration_since(w[0]).as_secs_f64() * 1000.0)
        .collect()
}

fn main() {
    let full = measuring();
    let turns: usize = if full {
        std::env::var("BENCH_TURNS")
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or(201)
    } else {
        4
    };
    let reps = if full { 5 } else { 1 };
    let safe = std::env::var("BENCH_TOOL").is_ok_and(|t| t == "safe");
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let addr = mock_server(turns, None).await.unwrap();
        let client = HttpClient::new(Timeouts::default()).unwrap();
        let provider: Arc<dyn Provider> = Arc::new(AnthropicProvider::with_client(
            AnthropicConfig::new("bench-key").with_base_url(format!("http://{addr}")),
            client.clone(),
        ));
        let shared = Arc::clone(&provider);
        let options = move |hooks: HookMap| AgentOptions {
            provider: vec![Arc::clone(&shared)],
            system: Some("You are a careful code reviewer. ".repeat(30)),
            tools: ToolSet::new().with(read_file_tool(safe)),
            behavior: Behavior {
                max_turns: Some(turns as u32 + 1),
                ..Default::default()
            },
            hooks,
            ..Default::default()
        };

        let mut memory = Figures::default();
        let mut checkpoint = Figures::default();
        for rep in 0..reps {
            for durable in [false, true] {
                let db = dir.path().join(format!("sessions-{rep}-{durable}.db"));
                let marks: Arc<Mutex<Vec<Instant>>> = Arc::default();
                let mut opts = options(marks_hook(&marks));
                if durable {
                    let runtime = Arc::new(
                        CheckpointRuntime::open_with(
                            &db,
                            CheckpointOptions {
                                synchronous: Synchronous::Full,
                                ..Default::default()
                            },
                        )
                        .unwrap(),
                    );
                    opts.store = Some(runtime.session_store());
                    opts.durable = Some(DurableOptions::from(runtime));
                } else {
                    opts.store = Some(Arc::new(SqliteStore::open(&db).unwrap()) as Arc<dyn SessionStore>);
                }
                opts.session_id = Some("bench".into());
                let agent = create_agent(opts).unwrap();
                let cpu0 = cpu_ms("self");
                let stats = agent
                    .run(AgentRunOptions::prompt("Review the repository."))
                    .await
                    .unwrap();
                let end = Instant::now();
                let cpu = cpu_ms("self") - cpu0;
                assert_eq!(stats.turns as usize, turns, "every turn ran");
                let figures = if durable { &mut checkpoint } else { &mut memory };
                figures.per_turn_ms.extend(per_turn(&marks.lock().unwrap(), end));
                figures.cpu_ms_per_turn.push(cpu / turns as f64);
                agent.destroy().await;
            }
        }

        // Replay: the same options, built by the object for each invocation.
        let restate = harness::Restate::start().await;
        let marks: Arc<Mutex<Vec<Instant>>> = Arc::default();
        let object_marks = Arc::clone(&marks);
        let build = options.clone();
        let object = ZidaneAgent::new(move |_session| Ok(build(marks_hook(&object_marks))));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let uri = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(zidane_restate::serve(object, listener, std::future::pending::<()>()));
        restate.register(&uri).await;
        let server_pid = restate.pid().unwrap().to_string();
        let mut replay = Figures::default();
        let mut entries = 0;
        for rep in 0..reps {
            marks.lock().unwrap().clear();
            let (cpu0, server0) = (cpu_ms("self"), cpu_ms(&server_pid));
            let response = restate
                .call(
                    &format!("bench-{rep}"),
                    "run",
                    Some(&json!({"prompt": "Review the repository."})),
                )
                .await;
            let end = Instant::now();
            let (cpu, server) = (cpu_ms("self") - cpu0, cpu_ms(&server_pid) - server0);
            assert_eq!(response.status, 200, "{response:?}");
            let output = response.json();
            assert_eq!(output["stats"]["turns"].as_u64(), Some(turns as u64), "{output}");
            entries = output["journal"]["written"].as_u64().unwrap_or(0);
            let turn_ms = per_turn(&marks.lock().unwrap(), end);
            if std::env::var_os("BENCH_ALL_TURNS").is_some() {
                let shown: Vec<String> = turn_ms.iter().map(|t| format!("{t:.1}")).collect();
                println!("replay run {rep}, ms per turn: {}", shown.join(" "));
            }
            replay.per_turn_ms.extend(turn_ms);
            replay.cpu_ms_per_turn.push(cpu / turns as f64);
            replay.server_cpu_ms_per_turn.push(server / turns as f64);
        }
        if !full {
            println!("replay benchmark ran (smoke test; `cargo bench` measures)");
            return;
        }
        println!(
            "durable runtimes, one agent x {turns} turns (a model step and a {} tool step each), median of {reps} runs",
            if safe { "safe" } else { "unsafe" }
        );
        let m = median(memory.per_turn_ms.clone());
        let c = median(checkpoint.per_turn_ms.clone());
        let r = median(replay.per_turn_ms.clone());
        report("  per turn, memory runtime (SQLite session)", format!("{m:.3} ms"));
        report(
            "  per turn, checkpoint runtime",
            format!("{c:.3} ms ({:+.3} ms)", c - m),
        );
        report(
            "  per turn, replay runtime on Restate",
            format!("{r:.3} ms ({:+.3} ms; {:.2}x the checkpoint runtime)", r - m, r / c),
        );
        report(
            "  per step over the memory runtime",
            format!("checkpoint {:.3} ms, replay {:.3} ms", (c - m) / 2.0, (r - m) / 2.0),
        );
        report(
            "  CPU per turn, this process",
            format!(
                "memory {:.3} ms, checkpoint {:.3} ms, replay {:.3} ms",
                median(memory.cpu_ms_per_turn),
                median(checkpoint.cpu_ms_per_turn),
                median(replay.cpu_ms_per_turn)
            ),
        );
        report(
            "  CPU per turn, the Restate server",
            format!("{:.3} ms", median(replay.server_cpu_ms_per_turn)),
        );
        report("  journal entries per run (replay)", entries);
    });
}
