//! What a folder checkpoint adds to a prompt: a generated folder of 10,000
//! files (200 folders of 50, 1–4 KB each, a `.gitignore`), checkpointed once
//! (every file read and stored), then again unchanged (a stat walk, no
//! read), then with 10 files changed (10 read). Each figure is the median of
//! the repetitions, with the sessions file on disk (`synchronous = FULL`).
//! A `rewind` of the 10 changes is timed too.
//!
//! `cargo bench -p zidane-agent --bench checkpoints --all-features` (or
//! `cargo xtask bench`; `BENCH_FILES=N` for another size). Under `cargo test`
//! it runs on 500 files as a smoke test and prints no figure.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::sync::Arc;
use std::time::Instant;

use zidane_agent::SqliteStore;
use zidane_agent::checkpoints::{Checkpoints, CheckpointsConfig};
use zidane_bench::loopback::median;
use zidane_bench::measuring;
use zidane_core::checkpoint::{CheckpointStore, SnapshotKind};

fn main() {
    let full = measuring();
    let files: usize = std::env::var("BENCH_FILES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(if full { 10_000 } else { 500 });
    let reps = if full { 9 } else { 1 };
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let per_folder = 50;
    for i in 0..files {
        let dir = work.path().join(format!("d{:03}", i / per_folder));
        if i % per_folder == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        let size = 1024 + (i * 37) % 3072;
        let body: Vec<u8> = (0..size).map(|j| b'a' + ((i + j) % 26) as u8).collect();
        std::fs::write(dir.join(format!("f{i:05}.txt")), body).unwrap();
    }
    std::fs::write(work.path().join(".gitignore"), "target/\n").unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let store = SqliteStore::open(home.path().join("sessions.db")).unwrap();
        let checkpoints = Checkpoints::new(
            Arc::new(store.clone()) as Arc<dyn CheckpointStore>,
            CheckpointsConfig::new(work.path()),
        );
        let started = Instant::now();
        checkpoints
            .snapshot("bench", None, SnapshotKind::Prompt, 0, 0, "first")
            .await
            .unwrap();
        let first = started.elapsed().as_secs_f64() * 1e3;
        let mut unchanged = Vec::new();
        let mut changed = Vec::new();
        let mut rewinds = Vec::new();
        for rep in 0..reps {
            let started = Instant::now();
            checkpoints
                .snapshot("bench", None, SnapshotKind::Prompt, 0, 0, "unchanged")
                .await
                .unwrap();
            unchanged.push(started.elapsed().as_secs_f64() * 1e3);
            for k in 0..10 {
                let i = (k * 997 + rep) % files;
                let path = work
                    .path()
                    .join(format!("d{:03}", i / per_folder))
                    .join(format!("f{i:05}.txt"));
                std::fs::write(path, format!("changed in rep {rep}\n")).unwrap();
            }
            let started = Instant::now();
            checkpoints
                .snapshot("bench", None, SnapshotKind::End, 0, 0, "")
                .await
                .unwrap();
            changed.push(started.elapsed().as_secs_f64() * 1e3);
            let count = checkpoints.list("bench").await.unwrap().len();
            let started = Instant::now();
            let plan = checkpoints.plan_rewind("bench", count).await.unwrap();
            assert_eq!(plan.steps.len(), 10, "the ten changed files go back");
            checkpoints.apply_rewind(plan, 0, false).await.unwrap();
            rewinds.push(started.elapsed().as_secs_f64() * 1e3);
        }
        if !full {
            println!("checkpoint benchmark ran (smoke test; `cargo bench` measures)");
            return;
        }
        let stored = store.storage_bytes().await.unwrap();
        println!("folder checkpoints: {files} files, median of {reps}");
        println!("  first checkpoint (every file read)   {first:>8.1} ms");
        println!("  unchanged (stat walk only)           {:>8.1} ms", median(unchanged));
        println!("  10 files changed                     {:>8.1} ms", median(changed));
        println!("  rewind of the 10 changes             {:>8.1} ms", median(rewinds));
        println!(
            "  checkpoint storage                   {:>8.1} MB",
            stored as f64 / 1_048_576.0
        );
    });
}
