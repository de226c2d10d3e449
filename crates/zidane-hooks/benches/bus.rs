//! Hot-path costs of the hook bus, as medians of repeated batches.
//!
//! `cargo bench -p zidane-hooks` (or `cargo xtask bench`).
#![allow(missing_docs, clippy::print_stdout, clippy::unwrap_used)]

use std::hint::black_box;
use std::time::Instant;

use zidane_hooks::{HookBus, HookEvent};

struct Token {
    delta_len: usize,
    seen: u32,
}
impl HookEvent for Token {
    const NAME: &'static str = "bench:token";
}

struct Other;
impl HookEvent for Other {
    const NAME: &'static str = "bench:other";
}

/// Drives a future that completes without waking.
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

/// Median nanoseconds per call over `batches` batches of `iters` calls.
///
/// Under `cargo test` (no `--bench` argument) each body runs a few times as a
/// smoke test and nothing is reported.
fn measure(label: &str, iters: u32, mut body: impl FnMut()) {
    const BATCHES: usize = 31;
    if !std::env::args().any(|a| a == "--bench") {
        for _ in 0..16 {
            body();
        }
        println!("{label:<48} ran (smoke test; `cargo bench` measures)");
        return;
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
    let median = per_call[BATCHES / 2];
    let (lo, hi) = (per_call[BATCHES / 4], per_call[3 * BATCHES / 4]);
    println!("{label:<48} median {median:>8.1} ns   (IQR {lo:.1}..{hi:.1})");
}

fn main() {
    let empty = HookBus::new();
    measure("emit, empty bus", 1_000_000, || {
        let mut ev = Token {
            delta_len: 3,
            seen: 0,
        };
        block_on(black_box(&empty).emit(&mut ev)).unwrap();
        black_box(ev.seen);
    });
    measure("has, empty bus", 1_000_000, || {
        black_box(black_box(&empty).has::<Token>());
    });

    // Handlers on another event: the lookup path, not the empty-bus shortcut.
    let busy = HookBus::new();
    for _ in 0..3 {
        busy.on_sync::<Other, _>(|_, _| Ok(()));
    }
    measure(
        "emit, no handler for this event (bus in use)",
        1_000_000,
        || {
            let mut ev = Token {
                delta_len: 3,
                seen: 0,
            };
            block_on(black_box(&busy).emit(&mut ev)).unwrap();
            black_box(ev.seen);
        },
    );
    measure(
        "has, no handler for this event (bus in use)",
        1_000_000,
        || {
            black_box(black_box(&busy).has::<Token>());
        },
    );

    let three = HookBus::new();
    for _ in 0..3 {
        three.on_sync::<Token, _>(|ev, _| {
            ev.seen += u32::try_from(ev.delta_len).unwrap_or(0);
            Ok(())
        });
    }
    measure("emit, three sync handlers", 500_000, || {
        let mut ev = Token {
            delta_len: 3,
            seen: 0,
        };
        block_on(black_box(&three).emit(&mut ev)).unwrap();
        black_box(ev.seen);
    });

    let three_async = HookBus::new();
    for _ in 0..3 {
        three_async.on::<Token, _>(|ev, _| {
            Box::pin(async move {
                ev.seen += 1;
                Ok(())
            })
        });
    }
    measure("emit, three async handlers", 500_000, || {
        let mut ev = Token {
            delta_len: 3,
            seen: 0,
        };
        block_on(black_box(&three_async).emit(&mut ev)).unwrap();
        black_box(ev.seen);
    });
}
