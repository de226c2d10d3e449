//! What the program kept out of the context window, for the run summary's
//! `contextSavings`: old results pruned by compaction, command output
//! reduced by the shell tool, tool schemas deferred.

use std::sync::Arc;

use parking_lot::Mutex;
use zidane::agent::RunSummarySavings;

/// The running tally.
#[derive(Clone, Default)]
pub(crate) struct Savings(Arc<Mutex<RunSummarySavings>>);

impl Savings {
    pub(crate) fn snapshot(&self) -> RunSummarySavings {
        *self.0.lock()
    }

    pub(crate) fn deferred(&self, tokens: u64) {
        self.0.lock().deferred_tool_tokens += tokens;
    }

    /// Listens for reduced outputs and pruning compactions.
    pub(crate) fn install(&self, hooks: &zidane::hooks::HookBus) -> Vec<zidane::hooks::HookHandle> {
        let tally = self.clone();
        let reduced = hooks.on_sync::<zidane::agent::events::ToolTransform, _>(move |ev, _| {
            if let Some(bytes) = ev.metadata.get("omittedBytes").and_then(|b| b.as_u64()) {
                tally.0.lock().reduced_output_tokens += bytes.div_ceil(4);
            }
            Ok(())
        });
        let tally = self.clone();
        let pruned = hooks.on_sync::<zidane::agent::events::CompactEnd, _>(move |ev, _| {
            tally.0.lock().pruned_results += ev.dropped();
            Ok(())
        });
        vec![reduced, pruned]
    }
}
