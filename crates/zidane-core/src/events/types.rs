//! Data types the hook payloads carry.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use zidane_provider::{ToolResultContent, TurnUsage};

/// An error shared with every handler of an event (cheap to clone).
pub type SharedError = Arc<dyn std::error::Error + Send + Sync + 'static>;

/// Per-tool call counts, keyed by canonical tool name (sorted, so snapshots
/// and serialized records are stable).
pub type ToolCounts = BTreeMap<String, u32>;

/// Free-form metadata riding a tool result.
pub type ToolResultMetadata = serde_json::Map<String, Value>;

/// Token counts and cost, summed over turns: a run's statistics
/// ([`AgentStats::totals`]) and its summary's totals share this type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenTotals {
    /// Tokens written to the prompt cache.
    pub cache_creation: u64,
    /// Tokens read from the prompt cache.
    pub cache_read: u64,
    /// Cost in USD; absent when no turn had a price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// Input tokens, excluding cache tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
}

impl TokenTotals {
    /// Adds `other`'s counts and cost.
    pub fn add(&mut self, other: &TokenTotals) {
        self.input += other.input;
        self.output += other.output;
        self.cache_read += other.cache_read;
        self.cache_creation += other.cache_creation;
        if let Some(cost) = other.cost {
            self.cost = Some(self.cost.unwrap_or(0.0) + cost);
        }
    }

    /// The counts and cost of one turn's usage.
    pub fn of_turn(usage: &TurnUsage) -> Self {
        TokenTotals {
            cache_creation: usage.cache_creation,
            cache_read: usage.cache_read,
            cost: usage.cost,
            input: usage.input,
            output: usage.output,
        }
    }
}

/// Run statistics, returned by a run and carried by `agent:done`.
///
/// In JSON the totals are the spec's flat fields (`totalIn`, `totalOut`,
/// `totalCacheRead`, `totalCacheCreation`, `cost`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "AgentStatsJson", into = "AgentStatsJson")]
#[non_exhaustive]
pub struct AgentStats {
    /// Assistant turns of this agent's loop.
    pub turns: u32,
    /// Tool calls the model made in this run (each answered: run, blocked,
    /// refused or cancelled).
    pub tool_calls: u32,
    /// Tokens and cost, this loop and every sub-agent.
    pub totals: TokenTotals,
    /// Usage of each turn of this agent's own loop.
    pub turn_usage: Vec<TurnUsage>,
    /// Whether the run was suspended for a later resume.
    pub suspended: bool,
    /// How the run ended.
    pub status: RunStatus,
    /// The sub-agents this run spawned, in the order they ended (their
    /// usage is already in the totals above).
    pub children: Vec<ChildRunStats>,
}

/// [`AgentStats`] as the spec writes it.
#[derive(Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AgentStatsJson {
    turns: u32,
    #[serde(default)]
    tool_calls: u32,
    total_in: u64,
    total_out: u64,
    total_cache_read: u64,
    total_cache_creation: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cost: Option<f64>,
    turn_usage: Vec<TurnUsage>,
    #[serde(default)]
    suspended: bool,
    status: RunStatus,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    children: Vec<ChildRunStats>,
}

impl From<AgentStatsJson> for AgentStats {
    fn from(j: AgentStatsJson) -> Self {
        AgentStats {
            turns: j.turns,
            tool_calls: j.tool_calls,
            totals: TokenTotals {
                cache_creation: j.total_cache_creation,
                cache_read: j.total_cache_read,
                cost: j.cost,
                input: j.total_in,
                output: j.total_out,
            },
            turn_usage: j.turn_usage,
            suspended: j.suspended,
            status: j.status,
            children: j.children,
        }
    }
}

impl From<AgentStats> for AgentStatsJson {
    fn from(s: AgentStats) -> Self {
        AgentStatsJson {
            turns: s.turns,
            tool_calls: s.tool_calls,
            total_in: s.totals.input,
            total_out: s.totals.output,
            total_cache_read: s.totals.cache_read,
            total_cache_creation: s.totals.cache_creation,
            cost: s.totals.cost,
            turn_usage: s.turn_usage,
            suspended: s.suspended,
            status: s.status,
            children: s.children,
        }
    }
}

impl AgentStats {
    /// Counts one assistant turn of `usage` in the totals.
    pub fn add_turn(&mut self, usage: &TurnUsage) {
        self.turns += 1;
        self.totals.add(&TokenTotals::of_turn(usage));
        self.turn_usage.push(usage.clone());
    }

    /// Adds a sub-agent's totals (its tokens and cost, not its turns).
    pub fn add_child(&mut self, child: &AgentStats) {
        self.totals.add(&child.totals);
    }

