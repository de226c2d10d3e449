//! The `AgentHooks` vocabulary: one type per hook of the spec.
//!
//! Each type's [`HookEvent::NAME`] is the spec's string (`"tool:gate"`).
//! Fields handlers may write are `pub`; everything else is read through a
//! getter. Sub-agent events bubbled to the parent are [`Child<E>`] of the
//! child's own event (`ChildStreamText = Child<StreamText>`), except the three
//! `child:spawn:*` events, which describe a grandchild and have their own
//! shapes.
//!
//! [`CATALOGUE`] lists every hook with its Rust type, emitting crate and
//! whether it is a decision (mutable) or an observation; `docs/hooks.md` is
//! generated from it.

use std::collections::BTreeMap;

use serde_json::Value;
use zidane_hooks::{Bubble, Child, HookEvent, HookSpec};
use zidane_provider::{ContentBlock, Message, SessionTurn, StreamOptions, ToolResultContent, TurnUsage};

#[macro_use]
mod docs;
#[macro_use]
mod macros;
mod gate;
#[cfg(test)]
mod tests;
mod types;

pub use gate::{BLOCKED_DEFAULT_REASON, GateDecision};
pub use types::*;

/// Which crate emits a hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Emitter {
    /// The run loop.
    Loop,
    /// The agent (sessions, compaction, sub-agents, skills, background tasks).
    Agent,
    /// The MCP client.
    Mcp,
    /// The prompt-cache telemetry logger.
    CacheTelemetry,
    /// Adapters outside the core: tracing exporters, durable runtimes.
    Adapter,
}

impl Emitter {
    /// The emitting crate, or a description for adapters.
    pub fn crate_name(self) -> &'static str {
        match self {
            Emitter::Loop => emitter_crate!(Loop),
            Emitter::Agent => emitter_crate!(Agent),
            Emitter::Mcp => emitter_crate!(Mcp),
            Emitter::CacheTelemetry => emitter_crate!(CacheTelemetry),
            Emitter::Adapter => emitter_crate!(Adapter),
        }
    }
}

/// One catalogue row.
#[derive(Debug, Clone, Copy)]
pub struct HookInfo {
    /// The spec name.
    pub name: &'static str,
    /// The Rust type in [`crate::events`].
    pub rust_type: &'static str,
    /// Who emits it.
    pub emitter: Emitter,
    /// Whether handlers' writes are read back (a decision or transform).
    pub mutable: bool,
    /// Whether anything emits it yet. A hook marked `false` is part of the
    /// vocabulary (its type exists, handlers may be registered) but no crate
    /// fires it; `cargo xtask codegen --check` fails when the mark is wrong
    /// either way.
    pub emitted: bool,
    /// One line on what it reports.
    pub summary: &'static str,
    /// How to register a name-keyed handler on it.
    pub spec: HookSpec,
}

/// The catalogue row of `name`.
pub fn hook_info(name: &str) -> Option<&'static HookInfo> {
    CATALOGUE.iter().find(|h| h.name == name)
}

