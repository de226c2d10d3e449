//! The summary record and its parts; serialized with the spec's camelCase
//! names, round-tripping through JSON without loss.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use zidane_core::events::RunStatus;

/// Token and cost totals of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSummaryTokens {
    /// Tokens and cost, the type of the run's statistics (`AgentStats::totals`).
    #[serde(flatten)]
    pub tokens: zidane_core::events::TokenTotals,
    /// First observable byte from the provider, in ms from run start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<u64>,
}

/// How a summarized run ended, coarsely (`status` in JSON): a run the
/// model finished or that stopped at its turn cap is `completed`; an
/// aborted, failed or suspended one is `aborted`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunSummaryStatus {
    /// Finished, or stopped at the turn cap.
    #[default]
    Completed,
    /// Aborted, failed or suspended.
    Aborted,
}

impl RunSummaryStatus {
    /// The coarse status of a run that ended with `status`.
    pub fn of(status: zidane_core::events::RunStatus) -> Self {
        use zidane_core::events::RunStatus;
        match status {
            RunStatus::Completed | RunStatus::MaxTurns => RunSummaryStatus::Completed,
            RunStatus::Aborted | RunStatus::Error | RunStatus::Suspended => RunSummaryStatus::Aborted,
        }
    }

    /// Its name in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            RunSummaryStatus::Completed => "completed",
            RunSummaryStatus::Aborted => "aborted",
        }
    }
}

/// Totals of one model within a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSummaryByModel {
    /// Tokens written to the prompt cache.
    pub cache_creation: u64,
    /// Tokens read from the prompt cache.
    pub cache_read: u64,
    /// Cost in USD.
    pub cost: f64,
    /// Input tokens, excluding cache tokens.
    pub input: u64,
    /// Model id, or `(unknown)`.
    pub model_id: String,
    /// Output tokens.
    pub output: u64,
    /// Turns served by the model.
    pub turns: u32,
    /// Turns whose cost is unknown (the model has no price): `cost` leaves
    /// them out, so a `cost` of 0 with unpriced turns means "unknown", not
    /// "free". Absent when every turn was priced.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unpriced_turns: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A tool call that did not run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSummaryBlock {
    /// Call id.
    pub call_id: String,
    /// `gate-block`, `unknown` or `invalid-input`.
    pub outcome: String,
    /// The gate's reason, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The tool the model called.
    pub tool_name: String,
}

/// A byte-budget or per-tool budget event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSummaryBudget {
    /// `bytes` or `tool-count`.
    pub kind: String,
    /// The configured budget.
    pub limit: u64,
    /// `steer` or `block`, for tool-count budgets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The value that crossed it.
    pub observed: u64,
    /// The tool, for tool-count budgets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// The turn it happened in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
}

/// An error recorded during a run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSummaryError {
    /// The tool call, for tool errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The child, for spawn errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child_id: Option<String>,
    /// The error's type, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    /// `spawn`, `tool`, `mcp`, `stream` or `mcp-tool`.
    pub kind: String,
    /// The message.
    pub message: String,
    /// The provider's request id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The MCP server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The HTTP status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_code: Option<u16>,
    /// The tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// The turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
}

/// A repeat-guard escalation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSummaryRepeatGuard {
    /// `steer`, `block` or `abort`.
    pub action: String,
    /// The count that tripped it.
    pub count: u32,
    /// The configured threshold.
    pub threshold: u32,
    /// The repeated tool.
    pub tool_name: String,
    /// The turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
}

/// A provider-stream retry the loop absorbed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSummaryRetry {
    /// The attempt that failed (1-based).
    pub attempt: u32,
    /// The wait before the next attempt.
    pub delay_ms: u64,
    /// The failure's message.
    pub message: String,
    /// The model of the failed attempt.
    pub model: String,
    /// The provider's request id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The HTTP status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_code: Option<u16>,
    /// The turn.
    pub turn_id: String,
}

/// A tool call rejected by input validation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSummaryValidation {
    /// Call id.
    pub call_id: String,
    /// Why.
    pub reason: String,
    /// The tool.
    pub tool_name: String,
}

