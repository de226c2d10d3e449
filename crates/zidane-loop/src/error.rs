//! The loop's error type.

use zidane_hooks::HookError;
use zidane_provider::ProviderError;

use crate::events::AgentStats;

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunErrorKind {
    /// Another run is in progress on this loop.
    #[error("a run is already in progress")]
    Busy,
    /// The prompt was empty and nothing was queued.
    #[error("the prompt is empty")]
    EmptyPrompt,
    /// The provider failed after retries and fallbacks.
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// A decision or transform hook failed (gates and transforms propagate).
    #[error("a hook failed")]
    Hook(#[from] HookError),
    /// `max_cost_usd` or `max_total_tokens` was crossed.
    #[error("budget exceeded: {what}")]
    BudgetExceeded {
        /// Which cap, and by how much.
        what: String,
    },
    /// The history has broken tool pairing and `strict_tool_pairing` is set,
    /// or a hook left it unsendable.
    #[error("invalid conversation: {0}")]
    Pairing(String),
    /// No provider answers to a configured name.
    #[error("unknown provider `{0}`")]
    UnknownProvider(String),
    /// The structured output did not match its schema.
    #[error("the final answer does not match the output schema: {0}")]
    Output(String),
}

/// A failed run, with the statistics it had gathered (never zeros for work
/// that was done).
#[derive(Debug, thiserror::Error)]
#[error("{kind}")]
pub struct RunError {
    /// What went wrong.
    #[source]
    pub kind: RunErrorKind,
    /// The run's statistics up to the failure.
    pub stats: Box<AgentStats>,
}
