//! The agent run loop of zidane and the vocabulary it speaks on the hook bus.
//!
//! [`events`] holds one Rust type per `AgentHooks` event of the spec (122 of
//! them), named by the spec's exact string through
//! [`zidane_hooks::HookEvent::NAME`], and the [`events::CATALOGUE`] that lists
//! each with its emitting crate and whether handlers may write to it.
//!
//! Architecture invariant: this crate defines every hook payload (the crates
//! above emit into the same bus), but it emits only loop events itself. It
//! never connects MCP servers or builds agents; spawning goes through a trait
//! that `zidane-agent` implements.

pub mod behavior;
pub mod clock;
mod dispatch;
mod error;
pub mod events;
pub mod pairing;
mod run;
pub mod seams;
pub mod tool;
pub mod validate;

pub use behavior::{Behavior, RepeatGuard, RepeatMode, RetryPolicy, ToolBudget};
pub use clock::{Clock, FixedClock, SystemClock};
pub use error::{RunError, RunErrorKind};
pub use run::{LoopConfig, ModelRef, RunLoop, RunOptions};
pub use tool::{FnTool, Tool, ToolContext, ToolOutput, ToolSet};

/// Runs futures concurrently on the current task (no spawning, so they may
/// borrow); the outputs come back in input order.
pub async fn join_all<F: std::future::Future>(futures: Vec<F>) -> Vec<F::Output> {
    use std::pin::Pin;
    use std::task::Poll;
    let mut pending: Vec<Option<Pin<Box<F>>>> = futures.into_iter().map(|f| Some(Box::pin(f))).collect();
    let mut outputs: Vec<Option<F::Output>> = pending.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut done = true;
        for (slot, out) in pending.iter_mut().zip(outputs.iter_mut()) {
            if let Some(f) = slot {
                match f.as_mut().poll(cx) {
                    Poll::Ready(v) => {
                        *out = Some(v);
                        *slot = None;
                    }
                    Poll::Pending => done = false,
                }
            }
        }
        if done { Poll::Ready(()) } else { Poll::Pending }
    })
    .await;
    outputs.into_iter().flatten().collect()
}