    /// Whether the model finished on its own. A run that stopped at the
    /// turn cap ([`RunStatus::MaxTurns`]), was aborted or suspended returns
    /// its statistics too, without an error: check this (or `status`).
    pub fn completed(&self) -> bool {
        self.status == RunStatus::Completed
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    /// The model finished.
    #[default]
    Completed,
    /// The run hit its turn cap.
    MaxTurns,
    /// The run was aborted (by the host, a guard or a budget).
    Aborted,
    /// The run failed.
    Error,
    /// The run was suspended for a later resume.
    Suspended,
}

/// How a session run ended, as `session:end` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SessionEndStatus {
    /// The run completed.
    Completed,
    /// The run was aborted.
    Aborted,
    /// The run failed.
    Error,
    /// The run was suspended.
    Suspended,
}

/// Running totals of a run, carried by `turn:after`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CumulativeUsage {
    /// Input tokens (excluding cache).
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Cache-read tokens.
    pub cache_read: u64,
    /// Cache-write tokens.
    pub cache_creation: u64,
    /// Cost in USD, when priced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// Turns so far.
    pub turns: u32,
}

/// Tool call counts of `turn:after`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnToolCounts {
    /// Calls dispatched so far in the run (blocked calls excluded).
    pub run: ToolCounts,
    /// Calls the model emitted in this turn, whatever happened to them.
    pub turn: ToolCounts,
}

/// Which path a tool call took through the dispatch pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToolOutcome {
    /// The tool body ran.
    Execute,
    /// A gate handler supplied the result.
    GateSubstitute,
    /// A gate handler refused the call.
    GateBlock,
    /// No tool has that name.
    Unknown,
    /// The input failed validation.
    InvalidInput,
}

/// Live output of a running tool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolProgress {
    /// Human-readable progress line, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Structured progress data (an output chunk, a counter).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub data: Value,
}

/// A finished tool call, as `tool-results:after` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// Call id.
    pub call_id: String,
    /// Canonical tool name.
    pub name: String,
    /// What the model receives.
    pub content: ToolResultContent,
    /// Whether it reports a failure.
    pub is_error: bool,
}

/// One staged write of a tool's durable state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum ToolStateOp {
    /// Set `key` to `value`.
    Set {
        /// The key.
        key: String,
        /// The value.
        value: Value,
    },
    /// Remove `key`.
    Delete {
        /// The key.
        key: String,
    },
}

/// What the repeat guard or a budget did about a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GuardAction {
    /// Let it run and nudge the model.
    Steer,
    /// Refuse the call.
    Block,
    /// Abort the run.
    Abort,
}

/// How a per-tool budget reacts when exceeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BudgetMode {
    /// Let the call run and queue a nudge after the turn.
    Steer,
    /// Refuse the call.
    Block,
}

/// A provider and model pair in a fallback chain.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ModelTarget {
    /// Provider name.
    pub provider: String,
    /// Model id.
    pub model: String,
}

/// An artifact a session recorded from a tool result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionArtifact {
    /// Artifact id.
    pub id: String,
    /// Kind, e.g. `file` or `url`.
    pub kind: String,
    /// Display title.
    pub title: String,
    /// Kind-specific data.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub data: Value,
}

/// How a background task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskStatus {
    /// It exited on its own.
    Exited,
    /// It was killed.
    Killed,
}

/// A background task's exit, as delivered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskExitInfo {
    /// Task id.
    pub task_id: String,
    /// The command line.
    pub command: String,
    /// Exit code.
    pub exit_code: i32,
    /// Signal that ended it, e.g. `SIGTERM`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// Exited or killed.
    pub status: TaskStatus,
    /// How long it ran (milliseconds in JSON).
    #[serde(rename = "durationMs", with = "zidane_provider::time::millis")]
    pub duration: std::time::Duration,
    /// File holding its output.
    pub output_path: String,
}

/// A bound execution handle (a process, a container, a sandbox).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ExecutionHandle {
    /// Handle id (a sandbox id for remote contexts).
    pub id: String,
    /// Kind of context, e.g. `process`.
    pub kind: String,
}

/// Identity and context of a spawned sub-agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpawnHookContext {
    /// Id given to the child.
    pub child_id: String,
    /// Name of the child agent, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_name: Option<String>,
    /// The task handed to the child.
    pub prompt: String,
    /// Depth of the child (1 for a direct child).
    pub depth: u32,
    /// Run id of the spawning run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_run_id: Option<String>,
    /// Trace carrier propagated to the child.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tracing_context: BTreeMap<String, String>,
}

