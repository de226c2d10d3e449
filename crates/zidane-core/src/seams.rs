//! Seams the agent crate fills: durable steps, sub-agent spawning, and the
//! session that receives turns as they are produced.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use zidane_provider::{AbortSignal, AssistantMessage, BoxFuture, SessionTurn};

use crate::events::{ChildRunStats, SharedError};
use crate::tool::ToolOutput;

/// What a step produced, typed. The in-memory runtime hands it back as it
/// came (no serialization); a durable runtime serializes it into its record
/// (it is `Serialize` + `Deserialize`) and answers a finished step from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "camelCase")]
pub enum StepValue {
    /// A model call's assistant message.
    Model(AssistantMessage),
    /// A tool call's output.
    Tool(ToolOutput),
    /// A loop decision.
    Decision(Value),
}

/// What kind of work a step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StepKind {
    /// A provider request (its whole response).
    ModelCall,
    /// A tool call.
    ToolCall,
    /// A loop decision (continue with a follow-up or stop).
    Decision,
}

/// One step's identity within a run.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StepKey {
    /// The run.
    pub run_id: String,
    /// The loop turn.
    pub turn: u32,
    /// Kind of step.
    pub kind: StepKind,
    /// Distinguishes steps of one kind in a turn (a call id, an attempt).
    pub name: String,
}

/// Runs every model call, tool call and loop decision of a run. A durable
/// runtime records each outcome and answers finished steps from its records
/// after a crash; the in-memory runtime just runs them.
pub trait DurableRuntime: Send + Sync {
    /// Runs `work` as the step `key` (or answers it from a record).
    fn step<'a>(
        &'a self,
        key: StepKey,
        work: BoxFuture<'a, Result<StepValue, SharedError>>,
    ) -> BoxFuture<'a, Result<StepValue, SharedError>>;
}

/// The default runtime: runs each step, records nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct MemoryRuntime;

impl DurableRuntime for MemoryRuntime {
    fn step<'a>(
        &'a self,
        _key: StepKey,
        work: BoxFuture<'a, Result<StepValue, SharedError>>,
    ) -> BoxFuture<'a, Result<StepValue, SharedError>> {
        work
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
    /// Persists `turns` (in order).
    fn flush<'a>(&'a self, turns: &'a [SessionTurn]) -> BoxFuture<'a, Result<(), SharedError>>;
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
