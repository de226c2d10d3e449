//! The agent's own cost per turn as the `zidane` program pays it: an agent
//! from `create_agent` with a SQLite session store and a `stream:text`
//! observer, the Anthropic HTTP provider and a tool, against a loopback
//! model; beside the raw-bytes floor (the same request bytes written to the
//! same server on a kept-alive socket, the answers read whole, nothing
//! parsed).
//!
//! One agent runs 201 turns back to back (a growing transcript); the report
//! gives the per-turn wall time at turns 10, 50 and 200 (tool-calling turns;
//! each the median over the ten turns ending there, in every run),
//! ours and the floor's, and the own cost (ours minus the floor) at each,
//! with the ratio of turn 200 to turn 10: a cost that grows with the
//! transcript shows up there. The final turn (the answer, then the run's
//! end) is reported on its own. `BENCH_MEMORY_STORE=1` swaps the SQLite
//! store for the in-memory one; `BENCH_DURABLE=full` (or `normal`, `effects`) runs on
//! the checkpoint runtime (step records and a lease, `synchronous` as
//! named), `BENCH_DURABLE=postgres` on the PostgreSQL one at the
//! connection string in `BENCH_POSTGRES` (feature `postgres`, a schema per
//! repetition); `BENCH_TURNS=N` runs N turns; `BENCH_ALL_TURNS=1` prints every
//! tenth turn. The store's size on disk is reported after the last run.
//!
//! `cargo bench -p zidane-agent --bench agent --all-features` (or
//! `cargo xtask bench`). Under `cargo test` it runs a few turns as a smoke
//! test and prints no figure.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use zidane_core::durable::CheckpointBackend;

use serde_json::json;
use zidane_agent::{
    AgentOptions, AgentRunOptions, CheckpointOptions, CheckpointRuntime, DurableOptions, SqliteStore, Synchronous,
    create_agent,
};
use zidane_bench::loopback::{RawClient, median, mock_server};
use zidane_bench::{measuring, report};
use zidane_core::events::{StreamText, TurnBefore};
use zidane_core::session::{MemoryStore, SessionStore};
use zidane_core::{FnTool, ToolOutput, ToolSet};
use zidane_loop::Behavior;
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

/// The SQLite checkpoint runtime of `BENCH_DURABLE` (`normal`, `effects`,
/// else full sync), on `db`.
fn sqlite_runtime(mode: Option<&str>, db: &std::path::Path) -> Option<Arc<dyn CheckpointBackend>> {
    let synchronous = match mode? {
        "normal" => Synchronous::Normal,
        "effects" => Synchronous::BeforeEffects,
        _ => Synchronous::Full,
    };
    let options = CheckpointOptions {
        synchronous,
        ..Default::default()
    };
    Some(Arc::new(CheckpointRuntime::open_with(db, options).unwrap()))
}