hooks! {
    /// The run was aborted; once per aborted run, whatever path the abort took.
    "agent:abort" => AgentAbort by Loop {
        ostr reason,
        ostr run_id,
    }
    /// The run finished, on every exit path, with cumulative statistics.
    "agent:done" => AgentDone by Loop {
        get stats: AgentStats,
    }
    /// A run started; before its first turn.
    "agent:start" => AgentStart by Loop {
        ostr agent_name,
        val depth: u32,
        ostr parent_run_id,
        ostr provider_name,
        str run_id,
        val started_at: u64,
        get tracing_context: BTreeMap<String, String>,
    }
    /// The session stored an artifact a tool result declared.
    "artifact:recorded" => ArtifactRecorded by Agent, planned {
        get artifact: SessionArtifact,
        str call_id,
        str name,
        str run_id,
        str turn_id,
    }
    /// A running background task was handed over to this agent.
    "background:adopt" => BackgroundAdopt by Agent, planned {
        str command,
        str cwd,
        str output_path,
        val pid: u32,
        val started_at: u64,
        str task_id,
    }
    /// A background task's process ended; once per task.
    "background:exit" => BackgroundExit by Agent, planned {
        str command,
        val duration_ms: u64,
        val exit_code: i32,
        str output_path,
        ostr signal,
        val status: TaskStatus,
        str task_id,
    }
    /// A background task moved from one execution handle to another.
    "background:reassign" => BackgroundReassign by Agent, planned {
        ostr child_id,
        str command,
        str from_handle_id,
        str output_path,
        val pid: u32,
        val started_at: u64,
        str task_id,
        str to_handle_id,
    }
    /// Background exits about to be shown to the model; handlers may edit the list.
    "background:reconcile" => BackgroundReconcile by Agent, planned {
        set exits: Vec<TaskExitInfo>,
    }
    /// A background task produced no output for the watchdog's window.
    "background:stall" => BackgroundStall by Agent, planned {
        val bytes_written: u64,
        str command,
        str output_path,
        val stalled_for_ms: u64,
        str task_id,
    }
    /// A background task was spawned.
    "background:start" => BackgroundStart by Agent, planned {
        str command,
        str cwd,
        str output_path,
        val pid: u32,
        val started_at: u64,
        str task_id,
    }
    /// A turn's tool output exceeded the byte budget.
    "budget:exceeded" => BudgetExceeded by Loop {
        val budget: u64,
        val bytes: u64,
        val turn: u32,
        str turn_id,
    }
    /// A turn read back materially less cached prefix than the previous one established.
    "cache:break" => CacheBreak by CacheTelemetry {
        get info: CacheBreakInfo,
    }
    /// The outgoing request differs from the previous turn's in a cache-relevant way.
    "cache:drift" => CacheDrift by CacheTelemetry {
        get info: CacheDriftInfo,
    }
    /// A sub-agent's sub-agent is about to start (seen from an ancestor).
    "child:spawn:before" => ChildSpawnBefore by Agent, planned {
        get spawn: SpawnHookContext,
        ostr parent_child_id,
        val depth: u32,
    }
    /// A sub-agent's sub-agent finished (seen from an ancestor).
    "child:spawn:complete" => ChildSpawnComplete by Agent, planned {
        get stats: ChildRunStats,
        ostr parent_child_id,
        val depth: u32,
    }
    /// A sub-agent's sub-agent failed (seen from an ancestor).
    "child:spawn:error" => ChildSpawnError by Agent, planned {
        get spawn: SpawnHookContext,
        ostr parent_child_id,
        val depth: u32,
        get error: SharedError,
    }
    /// A compaction finished, successfully or not; exactly once per `compact:start`.
    "compact:end" => CompactEnd by Agent {
        val reason: CompactReason,
        val status: CompactStatus,
        val replaced: u32,
        val dropped: u32,
        val restored: u32,
        oval effective_tokens: u64,
        get error: Option<SharedError>,
    }
    /// The compaction summary is streaming; a rough output-token estimate.
    "compact:progress" => CompactProgress by Agent {
        val reason: CompactReason,
        val est_output_tokens: u64,
    }
    /// A compaction is building the turns it keeps after the summary; handlers may add calls.
    "compact:restore" => CompactRestore by Agent {
        ostr session_id,
        hide added: Vec<RestoredCall>,
    }
    /// A compaction is about to summarize older turns.
    "compact:start" => CompactStart by Agent {
        val reason: CompactReason,
        val turns: u32,
        val estimated_tokens: u64,
    }
    /// A block refers to persisted bytes; handlers supply them for the wire.
    "content-ref:resolve" => ContentRefResolve by Loop, planned {
        get block: ContentRefBlock,
        ostr child_id,
        oval depth: u32,
        set data: Option<String>,
    }
    /// The provider said the context is too long; an emergency elision follows.
    "context:overflow" => ContextOverflow by Loop {
        str run_id,
        val turn: u32,
        str turn_id,
        str model,
        val attempt: u32,
        get err: SharedError,
    }
    /// The messages of the next request; handlers may rewrite them.
    "context:transform" => ContextTransform by Loop {
        set messages: Vec<Message>,
    }
    /// A decision finished, successfully or not.
    "decision:end" => DecisionEnd by Agent {
        str kind,
        val ok: bool,
        ostr reason,
        get answers: Option<Value>,
        get usage: Option<TurnUsage>,
        val duration_ms: u64,
    }
    /// A decision request started.
    "decision:start" => DecisionStart by Agent {
        str kind,
        ostr provider,
        ostr model,
        get request: Value,
    }
    /// The execution handle was bound for the first time; once per agent.
    "execution:ready" => ExecutionReady by Agent {
        get handle: ExecutionHandle,
        val spawned: bool,
    }
    /// Reasoning state the provider rejected was scrubbed from history.
    "history:repair" => HistoryRepair by Loop, planned {
        get turn_ids: Vec<String>,
        str reason,
        str run_id,
    }
    /// An interactive MCP login failed.
    "mcp:auth:error" => McpAuthError by Mcp, planned {
        str name,
        get error: SharedError,
    }
    /// An MCP server needs a login before it can bootstrap.
    "mcp:auth:required" => McpAuthRequired by Mcp {
        str name,
        val reason: McpAuthReason,
        val transport: McpTransport,
    }
    /// An interactive MCP login succeeded and tokens were stored.
    "mcp:auth:success" => McpAuthSuccess by Mcp, planned {
        str name,
    }
    /// An interactive MCP login wants the user to open a URL.
    "mcp:auth:url" => McpAuthUrl by Mcp, planned {
        str name,
        str url,
    }
    /// One MCP server's bootstrap attempt ended.
    "mcp:bootstrap:end" => McpBootstrapEnd by Mcp {
        str name,
        val transport: McpTransport,
        val duration_ms: u64,
        get outcome: McpBootstrapOutcome,
    }
    /// Every server of a bootstrap batch has settled; results sorted by name.
    "mcp:bootstrap:settled" => McpBootstrapSettled by Mcp {
        get results: Vec<McpBootstrapResult>,
    }
    /// One MCP server's bootstrap attempt starts.
    "mcp:bootstrap:start" => McpBootstrapStart by Mcp {
        str name,
        val transport: McpTransport,
    }
    /// An MCP connection was closed.
    "mcp:close" => McpClose by Mcp {
        str name,
    }
    /// An MCP client finished its handshake.
    "mcp:connect" => McpConnect by Mcp {
        val lazy: bool,
        str name,
        get tools: Vec<String>,
        val transport: McpTransport,
    }
    /// An MCP server failed to connect or failed fatally.
    "mcp:error" => McpError by Mcp {
        str name,
        get error: SharedError,
    }
    /// An MCP tool call returned.
    "mcp:tool:after" => McpToolAfter by Mcp {
        str server,
        str tool,
        str name,
        str call_id,
        get input: Value,
        val output_bytes: usize,
        get result: ToolResultContent,
    }
    /// An MCP tool call is about to be sent.
    "mcp:tool:before" => McpToolBefore by Mcp {
        str server,
        str tool,
        str name,
        str call_id,
        get input: Value,
    }
    /// An MCP tool call failed.
    "mcp:tool:error" => McpToolError by Mcp {
        str server,
        str tool,
        str name,
        str call_id,
        get input: Value,
        get error: SharedError,
    }
    /// Decide an MCP tool call inside the MCP wrapper: refuse it or substitute a result.
    "mcp:tool:gate" => McpToolGate by Mcp {
        str server,
        str tool,
        str name,
        str call_id,
        get input: Value,
        set block: bool,
        set reason: String,
        set result: Option<ToolResultContent>,
    }
    /// An MCP tool result before it is returned; handlers may rewrite it.
    "mcp:tool:transform" => McpToolTransform by Mcp {
        str server,
        str tool,
        str name,
        str call_id,
        get input: Value,
        val output_bytes: usize,
        set result: ToolResultContent,
    }
    /// A server's tools after the config filters; handlers may narrow the list.
    "mcp:tools:filter" => McpToolsFilter by Mcp {
        str server,
        set tools: Vec<McpToolSchema>,
        val transport: McpTransport,
    }
    /// The raw tool list a server advertised.
    "mcp:tools:list" => McpToolsList by Mcp {
        str name,
        get tools: Vec<McpToolSchema>,
        val transport: McpTransport,
    }
    /// A diagnostic line from an MCP server (its stderr, a soft failure).
    "mcp:warn" => McpWarn by Mcp {
        str message,
        str name,
    }
    /// The run moved to the next provider and model of its fallback chain.
    "model:fallback" => ModelFallback by Loop {
        str run_id,
        val turn: u32,
        str turn_id,
        str model,
        val discarded_thinking: bool,
        get err: SharedError,
        get from: ModelTarget,
        val target_index: u32,
        get to: ModelTarget,
    }
    /// The provider refreshed its OAuth credentials during a run.
    "oauth:refresh" => OAuthRefresh by Loop, planned {
        str provider,
        oval expires_at: u64,
    }
    /// The structured output of a run, validated against its schema.
    "output" => Output by Loop {
        get output: Value,
        get schema: Value,
    }
    /// The pre-send pairing pass repaired the history.
    "pairing:repair" => PairingRepair by Loop {
        val kind: PairingRepairKind,
        str tool_use_id,
        val message_index: usize,
        ostr turn_id,
    }
    /// The provider reported a diagnostic for a turn.
    "provider:diagnostic" => ProviderDiagnostic by Loop, planned {
        str kind,
        str message,
        get data: Value,
        str run_id,
        str turn_id,
    }
    /// The provider dropped replayed reasoning blocks before sampling.
    "provider:input-transformations" => ProviderInputTransformations by Loop, planned {
        get transformations: Vec<Value>,
        str run_id,
        str turn_id,
    }
    /// The repeat guard escalated on a tool.
    "repeat-guard:exceeded" => RepeatGuardExceeded by Loop {
        val action: GuardAction,
        val count: u32,
        val threshold: u32,
        str tool,
        str turn_id,
    }
    /// A durable replay caught up with its journal and went live.
    "replay:done" => ReplayDone by Adapter, planned {
    }
    /// A resume was refused because the step records no longer match the saved turns.
    "resume:mismatch" => ResumeMismatch by Agent, planned {
        str reason,
        val resume_turn: u32,
        str run_id,
        str session_id,
        get stored_turns: Vec<u32>,
    }
    /// The model gave a final answer and nothing is queued; a handler may keep the run going.
    "run:beforeEnd" => RunBeforeEnd by Loop {
        str run_id,
        ostr session_id,
        val turn: u32,
        hide follow_up: Option<String>,
    }
    /// A run on a session ended.
    "session:end" => SessionEnd by Agent {
        str session_id,
        str run_id,
        val status: SessionEndStatus,
        val turn_range: (u32, u32),
    }
    /// A session metadata key was set.
    "session:meta" => SessionMeta by Agent {
        str session_id,
        str key,
        get value: Value,
    }
    /// The session was saved.
    "session:save" => SessionSave by Agent {
        str session_id,
    }
    /// A run started on a session.
    "session:start" => SessionStart by Agent {
        str session_id,
        str prompt,
        str run_id,
    }
    /// New turns were flushed to the session.
    "session:turns" => SessionTurns by Agent {
        str session_id,
        val count: usize,
        get turns: Vec<SessionTurn>,
    }
    /// A skill was activated.
    "skills:activate" => SkillsActivate by Agent, planned {
        get skill: SkillConfig,
        val via: ActivationVia,
    }
    /// The rendered skills catalog and the skills it lists.
    "skills:catalog" => SkillsCatalog by Agent, planned {
        str catalog,
        get skills: Vec<SkillConfig>,
    }
    /// A skill was deactivated.
    "skills:deactivate" => SkillsDeactivate by Agent, planned {
        val reason: DeactivationReason,
        get skill: SkillConfig,
    }
    /// Skills were resolved.
    "skills:resolve" => SkillsResolve by Agent, planned {
        get skills: Vec<SkillConfig>,
    }
    /// A sub-agent is about to start; tracers may inject their context.
    "spawn:before" => SpawnBefore by Agent, planned {
        str child_id,
        ostr agent_name,
        str prompt,
        val depth: u32,
        ostr parent_run_id,
        set tracing_context: BTreeMap<String, String>,
    }
    /// A sub-agent finished.
    "spawn:complete" => SpawnComplete by Agent, planned {
        get stats: ChildRunStats,
    }
    /// A sub-agent failed.
    "spawn:error" => SpawnError by Agent, planned {
        get spawn: SpawnHookContext,
        get error: SharedError,
    }
    /// A top-level spawn waits for a free slot.
    "spawn:queued" => SpawnQueued by Agent, planned {
        str child_id,
        ostr agent_name,
        val running: u32,
        val limit: u32,
    }
    /// A queued message joined the conversation as a user turn.
    "steer:inject" => SteerInject by Loop {
        get content: Vec<ContentBlock>,
        ostr id,
        str text,
    }
    /// The turn's text stream ended.
    "stream:end" => StreamEnd by Loop {
        str run_id,
        val turn: u32,
        str turn_id,
        str model,
        str text,
    }
    /// The provider's stream failed before its end.
    "stream:error" => StreamError by Loop {
        str run_id,
        val turn: u32,
        str turn_id,
        str model,
        get err: SharedError,
        oval status_code: u16,
        ostr request_id,
    }
    /// Tokens streamed so far and a running cost estimate (throttled).
    "stream:progress" => StreamProgress by Loop {
        str run_id,
        val turn: u32,
        str turn_id,
        str model,
        val tokens: u64,
        val provider_counted: bool,
        oval cost_usd: f64,
    }
    /// A retryable provider error; the loop sleeps, then tries again.
    "stream:retry" => StreamRetry by Loop {
        str run_id,
        val turn: u32,
        str turn_id,
        str model,
        val attempt: u32,
        val delay_ms: u64,
        val discarded_text: bool,
        val discarded_thinking: bool,
        get err: SharedError,
        val max_attempts: u32,
        val next_attempt: u32,
        ostr request_id,
        oval status_code: u16,
    }
    /// A server-side tool result block closed.
    "stream:server_tool_result" => StreamServerToolResult by Loop {
        str run_id,
        val turn: u32,
        str turn_id,
        str model,
        get content: Value,
        str tool_name,
        str tool_use_id,
    }
    /// A server-side tool call block closed.
    "stream:server_tool_use" => StreamServerToolUse by Loop {
        str run_id,
        val turn: u32,
        str turn_id,
        str model,
        str id,
        get input: Value,
        str name,
    }
    /// The request is about to leave for the provider.
    "stream:start" => StreamStart by Loop {
        str run_id,
        val turn: u32,
        str turn_id,
        str model,
        val started_at: u64,
    }
    /// A text delta.
    "stream:text" => StreamText by Loop {
        str run_id,
        val turn: u32,
        str turn_id,
        str model,
        str delta,
        str text,
    }
    /// A thinking delta.
    "stream:thinking" => StreamThinking by Loop {
        str run_id,
        val turn: u32,
        str turn_id,
        str model,
        str delta,
        str thinking,
    }
    /// The run-level system prompt, once per run when one was given.
    "system:before" => SystemBefore by Loop {
        str system,
    }
    /// The system prompt of the next request; handlers may rewrite it (keep it byte-stable).
    "system:transform" => SystemTransform by Loop {
        get messages: Vec<Message>,
        ostr session_id,
        set system: String,
        val turn: u32,
        str turn_id,
    }
    /// A durable run resumes a tool batch a dead process left unfinished.
    "tool-batch:resumed" => ToolBatchResumed by Loop, planned {
        get done: Vec<String>,
        get resuming: Vec<String>,
        str run_id,
        val turn: u32,
        str turn_id,
    }
    /// A per-tool call budget was exceeded.
    "tool-budget:exceeded" => ToolBudgetExceeded by Loop {
        val count: u32,
        val max: u32,
        val mode: BudgetMode,
        str tool,
        str turn_id,
    }
    /// The tool-results turn joined the conversation.
    "tool-results:after" => ToolResultsAfter by Loop {
        get message: SessionTurn,
        get results: Vec<ToolResult>,
        val turn: u32,
        str turn_id,
    }
    /// A settled call's durable tool state could not be committed.
    "tool-state:commit-failed" => ToolStateCommitFailed by Loop {
        str call_id,
        get error: SharedError,
        set handled: bool,
        get ops: Vec<ToolStateOp>,
        str run_id,
        str tool_name,
    }
    /// A tool result (executed or substituted by a gate) after transforms.
    "tool:after" => ToolAfter by Loop {
        str name,
        str call_id,
        get input: Value,
        str run_id,
        str turn_id,
        get coercions: Vec<String>,
        val is_error: bool,
        oval outcome: ToolOutcome,
        val output_bytes: usize,
        get result: ToolResultContent,
        get run_tool_counts: ToolCounts,
    }
    /// A tool body is about to run; handlers may rewrite its input.
    "tool:before" => ToolBefore by Loop {
        str name,
        str call_id,
        set input: Value,
        str run_id,
        str turn_id,
        get coercions: Vec<String>,
        ostr prior_content,
        get run_tool_counts: ToolCounts,
        val unknown: bool,
    }
    /// One in-flight call was cancelled.
    "tool:cancelled" => ToolCancelled by Loop {
        str name,
        str call_id,
        get input: Value,
        str run_id,
        str turn_id,
        str reason,
        get run_tool_counts: ToolCounts,
    }
    /// A call was dispatched, with the path it took; once per call.
    "tool:dispatched" => ToolDispatched by Loop {
        str name,
        str call_id,
        get input: Value,
        str run_id,
        str turn_id,
        val outcome: ToolOutcome,
        ostr reason,
        get run_tool_counts: ToolCounts,
    }
    /// A tool body failed; handlers may substitute the result the model sees.
    "tool:error" => ToolError by Loop {
        str name,
        str call_id,
        get input: Value,
        str run_id,
        str turn_id,
        get error: SharedError,
        set result: Option<ToolResultContent>,
    }
    /// Decide a call before it runs: refuse it, substitute a result or rewrite its input.
    "tool:gate" => ToolGate by Loop {
        str name,
        str call_id,
        set input: Value,
        str run_id,
        str turn_id,
        val resumed: bool,
        set resume_state: serde_json::Map<String, Value>,
        set block: bool,
        set metadata: ToolResultMetadata,
        set reason: String,
        set result: Option<ToolResultContent>,
        get run_tool_counts: ToolCounts,
    }
    /// Live output of a running tool.
    "tool:progress" => ToolProgressEvent by Loop {
        str name,
        str call_id,
        get input: Value,
        str run_id,
        str turn_id,
        get progress: ToolProgress,
    }
    /// A tool result before it goes back to the model; handlers may rewrite it.
    "tool:transform" => ToolTransform by Loop {
        str name,
        str call_id,
        get input: Value,
        str run_id,
        str turn_id,
        get coercions: Vec<String>,
        val is_error: bool,
        set metadata: ToolResultMetadata,
        val output_bytes: usize,
        set result: ToolResultContent,
    }
    /// The model called a tool that does not exist; handlers may answer for it.
    "tool:unknown" => ToolUnknown by Loop {
        str name,
        str call_id,
        get input: Value,
        str run_id,
        str turn_id,
        set result: Option<ToolResultContent>,
        set suppress_error: bool,
    }
    /// A value about to leave for an observability sink; handlers redact it.
    "tracing:redact" => TracingRedact by Adapter, planned {
        val kind: RedactKind,
        get meta: Option<serde_json::Map<String, Value>>,
        set redacted: String,
        str value,
    }
    /// An assistant turn finished, before its tool calls run.
    "turn:after" => TurnAfter by Loop {
        val aborted: bool,
        get cumulative_usage: CumulativeUsage,
        get message: SessionTurn,
        get tool_counts: TurnToolCounts,
        val turn: u32,
        str turn_id,
        get usage: TurnUsage,
    }
    /// The request of the next turn; handlers may change its options.
    "turn:before" => TurnBefore by Loop {
        set options: StreamOptions,
        val turn: u32,
        str turn_id,
    }
    /// A turn's usage and the run's running input and output totals.
    "usage" => Usage by Loop {
        val total_in: u64,
        val total_out: u64,
        val turn: u32,
        str turn_id,
        get usage: TurnUsage,
    }
    /// Validation coerced some input fields into shape.
    "validation:coerce" => ValidationCoerce by Loop {
        str name,
        str call_id,
        get input: Value,
        str run_id,
        str turn_id,
        get coercions: Vec<String>,
        get schema: Value,
    }
    /// Validation rejected a call's input.
    "validation:reject" => ValidationReject by Loop {
        str name,
        str call_id,
        get input: Value,
        str run_id,
        str turn_id,
        str reason,
        get schema: Value,
    }
    ;
    /// A sub-agent's `artifact:recorded`.
    "child:artifact:recorded" => ChildArtifactRecorded = Child<ArtifactRecorded> by Agent, mutable: false, planned;
    /// A sub-agent's `background:exit`.
    "child:background:exit" => ChildBackgroundExit = Child<BackgroundExit> by Agent, mutable: false, planned;
    /// A sub-agent's `background:reassign`.
    "child:background:reassign" => ChildBackgroundReassign = Child<BackgroundReassign> by Agent, mutable: false, planned;
    /// A sub-agent's `background:start`.
    "child:background:start" => ChildBackgroundStart = Child<BackgroundStart> by Agent, mutable: false, planned;
    /// A sub-agent's `mcp:tool:gate`; the parent's decision goes back to the child.
    "child:mcp:tool:gate" => ChildMcpToolGate = Child<McpToolGate> by Agent, mutable: true, planned;
    /// A sub-agent's `repeat-guard:exceeded`.
    "child:repeat-guard:exceeded" => ChildRepeatGuardExceeded = Child<RepeatGuardExceeded> by Agent, mutable: false, planned;
    /// A sub-agent's `stream:end`.
    "child:stream:end" => ChildStreamEnd = Child<StreamEnd> by Agent, mutable: false, planned;
    /// A sub-agent's `stream:error`.
    "child:stream:error" => ChildStreamError = Child<StreamError> by Agent, mutable: false, planned;
    /// A sub-agent's `stream:retry`.
    "child:stream:retry" => ChildStreamRetry = Child<StreamRetry> by Agent, mutable: false, planned;
    /// A sub-agent's `stream:server_tool_result`.
    "child:stream:server_tool_result" => ChildStreamServerToolResult = Child<StreamServerToolResult> by Agent, mutable: false, planned;
    /// A sub-agent's `stream:server_tool_use`.
    "child:stream:server_tool_use" => ChildStreamServerToolUse = Child<StreamServerToolUse> by Agent, mutable: false, planned;
    /// A sub-agent's `stream:text`.
    "child:stream:text" => ChildStreamText = Child<StreamText> by Agent, mutable: false, planned;
    /// A sub-agent's `stream:thinking`.
    "child:stream:thinking" => ChildStreamThinking = Child<StreamThinking> by Agent, mutable: false, planned;
    /// A sub-agent's `tool:after`.
    "child:tool:after" => ChildToolAfter = Child<ToolAfter> by Agent, mutable: false, planned;
    /// A sub-agent's `tool:before`.
    "child:tool:before" => ChildToolBefore = Child<ToolBefore> by Agent, mutable: false, planned;
    /// A sub-agent's `tool:cancelled`.
    "child:tool:cancelled" => ChildToolCancelled = Child<ToolCancelled> by Agent, mutable: false, planned;
    /// A sub-agent's `tool:dispatched`.
    "child:tool:dispatched" => ChildToolDispatched = Child<ToolDispatched> by Agent, mutable: false, planned;
    /// A sub-agent's `tool:error`.
    "child:tool:error" => ChildToolError = Child<ToolError> by Agent, mutable: false, planned;
    /// A sub-agent's `tool:gate`; the parent's decision goes back to the child.
    "child:tool:gate" => ChildToolGate = Child<ToolGate> by Agent, mutable: true, planned;
    /// A sub-agent's `tool:progress`.
    "child:tool:progress" => ChildToolProgress = Child<ToolProgressEvent> by Agent, mutable: false, planned;
    /// A sub-agent's `tool:transform`; the parent's rewrite goes back to the child.
    "child:tool:transform" => ChildToolTransform = Child<ToolTransform> by Agent, mutable: true, planned;
    /// A sub-agent's `turn:after`.
    "child:turn:after" => ChildTurnAfter = Child<TurnAfter> by Agent, mutable: false, planned;
    /// A sub-agent's `validation:reject`.
    "child:validation:reject" => ChildValidationReject = Child<ValidationReject> by Agent, mutable: false, planned;
}

