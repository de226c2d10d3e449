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

/// What a checkpoint runtime keeps in memory about the runs it records:
/// which session each run writes to, the records a resumed run answers
/// from, and the sessions it may no longer write (a stale epoch). Both
/// backends keep one and answer a step's first question from it.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[derive(Default)]
pub(crate) struct RunBook {
    /// Runs being recorded, with their session.
    pub(crate) runs: std::collections::HashMap<String, String>,
    /// Records an earlier process left, answered without running.
    pub(crate) records: std::collections::HashMap<zidane_core::durable::StepKey, zidane_core::durable::StepValue>,
    /// Sessions another process took over (or whose lease was lost).
    pub(crate) stale: std::collections::HashMap<String, zidane_core::durable::StaleEpochError>,
}

/// What the book says about a step about to run.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) enum Lookup {
    /// An earlier process recorded it: its value.
    Recorded(zidane_core::durable::StepValue),
    /// Not a run of this runtime's sessions: nothing to record.
    Unbound,
    /// The session is another process's now.
    Stale(zidane_core::durable::StaleEpochError),
    /// Run it and record it in this session.
    Live(String),
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
impl RunBook {
    pub(crate) fn lookup(&self, key: &zidane_core::durable::StepKey) -> Lookup {
        if let Some(value) = self.records.get(key) {
            return Lookup::Recorded(value.clone());
        }
        let Some(session) = self.runs.get(&key.run_id) else {
            return Lookup::Unbound;
        };
        match self.stale.get(session) {
            Some(stale) => Lookup::Stale(stale.clone()),
            None => Lookup::Live(session.clone()),
        }
    }

    pub(crate) fn bind(&mut self, run_id: &str, session_id: &str) {
        self.runs.insert(run_id.to_owned(), session_id.to_owned());
    }

    /// Stops recording `run_id` and forgets its records: the session it wrote to.
    pub(crate) fn unbind(&mut self, run_id: &str) -> Option<String> {
        self.records.retain(|k, _| k.run_id != run_id);
        self.runs.remove(run_id)
    }

    /// Makes `records` the answers of `run_id`'s steps.
    pub(crate) fn load(&mut self, run_id: &str, records: &[zidane_core::durable::StepRecord]) {
        self.records.extend(records.iter().map(|r| {
            (
                zidane_core::durable::StepKey {
                    run_id: run_id.to_owned(),
                    turn: r.turn,
                    kind: r.kind,
                    name: r.name.clone(),
                },
                r.value.clone(),
            )
        }));
    }
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
