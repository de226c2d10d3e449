//! Seams the agent crate fills: durable steps, sub-agent spawning, and the
//! session that receives turns as they are produced.

use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use zidane_provider::{AbortSignal, AssistantMessage, BoxFuture, SessionTurn};

use crate::events::{ChildRunStats, SharedError, ToolStateOp};
use crate::tool::ToolOutput;

/// What a step produced, typed. The in-memory runtime hands it back as it
/// came (no serialization); a checkpoint runtime serializes it into its
/// record (it is `Serialize` + `Deserialize`) and answers a finished step
/// from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "camelCase")]
pub enum StepValue {
    /// A model call's assistant message.
    Model(AssistantMessage),
    /// A settled tool call.
    Tool(ToolStep),
    /// A loop decision.
    Decision(Value),
    /// A folder checkpoint taken (its snapshot and, when the folder's
    /// state was new, its manifest).
    Checkpoint(Box<crate::checkpoint::JournaledSnapshot>),
}

/// A settled tool call: what the body returned (or how it failed) and the
/// tool-state writes it staged. A checkpoint runtime commits `state` in the
/// same transaction as the step's record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolStep {
    /// The body's output, or its failure message.
    pub outcome: ToolStepOutcome,
    /// Tool-state writes staged by the call, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub state: Vec<ToolStateOp>,
    /// What `tool:gate` handlers kept for the call (`resumeState`): a
    /// resumed call's gate sees it again.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub resume_state: serde_json::Map<String, Value>,
}

/// How a tool body ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ToolStepOutcome {
    /// It returned.
    Output(ToolOutput),
    /// It failed (an error, a panic, a timeout) with this message.
    Failed(String),
}

/// What kind of work a step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepKind {
    /// A provider request (its whole response, retries included).
    ModelCall,
    /// A tool call.
    ToolCall,
    /// A loop decision (continue with a follow-up or stop).
    Decision,
    /// A folder checkpoint (on a replay-mode runtime, so a replay does not
    /// take it again).
    Checkpoint,
}

impl StepKind {
    /// The kind's name in records.
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::ModelCall => "model-call",
            StepKind::ToolCall => "tool-call",
            StepKind::Decision => "decision",
            StepKind::Checkpoint => "checkpoint",
        }
    }
}

/// Whether a step may run again after a crash.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Durability {
    /// Idempotent: a resume runs a pending one again.
    Safe,
    /// Has effects: a resume reports a pending one as interrupted instead
    /// of running it twice. The default for tools.
    #[default]
    Unsafe,
}

/// One step's identity within a run: stable across processes, so a resumed
/// run asks for the same keys as the run that died.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StepKey {
    /// The run.
    pub run_id: String,
    /// The loop turn.
    pub turn: u32,
    /// Kind of step.
    pub kind: StepKind,
    /// Distinguishes steps of one kind in a turn (a call id, a decision's
    /// name).
    pub name: String,
}

/// A step as the loop hands it to the runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Its identity.
    pub key: StepKey,
    /// Whether it may run again after a crash (model calls and decisions
    /// are safe; a tool declares its own).
    pub durability: Durability,
}

/// How a runtime makes runs durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DurableMode {
    /// Nothing is recorded (the default runtime).
    Memory,
    /// Each finished step is recorded; `resume` continues from the records.
    Checkpoint,
    /// A durable-execution engine replays the whole invocation from its
    /// journal.
    Replay,
}

/// Why a step did not produce a value.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StepError {
    /// The work failed (or was stopped); nothing was recorded.
    #[error("{0}")]
    Work(SharedError),
    /// The work finished but the runtime could not record it: `value` is
    /// what it produced (a resume would not find it).
    #[error("the step could not be recorded: {error}")]
    Record {
        /// The store's error.
        error: SharedError,
        /// The step's value.
        value: Box<StepValue>,
    },
    /// Another process took the run over: this one must stop and write
    /// nothing more.
    #[error(transparent)]
    StaleEpoch(#[from] StaleEpochError),
}

/// Another process took over the session's lease (a newer epoch): the run
/// of this process stops at its next step and writes nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("session `{session_id}` was taken over by another process (epoch {current}, this process held {held})")]
pub struct StaleEpochError {
    /// The session.
    pub session_id: String,
    /// The epoch this process held.
    pub held: u64,
    /// The epoch in the store.
    pub current: u64,
}

/// Runs every model call, tool call and loop decision of a run. The work of
/// a step runs inside [`step`](Self::step), so a checkpoint runtime can
/// answer a finished step from its record without running it again.
pub trait DurableRuntime: Send + Sync {
    /// How this runtime makes runs durable.
    fn mode(&self) -> DurableMode {
        DurableMode::Memory
    }

    /// Runs `work` as `step` and records its value, or answers the step
    /// from its record. A failed `work` is not recorded.
    fn step<'a>(
        &'a self,
        step: Step,
        work: BoxFuture<'a, Result<StepValue, SharedError>>,
    ) -> BoxFuture<'a, Result<StepValue, StepError>>;

    /// Whether an earlier process recorded `key` (a finished step of a
    /// resumed run, which [`step`](Self::step) answers without running).
    fn recorded(&self, key: &StepKey) -> bool {
        self.record(key).is_some()
    }

    /// The value an earlier process recorded for `key`, if any.
    fn record(&self, _key: &StepKey) -> Option<StepValue> {
        None
    }
}

