//! Hot-path costs of the hook bus, as medians of repeated batches.
//!
//! `cargo bench -p zidane-hooks` (or `cargo xtask bench`).
#![allow(missing_docs, clippy::unwrap_used)]

use std::hint::black_box;

use zidane_bench::{block_on, measure};

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

fn main() {
    let empty = HookBus::new();
    measure("emit, empty bus", 1_000_000, || {
        let mut ev = Token { delta_len: 3, seen: 0 };
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
    measure("emit, no handler for this event (bus in use)", 1_000_000, || {
        let mut ev = Token { delta_len: 3, seen: 0 };
        block_on(black_box(&busy).emit(&mut ev)).unwrap();
        black_box(ev.seen);
    });
    measure("has, no handler for this event (bus in use)", 1_000_000, || {
        black_box(black_box(&busy).has::<Token>());
    });

    let three = HookBus::new();
    for _ in 0..3 {
        three.on_sync::<Token, _>(|ev, _| {
            ev.seen += u32::try_from(ev.delta_len).unwrap_or(0);
            Ok(())
        });
    }
    measure("emit, three sync handlers", 500_000, || {
        let mut ev = Token { delta_len: 3, seen: 0 };
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
        let mut ev = Token { delta_len: 3, seen: 0 };
        block_on(black_box(&three_async).emit(&mut ev)).unwrap();
        black_box(ev.seen);
    });
}
