//! Run behavior: retries, budgets, guards and caps.

use std::collections::BTreeMap;
use std::time::Duration;

use zidane_core::events::{BudgetMode, GuardAction};

/// Retry policy for provider failures.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Attempts per request for provider-classified failures (1 = no retry).
    pub max_attempts: u32,
    /// Attempts per request for transport failures (dropped connections),
    /// counted separately.
    pub transport_max_attempts: u32,
    /// First backoff delay.
    pub base_delay: Duration,
    /// Longest delay, also the cap on a server's `retry-after`.
    pub max_delay: Duration,
    /// The most a request may spend waiting between its attempts, all
    /// retries together; past it the request gives up (or falls back).
    pub max_total_delay: Duration,
    /// The most a request may spend waiting on a provider that sends
    /// nothing, its attempts (and fallbacks) together, whatever attempts
    /// are left: an attempt given up for silence (an idle timeout) is
    /// retried only while another silence as long would still fit, so a
    /// provider that stopped answering ends the request in about this
    /// long, not after every transport attempt's idle timeout and
    /// back-off. Default 5 minutes.
    pub max_silence: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            transport_max_attempts: 8,
            base_delay: Duration::from_millis(1000),
            max_delay: Duration::from_secs(60),
            max_total_delay: Duration::from_secs(180),
            max_silence: Duration::from_secs(300),
        }
    }
}

/// A per-tool call budget.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolBudget {
    /// Calls allowed per run.
    pub max: u32,
    /// What happens past it.
    pub mode: BudgetMode,
    /// The text the model receives (`Blocked: <message>`, or the nudge).
    pub message: String,
}

/// How the repeat guard counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepeatMode {
    /// Back-to-back identical calls.
    Chain,
    /// Identical calls among the last `window` calls.
    Window {
        /// How many recent calls are looked at.
        window: u32,
    },
}

/// The repeat guard: escalates when a tool is called with the same input too
/// often.
#[derive(Debug, Clone, PartialEq)]
pub struct RepeatGuard {
    /// Counting mode.
    pub mode: RepeatMode,
    /// Count at which the guard acts.
    pub threshold: u32,
    /// What it does.
    pub action: GuardAction,
    /// Tools it watches (empty: all).
    pub tools: Vec<String>,
}

/// Everything that shapes a run besides its prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct Behavior {
    /// Assistant turns allowed (`None`: no cap).
    pub max_turns: Option<u32>,
    /// Spend cap in USD.
    pub max_cost_usd: Option<f64>,
    /// Token cap (input + output + cache reads and writes).
    pub max_total_tokens: Option<u64>,
    /// Tool output bytes per turn before the model is asked to summarize.
    pub tool_output_budget: Option<u64>,
    /// Per-tool call budgets, by canonical name.
    pub tool_budgets: BTreeMap<String, ToolBudget>,
    /// The repeat guard.
    pub repeat_guard: Option<RepeatGuard>,
    /// Consecutive `pause` finishes continued before the run stops.
    pub max_consecutive_pause_turns: u32,
    /// Retry policy.
    pub retry: RetryPolicy,
    /// Refuse (instead of repairing) a history with broken tool pairing.
    pub strict_tool_pairing: bool,
    /// Longest a tool call may run before it is cut off and answered with
    /// a timeout error (default 20 minutes, so a call that blocks on
    /// something that never comes cannot hold a run forever; `None`: no
    /// limit).
    pub tool_timeout: Option<Duration>,
    /// The most text one tool result may give the model, in bytes, after
    /// `tool:transform` (default 256 KiB; the head is kept with a note of
    /// what was cut; `None`: no limit). Tools should keep well under it
    /// themselves (the basic preset does); this bounds any tool.
    pub max_result_bytes: Option<usize>,
    /// Emergency elision passes on a context overflow before giving up.
    pub max_overflow_recoveries: u32,
    /// Minimum gap between two `stream:progress` events.
    pub progress_interval: Duration,
    /// How long a background task may write nothing before the agent
    /// reports it stalled (`background:stall` once per quiet period, and a
    /// `<task-stall>` note for the model); `None` (the default): no
    /// watchdog. The agent reads its own value; a run cannot change it.
    pub background_stall_watchdog: Option<Duration>,
}

impl Default for Behavior {
    fn default() -> Self {
        Behavior {
            max_turns: Some(100),
            max_cost_usd: None,
            max_total_tokens: None,
            tool_output_budget: None,
            tool_budgets: BTreeMap::new(),
            repeat_guard: None,
            max_consecutive_pause_turns: 5,
            retry: RetryPolicy::default(),
            strict_tool_pairing: false,
            tool_timeout: Some(Duration::from_secs(20 * 60)),
            max_result_bytes: Some(256 << 10),
            max_overflow_recoveries: 3,
            progress_interval: Duration::from_millis(250),
            background_stall_watchdog: None,
        }
    }
}