fn main() {
    let full = measuring();
    // One turn more than the last one reported: the final turn (the answer
    // and the run's end: its record, `agent:done`) is reported on its own.
    let asked: Option<usize> = std::env::var("BENCH_TURNS").ok().and_then(|t| t.parse().ok());
    let (turns, reps) = if full { (asked.unwrap_or(201), 5) } else { (12, 1) };
    let durable = std::env::var("BENCH_DURABLE").ok().filter(|m| !m.is_empty());
    let marks_at: Vec<usize> = [10, 50, 200].into_iter().filter(|t| *t <= turns).collect();
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let recorded: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
        let addr = mock_server(turns, Some(Arc::clone(&recorded))).await.unwrap();
        let client = HttpClient::new(Timeouts::default()).unwrap();
        let mut per_turn: Vec<Vec<f64>> = vec![Vec::new(); turns];
        let mut totals = Vec::new();
        for rep in 0..reps {
            recorded.lock().unwrap().clear();
            let db = dir.path().join(format!("sessions-{rep}.db"));
            #[cfg(feature = "postgres")]
            let runtime = if durable.as_deref() == Some("postgres") {
                let url = std::env::var("BENCH_POSTGRES").expect("BENCH_POSTGRES: a PostgreSQL connection string");
                let options = zidane_agent::PostgresOptions {
                    schema: Some(format!("bench_{}_{rep}", std::process::id())),
                    ..Default::default()
                };
                let backend = zidane_agent::PostgresRuntime::connect(&url, options).await.unwrap();
                Some(Arc::new(backend) as Arc<dyn CheckpointBackend>)
            } else {
                sqlite_runtime(durable.as_deref(), &db)
            };
            #[cfg(not(feature = "postgres"))]
            let runtime = sqlite_runtime(durable.as_deref(), &db);
            let store: Arc<dyn SessionStore> = if let Some(rt) = &runtime {
                rt.session_store()
            } else if std::env::var_os("BENCH_MEMORY_STORE").is_some() {
                Arc::new(MemoryStore::new())
            } else {
                Arc::new(SqliteStore::open(&db).unwrap())
            };
            let provider = AnthropicProvider::with_client(
                AnthropicConfig::new("bench-key").with_base_url(format!("http://{addr}")),
                client.clone(),
            );
            let agent = create_agent(AgentOptions {
                provider: vec![Arc::new(provider) as Arc<dyn Provider>],
                system: Some("You are a careful code reviewer. ".repeat(30)),
                tools: ToolSet::new().with(read_file_tool()),
                behavior: Behavior {
                    max_turns: Some(turns as u32 + 1),
                    ..Default::default()
                },
                session_id: Some("bench".into()),
                store: Some(store),
                durable: runtime.map(DurableOptions::from),
                ..Default::default()
            })
            .unwrap();
            // As the program does: every delta goes to the screen.
            let shown = Arc::new(AtomicUsize::new(0));
            let s = Arc::clone(&shown);
            agent.hooks().on_sync::<StreamText, _>(move |ev, _| {
                s.fetch_add(ev.delta().len(), Ordering::Relaxed);
                Ok(())
            });
            let marks: Arc<Mutex<Vec<Instant>>> = Arc::default();
            let m = Arc::clone(&marks);
            agent.hooks().on_sync::<TurnBefore, _>(move |_, _| {
                m.lock().unwrap().push(Instant::now());
                Ok(())
            });
            let t0 = Instant::now();
            let stats = agent.run(AgentRunOptions::prompt("Review the repository.")).await.unwrap();
            let end = Instant::now();
            assert_eq!(stats.turns as usize, turns, "every turn ran");
            assert!(shown.load(Ordering::Relaxed) > 0, "the observer saw the text");
            totals.push(end.duration_since(t0).as_secs_f64() * 1000.0 / turns as f64);
            let mut marks = marks.lock().unwrap().clone();
            marks.push(end);
            for (i, w) in marks.windows(2).enumerate() {
                per_turn[i].push(w[1].duration_since(w[0]).as_secs_f64() * 1000.0);
            }
        }
        let on_disk: u64 = ["", "-wal"]
            .iter()
            .filter_map(|suffix| std::fs::metadata(dir.path().join(format!("sessions-{}.db{suffix}", reps - 1))).ok())
            .map(|m| m.len())
            .sum();
        let bodies: Vec<Vec<u8>> = recorded.lock().unwrap().clone();
        assert_eq!(bodies.len(), turns);
        let mut floor_turn: Vec<Vec<f64>> = vec![Vec::new(); turns];
        let mut floor_totals = Vec::new();
        for _ in 0..reps {
            let mut raw = RawClient::connect(addr).await.unwrap();
            let t0 = Instant::now();
            for (i, body) in bodies.iter().enumerate() {
                let t = Instant::now();
                raw.round_trip(body).await.unwrap();
                floor_turn[i].push(t.elapsed().as_secs_f64() * 1000.0);
            }
            floor_totals.push(t0.elapsed().as_secs_f64() * 1000.0 / turns as f64);
        }
        if !full {
            println!("agent benchmark ran (smoke test; `cargo bench` measures)");
            return;
        }
        let kb = |t: usize| bodies[t - 1].len() as f64 / 1024.0;
        let mode = match durable.as_deref() {
            Some(m) => format!("checkpoint runtime (synchronous={m})"),
            None if std::env::var_os("BENCH_MEMORY_STORE").is_some() => "memory store".to_owned(),
            None => "SQLite session, memory runtime".to_owned(),
        };
        println!("agent, as the program runs it: 1 agent x {turns} turns, {mode}, stream:text observer, median of {reps} runs");
        report("  store on disk after the run", format!("{:.1} KB", on_disk as f64 / 1024.0));
        let (ours_turn, floor_per_turn) = (median(totals), median(floor_totals));
        report("  per turn, zidane", format!("{ours_turn:.3} ms"));
        report("  per turn, raw-bytes floor", format!("{floor_per_turn:.3} ms"));
        report("  zidane / floor", format!("{:.2}x", ours_turn / floor_per_turn));
        // Each figure is the median over the ten turns ending at the mark
        // (every run's samples): one turn can carry a store checkpoint or a
        // scheduler hiccup that is not the transcript's doing.
        let window = |samples: &[Vec<f64>], t: usize| median(samples[t.saturating_sub(10)..t].concat());
        let mut own = Vec::new();
        for &t in &marks_at {
            let ours = window(&per_turn, t);
            let floor = window(&floor_turn, t);
            own.push(ours - floor);
            report(
                &format!("  turns {}-{t} ({:.0} KB request)", t.saturating_sub(9).max(1), kb(t)),
                format!(
                    "zidane {ours:.3} ms, floor {floor:.3} ms, own {:.3} ms, {:.2}x the floor",
                    ours - floor,
                    ours / floor
                ),
            );
        }
        let last_ours = median(per_turn[turns - 1].clone());
        let last_floor = median(floor_turn[turns - 1].clone());
        report(
            &format!("  final turn {turns} (answer + run end)"),
            format!("zidane {last_ours:.3} ms, floor {last_floor:.3} ms, own {:.3} ms", last_ours - last_floor),
        );
        if std::env::var_os("BENCH_ALL_TURNS").is_some() {
            for t in (10..=turns).step_by(10) {
                let ours = median(per_turn[t - 1].clone());
                let floor = median(floor_turn[t - 1].clone());
                println!("turn {t:>3} {:>6.0} KB  ours {ours:.3}  floor {floor:.3}  own {:.3}", kb(t), ours - floor);
            }
        }
        if let (Some(first), Some(last)) = (own.first(), own.last()) {
            report(
                &format!("  own cost, turn {} / turn {}", marks_at[marks_at.len() - 1], marks_at[0]),
                format!("{:.2}x", last / first),
            );
        }
    });
}
