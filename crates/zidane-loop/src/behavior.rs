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
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            transport_max_attempts: 8,
            base_delay: Duration::from_millis(1000),
            max_delay: Duration::from_secs(60),
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
    /// Longest a tool call may run.
    pub tool_timeout: Option<Duration>,
    /// Emergency elision passes on a context overflow before giving up.
    pub max_overflow_recoveries: u32,
    /// Minimum gap between two `stream:progress` events.
    pub progress_interval: Duration,
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
            tool_timeout: None,
            max_overflow_recoveries: 3,
            progress_interval: Duration::from_millis(250),
        }
    }
}
