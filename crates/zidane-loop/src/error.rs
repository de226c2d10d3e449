//! The loop's error type.

use zidane_hooks::HookError;
use zidane_provider::ProviderError;

use zidane_core::events::AgentStats;

/// Why a run failed.
#[derive(thiserror::Error)]
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
    #[error("budget exceeded: {} {} is over the {} cap", cap.name(), cap.show(*observed), cap.show(*limit))]
    BudgetExceeded {
        /// Which cap fired.
        cap: BudgetCap,
        /// The cap (USD or tokens).
        limit: f64,
        /// What the run had reached when it was stopped.
        observed: f64,
    },
    /// The history has broken tool pairing and `strict_tool_pairing` is set,
    /// or a hook left it unsendable.
    #[error("invalid conversation: {0}")]
    Pairing(String),
    /// No provider answers to a configured name.
    #[error("unknown provider `{0}`")]
    UnknownProvider(String),
    /// The session store could not save turns, after retries. They are kept
    /// in order and sent first with the next save; until one succeeds the
    /// store lacks them.
    #[error("{unsaved} turn(s) could not be saved to the session store: {error}")]
    Store {
        /// Turns not saved.
        unsaved: usize,
        /// The store's last error.
        error: zidane_core::events::SharedError,
    },
    /// The durable runtime failed to run or record a step.
    #[error("the durable runtime failed: {0}")]
    Durable(zidane_core::events::SharedError),
    /// Another process took the session over (a newer lease epoch): this
    /// run stopped at its next step and wrote nothing more.
    #[error(transparent)]
    StaleEpoch(zidane_core::seams::StaleEpochError),
    /// The structured output did not match its schema.
    #[error("the final answer does not match the output schema: {0}")]
    Output(String),
}

/// A failed run, with the statistics it had gathered (never zeros for work
/// that was done).
///
/// It shows as its [`kind`](RunError::kind), and its cause is the kind's
/// cause, so a printed chain of causes never repeats a line. Its `Debug`
/// reads the same, with the causes; `{:#?}` shows the statistics too.
pub struct RunError {
    /// What went wrong.
    pub kind: RunErrorKind,
    /// The run's statistics up to the failure.
    pub stats: Box<AgentStats>,
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.kind, f)
    }
}

impl std::fmt::Debug for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if f.alternate() {
            f.debug_struct("RunError")
                .field("kind", &self.kind)
                .field("stats", &self.stats)
                .finish()
        } else {
            zidane_provider::write_report(self, f)
        }
    }
}

/// Reads as its message with its causes (`zidane::providers::write_report`),
/// which is what a `main` returning `Result<(), Box<dyn Error>>` prints.
impl std::fmt::Debug for RunErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        zidane_provider::write_report(self, f)
    }
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.kind)
    }
}

/// A run-level cap of [`Behavior`](crate::Behavior).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BudgetCap {
    /// `max_cost_usd`.
    CostUsd,
    /// `max_total_tokens`.
    TotalTokens,
}

impl BudgetCap {
    /// What the cap counts.
    pub fn name(self) -> &'static str {
        match self {
            BudgetCap::CostUsd => "cost",
            BudgetCap::TotalTokens => "total tokens",
        }
    }

    fn show(self, value: f64) -> String {
        match self {
            BudgetCap::CostUsd => format!("${value:.4}"),
            BudgetCap::TotalTokens => format!("{value:.0}"),
        }
    }
}

impl RunErrorKind {
    /// The provider's error, when the provider failed.
    pub fn provider_error(&self) -> Option<&ProviderError> {
        match self {
            RunErrorKind::Provider(e) => Some(e),
            _ => None,
        }
    }

    /// The cap that stopped the run, with its limit and the value reached.
    pub fn budget_exceeded(&self) -> Option<(BudgetCap, f64, f64)> {
        match self {
            RunErrorKind::BudgetExceeded { cap, limit, observed } => Some((*cap, *limit, *observed)),
            _ => None,
        }
    }
}