/// A finished sub-agent's statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChildRunStats {
    /// Child id.
    pub child_id: String,
    /// Name of the child agent, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_name: Option<String>,
    /// Depth of the child.
    pub depth: u32,
    /// Wall time (milliseconds in JSON).
    #[serde(rename = "durationMs", with = "zidane_provider::time::millis")]
    pub duration: std::time::Duration,
    /// The child's run statistics.
    pub stats: AgentStats,
}

/// Why a compaction runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompactReason {
    /// Auto-compaction crossed its threshold.
    Auto,
    /// `agent.compact()`.
    Manual,
}

/// How a compaction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompactStatus {
    /// The summary replaced the old turns.
    Ok,
    /// The compaction failed; history is unchanged.
    Error,
    /// The compaction was aborted; history is unchanged.
    Aborted,
}

/// A synthetic tool call re-attached after a compaction summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestoredCall {
    /// Tool name.
    pub name: String,
    /// Call arguments.
    pub input: Value,
    /// The result text.
    pub output: String,
}

/// A content block that refers to persisted bytes instead of carrying them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContentRefBlock {
    /// The reference.
    #[serde(rename = "ref")]
    pub reference: String,
    /// Block kind, e.g. `image` or `document`.
    pub kind: String,
    /// MIME type, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
}

/// Why the pre-send pairing pass changed the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PairingRepairKind {
    /// A `tool_use` had no result; an interrupted result was added.
    OrphanToolUse,
    /// A `tool_result` had no call; it was dropped.
    OrphanToolResult,
    /// Two blocks shared an id; the later one was dropped.
    DuplicateId,
}

/// MCP transports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum McpTransport {
    /// A child process over stdin/stdout.
    Stdio,
    /// Streamable HTTP.
    StreamableHttp,
    /// Legacy HTTP + SSE.
    Sse,
}

/// Why an MCP server needs a login.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum McpAuthReason {
    /// OAuth is configured and no tokens are stored.
    NoTokens,
    /// The server asked for OAuth without being configured for it.
    AutoPromoted,
}

/// A tool as an MCP server describes it (not yet namespaced).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpToolSchema {
    /// Server-side tool name.
    pub name: String,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON schema of the arguments.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub input_schema: Value,
    /// The server marks the tool read-only or idempotent (its
    /// `readOnlyHint` / `idempotentHint` annotations): a resumed run may
    /// call it again. Otherwise its calls are `unsafe`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub idempotent: bool,
}

/// The outcome of one MCP server's bootstrap.
#[derive(Debug, Clone)]
pub enum McpBootstrapOutcome {
    /// Connected (or registered lazily).
    Ok {
        /// Tools registered.
        tool_count: u32,
        /// Registered without connecting.
        lazy: bool,
        /// `tools/list` was skipped for host-provided tools.
        cached: bool,
        /// Soft problems met on the way.
        warnings: Vec<String>,
    },
    /// Failed.
    Failed {
        /// Why; absent when the server was skipped.
        error: Option<SharedError>,
        /// Skipped (e.g. needs a login).
        skipped: bool,
    },
}

/// One server's entry in `mcp:bootstrap:settled`.
#[derive(Debug, Clone)]
pub struct McpBootstrapResult {
    /// Server name.
    pub name: String,
    /// Transport.
    pub transport: McpTransport,
    /// How long the bootstrap took.
    pub duration: std::time::Duration,
    /// What happened.
    pub outcome: McpBootstrapOutcome,
}

/// A skill, as the skills hooks report it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillConfig {
    /// Skill name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// Where it was loaded from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// What activated a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ActivationVia {
    /// `agent.activate_skill`.
    Explicit,
    /// The model asked for it.
    Model,
    /// A policy matched.
    Policy,
}

/// Why a skill was deactivated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeactivationReason {
    /// `agent.deactivate_skill`.
    Explicit,
    /// `agent.reset`.
    Reset,
    /// Evicted by the active-skills cap.
    Evicted,
}

/// What kind of value a redaction handler sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RedactKind {
    /// A system prompt.
    System,
    /// A user prompt.
    Prompt,
    /// Tool arguments.
    ToolInput,
    /// Tool output.
    ToolResult,
    /// MCP tool arguments.
    McpToolInput,
    /// MCP tool output.
    McpToolResult,
    /// Streamed text.
    StreamText,
    /// Streamed thinking.
    StreamThinking,
    /// Decision answers.
    DecisionAnswers,
}

