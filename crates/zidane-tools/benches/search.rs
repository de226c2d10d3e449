//! The `glob` and `grep` tools against ripgrep on one generated tree: a
//! folder of 20,000 source-like files (400 folders of 50, 2–30 KB each,
//! 1 in 20 a `.toml`), a `.gitignore` and an ignored build folder of 2,000
//! more. Each figure is the median wall time of the repetitions, for the
//! local walk (a process context), the walk through the context's own
//! `list` / `read_file` (what every search took before the local walk), and
//! `rg` when it is on the `PATH` (Debian's `ripgrep`).
//!
//! `cargo bench -p zidane-tools --bench search` (or `cargo xtask bench`;
//! `BENCH_FILES=N` for another size). Under `cargo test` it runs on 300
//! files as a smoke test and prints no figure.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use zidane_bench::measuring;
use zidane_core::tool::ToolContext;
use zidane_core::{Tool, Workspace};
use zidane_provider::{AbortSignal, ToolResultContent};
use zidane_tools::{BasicOptions, ProcessContext, basic};

#[path = "../src/search/opaque.rs"]
mod opaque;

use opaque::Opaque as Through;

const WORDS: &[&str] = &[
    "let", "value", "config", "parse", "return", "match", "buffer", "stream", "error", "result", "handle", "request",
    "fn", "impl", "struct", "self", "token", "window", "cache", "session",
];

fn generate(root: &Path, files: usize) {
    let per_folder = 50;
    std::fs::write(root.join(".gitignore"), "build/\n*.tmp\n").unwrap();
    for i in 0..files {
        let dir = root.join(format!("pkg{:03}/src", i / per_folder));
        if i % per_folder == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        let size = 2_048 + (i * 7_919) % 28_672;
        let mut body = String::with_capacity(size + 80);
        let mut k = i as u64;
        while body.len() < size {
            for _ in 0..8 {
                k = k
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                body.push_str(WORDS[(k >> 33) as usize % WORDS.len()]);
                body.push(' ');
            }
            body.push('\n');
        }
        if i % 997 == 0 {
            body.push_str("// the rare_marker_line sits here\n");
        }
        let name = if i % 20 == 0 {
            format!("f{i:05}.toml")
        } else {
            format!("f{i:05}.rs")
        };
        std::fs::write(dir.join(name), body).unwrap();
    }
    let build = root.join("build");
    std::fs::create_dir_all(&build).unwrap();
    for i in 0..files / 10 {
        std::fs::write(build.join(format!("o{i:05}.rs")), "rare_marker_line\n").unwrap();
    }
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

async fn call(ws: &Workspace, tool: &dyn Tool, input: Value) -> String {
    let cx = ToolContext::detached(tool.name(), "call", AbortSignal::never()).with_workspace(ws.clone());
    match tool.execute(input, cx).await.unwrap().content {
        ToolResultContent::Text(text) => text,
        ToolResultContent::Parts(_) => String::new(),
    }
}

fn rg(root: &Path, args: &[&str]) -> Option<usize> {
    let out = Command::new("rg").args(args).current_dir(root).output().ok()?;
    Some(out.stdout.iter().filter(|b| **b == b'\n').count())
}

fn main() {
    let full = measuring();
    let files: usize = std::env::var("BENCH_FILES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(if full { 20_000 } else { 300 });
    let reps = if full { 7 } else { 1 };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    generate(&root, files);
    let preset = basic(BasicOptions::in_folder(&root));
    let glob = preset.tools.get("glob").unwrap();
    let grep = preset.tools.get("grep").unwrap();
    let local = Arc::new(ProcessContext::new(&root)).workspace();
    let through = Workspace {
        handle: ProcessContext::new(&root).handle(),
        execution: Arc::new(Through(ProcessContext::new(&root))),
        background: None,
    };
    let cases: [(&str, &dyn Tool, Value, Vec<&str>); 3] = [
        (
            "grep literal",
            grep.as_ref(),
            json!({"pattern": "rare_marker_line"}),
            vec!["-n", "rare_marker_line"],
        ),
        (
            "grep regex",
            grep.as_ref(),
            json!({"pattern": "wind\\w+ cach[a-z]"}),
            vec!["-n", "wind\\w+ cach[a-z]"],
        ),
        (
            "glob **/*.toml",
            glob.as_ref(),
            json!({"pattern": "**/*.toml"}),
            vec!["--files", "-g", "**/*.toml"],
        ),
    ];
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    if full {
        println!(
            "search tools on {files} files (+{} ignored), median of {reps} (ms)",
            files / 10
        );
        println!(
            "  {:<16} {:>10} {:>16} {:>10} {:>12}",
            "", "local", "through context", "rg", "local / rg"
        );
    }
    for (name, tool, input, rg_args) in cases {
        let (mut fast, mut slow, mut rip) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..reps {
            let started = Instant::now();
            let a = rt.block_on(call(&local, tool, input.clone()));
            fast.push(started.elapsed().as_secs_f64() * 1e3);
            let started = Instant::now();
            let b = rt.block_on(call(&through, tool, input.clone()));
            slow.push(started.elapsed().as_secs_f64() * 1e3);
            assert_eq!(a, b, "{name}: both walks give the same answer");
            let started = Instant::now();
            if rg(&root, &rg_args).is_some() {
                rip.push(started.elapsed().as_secs_f64() * 1e3);
            }
        }
        if !full {
            continue;
        }
        let (fast, slow) = (median(fast), median(slow));
        if rip.is_empty() {
            println!("  {name:<16} {fast:>10.1} {slow:>16.1} {:>10} {:>12}", "-", "-");
        } else {
            let rip = median(rip);
            println!(
                "  {name:<16} {fast:>10.1} {slow:>16.1} {rip:>10.1} {:>11.2}x",
                fast / rip
            );
        }
    }
    if !full {
        println!("search benchmark ran (smoke test; `cargo bench` measures)");
    }
}
