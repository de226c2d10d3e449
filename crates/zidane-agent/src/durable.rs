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