/// The postmortem of one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSummary {
    /// The agent's name, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_name: Option<String>,
    /// Calls that did not run.
    pub blocks: Vec<RunSummaryBlock>,
    /// Budget events.
    pub budget_events: Vec<RunSummaryBudget>,
    /// Totals per model.
    pub by_model: Vec<RunSummaryByModel>,
    /// Child runs, when the run spawned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub children: Option<Vec<RunSummary>>,
    /// Sub-agent depth (0 for a top-level run).
    pub depth: u32,
    /// Wall-clock duration (milliseconds in JSON).
    #[serde(rename = "durationMs", with = "zidane_provider::time::millis")]
    pub duration: std::time::Duration,
    /// When it ended (epoch milliseconds in JSON).
    pub ended_at: zidane_provider::Timestamp,
    /// Errors.
    pub errors: Vec<RunSummaryError>,
    /// Pairing repairs by kind.
    pub pairing_repairs: BTreeMap<String, u32>,
    /// The parent run, for a sub-agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_run_id: Option<String>,
    /// Repeat-guard escalations.
    pub repeat_guard_events: Vec<RunSummaryRepeatGuard>,
    /// The run id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// When it started (epoch milliseconds in JSON).
    pub started_at: zidane_provider::Timestamp,
    /// `completed` or `aborted` (the finer reason is `stop_reason`).
    pub status: RunSummaryStatus,
    /// What ended the run, finer than `status`: `completed`, `max-turns`
    /// (counted as `completed`), `aborted`, `error` or `suspended` (counted
    /// as `aborted`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<RunStatus>,
    /// Retries the loop absorbed.
    pub stream_retries: Vec<RunSummaryRetry>,
    /// Totals, child runs included.
    pub totals: RunSummaryTokens,
    /// Turns of the run's own loop.
    pub turns: u32,
    /// Validation rejects.
    pub validation_rejects: Vec<RunSummaryValidation>,
    /// What the host kept out of the context window (left out when it kept
    /// nothing out).
    #[serde(default, skip_serializing_if = "RunSummarySavings::is_empty")]
    pub context_savings: RunSummarySavings,
    /// Language-server diagnostics in the run's tool results (left out
    /// when there were none).
    #[serde(default, skip_serializing_if = "RunSummaryDiagnostics::is_empty")]
    pub diagnostics: RunSummaryDiagnostics,
}

/// Language-server diagnostics the run's tool results carried (the
/// `diagnostics` object of a result's metadata: its `errors`, `warnings`
/// and `fixed`). Serialized in camelCase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSummaryDiagnostics {
    /// Tool results that carried diagnostics.
    pub results: u32,
    /// Errors and warnings reported, summed over those results (a problem
    /// still there at the next edit counts again).
    pub reported: u64,
    /// Of those, errors.
    pub errors: u64,
    /// Problems edits and commands fixed.
    pub fixed: u64,
}

impl RunSummaryDiagnostics {
    /// Whether no result carried diagnostics.
    pub fn is_empty(&self) -> bool {
        self.results == 0
    }

    /// Adds one result's `diagnostics` metadata.
    pub fn add(&mut self, report: &serde_json::Value) {
        let n = |key: &str| report.get(key).and_then(serde_json::Value::as_u64).unwrap_or(0);
        self.results += 1;
        self.errors += n("errors");
        self.reported += n("errors") + n("warnings");
        self.fixed += n("fixed");
    }
}

/// Tokens kept out of the context window during a run, as estimated by the
/// host that did it (about four bytes a token); the collector leaves them
/// at zero. Serialized in camelCase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSummarySavings {
    /// Old tool results replaced by one-line stubs before a compaction.
    pub pruned_results: u32,
    /// Command output left out by reducing it (passing tests, progress
    /// lines, the middle of long listings).
    pub reduced_output_tokens: u64,
    /// Tool schemas not sent, summed over requests (deferred tools).
    pub deferred_tool_tokens: u64,
}

impl RunSummarySavings {
    /// Whether nothing was kept out.
    pub fn is_empty(&self) -> bool {
        *self == RunSummarySavings::default()
    }
}
