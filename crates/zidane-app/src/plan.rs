//! Plan mode: the run sees only the read-only tools and a note to
//! investigate and propose a plan; nothing is written or executed. The
//! person then approves the plan (or edits it first, in the front end) and
//! the conversation goes on in the normal mode, with the plan in context
//! ([`Conversation::carry_out`](crate::Conversation::carry_out)).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use zidane::agent::{ToolCall, ToolCallInterceptor, ToolCallVerdict};
use zidane::hooks::HookMap;
use zidane::providers::BoxFuture;

/// The tools a plan may use: they read, or keep the plan itself.
pub const READ_ONLY: [&str; 9] = [
    "read_file",
    "list_files",
    "glob",
    "grep",
    "todowrite",
    "todoread",
    "web_fetch",
    "skill",
    "tool_search",
];

/// The note the planning run's prompt carries.
pub const NOTE: &str = "Plan mode: investigate with the read-only tools and propose a plan; do not change \
     files or run commands (those tools are not available now). Write the steps with `todowrite`, then answer \
     with the plan. The user approves it before anything is done.";

/// This run's hooks: each request offers only the read-only tools.
pub(crate) fn hooks() -> HookMap {
    HookMap::new().on_sync::<zidane::agent::events::TurnBefore, _>(|ev, _| {
        ev.options.tools.retain(|t| READ_ONLY.contains(&t.name.as_str()));
        Ok(())
    })
}

/// Refuses every other call while planning (a model may call a tool it
/// remembers from earlier turns).
pub(crate) struct PlanGate(pub(crate) Arc<AtomicBool>);

impl ToolCallInterceptor for PlanGate {
    fn intercept<'a>(&'a self, call: &'a ToolCall) -> BoxFuture<'a, ToolCallVerdict> {
        // `report_finding` has a gate of its own (only during a review).
        let reads = READ_ONLY.contains(&call.name.as_str()) || call.name == crate::review::finding::TOOL;
        let verdict = if self.0.load(Ordering::SeqCst) && !reads {
            ToolCallVerdict::Deny {
                reason: format!(
                    "plan mode: `{}` is not available while planning; propose it as a step of the plan",
                    call.name
                ),
            }
        } else {
            ToolCallVerdict::Allow
        };
        Box::pin(async move { verdict })
    }
}

/// The prompt that carries out an approved plan.
pub fn go_ahead(plan: &str) -> String {
    format!(
        "The plan is approved. Carry it out now (all tools are available again).\n\n<plan>\n{}\n</plan>",
        plan.trim()
    )
}