/// The default runtime: runs each step, records nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct MemoryRuntime;

impl DurableRuntime for MemoryRuntime {
    fn step<'a>(
        &'a self,
        _step: Step,
        work: BoxFuture<'a, Result<StepValue, SharedError>>,
    ) -> BoxFuture<'a, Result<StepValue, StepError>> {
        Box::pin(async move { work.await.map_err(StepError::Work) })
    }
}

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
        self.children.lock().unwrap_or_else(PoisonError::into_inner).push(stats);
    }

    /// Takes the children recorded since the last call.
    pub fn take(&self) -> Vec<ChildRunStats> {
        std::mem::take(&mut *self.children.lock().unwrap_or_else(PoisonError::into_inner))
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

/// A tool call about to go through the gate, as a [`ToolCallPolicy`] sees
/// it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallRequest {
    /// The canonical tool name.
    pub name: String,
    /// The call id.
    pub call_id: String,
    /// The input the model gave.
    pub input: Value,
    /// The run.
    pub run_id: String,
}

/// What a [`ToolCallPolicy`] decides.
#[derive(Debug, Clone, PartialEq)]
pub enum PolicyVerdict {
    /// The call goes on to the gate.
    Allow,
    /// The call is refused; the model reads `Blocked: <reason>`.
    Deny(String),
    /// The call goes on with this input instead.
    Rewrite(Value),
}

/// Decides each tool call before the gate (the agent's interceptors and
/// approvals). It may take its time: a person may be asked; `signal`
/// aborts with the run.
pub trait ToolCallPolicy: Send + Sync {
    /// Decides `call`.
    fn check<'a>(&'a self, call: &'a ToolCallRequest, signal: &'a AbortSignal) -> BoxFuture<'a, PolicyVerdict>;
}

/// An artifact a tool result declared (its `metadata.artifacts`), with the
/// call that declared it.
#[derive(Debug, Clone, PartialEq)]
pub struct ArtifactRecord {
    /// The artifact.
    pub artifact: crate::events::SessionArtifact,
    /// The call whose result declared it.
    pub call_id: String,
    /// The tool's canonical name.
    pub name: String,
    /// The turn of the call.
    pub turn_id: String,
}

/// Receives turns as the loop produces them. A tool-calling assistant turn
/// arrives together with its tool-results turn, so a store never holds a
/// call without its result.
pub trait TurnSink: Send + Sync {
    /// Persists `turns` (in order), produced by `mark`'s run up to the end
    /// of its loop turn `mark.turn` (0 for the prompt).
    fn flush<'a>(&'a self, turns: &'a [SessionTurn], mark: TurnMark<'a>) -> BoxFuture<'a, Result<(), SharedError>>;

    /// Replaces the whole conversation kept so far with `turns` (a
    /// repaired history). The default keeps nothing.
    fn replace<'a>(&'a self, turns: &'a [SessionTurn]) -> BoxFuture<'a, Result<(), SharedError>> {
        let _ = turns;
        Box::pin(async { Ok(()) })
    }

    /// Keeps the artifacts a batch's results declared, once the batch's
    /// turns are flushed. The default keeps none.
    fn artifacts<'a>(&'a self, records: &'a [ArtifactRecord], mark: TurnMark<'a>) -> BoxFuture<'a, ()> {
        let _ = (records, mark);
        Box::pin(async {})
    }
}

/// Where in a run a flush happens: a checkpoint store keeps it with the
/// turns, so a resume knows which loop turn the saved turns end at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnMark<'a> {
    /// The run that produced the turns.
    pub run_id: &'a str,
    /// The loop turn the flushed turns complete (0: the prompt, or
    /// messages queued before the first request).
    pub turn: u32,
}

/// What a compactor sees before a provider request.
#[derive(Debug)]
pub struct CompactCheck<'a> {
    /// The run.
    pub run_id: &'a str,
    /// The loop turn about to be requested.
    pub turn: u32,
    /// The conversation.
    pub turns: &'a [SessionTurn],
    /// Input tokens of the last request (input + cache read + cache write),
    /// when one was made.
    pub last_input_tokens: Option<u64>,
    /// The run's abort signal: a compaction in progress stops with the run.
    pub signal: &'a AbortSignal,
}

/// Checked before every provider request (between tool batches too); may
/// replace the conversation with a compacted one. Implemented by the agent.
pub trait Compactor: Send + Sync {
    /// Whether a check with these figures could compact at all; the loop
    /// builds a [`CompactCheck`] (a copy of the transcript) only when this
    /// says yes. Default: always.
    fn wants_check(&self, _last_input_tokens: Option<u64>) -> bool {
        true
    }

    /// The compacted conversation, or `None` to leave it as is.
    fn before_request<'a>(&'a self, check: CompactCheck<'a>) -> BoxFuture<'a, Option<Vec<SessionTurn>>>;
}
