//! Seams the agent crate fills: durable steps, sub-agent spawning, and the
//! session that receives turns as they are produced.

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
}

impl StepKind {
    /// The kind's name in records.
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::ModelCall => "model-call",
            StepKind::ToolCall => "tool-call",
            StepKind::Decision => "decision",
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
    /// The task for the child.
    pub prompt: String,
    /// Name of a configured sub-agent, if any.
    pub agent: Option<String>,
    /// The spawning run.
    pub parent_run_id: String,
    /// Depth of the child (1 for a direct child).
    pub depth: u32,
}

/// Starts sub-agents; implemented by the agent crate, called by its spawn
/// tool.
pub trait Spawner: Send + Sync {
    /// Runs a child to completion.
    fn spawn(&self, request: SpawnRequest) -> BoxFuture<'_, Result<ChildRunStats, SharedError>>;
}

/// Receives turns as the loop produces them. A tool-calling assistant turn
/// arrives together with its tool-results turn, so a store never holds a
/// call without its result.
pub trait TurnSink: Send + Sync {
    /// Persists `turns` (in order), produced by `mark`'s run up to the end
    /// of its loop turn `mark.turn` (0 for the prompt).
    fn flush<'a>(&'a self, turns: &'a [SessionTurn], mark: TurnMark<'a>) -> BoxFuture<'a, Result<(), SharedError>>;
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
