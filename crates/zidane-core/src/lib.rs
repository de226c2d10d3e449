//! The contracts of zidane: what the run loop, the tools, MCP, telemetry and
//! the agent agree on, in a crate small enough for any of them (and any
//! extension author) to depend on.
//!
//! - [`events`]: one Rust type per `AgentHooks` event of the spec (122), named
//!   by the spec's string through [`zidane_hooks::HookEvent::NAME`], and the
//!   [`events::CATALOGUE`] of them;
//! - [`tool`]: the [`Tool`] trait, the [`ToolContext`] a call runs with, the
//!   [`ToolSet`] an agent offers and durable tool state;
//! - [`execution`]: where tools run, the [`ExecutionContext`] trait and the
//!   live [`Workspace`] pair a call acts through;
//! - [`durable`]: durable steps, the runtime the loop runs each through, and
//!   the checkpoint backend a durable agent keeps its sessions and leases in;
//! - [`session`]: sessions, their runs, and the [`SessionStore`] they live in;
//! - [`clock`]: where a run gets its timestamps, ids and jitter;
//! - [`spawn`], [`policy`], [`sink`], [`compact`]: the seams the loop calls
//!   and the agent (or a host) implements (sub-agents, the tool-call policy,
//!   the turn sink, the compactor); [`seams`] names them under their former
//!   path;
//! - [`read_state`]: what the tools read this session;
//! - [`credentials`]: which environment variables hold credentials (by
//!   name, and by value with gitleaks' published rules);
//! - [`checkpoint`]: folder snapshots and the store that keeps them;
//! - [`private`]: files and folders only their owner may read.
//!
//! Architecture invariant: this crate defines contracts and holds no engine.
//! It depends on the hook bus and the provider vocabulary only, never on the
//! loop, a runtime (no tokio) or a schema validator; every crate above it
//! stands beside the others.

pub mod bubble;
pub mod checkpoint;
pub mod clock;
pub mod compact;
pub mod credentials;
pub mod durable;
pub mod events;
pub mod execution;
pub mod policy;
pub mod private;
pub mod read_state;
pub mod seams;
pub mod session;
pub mod sink;
pub mod spawn;
pub mod tool;

pub use clock::{Clock, SystemClock};
pub use execution::{ExecutionContext, Workspace};
pub use session::SessionStore;
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