impl CompactRestore {
    /// Adds a synthetic tool call and its result to the turns kept after the
    /// summary.
    pub fn add(&mut self, name: impl Into<String>, input: Value, output: impl Into<String>) {
        self.added.push(RestoredCall {
            name: name.into(),
            input,
            output: output.into(),
        });
    }

    /// The calls added so far, in order.
    pub fn added(&self) -> &[RestoredCall] {
        &self.added
    }

    /// Takes the added calls out of the event.
    pub fn take_added(&mut self) -> Vec<RestoredCall> {
        std::mem::take(&mut self.added)
    }
}

impl RunBeforeEnd {
    /// Keeps the run going with `message` as the next user turn. The first
    /// call wins; later ones return `false` and change nothing.
    pub fn follow_up(&mut self, message: impl Into<String>) -> bool {
        if self.follow_up.is_some() {
            return false;
        }
        self.follow_up = Some(message.into());
        true
    }

    /// The follow-up a handler asked for, if any.
    pub fn follow_up_message(&self) -> Option<&str> {
        self.follow_up.as_deref()
    }
}

impl TracingRedact {
    /// A redaction request: `redacted` starts equal to `value`.
    pub fn for_value(kind: RedactKind, value: impl Into<String>, meta: Option<serde_json::Map<String, Value>>) -> Self {
        let value = value.into();
        let mut ev = TracingRedact::new(kind, meta, value.clone());
        ev.redacted = value;
        ev
    }
}