/// A run's changes to the loop's [`Behavior`], field by field: a field left
/// `None` keeps the loop's value, so a run that sets only `max_turns` keeps
/// the agent's guards, budgets and retry policy. Fields that are optional in
/// `Behavior` take `Some(None)` to lift the agent's cap for the run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BehaviorOverride {
    /// See [`Behavior::max_turns`].
    pub max_turns: Option<Option<u32>>,
    /// See [`Behavior::max_cost_usd`].
    pub max_cost_usd: Option<Option<f64>>,
    /// See [`Behavior::max_total_tokens`].
    pub max_total_tokens: Option<Option<u64>>,
    /// See [`Behavior::tool_output_budget`].
    pub tool_output_budget: Option<Option<u64>>,
    /// Added to (and replacing by name) the loop's per-tool budgets.
    pub tool_budgets: BTreeMap<String, ToolBudget>,
    /// See [`Behavior::repeat_guard`].
    pub repeat_guard: Option<Option<RepeatGuard>>,
    /// See [`Behavior::max_consecutive_pause_turns`].
    pub max_consecutive_pause_turns: Option<u32>,
    /// See [`Behavior::retry`].
    pub retry: Option<RetryPolicy>,
    /// See [`Behavior::strict_tool_pairing`].
    pub strict_tool_pairing: Option<bool>,
    /// See [`Behavior::tool_timeout`].
    pub tool_timeout: Option<Option<Duration>>,
    /// See [`Behavior::max_result_bytes`].
    pub max_result_bytes: Option<Option<usize>>,
    /// See [`Behavior::max_overflow_recoveries`].
    pub max_overflow_recoveries: Option<u32>,
    /// See [`Behavior::progress_interval`].
    pub progress_interval: Option<Duration>,
}

impl From<Behavior> for BehaviorOverride {
    /// An override that sets every field to `behavior`'s value.
    fn from(b: Behavior) -> Self {
        BehaviorOverride {
            max_turns: Some(b.max_turns),
            max_cost_usd: Some(b.max_cost_usd),
            max_total_tokens: Some(b.max_total_tokens),
            tool_output_budget: Some(b.tool_output_budget),
            tool_budgets: b.tool_budgets,
            repeat_guard: Some(b.repeat_guard),
            max_consecutive_pause_turns: Some(b.max_consecutive_pause_turns),
            retry: Some(b.retry),
            strict_tool_pairing: Some(b.strict_tool_pairing),
            tool_timeout: Some(b.tool_timeout),
            max_result_bytes: Some(b.max_result_bytes),
            max_overflow_recoveries: Some(b.max_overflow_recoveries),
            progress_interval: Some(b.progress_interval),
        }
    }
}

impl BehaviorOverride {
    /// `base` with this override's fields applied.
    pub fn apply(&self, base: &Behavior) -> Behavior {
        let mut tool_budgets = base.tool_budgets.clone();
        tool_budgets.extend(self.tool_budgets.iter().map(|(k, v)| (k.clone(), v.clone())));
        Behavior {
            max_turns: self.max_turns.unwrap_or(base.max_turns),
            max_cost_usd: self.max_cost_usd.unwrap_or(base.max_cost_usd),
            max_total_tokens: self.max_total_tokens.unwrap_or(base.max_total_tokens),
            tool_output_budget: self.tool_output_budget.unwrap_or(base.tool_output_budget),
            tool_budgets,
            repeat_guard: self.repeat_guard.clone().unwrap_or_else(|| base.repeat_guard.clone()),
            max_consecutive_pause_turns: self
                .max_consecutive_pause_turns
                .unwrap_or(base.max_consecutive_pause_turns),
            retry: self.retry.clone().unwrap_or_else(|| base.retry.clone()),
            strict_tool_pairing: self.strict_tool_pairing.unwrap_or(base.strict_tool_pairing),
            tool_timeout: self.tool_timeout.unwrap_or(base.tool_timeout),
            max_result_bytes: self.max_result_bytes.unwrap_or(base.max_result_bytes),
            max_overflow_recoveries: self.max_overflow_recoveries.unwrap_or(base.max_overflow_recoveries),
            progress_interval: self.progress_interval.unwrap_or(base.progress_interval),
            background_stall_watchdog: base.background_stall_watchdog,
        }
    }
}
