//! The timing harness of the workspace's benchmarks (`cargo xtask bench`):
//! medians of repeated batches, printed one line per measurement.
//!
//! Under `cargo test` (no `--bench` argument) each measured body runs a few
//! times as a smoke test and no figure is printed, so benchmarks stay
//! compiled and exercised by the test suite without slowing it down.
//!
//! Architecture invariant: only benchmarks depend on this crate (as a
//! dev-dependency); it depends on no other crate of the workspace. The
//! `loopback` feature adds the loopback model and the raw-bytes floor
//! (tokio, serde_json). [`examples`] finds (and builds) the examples that
//! tests run as their own processes.

#![allow(clippy::print_stdout)]

pub mod examples;
#[cfg(feature = "loopback")]
pub mod loopback;

use std::time::Instant;

/// Whether the binary runs as a benchmark (`cargo bench` passes `--bench`).
pub fn measuring() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// One measurement's result.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// Median nanoseconds per call.
    pub median_ns: f64,
    /// First quartile.
    pub q1_ns: f64,
    /// Third quartile.
    pub q3_ns: f64,
}

/// Times `body` over 31 batches of `iters` calls (after one warm-up batch) and
/// prints the median per call; returns it. Smoke-runs it under `cargo test`.
pub fn measure(label: &str, iters: u32, mut body: impl FnMut()) -> Option<Sample> {
    const BATCHES: usize = 31;
    if !measuring() {
        for _ in 0..iters.min(4) {
            body();
        }
        println!("{label:<56} ran (smoke test; `cargo bench` measures)");
        return None;
    }
    for _ in 0..iters {
        body();
    }
    let mut per_call: Vec<f64> = (0..BATCHES)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..iters {
                body();
            }
            start.elapsed().as_nanos() as f64 / f64::from(iters)
        })
        .collect();
    per_call.sort_by(f64::total_cmp);
    let sample = Sample {
        median_ns: per_call[BATCHES / 2],
        q1_ns: per_call[BATCHES / 4],
        q3_ns: per_call[3 * BATCHES / 4],
    };
    println!(
        "{label:<56} median {:>12} (IQR {} .. {})",
        human(sample.median_ns),
        human(sample.q1_ns),
        human(sample.q3_ns)
    );
    Some(sample)
}

/// Prints a derived figure (a throughput, a ratio) under the measurements.
pub fn report(label: &str, value: impl std::fmt::Display) {
    if measuring() {
        println!("{label:<56} {value}");
    }
}

fn human(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.1} ns")
    }
}

/// Drives a future that completes without waiting on anything outside itself.
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

/// The program a bench runs: the one at `$ZIDANE_BENCH_BIN` when it is
/// set (an older build, to compare in one run), else `built` (the bench's
/// own, `env!("CARGO_BIN_EXE_…")`). `name` is only for the message.
pub fn program(name: &str, built: &str) -> String {
    match std::env::var("ZIDANE_BENCH_BIN") {
        Ok(path) if !path.is_empty() => {
            report(&format!("{name} run from"), &path);
            path
        }
        _ => built.to_owned(),
    }
}
