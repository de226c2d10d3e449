//! The run-summary collector: installs on an agent's hook bus and builds one
//! [`RunSummary`] per run — usage per model, calls that did not run, budget
//! events, errors, pairing repairs, repeat-guard escalations, retries,
//! validation rejects, language-server diagnostics in tool results, totals
//! with time to first token, and child runs.
//!
//! ```
//! use zidane_hooks::HookBus;
//! use zidane_run_summary::{RunSummaryCollectorOptions, create_run_summary_collector};
//!
//! let bus = HookBus::new();
//! let collector = create_run_summary_collector(RunSummaryCollectorOptions::default());
//! let installed = collector.install(&bus);
//! // ... runs on `bus` ...
//! drop(installed); // uninstall
//! assert!(collector.latest().is_none());
//! ```
//!
//! Architecture invariant: the collector observes the bus and emits nothing;
//! each `install()` starts fresh state, so one collector installed on several
//! agents never mixes their runs.

mod collector;
mod summary;
#[cfg(test)]
mod tests;

pub use collector::{RunSummaryCollector, RunSummaryCollectorOptions, SummarySink, create_run_summary_collector};
pub use summary::{
    RunSummary, RunSummaryBlock, RunSummaryBudget, RunSummaryByModel, RunSummaryDiagnostics, RunSummaryError,
    RunSummaryRepeatGuard, RunSummaryRetry, RunSummarySavings, RunSummaryStatus, RunSummaryTokens,
    RunSummaryValidation,
};
