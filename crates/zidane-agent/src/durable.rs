//! `AgentOptions::durable`: the checkpoint backend a durable agent records
//! its runs in, and what `run()` does with a run a dead process left.
//!
//! The agent's side of it (the lease, resume and heal) is in
//! [`resume`](crate::resume); the SQLite backend is
//! [`CheckpointRuntime`](crate::CheckpointRuntime) (feature `sqlite`).

use std::sync::Arc;

use zidane_core::durable::{CheckpointBackend, OnInterrupted};

/// `AgentOptions::durable`: the backend and what `run()` does with an
/// interrupted run.
#[derive(Clone)]
pub struct DurableOptions {
    /// The checkpoint backend (its store holds the sessions).
    pub runtime: Arc<dyn CheckpointBackend>,
    /// What `run()` does with a run a dead process left.
    pub on_interrupted: OnInterrupted,
}

impl DurableOptions {
    /// `backend`, healing interrupted runs.
    pub fn new(backend: Arc<dyn CheckpointBackend>) -> Self {
        DurableOptions {
            runtime: backend,
            on_interrupted: OnInterrupted::Heal,
        }
    }
}

impl std::fmt::Debug for DurableOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DurableOptions")
            .field("on_interrupted", &self.on_interrupted)
            .finish_non_exhaustive()
    }
}

impl<B: CheckpointBackend + 'static> From<Arc<B>> for DurableOptions {
    fn from(backend: Arc<B>) -> Self {
        DurableOptions::new(backend)
    }
}

impl From<Arc<dyn CheckpointBackend>> for DurableOptions {
    fn from(backend: Arc<dyn CheckpointBackend>) -> Self {
        DurableOptions::new(backend)
    }
}

/// Whether a step's value is kept as a turn right after the step (an
/// answer that calls no tool: the saved turn is its record, and a resume
/// that finds it ends the run), so a checkpoint backend records nothing
/// for it.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn kept_as_turn(value: &zidane_core::durable::StepValue) -> bool {
    matches!(value, zidane_core::durable::StepValue::Model(message)
        if message.incomplete_tool_calls.is_empty()
            && !message
                .content
                .iter()
                .any(|b| matches!(b, zidane_provider::ContentBlock::ToolUse { .. })))
}

/// The records of `run_id` by their step keys (what a resume answers from).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn keyed_records<'a>(
    run_id: &'a str,
    records: &'a [zidane_core::durable::StepRecord],
) -> impl Iterator<Item = (zidane_core::durable::StepKey, zidane_core::durable::StepValue)> + 'a {
    records.iter().map(move |r| {
        (
            zidane_core::durable::StepKey {
                run_id: run_id.to_owned(),
                turn: r.turn,
                kind: r.kind,
                name: r.name.clone(),
            },
            r.value.clone(),
        )
    })
}

/// This machine's name, as a lease records its holder's host.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_owned())
}