/// A prompt-cache dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CacheDimensionName {
    /// The system prompt.
    System,
    /// The tool list.
    Tools,
    /// The model id.
    Model,
    /// The thinking level.
    Thinking,
    /// The exact thinking budget.
    ThinkingBudget,
    /// The whole-task thinking budget.
    TaskBudget,
    /// Whether the effort hint is sent.
    EffortHint,
    /// The message prefix (rewritten in place, not appended to).
    MessagePrefix,
}

/// A part of the system prompt a change can be traced to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CacheSystemSection {
    /// The skills catalog.
    SkillsCatalog,
    /// The searchable tools catalog.
    ToolsCatalog,
    /// MCP server instructions.
    McpInstructions,
    /// The host's rules block.
    Rules,
    /// The rest of the prompt above the boundary.
    HostStatic,
    /// The rest of the prompt below the boundary.
    HostDynamic,
}

/// Payload of `cache:break`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheBreakInfo {
    /// Tokens written to the cache on the broken turn.
    pub cache_creation: u64,
    /// Tokens read from the cache on the broken turn.
    pub cache_read: u64,
    /// Dimensions that changed; empty points at TTL expiry or eviction.
    pub changed: Vec<CacheDimensionName>,
    /// A readable diff per changed dimension.
    pub details: BTreeMap<CacheDimensionName, String>,
    /// The floor that tripped.
    pub expected_at_least: u64,
    /// Model of the broken request.
    pub model: String,
    /// Approximate tokens written again instead of read.
    pub rebilled_tokens: u64,
    /// System prompt parts that changed, when `system` did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_sections: Option<Vec<CacheSystemSection>>,
    /// 1-based turn index over the logger's lifetime.
    pub turn: u32,
    /// Id of the broken turn.
    pub turn_id: String,
}

/// Payload of `cache:drift`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheDriftInfo {
    /// Dimensions that differ from the previous completed turn's request.
    pub changed: Vec<CacheDimensionName>,
    /// A readable diff per changed dimension.
    pub details: BTreeMap<CacheDimensionName, String>,
    /// Message index of an in-place prefix rewrite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diverged_at: Option<u32>,
    /// Messages in the outgoing request.
    pub message_count: u32,
    /// Model of the outgoing request.
    pub model: String,
    /// Messages in the previous completed turn's request.
    pub previous_message_count: u32,
    /// System prompt parts that changed, when `system` did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_sections: Option<Vec<CacheSystemSection>>,
    /// 1-based turn index over the logger's lifetime.
    pub turn: u32,
    /// Id of the outgoing turn.
    pub turn_id: String,
}

/// An error that is only a message, for payloads built from text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageError(pub String);

impl fmt::Display for MessageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MessageError {}

/// Text accumulated over one stream, shared. `stream:text` and
/// `stream:thinking` carry a view of the text so far (the shared buffer and
/// the length it had) instead of a copy, so a stream of n deltas costs O(n)
/// in all rather than O(n²). Only the loop appends; a view keeps showing
/// the text as it was when its event fired.
#[derive(Clone, Default)]
pub struct StreamedText {
    buf: Arc<parking_lot::RwLock<String>>,
    len: usize,
}

impl StreamedText {
    /// An empty text.
    pub fn new() -> Self {
        StreamedText::default()
    }

    /// Appends `delta` (the loop's side).
    pub fn push_str(&mut self, delta: &str) {
        let mut buf = self.buf.write();
        buf.push_str(delta);
        self.len = buf.len();
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was appended yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The text, taken out of the buffer when no other view is left (a
    /// copy otherwise).
    pub fn into_string(self) -> String {
        match Arc::try_unwrap(self.buf) {
            Ok(lock) => {
                let mut text = lock.into_inner();
                text.truncate(self.len);
                text
            }
            Err(shared) => shared.read().get(..self.len).unwrap_or_default().to_owned(),
        }
    }

    /// Runs `f` on the text (as it was when this view was taken), without
    /// copying it.
    pub fn with<R>(&self, f: impl FnOnce(&str) -> R) -> R {
        let buf = self.buf.read();
        f(buf.get(..self.len).unwrap_or_default())
    }
}

impl fmt::Display for StreamedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.with(|text| f.write_str(text))
    }
}

impl fmt::Debug for StreamedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.with(|text| fmt::Debug::fmt(text, f))
    }
}

impl PartialEq<&str> for StreamedText {
    fn eq(&self, other: &&str) -> bool {
        self.with(|text| text == *other)
    }
}

impl PartialEq for StreamedText {
    fn eq(&self, other: &Self) -> bool {
        other.with(|theirs| self.with(|ours| ours == theirs))
    }
}
