//! Sub-agent spawning: what a spawn asks for and hands back, the spawner the
//! agent implements, and the ledger of a run's children.

use parking_lot::Mutex;
use std::sync::Arc;

use zidane_provider::{AbortSignal, BoxFuture};

use crate::events::{ChildRunStats, SharedError};

/// What a spawn asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct SpawnRequest {
    /// The task for the child, self-contained: the child sees nothing of
    /// the parent's conversation.
    pub task: String,
    /// Name of a configured sub-agent, if any.
    pub agent: Option<String>,
    /// A short label for the task (what a host shows for the child).
    pub description: Option<String>,
    /// The spawning tool call (the child's id is derived from it, so a
    /// resumed run finds the same child again).
    pub call_id: String,
    /// The spawning run.
    pub parent_run_id: String,
    /// What the spawning run may still spend: the child's own caps are at
    /// most this.
    pub budget: SpawnBudget,
}

/// What a run may still spend when it spawns (unset: no cap).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SpawnBudget {
    /// USD left under the run's cost cap.
    pub max_cost_usd: Option<f64>,
    /// Tokens left under the run's token cap.
    pub max_total_tokens: Option<u64>,
}

/// What a finished child hands back.
#[derive(Debug, Clone, PartialEq)]
pub struct SpawnResult {
    /// The child's final answer.
    pub answer: String,
    /// The child's statistics.
    pub stats: ChildRunStats,
}

/// Why a spawn did not produce an answer. Each is a tool error for the
/// parent's model, never a failed parent run.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// The child would sit deeper than the configured limit.
    #[error("sub-agents may not spawn past depth {max}: this agent is at depth {depth}; do the task yourself")]
    DepthLimit {
        /// The spawning agent's depth.
        depth: u32,
        /// The configured limit.
        max: u32,
    },
    /// A sub-agent's spawn found every slot taken (a top-level spawn waits
    /// instead).
    #[error("every sub-agent slot is taken ({limit} running); do the task yourself or try again later")]
    SlotsFull {
        /// The slot limit.
        limit: u32,
    },
    /// The named sub-agent is not configured.
    #[error("there is no sub-agent named `{name}`; known: {known}")]
    UnknownAgent {
        /// The name asked for.
        name: String,
        /// The configured names, comma separated (`none` when there are none).
        known: String,
    },
    /// Nothing can spawn here (a bare loop, a call outside a run).
    #[error("sub-agents are not available here; do the task yourself")]
    Unavailable,
    /// The task was empty.
    #[error("the task is empty: say what the sub-agent should do")]
    EmptyTask,
    /// The child was aborted or cancelled before it answered.
    #[error("the sub-agent was stopped before it answered: {reason}")]
    Aborted {
        /// The abort reason.
        reason: String,
        /// What the child had done by then.
        stats: Option<Box<ChildRunStats>>,
    },
    /// The child's run failed.
    #[error("the sub-agent failed: {error}")]
    Failed {
        /// The failure.
        error: SharedError,
        /// What the child had done by then.
        stats: Option<Box<ChildRunStats>>,
    },
}

impl SpawnError {
    /// What the child had done before it stopped or failed, when it ran.
    pub fn stats(&self) -> Option<&ChildRunStats> {
        match self {
            SpawnError::Aborted { stats, .. } | SpawnError::Failed { stats, .. } => stats.as_deref(),
            _ => None,
        }
    }
}

/// A configured sub-agent as the spawn tool lists it to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentSummary {
    /// Its name (what the model passes as `agent`).
    pub name: String,
    /// What it is for.
    pub description: String,
}

/// Starts sub-agents; implemented by the agent crate, reached by tools
/// through [`ToolContext::spawn`](crate::tool::ToolContext::spawn).
pub trait Spawner: Send + Sync {
    /// Runs a child to completion and records its statistics in `ledger`
    /// when it ends. `signal` aborts the child (the spawning call's signal:
    /// a cancelled call or an aborted run stops it), and so does dropping
    /// the returned future; the child still reports to `ledger` then.
    fn spawn(
        &self,
        request: SpawnRequest,
        signal: AbortSignal,
        ledger: ChildLedger,
    ) -> BoxFuture<'_, Result<SpawnResult, SpawnError>>;
}

/// Where a run's children leave their statistics when they end: the loop
/// adds their usage to the run's totals (and budgets) and lists them in
/// [`AgentStats::children`](crate::events::AgentStats::children). A child
/// that ends after its spawning call was dropped (an abort) still reports
/// here.
#[derive(Debug, Clone, Default)]
pub struct ChildLedger {
    children: Arc<Mutex<Vec<ChildRunStats>>>,
}

impl ChildLedger {
    /// Keeps a finished (or stopped, or failed) child's statistics.
    pub fn record(&self, stats: ChildRunStats) {
        self.children.lock().push(stats);
    }

    /// Takes the children recorded since the last call.
    pub fn take(&self) -> Vec<ChildRunStats> {
        std::mem::take(&mut *self.children.lock())
    }
}

/// A run's way to start sub-agents, with the ledger of those it ran.
#[derive(Clone, Default)]
pub struct Spawning {
    spawner: Option<Arc<dyn Spawner>>,
    ledger: ChildLedger,
    budget: SpawnBudget,
}

impl std::fmt::Debug for Spawning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spawning")
            .field("enabled", &self.spawner.is_some())
            .finish_non_exhaustive()
    }
}

impl Spawning {
    /// Spawning through `spawner`, with an empty ledger.
    pub fn new(spawner: Arc<dyn Spawner>) -> Self {
        Spawning {
            spawner: Some(spawner),
            ledger: ChildLedger::default(),
            budget: SpawnBudget::default(),
        }
    }

    /// The same spawning, for a call of a run that may still spend
    /// `budget`.
    pub fn with_budget(&self, budget: SpawnBudget) -> Self {
        Spawning { budget, ..self.clone() }
    }

    /// What the spawning run may still spend.
    pub fn budget(&self) -> SpawnBudget {
        self.budget
    }

    /// Whether a spawner is present.
    pub fn is_enabled(&self) -> bool {
        self.spawner.is_some()
    }

    /// Runs a child; its statistics reach the ledger when it ends.
    pub async fn spawn(&self, request: SpawnRequest, signal: AbortSignal) -> Result<SpawnResult, SpawnError> {
        let Some(spawner) = &self.spawner else {
            return Err(SpawnError::Unavailable);
        };
        spawner.spawn(request, signal, self.ledger.clone()).await
    }

    /// The ledger of the children that ended.
    pub fn ledger(&self) -> &ChildLedger {
        &self.ledger
    }
}
